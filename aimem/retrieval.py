"""Finding memories: the query paths of search and of the related lookup before a judgement.

Keyword (FTS5, BM25) and semantic (cosine over the embedder's vectors) candidates are
fetched separately and fused by ``ranking.rank_hits``. With no embedder configured,
everything is keyword-only and nothing fails.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import zip_longest
from typing import Any, Literal, TypeVar

from .embeddings import Embedder
from .exceptions import EmbedderMismatchError, ValidationError
from .models import Memory, RelatedMemory, SearchHit
from .ranking import RankingWeights, rank_hits
from .settings import Settings
from .storage import Backend, SearchFilters
from .vectors import Vector, units

__all__ = ["CANDIDATES", "Mode", "Retriever", "mismatch_message", "other_embedder_message"]

Mode = Literal["hybrid", "keyword", "semantic"]
T = TypeVar("T")
DbCall = Callable[..., Awaitable[Any]]

#: Candidates each list contributes to the fusion (RRF needs more than the final limit).
CANDIDATES = 50
#: Related memories only need relevance: no priority or recency tie-breaks.
_RELEVANCE_ONLY = RankingWeights(priority=0.0, recency=0.0)


def mismatch_message(name: str, stored: int, given: int) -> str:
    """What to do when an embedder's vectors do not match the stored ones."""
    return (
        f"This store's vectors from embedder {name!r} have {stored} dimensions, but the "
        f"configured embedder makes {given}: run `aimem reembed` (or store.reembed()) to "
        "re-compute them with it, or configure the embedder the vectors were made with"
    )


def other_embedder_message(name: str, stored: Mapping[str, int]) -> str:
    """What to do when the stored vectors all come from embedders other than the configured one."""
    made = ", ".join(f"{model!r} ({n} memories)" for model, n in sorted(stored.items()))
    return (
        f"This store's vectors were made by embedder {made}, not by the configured {name!r}: "
        "search by meaning finds only memories embedded from now on. Run `aimem reembed` "
        "(or store.reembed()) to re-compute every vector with it, or configure the embedder "
        "the vectors were made with"
    )


def _interleave(
    first: Sequence[tuple[Memory, float]], second: Sequence[tuple[Memory, float]]
) -> list[tuple[Memory, float]]:
    """Both ranked lists, alternating, each memory once: neither crowds the other out."""
    merged: dict[str, tuple[Memory, float]] = {}
    for pair in zip_longest(first, second):
        for hit in pair:
            if hit is not None:
                merged.setdefault(hit[0].id, hit)
    return list(merged.values())


class Retriever:
    """Search and related lookups for one namespace of one store."""

    def __init__(
        self,
        db: Backend,
        namespace: str,
        embedder: Embedder | None,
        settings: Settings,
        db_call: DbCall,
    ) -> None:
        self._db = db
        self._namespace = namespace
        self.embedder = embedder
        self._settings = settings
        self._db_call = db_call
        #: Dimension the namespace's vectors from this embedder have (None: none yet).
        self._dim: int | None = None
        self._dim_known = False
        self.weights = RankingWeights(
            priority=settings.search_priority_weight,
            recency=settings.search_recency_weight,
            half_life_days=settings.recency_half_life_days,
        )

    async def embed(self, texts: Sequence[str]) -> list[Vector] | None:
        """Unit vectors for ``texts`` (one embedder call), or None without an embedder."""
        if self.embedder is None or not texts:
            return None
        made = units(await self.embedder.embed(list(texts)), len(texts), self.embedder.name)
        await self.check_dimension(len(made[0]))
        return made

    async def check_dimension(self, dim: int) -> None:
        """Refuse vectors whose length differs from the ones this namespace stores.

        Raises:
            EmbedderMismatchError: same embedder name, another dimension; it says how to
                re-compute the stored vectors.
        """
        assert self.embedder is not None
        if not self._dim_known:
            self._dim = await self._db_call(
                self._db.vector_dim, self._namespace, self.embedder.name
            )
            self._dim_known = True
        if self._dim is None:
            self._dim = dim  # the first vectors of this namespace set it
        elif self._dim != dim:
            raise EmbedderMismatchError(mismatch_message(self.embedder.name, self._dim, dim))

    def forget_dimension(self) -> None:
        """Read the stored dimension again on the next embed (after a re-embed)."""
        self._dim_known = False
        self._dim = None

    async def search(
        self,
        query: str,
        *,
        limit: int,
        filters: SearchFilters,
        mode: Mode,
        explain: bool,
    ) -> list[SearchHit]:
        """Ranked hits for ``query`` under ``filters``; see ``ranking`` for the score."""
        if mode == "semantic" and self.embedder is None:
            raise ValidationError(
                "Semantic search needs an embedder: pass embedder=aimem.LocalEmbedder() "
                "or aimem.OpenAIEmbedder(), or search with mode='keyword'"
            )
        # Fusion needs candidates beyond the limit; a single list does not.
        fused = mode == "hybrid" and self.embedder is not None
        pool = max(limit, CANDIDATES) if fused else limit
        keyword: list[tuple[Memory, float]] = []
        semantic: list[tuple[Memory, float]] = []
        if mode != "semantic":
            keyword = await self._db_call(
                self._db.keyword_search, self._namespace, query, limit=pool, filters=filters
            )
        if mode != "keyword" and self.embedder is not None:
            vectors = await self.embed([query])
            assert vectors is not None
            semantic = await self._semantic(vectors[0], pool, filters)
        return rank_hits(
            keyword,
            semantic,
            weights=self.weights,
            now=datetime.now(UTC),
            limit=limit,
            explain=explain,
        )

    async def related(
        self, content: str, vector: Vector | None, exclude: frozenset[str] = frozenset()
    ) -> list[RelatedMemory]:
        """The active memories most like ``content``, for the judge to weigh novelty against.

        Keyword matching uses only the content's rarest words, so it stays cheap on every
        save; with an embedder, cosine similarity also marks near duplicates. ``exclude``
        are memories an edit replaces (``update``, ``compress``): judged against
        themselves, an edit would look like a repeat and could supersede its own source.
        """
        limit = self._settings.related_limit
        if limit <= 0:
            return []
        wanted = limit + len(exclude)
        keyword = await self._db_call(
            self._db.keyword_search,
            self._namespace,
            content,
            limit=wanted,
            related=True,
        )
        from .judges.heuristic.clauses import stated_facts  # on use: its vocabularies are big
        from .judges.heuristic.statement import slot_terms

        facts = stated_facts(content)
        if facts:  # a long turn or a request: its stated facts, without the request's words
            stated = await self._db_call(
                self._db.keyword_search, self._namespace, facts, limit=wanted, related=True
            )
            keyword = _interleave(stated, keyword)
        slots = slot_terms(content)
        if slots:  # the memories of the same slot may share no word with the content
            same_slot = await self._db_call(
                self._db.keyword_search, self._namespace, slots, limit=wanted, related=True
            )
            keyword = _interleave(keyword, same_slot)
        semantic = (
            await self._semantic(vector, wanted, SearchFilters()) if vector is not None else []
        )
        if exclude:
            keyword = [(m, s) for m, s in keyword if m.id not in exclude]
            semantic = [(m, s) for m, s in semantic if m.id not in exclude]
        cosine = {memory.id: value for memory, value in semantic}
        threshold = self._settings.near_duplicate_similarity
        hits = rank_hits(
            keyword, semantic, weights=_RELEVANCE_ONLY, now=datetime.now(UTC), limit=limit
        )
        return [
            RelatedMemory(
                **hit.memory.model_dump(),
                similarity=cosine.get(hit.memory.id),
                near_duplicate=cosine.get(hit.memory.id, 0.0) >= threshold,
            )
            for hit in hits
        ]

    async def _semantic(
        self, vector: Vector, limit: int, filters: SearchFilters
    ) -> list[tuple[Memory, float]]:
        assert self.embedder is not None
        result: list[tuple[Memory, float]] = await self._db_call(
            self._db.semantic_search,
            self._namespace,
            self.embedder.name,
            vector,
            limit=limit,
            filters=filters,
        )
        return result
