"""Data shapes: what a judge returns, the public ``Memory`` record and the result types.

These are plain pydantic models with no database in them; ``store.py`` owns the
table and converts rows into these, so callers never hold a live ORM object.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    computed_field,
    field_validator,
)

from aimem.display import html_of, rich_of
from aimem.scoring import COMPONENT_MAX, priority_from

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = [
    "ExportReport",
    "HistoryEvent",
    "ImportReport",
    "Interpretation",
    "Memory",
    "PruneReport",
    "RelatedMemory",
    "ScoreSource",
    "SearchHit",
    "Stats",
    "Usage",
]

ScoreSource = Literal["llm", "heuristic", "client", "pending", "custom"] | str

_Component = Field(ge=0.0, le=COMPONENT_MAX, allow_inf_nan=False)


class Usage(BaseModel):
    """What one interpretation cost: recorded with the memory it produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    #: Requests sent for this interpretation beyond the first (transport retries and re-asks).
    retries: int = 0


class Interpretation(BaseModel):
    """A judge's reading of one piece of content.

    ``priority_score`` is derived from the four components and cannot be passed in.

    Example:
        >>> i = Interpretation(interpreted_content="Prefers Rust", emotional_impact=0.0,
        ...                    user_relevance=0.2, novelty=0.1, utility=0.2,
        ...                    rationale="a preference")
        >>> i.priority_score
        0.5
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    interpreted_content: str = Field(min_length=1)
    emotional_impact: float = _Component
    user_relevance: float = _Component
    novelty: float = _Component
    utility: float = _Component
    rationale: str = ""
    #: Model and prompt that produced this; None for judges without either.
    model: str | None = None
    prompt_version: str | None = None
    usage: Usage | None = None
    #: Positions (0-based) in the ``related`` memories the judge was shown of those this
    #: content makes out of date ("I moved to Sapporo" after "I live in Sendai"); empty
    #: when unsure. The store retires them in the save's transaction.
    supersedes: tuple[int, ...] = ()
    #: Why, in a few words ("residence: moved to Sapporo").
    supersede_reason: str = ""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def priority_score(self) -> float:
        """Sum of the four components, in [0, 1]."""
        return priority_from(self.emotional_impact, self.user_relevance, self.novelty, self.utility)


class Memory(BaseModel):
    """One stored memory, as callers see it (a detached snapshot, not a live row)."""

    model_config = ConfigDict(frozen=True)

    id: str
    namespace: str
    content: str
    interpreted_content: str
    emotional_impact: float | None
    user_relevance: float | None
    novelty: float | None
    utility: float | None
    priority_score: float | None
    rationale: str
    user_context: str | None
    score_source: str
    model: str | None
    prompt_version: str | None
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime
    access_count: int
    pinned: bool
    version: int
    archived_at: datetime | None
    archive_reason: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    judge_latency_ms: float = 0.0
    judge_retries: int = 0
    #: The memory that made this one out of date (archive_reason "superseded"), if any.
    superseded_by: str | None = None
    #: When the user last restored it: later saves retire it only by naming that very fact.
    restored_at: datetime | None = None
    #: A newer active memory that states another value for the same thing ("I live in
    #: Sendai" after "We moved to Sapporo" was saved): search and context rank it first.
    contested_by: str | None = None
    #: Words that help find it (a slot's synonyms), indexed but never shown.
    recall_terms: str = Field(default="", repr=False)
    #: Its keyword index terms as stored (stemmed; ``keywords.memory_terms``), set by the
    #: storage layer: a hit's relevance is judged without stemming it again. Not a field:
    #: derived, so never dumped, exported or compared.
    _terms: str = PrivateAttr(default="")

    @property
    def archived(self) -> bool:
        """True once the capacity manager (or compress) has forgotten this memory."""
        return self.archived_at is not None

    @property
    def pending(self) -> bool:
        """True while the memory waits for a judge (no scores yet)."""
        return self.priority_score is None

    # Views come from aimem.render, registered in aimem.display (no import cycle).
    def _repr_html_(self) -> str:
        return html_of(self)

    def __rich__(self) -> RenderableType:
        return rich_of(self)


class HistoryEvent(BaseModel):
    """One event of a memory's history: what happened, when, at which version, and why."""

    model_config = ConfigDict(frozen=True)

    memory_id: str
    event: str
    version: int
    at: datetime
    #: An archive's reason (``capacity``, ``below_min_score``, ``superseded``, ...).
    reason: str | None = None
    #: For a supersession: the memory that made this one out of date, and the judge's why.
    superseded_by: str | None = None
    explanation: str | None = None
    #: For an ``update``: the memory as it was before (content, interpretation, scores).
    previous: dict[str, object] | None = None
    detail: dict[str, object] = {}


class RelatedMemory(Memory):
    """An existing memory shown to a judge, with how close it is to the new content."""

    #: Cosine similarity to the new content, when an embedder is configured.
    similarity: float | None = None
    #: True when ``similarity`` reaches the store's ``near_duplicate_similarity``.
    near_duplicate: bool = False


class SearchHit(BaseModel):
    """One search result: the memory, its final score and, on request, why it ranked there."""

    model_config = ConfigDict(frozen=True)

    memory: Memory
    #: The fused rank score: relevance rank first, priority and recency as tie-breakers.
    #: It orders one result list and means nothing across queries.
    score: float
    explanation: dict[str, float] | None = None
    #: How well the memory matches the query on an absolute scale, 0..1: the share of the
    #: query's content words it holds, or how close in meaning it is (calibrated cosine),
    #: whichever says more. Comparable across queries; ``min_relevance`` filters on it.
    relevance: float = 1.0
    #: A newer active memory that states another value for the same thing; this hit
    #: is likely out of date and ranks below it.
    conflicts_with: str | None = None

    def _repr_html_(self) -> str:
        return html_of(self)

    def __rich__(self) -> RenderableType:
        return rich_of(self)


class PruneReport(BaseModel):
    """What a capacity run archived (or, with ``dry_run``, would archive), and why."""

    model_config = ConfigDict(frozen=True)

    archived: list[Memory]
    dry_run: bool = False
    max_memories: int
    min_priority_score: float
    #: Active, capped memories after the run (before it, for a dry run).
    active_after: int

    @property
    def reasons(self) -> dict[str, str]:
        """Map of memory id -> archive reason."""
        return {m.id: m.archive_reason or "" for m in self.archived}

    def _repr_html_(self) -> str:
        return html_of(self)

    def __rich__(self) -> RenderableType:
        return rich_of(self)


class SaveReport(BaseModel):
    """What a save or compress wrote, and what the capacity manager archived to make room."""

    model_config = ConfigDict(frozen=True)

    memories: list[Memory]
    archived: list[Memory]
    #: Ids among ``memories`` that already existed (exact duplicates: returned, not saved).
    duplicates: list[str] = []

    def _repr_html_(self) -> str:
        return html_of(self)

    def __rich__(self) -> RenderableType:
        return rich_of(self)


class ExportReport(BaseModel):
    """What ``export_to`` wrote."""

    model_config = ConfigDict(frozen=True)

    path: str
    memories: int
    history: int
    sha256: str


class ImportReport(BaseModel):
    """What ``import_from`` found in a file and, unless a dry run, wrote."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    dry_run: bool
    #: The first 20 problems found (see ``problems`` for how many there are).
    errors: list[str]
    memories: int
    history: int
    #: Memories the capacity manager archived after the import (settings of this store).
    archived: list[Memory] = []
    #: How many problems were found, ``errors`` listing the first of them (never fewer).
    problems: int = Field(default=0, validate_default=True)

    @field_validator("problems")
    @classmethod
    def _at_least_listed(cls, value: int, info: ValidationInfo) -> int:
        return max(value, len(info.data.get("errors", ())))

    def _repr_html_(self) -> str:
        return html_of(self)

    def __rich__(self) -> RenderableType:
        return rich_of(self)


class Stats(BaseModel):
    """Counts and totals for one namespace."""

    model_config = ConfigDict(frozen=True)

    namespace: str
    count: int
    archived: int
    pending: int
    pinned: int
    total: int
    mean_priority: float | None
    prompt_tokens: int
    completion_tokens: int
    max_memories: int
    min_priority_score: float
    #: The name of the embedder behind semantic search (None: keyword search only).
    embedder: str | None = None
    #: Active memories with a vector from that embedder; fewer than ``count`` means
    #: ``reembed()`` (``aimem reembed``) is due.
    embedded: int | None = None
    #: Where search by meaning runs: ``"pgvector (HNSW)"`` on a PostgreSQL server with the
    #: extension, ``"in-process index"`` elsewhere (each process holds the vectors).
    vector_search: str | None = None
    #: In-process mode: bytes this process's vector indexes hold (every namespace's) ...
    vector_cache_bytes: int | None = None
    #: ... and the most they may hold before the least recently searched are dropped.
    vector_cache_budget_bytes: int | None = None

    def _repr_html_(self) -> str:
        return html_of(self)

    def __rich__(self) -> RenderableType:
        return rich_of(self)
