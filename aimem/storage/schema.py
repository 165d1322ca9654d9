"""The portable schema: table models, indexes and the schema version.

Only ``storage/`` uses these; callers get detached ``aimem.Memory`` snapshots. What a
dialect adds (SQLite's keyword index and triggers) lives with that dialect.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Index, LargeBinary, String, Text, TypeDecorator
from sqlalchemy.engine import Dialect
from sqlmodel import Column, Field, SQLModel

__all__ = [
    "SCHEMA_VERSION",
    "CoreRow",
    "HistoryRow",
    "IdempotencyRow",
    "MemoryRow",
    "MetaRow",
    "NamespaceCountRow",
    "VectorRow",
    "VersionRow",
    "utcnow",
]

#: Bumped by any change a migration must handle; stored in ``aimem_meta``.
#: 2 added ``idempotency_keys`` (created on open; nothing else changed).
#: 3 indexes ``memories.terms`` (aimem's own namespace-scoped keyword terms) instead of
#: SQLite's tokenization of the texts (``sqlite_schema.py`` rebuilds the index).
#: 4 added ``superseded_by`` and ``restored_at`` to memories, and ``memory_versions``.
#: 5 added ``recall_terms`` and ``contested_by``, cleaned the offline judge's old framed
#: interpretations and re-indexed every memory without the store's framing words.
SCHEMA_VERSION = 5


def utcnow() -> datetime:
    """Timezone-aware now in UTC (the only clock the store uses)."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Stores UTC, returns aware datetimes (SQLite would otherwise hand back naive ones)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("aimem stores only timezone-aware datetimes")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if not isinstance(value, datetime):
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _when(nullable: bool = False) -> Any:
    return Field(default=None, sa_column=Column(UTCDateTime(), nullable=nullable))


class MemoryRow(SQLModel, table=True):
    """One memory. ``seq`` is a stable integer rowid for the keyword index."""

    __tablename__ = "memories"
    __table_args__ = (
        # Capacity check and priority listing: active (archived_at NULL), unpinned rows of a
        # namespace in forgetting order, answered from the index without touching every row.
        Index(
            "ix_memories_capacity",
            "namespace",
            "archived_at",
            "pinned",
            "priority_score",
            "created_at",
            "id",
        ),
        Index("ix_memories_recent", "namespace", "archived_at", "created_at"),
        Index("ix_memories_hash", "namespace", "content_hash"),
        Index("ix_memories_restored", "namespace", "restored_at"),
        Index("ix_memories_contested", "namespace", "contested_by"),
    )

    seq: int | None = Field(default=None, primary_key=True)
    id: str = Field(sa_column=Column(String(36), unique=True, nullable=False))
    namespace: str = Field(sa_column=Column(String(64), nullable=False))
    content: str = Field(sa_column=Column(Text, nullable=False))
    content_hash: str = Field(sa_column=Column(String(64), nullable=False))
    #: Keyword terms of content, interpretation and recall terms (``keywords.memory_terms``),
    #: unprefixed; the index triggers prefix each with the namespace.
    terms: str = Field(default="", sa_column=Column(Text, nullable=False, server_default=""))
    #: Words that help find the memory (a slot's synonyms), indexed but never shown.
    recall_terms: str = Field(default="", sa_column=Column(Text, nullable=False, server_default=""))
    interpreted_content: str = Field(sa_column=Column(Text, nullable=False))
    emotional_impact: float | None = None
    user_relevance: float | None = None
    novelty: float | None = None
    utility: float | None = None
    priority_score: float | None = None
    rationale: str = ""
    user_context: str | None = None
    score_source: str
    model: str | None = None
    prompt_version: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    judge_latency_ms: float = 0.0
    judge_retries: int = 0
    created_at: datetime = _when()
    updated_at: datetime = _when()
    last_accessed_at: datetime = _when()
    access_count: int = 0
    pinned: bool = False
    version: int = 1
    archived_at: datetime | None = _when(nullable=True)
    archive_reason: str | None = None
    #: The memory that made this one out of date (archive_reason "superseded").
    superseded_by: str | None = Field(default=None, sa_column=Column(String(36), nullable=True))
    #: When the user last restored it: later saves retire it only by naming that very fact.
    restored_at: datetime | None = _when(nullable=True)
    #: A newer memory that states another value for the same thing: search ranks it first.
    contested_by: str | None = Field(default=None, sa_column=Column(String(36), nullable=True))


class VersionRow(SQLModel, table=True):
    """A memory as it was before an ``update`` replaced it; deleted with the memory.

    The history says when things changed; this keeps what a memory said, so an edit
    never loses the earlier wording, interpretation or scores.
    """

    __tablename__ = "memory_versions"
    __table_args__ = (Index("ix_versions_memory", "memory_id", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    memory_id: str = Field(sa_column=Column(String(36), nullable=False))
    namespace: str = Field(sa_column=Column(String(64), nullable=False))
    version: int
    content: str = Field(sa_column=Column(Text, nullable=False))
    interpreted_content: str = Field(sa_column=Column(Text, nullable=False))
    emotional_impact: float | None = None
    user_relevance: float | None = None
    novelty: float | None = None
    utility: float | None = None
    priority_score: float | None = None
    rationale: str = ""
    score_source: str
    model: str | None = None
    prompt_version: str | None = None
    replaced_at: datetime = _when()


class HistoryRow(SQLModel, table=True):
    """Append-only log of what happened to memories (never their text, so delete is final)."""

    __tablename__ = "memory_history"
    __table_args__ = (Index("ix_history_memory", "memory_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    memory_id: str = Field(sa_column=Column(String(36), nullable=False))
    namespace: str = Field(sa_column=Column(String(64), nullable=False))
    event: str
    version: int
    at: datetime = _when()
    detail: str = "{}"


class IdempotencyRow(SQLModel, table=True):
    """A caller's idempotency key -> the memory its first save produced (per namespace).

    Kept apart from ``memories`` so one memory can answer several keys (a keyed save
    of an exact duplicate adopts the existing memory); deleting the memory frees them.
    """

    __tablename__ = "idempotency_keys"

    namespace: str = Field(sa_column=Column(String(64), primary_key=True))
    key: str = Field(sa_column=Column(String(200), primary_key=True))
    memory_id: str = Field(sa_column=Column(String(36), nullable=False, index=True))
    content_hash: str = Field(sa_column=Column(String(64), nullable=False))
    created_at: datetime = _when()


class CoreRow(SQLModel, table=True):
    """Identity / personality text of a namespace: never pruned."""

    __tablename__ = "core"

    namespace: str = Field(primary_key=True)
    text: str = ""
    updated_at: datetime = _when()


class NamespaceCountRow(SQLModel, table=True):
    """Active, unpinned, judged memories per namespace, kept exact by triggers.

    The capacity check reads this one row instead of counting an index range, so its
    cost does not grow with the store.
    """

    __tablename__ = "namespace_counts"

    namespace: str = Field(primary_key=True)
    capped: int = 0


class VectorRow(SQLModel, table=True):
    """One memory's embedding (float32, unit length), written in the save's transaction."""

    __tablename__ = "memory_vectors"

    seq: int = Field(primary_key=True)  # memories.seq
    model: str
    dim: int
    vector: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class MetaRow(SQLModel, table=True):
    """Key/value facts about the database itself (the schema version)."""

    __tablename__ = "aimem_meta"

    key: str = Field(primary_key=True)
    value: str
