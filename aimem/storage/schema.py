"""The portable schema: tables, indexes and the schema version.

Only ``storage/`` uses these; callers get detached ``aimem.Memory`` snapshots. What a
dialect adds (SQLite's keyword index and triggers) lives with that dialect.

Plain SQLAlchemy Core tables on one ``METADATA``: every statement aimem runs is Core, so
an ORM layer (sqlmodel's classes, ``sqlalchemy.orm``) would only cost each process its
import (about 60 ms of a CLI command's start).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from types import NoneType
from typing import Any, get_args

from pydantic_core import PydanticUndefined
from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
)
from sqlalchemy.engine import Dialect

from aimem.models import Memory

__all__ = [
    "CORE",
    "COUNTS",
    "HISTORY",
    "KEYS",
    "MEMORIES",
    "META",
    "METADATA",
    "SCHEMA_VERSION",
    "VECTORS",
    "VERSIONS",
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


def _when(name: str, *, nullable: bool = False) -> Column[Any]:
    return Column(name, UTCDateTime(), nullable=nullable)


def _text(name: str, *, default: str | None = None, nullable: bool = False) -> Column[Any]:
    """A string column of no set length (VARCHAR), with a Python-side default if given."""
    return Column(name, String(), nullable=nullable, default=default)


def _id(name: str, *, nullable: bool = False, **kw: Any) -> Column[Any]:
    return Column(name, String(36), nullable=nullable, **kw)


def _namespace(**kw: Any) -> Column[Any]:
    return Column("namespace", String(64), nullable=False, **kw)


def _count(name: str, default: int | None = 0) -> Column[Any]:
    return Column(name, Integer(), nullable=False, default=default)


def _score(name: str) -> Column[Any]:
    return Column(name, Float(), nullable=True)


def _judged() -> list[Column[Any]]:
    """The judgement's columns, as ``memories`` and ``memory_versions`` both keep them."""
    return [
        *(_score(c) for c in ("emotional_impact", "user_relevance", "novelty", "utility")),
        _score("priority_score"),
        _text("rationale", default=""),
    ]


#: Where a memory's column is more than its field's type says: lengths, uniqueness, the
#: defaults rows written before a field existed take. Every other column is derived.
_MEMORY_COLUMNS: dict[str, Callable[[], Column[Any]]] = {
    "id": lambda: _id("id", unique=True),
    "namespace": _namespace,
    "content": lambda: Column("content", Text(), nullable=False),
    "interpreted_content": lambda: Column("interpreted_content", Text(), nullable=False),
    # Words that help find the memory (a slot's synonyms), indexed but never shown.
    "recall_terms": lambda: Column("recall_terms", Text(), nullable=False, server_default=""),
    "rationale": lambda: _text("rationale", default=""),
    "access_count": lambda: _count("access_count"),
    "pinned": lambda: Column("pinned", Boolean(), nullable=False, default=False),
    "version": lambda: _count("version", default=1),
    # The memory that made this one out of date (archive_reason "superseded").
    "superseded_by": lambda: _id("superseded_by", nullable=True),
    # A newer memory that states another value for the same thing: search ranks it first.
    "contested_by": lambda: _id("contested_by", nullable=True),
}
_SQL_TYPES: dict[type, Callable[[], Any]] = {
    str: String,
    int: Integer,
    float: Float,
    bool: Boolean,
    datetime: UTCDateTime,
}


def _memory_columns() -> list[Column[Any]]:
    """One column per field of ``aimem.Memory``, in its order: the model is the definition."""
    columns = []
    for name, info in Memory.model_fields.items():
        special = _MEMORY_COLUMNS.get(name)
        if special is not None:
            columns.append(special())
            continue
        kinds = [t for t in get_args(info.annotation) or (info.annotation,) if t is not NoneType]
        default = None if info.default is PydanticUndefined else info.default
        nullable = len(kinds) < len(get_args(info.annotation) or (info.annotation,))
        columns.append(Column(name, _SQL_TYPES[kinds[0]](), nullable=nullable, default=default))
    return columns


METADATA = MetaData()

#: One memory. ``seq`` is a stable integer rowid for the keyword index.
MEMORIES = Table(
    "memories",
    METADATA,
    Column("seq", Integer(), primary_key=True),
    *_memory_columns(),
    # The storage layer's own: the content's hash (exact duplicates) and its keyword terms
    # (content, interpretation and recall terms, ``keywords.memory_terms``), unprefixed; the
    # index triggers prefix each with the namespace.
    Column("content_hash", String(64), nullable=False),
    Column("terms", Text(), nullable=False, server_default=""),
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

#: A memory as it was before an ``update`` replaced it; deleted with the memory. The
#: history says when things changed; this keeps what a memory said, so an edit never
#: loses the earlier wording, interpretation or scores.
VERSIONS = Table(
    "memory_versions",
    METADATA,
    Column("id", Integer(), primary_key=True),
    _id("memory_id"),
    _namespace(),
    _count("version", default=None),
    Column("content", Text(), nullable=False),
    Column("interpreted_content", Text(), nullable=False),
    *_judged(),
    _text("score_source"),
    _text("model", nullable=True),
    _text("prompt_version", nullable=True),
    _when("replaced_at"),
    Index("ix_versions_memory", "memory_id", "version"),
)

#: Append-only log of what happened to memories (never their text, so delete is final).
HISTORY = Table(
    "memory_history",
    METADATA,
    Column("id", Integer(), primary_key=True),
    _id("memory_id"),
    _namespace(),
    _text("event"),
    _count("version", default=None),
    _when("at"),
    _text("detail", default="{}"),
    Index("ix_history_memory", "memory_id", "id"),
)

#: A caller's idempotency key -> the memory its first save produced (per namespace). Kept
#: apart from ``memories`` so one memory can answer several keys (a keyed save of an
#: exact duplicate adopts the existing memory); deleting the memory frees them.
KEYS = Table(
    "idempotency_keys",
    METADATA,
    _namespace(primary_key=True),
    Column("key", String(200), primary_key=True),
    _id("memory_id", index=True),
    Column("content_hash", String(64), nullable=False),
    _when("created_at"),
)

#: Identity / personality text of a namespace: never pruned.
CORE = Table(
    "core",
    METADATA,
    Column("namespace", String(), primary_key=True),
    _text("text", default=""),
    _when("updated_at"),
)

#: Active, unpinned, judged memories per namespace, kept exact by triggers. The capacity
#: check reads this one row instead of counting an index range, so its cost does not
#: grow with the store.
COUNTS = Table(
    "namespace_counts",
    METADATA,
    Column("namespace", String(), primary_key=True),
    _count("capped"),
)

#: One memory's embedding (float32, unit length), written in the save's transaction.
VECTORS = Table(
    "memory_vectors",
    METADATA,
    Column("seq", Integer(), primary_key=True),  # memories.seq
    _text("model"),
    _count("dim", default=None),
    Column("vector", LargeBinary(), nullable=False),
)

#: Key/value facts about the database itself (the schema version).
META = Table(
    "aimem_meta",
    METADATA,
    Column("key", String(), primary_key=True),
    _text("value"),
)
