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

from aimem.embeddings import Embedder
from aimem.exceptions import EmbedderMismatchError, ValidationError
from aimem.judges.base import TextReading
from aimem.models import Memory, RelatedMemory, SearchHit
from aimem.retrieval.ranking import RankingWeights, rank_hits
from aimem.retrieval.relevance import calibration_of, combined, keyword_share
from aimem.settings import Settings
from aimem.storage import Backend, SearchFilters
from aimem.text.keywords import search_terms
from aimem.text.stemmer import stem
from aimem.vectors import Vector, units

__all__ = ["CANDIDATES", "Mode", "Retriever", "mismatch_message", "other_embedder_message"]

Mode = Literal["hybrid", "keyword", "semantic"]
T = TypeVar("T")
DbCall = Callable[..., Awaitable[Any]]

#: Candidates each list contributes to the fusion (RRF needs more than the final limit).
CANDIDATES = 50
#: Fused candidates whose absolute relevance is computed (at least; 2 x the limit otherwise):
#: enough to fill the limit after the floor, few enough to cost little.
_JUDGED = 20
#: Candidates past the limit whose newer sibling may still come up (they are compared too).
_SIBLING_REACH = 5
#: The share of its rank relevance someone else's fact loses, for a question about the user.
_OTHERS_PENALTY = 0.3
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
        reading: TextReading,
    ) -> None:
        self._db = db
        #: How texts read for this store's judge: extra lookup words, whose fact, changes.
        self.reading = reading
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

    async def embed(self, texts: Sequence[str], *, as_query: bool = False) -> list[Vector] | None:
        """Unit vectors for ``texts`` (one embedder call), or None without an embedder.

        ``as_query``: they are search questions. An embedder that embeds questions apart
        from what they look up (e5's "query:" and "passage:") says so with an
        ``embed_query`` method; the others embed both alike.
        """
        if self.embedder is None or not texts:
            return None
        embed = getattr(self.embedder, "embed_query", None) if as_query else None
        raw = await (embed or self.embedder.embed)(list(texts))
        made = units(raw, len(texts), self.embedder.name)
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
        min_relevance: float = 0.0,
    ) -> list[SearchHit]:
        """Ranked hits for ``query`` under ``filters``; see ``ranking`` for the score.

        Then each hit gets its absolute relevance (``relevance``) and those below
        ``min_relevance`` are left out; for a question about the user, someone else's
        fact ranks below the user's own; and the current truth ranks above the facts it
        replaces (``siblings``).
        """
        if mode == "semantic" and self.embedder is None:
            raise ValidationError(
                "Semantic search needs an embedder: pass embedder=aimem.LocalEmbedder() "
                "or aimem.OpenAIEmbedder(), or search with mode='keyword'"
            )
        # Fusion needs candidates well beyond the limit; a single list does not (a keyword
        # hit shares a word with the query, so the floor seldom leaves one out).
        fused = mode == "hybrid" and self.embedder is not None
        pool = max(limit + _SIBLING_REACH, CANDIDATES) if fused else limit
        keyword: list[tuple[Memory, float]] = []
        semantic: list[tuple[Memory, float]] = []
        if mode != "semantic":
            keyword = await self._db_call(
                self._db.keyword_search, self._namespace, query, limit=pool, filters=filters
            )
        if mode != "keyword" and self.embedder is not None:
            vectors = await self.embed([query], as_query=True)
            assert vectors is not None
            semantic = await self._semantic(vectors[0], pool, filters)
        ranked = rank_hits(
            keyword,
            semantic,
            weights=self.weights,
            now=datetime.now(UTC),
            limit=pool,
            explain=True,
        )
        asked = [stem(t) for t in search_terms(query, filters.user_context)]
        hits = self._judged(query, asked, ranked, semantic, filters, min_relevance, limit, explain)
        return self._current_first(hits, limit, frozenset(asked))

    def _judged(
        self,
        query: str,
        asked: list[str],
        ranked: list[SearchHit],
        semantic: list[tuple[Memory, float]],
        filters: SearchFilters,
        min_relevance: float,
        limit: int,
        explain: bool,
    ) -> list[SearchHit]:
        """Each candidate with its absolute relevance, the floor applied, others' facts lower."""
        from aimem.retrieval.siblings import about_someone_else, facts_of

        cosine = {memory.id: value for memory, value in semantic}
        calibration = calibration_of(self.embedder)
        others = about_someone_else(query, filters.user_context, self.reading)
        judged: list[SearchHit] = []
        for hit in ranked[: max(2 * limit, _JUDGED)]:
            facts = facts_of(hit.memory, self.reading)
            keyword = keyword_share(asked, facts.terms)
            semantic_ = calibration.evidence(cosine.get(hit.memory.id))
            relevance = combined(keyword, semantic_)
            if relevance < min_relevance:
                continue
            parts = dict(hit.explanation or {})
            penalty = 0.0
            if not others and facts.subject.startswith("other:"):
                penalty = -_OTHERS_PENALTY * parts.get("relevance", 0.0)
            score = hit.score + penalty
            explanation = None
            if explain:
                explanation = {
                    **parts,
                    "keyword_evidence": keyword,
                    "semantic_evidence": semantic_,
                    "absolute_relevance": relevance,
                    "others_fact": penalty,
                    "score": score,
                }
            judged.append(
                hit.model_copy(
                    update={"score": score, "relevance": relevance, "explanation": explanation}
                )
            )
        judged.sort(key=lambda h: (-h.score, h.memory.id))
        return judged

    def _current_first(
        self, hits: list[SearchHit], limit: int, asked: frozenset[str]
    ) -> list[SearchHit]:
        """The newer of two siblings above the older, which is marked (``siblings``).

        Among the candidates that cleared the floor: a newer sibling just past the limit
        moves up above the memory it replaces; nothing the query did not find comes in.
        """
        from aimem.retrieval.siblings import current_first

        top = hits[: limit + _SIBLING_REACH]
        ordered, marks = current_first(
            top, lambda h: h.memory, self.reading, window=len(top), asked=asked
        )
        shown = ordered[:limit]
        # Scores stay in the order shown: a newer sibling moved up gets just above the older
        # one's score, the lift shown in its explanation as "current_first".
        for i in range(len(shown) - 2, -1, -1):
            hit, below = shown[i], shown[i + 1]
            lift = below.score + 1e-6 - hit.score if hit.score <= below.score else 0.0
            update: dict[str, object] = {}
            if lift:
                update["score"] = hit.score + lift
                if hit.explanation is not None:
                    update["explanation"] = {
                        **hit.explanation,
                        "current_first": hit.explanation.get("current_first", 0.0) + lift,
                        "score": hit.score + lift,
                    }
            if hit.memory.id in marks:
                update["conflicts_with"] = marks[hit.memory.id]
            if update:
                shown[i] = hit.model_copy(update=update)
        last = shown[-1] if shown else None
        if last is not None and last.memory.id in marks:
            shown[-1] = last.model_copy(update={"conflicts_with": marks[last.memory.id]})
        return shown

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
        # a long turn or a request: its stated facts, without the request's words; and
        # the slot's words, as memories of the same slot may share no word with the content
        facts = self.reading.stated_facts(content)
        slots = self.reading.related_terms(content)
        queries = [content, *(q for q in (facts, slots) if q)]
        model = None
        if vector is not None:
            assert self.embedder is not None
            model = self.embedder.name
        found, semantic = await self._db_call(
            self._db.related_search,
            self._namespace,
            queries,
            limit=wanted,
            model=model,
            vector=vector,
        )
        keyword = found[0]
        rest = iter(found[1:])
        if facts:
            keyword = _interleave(next(rest), keyword)
        if slots:
            keyword = _interleave(keyword, next(rest))
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
