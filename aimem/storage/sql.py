"""SQL building blocks run inside one of the store's transactions (SQLAlchemy Core).

Each function takes an open ``Connection`` and does one thing; ``store.py`` decides
which run together in a transaction. Core statements, not ORM sessions: a save runs a
dozen of them and the unit-of-work bookkeeping would cost more than SQLite itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError as PydanticValidationError
from sqlalchemy import (
    Boolean,
    Connection,
    Integer,
    LargeBinary,
    String,
    bindparam,
    case,
    func,
    insert,
    literal,
    select,
    true,
    update,
)
from sqlalchemy import delete as sql_delete
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.functions import GenericFunction

from aimem.exceptions import ConflictError, NotFoundError, StorageError
from aimem.ids import content_hash, new_id
from aimem.models import Interpretation, Memory
from aimem.storage.schema import CORE, COUNTS, HISTORY, KEYS, MEMORIES, VECTORS, VERSIONS, utcnow
from aimem.text.keywords import memory_terms

__all__ = [
    "CORE",
    "COUNTS",
    "HISTORY",
    "KEYS",
    "MEMORIES",
    "VECTORS",
    "VERSIONS",
    "NewMemory",
    "SearchFilters",
    "active_duplicate",
    "active_hashes",
    "bind_key",
    "by_ids",
    "content_hash",
    "delete_memory",
    "get_core",
    "insert_memory",
    "insert_vector_statement",
    "key_target",
    "likely",
    "memories",
    "memory_of",
    "namespace_stats",
    "of_namespace",
    "pending_ids",
    "record",
    "reinforce",
    "replace_interpretation",
    "require",
    "select_memories",
    "set_core",
    "set_fields",
]

m = MEMORIES.c

# Statements on the save path are built once: constructing a SQLAlchemy expression
# costs more than SQLite takes to run it, and a prebuilt one also reuses its cache key.
_NS: BindParameter[str] = bindparam("ns")
_ID: BindParameter[str] = bindparam("id")
_IDS: BindParameter[list[str]] = bindparam("ids", expanding=True)
#: Ids per statement where a caller may pass many (SQLite allows 32,766 parameters).
_CHUNK = 10_000


class likely(GenericFunction[bool]):
    """A planner hint: SQLite's ``likely(x)``; elsewhere just ``x``."""

    type = Boolean()
    inherit_cache = True


@compiles(likely)
def _bare(element: likely, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(element.clauses, **kw))


@compiles(likely, "sqlite")
def _hinted(element: likely, compiler: Any, **kw: Any) -> str:
    return f"likely({compiler.process(element.clauses, **kw)})"


def of_namespace(namespace: Any) -> Any:
    """The namespace test for statements keyed by id lists.

    Marked likely: without the hint SQLite's planner takes the namespace index for
    ``id IN (...)`` and walks every memory of the namespace instead of a few ids.
    """
    return likely(m.namespace == namespace)


_BY_ID = select(MEMORIES).where(m.namespace == _NS, m.id == _ID)
_BY_IDS = select(MEMORIES).where(m.id.in_(_IDS))
_ACTIVE_DUPLICATE = (
    select(m.id)
    .where(m.namespace == _NS, m.content_hash == bindparam("digest"), m.archived_at.is_(None))
    .limit(1)
)
_REINFORCE = (
    update(MEMORIES)
    .where(of_namespace(_NS), m.id.in_(_IDS))
    .values(access_count=m.access_count + 1, last_accessed_at=bindparam("now"))
)
_INSERT_MEMORY = insert(MEMORIES).returning(m.seq)
_DELETE_VECTOR = sql_delete(VECTORS).where(VECTORS.c.seq == bindparam("seq"))
#: Shared with ``sql_vectors`` (re-embedding writes vectors the same way).
insert_vector_statement = insert(VECTORS)
_INSERT_HISTORY = insert(HISTORY)


@dataclass(frozen=True, slots=True)
class NewMemory:
    """A judged (or client-scored) memory ready to insert; no interpretation = pending."""

    content: str
    interpretation: Interpretation | None
    score_source: str
    user_context: str | None = None
    #: Packed unit vector (``vectors.pack``) and the embedder that made it, if any.
    vector: bytes | None = None
    embedding_model: str | None = None
    idempotency_key: str | None = None
    #: Ids of active memories this one makes out of date, and why (``sql_capacity.supersede``).
    supersedes: tuple[str, ...] = ()
    supersede_reason: str = ""
    #: Positions of earlier items of the same insert it makes out of date (a conversation's
    #: later turn changing an earlier one): their ids exist only once inserted.
    supersedes_earlier: tuple[int, ...] = ()
    #: Ids of active memories it may make out of date, too unsure to retire: they stay,
    #: marked ``contested_by`` it, so search ranks it first (``sql_capacity.contest``).
    contests: tuple[str, ...] = ()
    #: Words that help find it (a slot's synonyms), indexed but never shown.
    recall_terms: str = ""


@dataclass(frozen=True)
class SearchFilters:
    """Which memories a search may return (all conditions must hold)."""

    min_score: float | None = None
    user_context: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    include_archived: bool = False

    def admits(self, memory: Memory) -> bool:
        """The same test in Python, for candidates that did not come through SQL."""
        return (
            (self.include_archived or memory.archived_at is None)
            and (
                self.min_score is None
                or (memory.priority_score is not None and memory.priority_score >= self.min_score)
            )
            and (self.user_context is None or memory.user_context == self.user_context)
            and (self.created_after is None or memory.created_at >= self.created_after)
            and (self.created_before is None or memory.created_at < self.created_before)
        )


def memory_of(row: RowMapping | Mapping[str, Any]) -> Memory:
    """A row as a ``Memory``; a damaged row is a StorageError naming fields, never values."""
    try:
        memory = Memory.model_validate(dict(row))
    except PydanticValidationError as exc:
        fields = sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]})
        raise StorageError(
            f"Memory {str(row.get('id'))[:40]!r} in the database is damaged ({', '.join(fields)}"
            "): restore it from an export or a backup, or delete it"
        ) from None
    memory._terms = str(row.get("terms") or "")  # what search judges relevance by
    return memory


def select_memories() -> Any:
    """``SELECT * FROM memories``, ready for ``.where`` / ``.order_by``."""
    return select(MEMORIES)


def memories(conn: Connection, query: Any) -> list[Memory]:
    """Run a ``select_memories()`` query."""
    return [memory_of(row) for row in conn.execute(query).mappings()]


def require(conn: Connection, namespace: str, memory_id: str) -> Memory:
    """The memory with this id in this namespace, or NotFoundError naming the fix."""
    row = conn.execute(_BY_ID, {"ns": namespace, "id": memory_id}).mappings().one_or_none()
    if row is None:
        raise NotFoundError(
            f"No memory with id {memory_id!r} in namespace {namespace!r}: "
            "check the id with store.list(include_archived=True)"
        )
    return memory_of(row)


def by_ids(conn: Connection, ids: Iterable[str]) -> dict[str, Memory]:
    """Current state of the given memories, by id (one query)."""
    wanted = list(dict.fromkeys(ids))
    found: dict[str, Memory] = {}
    for start in range(0, len(wanted), _CHUNK):  # SQLite caps the parameters per statement
        rows = conn.execute(_BY_IDS, {"ids": wanted[start : start + _CHUNK]}).mappings()
        found.update((row["id"], memory_of(row)) for row in rows)
    return found


def active_hashes(conn: Connection, namespace: str, digests: Sequence[str]) -> set[str]:
    """Which of ``digests`` are the content of an active memory of the namespace."""
    found: set[str] = set()
    for start in range(0, len(digests), 500):
        chunk = list(digests[start : start + 500])
        found.update(
            row[0]
            for row in conn.execute(
                select(m.content_hash).where(
                    m.namespace == namespace, m.archived_at.is_(None), m.content_hash.in_(chunk)
                )
            )
        )
    return found


def active_duplicate(conn: Connection, namespace: str, digest: str) -> str | None:
    """Id of the active memory whose content hashes to ``digest``, if any."""
    found = conn.execute(_ACTIVE_DUPLICATE, {"ns": namespace, "digest": digest})
    return found.scalar_one_or_none()


def reinforce(conn: Connection, namespace: str, ids: Sequence[str]) -> None:
    """Bump access counters of memories just returned to a caller, in one statement."""
    if ids:
        conn.execute(_REINFORCE, {"ns": namespace, "ids": list(ids), "now": utcnow()})


def _interpretation_values(item: NewMemory) -> dict[str, Any]:
    interp = item.interpretation
    if interp is None:  # pending: the raw text stands in until a judge scores it
        values: dict[str, Any] = {
            "content": item.content,
            "interpreted_content": item.content,
            "recall_terms": item.recall_terms,
            "terms": memory_terms(item.content, item.content, item.recall_terms, item.user_context),
            **dict.fromkeys(
                ("emotional_impact", "user_relevance", "novelty", "utility", "priority_score")
            ),
            "rationale": "",
            "score_source": item.score_source,
            **dict.fromkeys(("model", "prompt_version")),
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "judge_latency_ms": 0.0,
            "judge_retries": 0,
        }
    else:
        usage = interp.usage
        values = {
            "content": item.content,
            "interpreted_content": interp.interpreted_content,
            "recall_terms": item.recall_terms,
            "terms": memory_terms(
                item.content, interp.interpreted_content, item.recall_terms, item.user_context
            ),
            "emotional_impact": interp.emotional_impact,
            "user_relevance": interp.user_relevance,
            "novelty": interp.novelty,
            "utility": interp.utility,
            "priority_score": interp.priority_score,
            "rationale": interp.rationale,
            "score_source": item.score_source,
            "model": interp.model or (usage.model if usage else None),
            "prompt_version": interp.prompt_version,
            "prompt_tokens": usage.prompt_tokens if usage else 0,
            "completion_tokens": usage.completion_tokens if usage else 0,
            "judge_latency_ms": usage.latency_ms if usage else 0.0,
            "judge_retries": usage.retries if usage else 0,
        }
    if item.user_context is not None:
        values["user_context"] = item.user_context
    return values


def key_target(conn: Connection, namespace: str, key: str) -> tuple[str, str] | None:
    """``(memory_id, content_hash)`` an idempotency key already answers, if any."""
    row = conn.execute(
        select(KEYS.c.memory_id, KEYS.c.content_hash).where(
            KEYS.c.namespace == namespace, KEYS.c.key == key
        )
    ).first()
    return None if row is None else (row[0], row[1])


def bind_key(conn: Connection, namespace: str, key: str, memory_id: str, digest: str) -> str:
    """Record that ``key`` answers ``memory_id``; returns the memory the key answers.

    A key already bound to the same content keeps its first memory; bound to other
    content it is a ConflictError (a caller reused a key for a different save).
    """
    bound = key_target(conn, namespace, key)
    if bound is None:
        conn.execute(
            insert(KEYS).values(
                namespace=namespace,
                key=key,
                memory_id=memory_id,
                content_hash=digest,
                created_at=utcnow(),
            )
        )
        return memory_id
    if bound[1] != digest:
        raise ConflictError(
            f"Idempotency key {key!r} was already used for different content in namespace "
            f"{namespace!r}: use a new key for a new save."
        )
    return bound[0]


def pending_ids(conn: Connection, namespace: str, limit: int | None) -> list[str]:
    """Active memories still waiting for a judge, oldest first."""
    query = (
        select(m.id)
        .where(m.namespace == namespace, m.archived_at.is_(None), m.priority_score.is_(None))
        .order_by(m.created_at, m.id)
    )
    if limit is not None:
        query = query.limit(limit)
    return [row[0] for row in conn.execute(query)]


def insert_memory(
    conn: Connection, namespace: str, item: NewMemory, digest: str, via: str | None = None
) -> str:
    """Insert one memory and its ``save`` event; returns the new id.

    ``via`` names the operation when it is not a plain save (``"compress"``): an import
    keeps such a memory active as its source did (``export_file.restored_last``).
    """
    now = utcnow()
    memory_id = new_id()
    row = {
        "id": memory_id,
        "namespace": namespace,
        "content_hash": digest,
        "created_at": now,
        "updated_at": now,
        "last_accessed_at": now,
        "access_count": 0,
        "pinned": False,
        "version": 1,
        "user_context": None,
        **_interpretation_values(item),
    }
    detail = {"via": via} if via else None
    if conn.dialect.name == "postgresql":
        _insert_memory_at_once(conn, namespace, row, item, detail)
        return memory_id
    seq = conn.execute(_INSERT_MEMORY, row).scalar_one()
    if item.vector is not None:  # a new seq has no vector to replace
        _store_vector(conn, seq, item, replace=False)
    record(conn, namespace, [(memory_id, 1)], "save", now, detail)
    return memory_id


def _insert_memory_at_once(
    conn: Connection,
    namespace: str,
    row: dict[str, Any],
    item: NewMemory,
    detail: Mapping[str, Any] | None,
) -> None:
    """The memory, its vector and its ``save`` event in one statement (data-modifying CTEs).

    On a server each statement is a round trip made while the namespace's write lock is
    held: three become one.
    """
    new = insert(MEMORIES).values(**row).returning(m.seq).cte("aimem_new_memory")
    event = {
        "memory_id": row["id"],
        "namespace": namespace,
        "event": "save",
        "version": 1,
        "at": row["created_at"],
        "detail": json.dumps(dict(detail or {}), sort_keys=True),
    }
    statement = select(new.c.seq).add_cte(insert(HISTORY).values(**event).cte("aimem_new_event"))
    if item.vector is not None and item.embedding_model is not None:
        vector = insert(VECTORS).from_select(
            ["seq", "model", "dim", "vector"],
            select(
                new.c.seq,
                literal(item.embedding_model, String()),
                literal(len(item.vector) // 4, Integer()),  # float32
                literal(item.vector, LargeBinary()),
            ),
        )
        statement = statement.add_cte(vector.cte("aimem_new_vector"))
    conn.execute(statement).scalar_one()


def _store_vector(conn: Connection, seq: int, item: NewMemory, *, replace: bool = True) -> None:
    """Replace the memory's vector with the item's (or drop it: it described old content)."""
    if replace:
        conn.execute(_DELETE_VECTOR, {"seq": seq})
    if item.vector is not None and item.embedding_model is not None:
        dim = len(item.vector) // 4  # float32
        conn.execute(
            insert_vector_statement,
            {"seq": seq, "model": item.embedding_model, "dim": dim, "vector": item.vector},
        )


def replace_interpretation(
    conn: Connection,
    namespace: str,
    memory_id: str,
    item: NewMemory,
    digest: str,
    event: str = "update",
) -> None:
    """New content and judgement for an existing memory (``update``, ``judge``), version + 1."""
    version = set_fields(
        conn,
        namespace,
        memory_id,
        # what the user says now is the current fact, whatever an earlier save contested
        {**_interpretation_values(item), "content_hash": digest, "contested_by": None},
    )
    seq = conn.execute(select(m.seq).where(m.id == memory_id)).scalar_one()
    _store_vector(conn, seq, item)
    record(conn, namespace, [(memory_id, version)], event, utcnow())


def set_fields(conn: Connection, namespace: str, memory_id: str, values: Mapping[str, Any]) -> int:
    """Change fields of one memory, bumping version and updated_at; returns the new version."""
    version = conn.execute(
        update(MEMORIES)
        .where(m.namespace == namespace, m.id == memory_id)
        .values(**values, version=m.version + 1, updated_at=utcnow())
        .returning(m.version)
    ).scalar_one_or_none()
    if version is None:
        raise NotFoundError(f"No memory with id {memory_id!r} in namespace {namespace!r}")
    return int(version)


def record(
    conn: Connection,
    namespace: str,
    versions: Sequence[tuple[str, int]],
    event: str,
    at: datetime,
    detail: Mapping[str, Any] | None = None,
) -> None:
    """Append one history event per ``(memory_id, version)`` (never the memory's text)."""
    if versions:
        payload = json.dumps(dict(detail or {}), sort_keys=True)
        conn.execute(
            _INSERT_HISTORY,
            [
                {
                    "memory_id": memory_id,
                    "namespace": namespace,
                    "event": event,
                    "version": version,
                    "at": at,
                    "detail": payload,
                }
                for memory_id, version in versions
            ],
        )


def delete_memory(conn: Connection, namespace: str, memory_id: str) -> None:
    """Hard-delete one memory, logging the event first; no other row keeps a link to it."""
    current = require(conn, namespace, memory_id)
    record(conn, namespace, [(memory_id, current.version)], "delete", utcnow())
    conn.execute(sql_delete(MEMORIES).where(m.namespace == namespace, m.id == memory_id))
    for link in (m.superseded_by, m.contested_by):  # links, not what they say: same version
        conn.execute(
            update(MEMORIES).where(m.namespace == namespace, link == memory_id).values({link: None})
        )


# -- stats and core --------------------------------------------------------------------


def namespace_stats(conn: Connection, namespace: str) -> dict[str, Any]:
    """Counts and token totals of one namespace, in one aggregate query."""
    active = m.archived_at.is_(None)
    judged = m.priority_score.is_not(None)

    def flag(condition: Any) -> Any:
        return func.sum(case((condition, 1), else_=0).cast(Integer))

    row = (
        conn.execute(
            select(
                func.count().label("total"),
                flag(~active).label("archived"),
                flag(active & ~judged).label("pending"),
                flag(active & (m.pinned == true())).label("pinned"),
                flag(active).label("count"),
                func.avg(case((active, m.priority_score), else_=None)).label("mean_priority"),
                func.coalesce(func.sum(m.prompt_tokens), 0).label("prompt_tokens"),
                func.coalesce(func.sum(m.completion_tokens), 0).label("completion_tokens"),
            ).where(m.namespace == namespace)
        )
        .mappings()
        .one()
    )
    return {k: (v if k == "mean_priority" else int(v or 0)) for k, v in row.items()}


def get_core(conn: Connection, namespace: str) -> str:
    """The namespace's core text ('' until set)."""
    value = conn.execute(
        select(CORE.c.text).where(CORE.c.namespace == namespace)
    ).scalar_one_or_none()
    return str(value or "")


def set_core(conn: Connection, namespace: str, text_: str) -> None:
    """Replace the namespace's core text."""
    now = utcnow()
    updated = conn.execute(
        update(CORE).where(CORE.c.namespace == namespace).values(text=text_, updated_at=now)
    )
    if updated.rowcount == 0:
        conn.execute(insert(CORE).values(namespace=namespace, text=text_, updated_at=now))


def list_query(
    namespace: str,
    min_score: float | None,
    limit: int | None,
    order: str,
    include_archived: bool,
) -> Any:
    """The query behind ``Backend.list_memories``: priority order (pending last) or newest first."""
    query = select_memories().where(m.namespace == namespace)
    if not include_archived:
        query = query.where(m.archived_at.is_(None))
    if min_score is not None:
        query = query.where(m.priority_score >= min_score)
    if order == "priority":
        query = query.order_by(
            m.priority_score.is_(None),
            m.priority_score.desc(),
            m.created_at.desc(),
            m.id.desc(),
        )
    else:
        query = query.order_by(m.created_at.desc(), m.id.desc())
    if limit is not None:
        query = query.limit(limit)
    return query


def ids_with_prefix(conn: Connection, namespace: str, prefix: str, limit: int) -> list[str]:
    """Ids of the namespace that start with ``prefix`` (a LIKE on the primary key's index)."""
    query = (
        select(MEMORIES.c.id)
        .where(MEMORIES.c.namespace == namespace, MEMORIES.c.id.startswith(prefix, autoescape=True))
        .order_by(MEMORIES.c.id)
        .limit(limit)
    )
    return [row[0] for row in conn.execute(query)]


def all_ids(conn: Connection, namespace: str) -> list[str]:
    """Every id of the namespace, archived included."""
    query = select(MEMORIES.c.id).where(MEMORIES.c.namespace == namespace)
    return [row[0] for row in conn.execute(query)]
