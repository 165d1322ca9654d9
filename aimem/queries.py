"""SQL building blocks run inside one of the store's transactions (SQLAlchemy Core).

Each function takes an open ``Connection`` and does one thing; ``store.py`` decides
which run together in a transaction. Core statements, not ORM sessions: a save runs a
dozen of them and the unit-of-work bookkeeping would cost more than SQLite itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError as PydanticValidationError
from sqlalchemy import (
    Connection,
    Integer,
    Table,
    bindparam,
    case,
    false,
    func,
    insert,
    select,
    true,
    update,
)
from sqlalchemy import delete as sql_delete
from sqlalchemy.engine import RowMapping
from sqlalchemy.sql.elements import BindParameter

from .capacity import Candidate, CapacityPolicy, choose_forgotten, needed_candidates
from .exceptions import ConflictError, NotFoundError, StorageError
from .ids import content_hash, new_id
from .keywords import index_terms, match_any, query_terms, quote, scoped
from .models import Interpretation, Memory
from .tables import (
    CoreRow,
    HistoryRow,
    IdempotencyRow,
    MemoryRow,
    NamespaceCountRow,
    VectorRow,
    utcnow,
)

__all__ = [
    "NewMemory",
    "SearchFilters",
    "active_duplicate",
    "active_hashes",
    "active_vectors",
    "apply_capacity",
    "archive_all_unpinned",
    "bind_key",
    "by_ids",
    "compact_active_index",
    "content_hash",
    "contents_to_embed",
    "count_active_vectors",
    "count_capped",
    "delete_memory",
    "events_since",
    "get_core",
    "insert_memory",
    "key_target",
    "keyword_matches",
    "last_event",
    "memories",
    "memory_of",
    "namespace_stats",
    "namespace_vectors",
    "pending_ids",
    "plan_capacity",
    "record",
    "reinforce",
    "replace_interpretation",
    "replace_vectors",
    "require",
    "select_memories",
    "set_core",
    "set_fields",
    "vector_dim",
]

MEMORIES: Table = MemoryRow.__table__  # type: ignore[attr-defined]
HISTORY: Table = HistoryRow.__table__  # type: ignore[attr-defined]
CORE: Table = CoreRow.__table__  # type: ignore[attr-defined]
COUNTS: Table = NamespaceCountRow.__table__  # type: ignore[attr-defined]
VECTORS: Table = VectorRow.__table__  # type: ignore[attr-defined]
KEYS: Table = IdempotencyRow.__table__  # type: ignore[attr-defined]
m = MEMORIES.c

# Statements on the save path are built once: constructing a SQLAlchemy expression
# costs more than SQLite takes to run it, and a prebuilt one also reuses its cache key.
_NS: BindParameter[str] = bindparam("ns")
_ID: BindParameter[str] = bindparam("id")
_IDS: BindParameter[list[str]] = bindparam("ids", expanding=True)
#: Ids per statement where a caller may pass many (SQLite allows 32,766 parameters).
_CHUNK = 10_000


def _of_namespace(namespace: Any) -> Any:
    """The namespace test for statements keyed by id lists.

    Wrapped in SQLite's likely() hint: without it the planner takes the namespace index
    for ``id IN (...)`` and walks every memory of the namespace instead of a few ids.
    """
    return func.likely(m.namespace == namespace)


_BY_ID = select(MEMORIES).where(m.namespace == _NS, m.id == _ID)
_BY_IDS = select(MEMORIES).where(m.id.in_(_IDS))
_BY_SEQS = select(MEMORIES).where(m.seq.in_(bindparam("seqs", expanding=True)))
_ACTIVE_DUPLICATE = (
    select(m.id)
    .where(m.namespace == _NS, m.content_hash == bindparam("digest"), m.archived_at.is_(None))
    .limit(1)
)
_REINFORCE = (
    update(MEMORIES)
    .where(_of_namespace(_NS), m.id.in_(_IDS))
    .values(access_count=m.access_count + 1, last_accessed_at=bindparam("now"))
)
_INSERT_MEMORY = insert(MEMORIES).returning(m.seq)
_DELETE_VECTOR = sql_delete(VECTORS).where(VECTORS.c.seq == bindparam("seq"))
_INSERT_VECTOR = insert(VECTORS)
_INSERT_HISTORY = insert(HISTORY)
_COUNT_CAPPED = select(COUNTS.c.capped).where(COUNTS.c.namespace == _NS)
_CAPPED = (
    (m.namespace == _NS)
    & m.archived_at.is_(None)
    & (m.pinned == false())
    & m.priority_score.is_not(None)
)
_FORGETTING_ORDER = (m.priority_score, m.created_at, m.id)
_BELOW_MIN = (
    select(m.id, m.priority_score, m.created_at)
    .where(_CAPPED & (m.priority_score < bindparam("threshold")))
    .order_by(*_FORGETTING_ORDER)
)
_LOWEST_ABOVE_MIN = (
    select(m.id, m.priority_score, m.created_at)
    .where(_CAPPED & (m.priority_score >= bindparam("threshold")))
    .order_by(*_FORGETTING_ORDER)
    .limit(bindparam("limit"))
)
_ARCHIVE = (
    update(MEMORIES)
    .where(_of_namespace(_NS), m.id.in_(_IDS))
    .values(
        archived_at=bindparam("now"),
        archive_reason=bindparam("reason"),
        version=m.version + 1,
        updated_at=bindparam("now"),
    )
    .returning(m.id, m.version)
)


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
        return Memory.model_validate(dict(row))
    except PydanticValidationError as exc:
        fields = sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]})
        raise StorageError(
            f"Memory {str(row.get('id'))[:40]!r} in the database is damaged ({', '.join(fields)}"
            "): restore it from an export or a backup, or delete it"
        ) from None


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
            "terms": index_terms((item.content, item.content)),
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
            "terms": index_terms((item.content, interp.interpreted_content)),
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


def insert_memory(conn: Connection, namespace: str, item: NewMemory, digest: str) -> str:
    """Insert one memory and its ``save`` event; returns the new id."""
    now = utcnow()
    memory_id = new_id()
    values = {"user_context": None, **_interpretation_values(item)}
    seq = conn.execute(
        _INSERT_MEMORY,
        {
            "id": memory_id,
            "namespace": namespace,
            "content_hash": digest,
            "created_at": now,
            "updated_at": now,
            "last_accessed_at": now,
            "access_count": 0,
            "pinned": False,
            "version": 1,
            **values,
        },
    ).scalar_one()
    if item.vector is not None:  # a new seq has no vector to replace
        _store_vector(conn, seq, item, replace=False)
    record(conn, namespace, [(memory_id, 1)], "save", now)
    return memory_id


def _store_vector(conn: Connection, seq: int, item: NewMemory, *, replace: bool = True) -> None:
    """Replace the memory's vector with the item's (or drop it: it described old content)."""
    if replace:
        conn.execute(_DELETE_VECTOR, {"seq": seq})
    if item.vector is not None and item.embedding_model is not None:
        dim = len(item.vector) // 4  # float32
        conn.execute(
            _INSERT_VECTOR,
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
        {**_interpretation_values(item), "content_hash": digest},
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
    """Hard-delete one memory, logging the event first."""
    current = require(conn, namespace, memory_id)
    record(conn, namespace, [(memory_id, current.version)], "delete", utcnow())
    conn.execute(sql_delete(MEMORIES).where(m.namespace == namespace, m.id == memory_id))


# -- capacity ------------------------------------------------------------------------


def count_capped(conn: Connection, namespace: str) -> int:
    """Active, unpinned, judged memories: one row kept exact by triggers, never a count."""
    return int(conn.execute(_COUNT_CAPPED, {"ns": namespace}).scalar_one_or_none() or 0)


def _candidates(conn: Connection, statement: Any, params: dict[str, Any]) -> list[Candidate]:
    return [Candidate(i, float(p), c) for i, p, c in conn.execute(statement, params)]


def plan_capacity(
    conn: Connection,
    namespace: str,
    policy: CapacityPolicy,
    protected: frozenset[str] = frozenset(),
) -> list[tuple[Candidate, str]]:
    """What the capacity rules would archive now, reading only what can be archived.

    Every below-min row, then the few lowest above it. With auto-prune on, below-min
    rows are archived as they arrive, so the first query normally returns at most the
    memory just saved; nothing here scans the namespace.
    """
    active = count_capped(conn, namespace)
    params: dict[str, Any] = {"ns": namespace, "threshold": policy.min_priority_score}
    below = _candidates(conn, _BELOW_MIN, params)
    wanted = needed_candidates(active - len(below), policy.max_memories, len(protected))
    above = _candidates(conn, _LOWEST_ABOVE_MIN, {**params, "limit": wanted}) if wanted else []
    return choose_forgotten(below + above, active=active, policy=policy, protected=protected)


def _archive(
    conn: Connection, namespace: str, ids: Sequence[str], reason: str, now: datetime
) -> None:
    if not ids:
        return
    params = {"ns": namespace, "ids": list(ids), "now": now, "reason": reason}
    rows = conn.execute(_ARCHIVE, params).all()
    record(conn, namespace, [(i, v) for i, v in rows], "archive", now, {"reason": reason})


def apply_capacity(
    conn: Connection,
    namespace: str,
    policy: CapacityPolicy,
    protected: frozenset[str] = frozenset(),
) -> list[str]:
    """Archive what the capacity rules choose; returns the archived ids in forgetting order."""
    chosen = plan_capacity(conn, namespace, policy, protected)
    now = utcnow()
    for reason in dict.fromkeys(r for _, r in chosen):
        _archive(conn, namespace, [c.id for c, r in chosen if r == reason], reason, now)
    return [c.id for c, _ in chosen]


def archive_all_unpinned(conn: Connection, namespace: str, reason: str) -> list[str]:
    """Archive every active unpinned memory (``compress``); returns their ids."""
    ids = list(
        conn.execute(
            select(m.id).where(
                m.namespace == namespace, m.archived_at.is_(None), m.pinned == false()
            )
        ).scalars()
    )
    _archive(conn, namespace, ids, reason, utcnow())
    return ids


# -- search and stats ----------------------------------------------------------------


def keyword_matches(
    conn: Connection,
    namespace: str,
    query: str,
    *,
    limit: int,
    filters: SearchFilters = SearchFilters(),
    related: bool = False,
) -> list[tuple[Memory, float]]:
    """BM25 keyword matches as ``(memory, bm25)``; lower bm25 is better (SQLite's sign).

    Only terms whose matches fit a budget are ranked (see ``affordable_terms``): a tight
    one for the ``related`` lookup on every save, a generous one for searches.
    """
    index = "memories_fts" if filters.include_archived else "memories_active_fts"
    terms = scoped(query_terms(query), namespace)
    if related:
        # Novelty needs a few close memories, not every match: when each word of the
        # content is common, the lookup finds nothing rather than ranking half the store.
        terms = affordable_terms(
            conn, index, terms, RELATED_POSTINGS, _RELATED_TERMS, keep_rarest=False
        )
    else:
        terms = affordable_terms(conn, index, terms, SEARCH_POSTINGS, len(terms))
    match = match_any(terms)
    if match is None:
        return []
    # Rank inside the index alone, then keep the namespace's rows that pass the filters.
    # Joining memories into the ranking query would look up every matching row, which
    # costs more than the ranking; widen the window only when too few rows survive.
    window = limit * 2
    while True:
        ranked = conn.exec_driver_sql(
            f"SELECT rowid, bm25({index}) AS rank FROM {index} WHERE {index} MATCH ? "
            "ORDER BY rank LIMIT ?",
            (match, window),
        ).all()
        rows = conn.execute(_BY_SEQS, {"seqs": [r[0] for r in ranked]}).mappings()
        found = {
            row["seq"]: memory
            for row in rows
            if (memory := memory_of(row)).namespace == namespace and filters.admits(memory)
        }
        if len(found) >= limit or len(ranked) < window:
            break
        window *= 4
    hits = [(found[seq], float(rank)) for seq, rank in ranked if seq in found]
    return hits[:limit]


#: Postings (term occurrences in memories) one search may rank, and a related lookup.
SEARCH_POSTINGS = 10_000
RELATED_POSTINGS = 300
_RELATED_TERMS = 6


def affordable_terms(
    conn: Connection,
    index: str,
    terms: Sequence[str],
    budget: int,
    max_terms: int,
    *,
    keep_rarest: bool = True,
) -> list[str]:
    """The rarest of ``terms`` whose memories add up to at most ``budget``.

    SQLite ranks every memory that matches any term, so a common word makes a query
    slow while adding almost nothing: BM25 weighs a term by its rarity. Terms are taken
    rarest first (absent ones skipped) while their document counts fit the budget. When
    none fits, ``keep_rarest`` keeps one anyway (a search must answer something);
    otherwise nothing is kept. In a small store every term fits and nothing changes.
    Counting stops just past the budget, so one statement prices all terms cheaply; past
    it, counts tie, which is why an over-budget term is never chosen by "rarity".
    """
    if not terms:
        return []
    # One statement whose text depends only on the number of terms; run below SQLAlchemy's
    # compiler, which would otherwise compile each new text afresh.
    count = f"(SELECT count(*) FROM (SELECT 1 FROM {index} WHERE {index} MATCH ? LIMIT ?))"
    sql = "SELECT " + ", ".join([count] * len(terms))
    params = tuple(p for t in terms for p in (quote(t), budget + 1))
    counts = conn.exec_driver_sql(sql, params).one()
    chosen: list[str] = []
    spent = 0
    for df, i in sorted((df, i) for i, df in enumerate(counts) if df):
        over = spent + df > budget
        if len(chosen) == max_terms or (over and (chosen or not keep_rarest)):
            break
        chosen.append(terms[i])
        spent += df
    return chosen


# -- vectors -------------------------------------------------------------------------


def active_vectors(
    conn: Connection, namespace: str, model: str, ids: Sequence[str] | None = None
) -> Iterator[tuple[str, bytes]]:
    """``(memory id, packed vector)`` of active memories embedded by ``model``, streamed.

    Streamed rather than listed: a 100k-memory namespace's vectors are 150 MB, and a
    list would hold a second copy while the index is built.
    """
    query = (
        select(m.id, VECTORS.c.vector)
        .join_from(MEMORIES, VECTORS, VECTORS.c.seq == m.seq)
        .where(m.archived_at.is_(None), VECTORS.c.model == model)
    )
    if ids is None:
        query = query.where(m.namespace == namespace)
    else:
        query = query.where(m.id.in_(list(ids)), _of_namespace(namespace))
    for memory_id, blob in conn.execute(query):
        yield memory_id, bytes(blob)


def count_active_vectors(conn: Connection, namespace: str, model: str) -> int:
    """How many active memories of a namespace have a vector from ``model``."""
    query = (
        select(func.count())
        .select_from(MEMORIES)
        .join(VECTORS, VECTORS.c.seq == m.seq)
        .where(m.namespace == namespace, m.archived_at.is_(None), VECTORS.c.model == model)
    )
    return int(conn.execute(query).scalar_one())


def vector_dim(conn: Connection, namespace: str, model: str) -> int | None:
    """The dimension of the namespace's vectors from ``model`` (all share one), if any."""
    query = (
        select(VECTORS.c.dim)
        .join_from(MEMORIES, VECTORS, VECTORS.c.seq == m.seq)
        .where(m.namespace == namespace, VECTORS.c.model == model)
        .limit(1)
    )
    found = conn.execute(query).scalar_one_or_none()
    return None if found is None else int(found)


def contents_to_embed(
    conn: Connection, namespace: str, model: str, *, missing_only: bool
) -> list[tuple[str, int, str]]:
    """``(id, seq, content)`` of all memories (archived too), or only those lacking one."""
    query = select(m.id, m.seq, m.content).where(m.namespace == namespace).order_by(m.seq)
    if missing_only:
        has = select(VECTORS.c.seq).where(VECTORS.c.seq == m.seq, VECTORS.c.model == model)
        query = query.where(~has.exists())
    return [(str(i), int(seq), str(c)) for i, seq, c in conn.execute(query)]


def replace_vectors(
    conn: Connection,
    namespace: str,
    model: str,
    vectors: Sequence[tuple[str, int, bytes]],
    *,
    clear: bool,
) -> int:
    """Store ``(id, seq, packed vector)`` as the memories' vectors from ``model``.

    With ``clear``, every vector of the namespace goes first (another model's too), so
    afterwards the namespace holds vectors of one embedder only. Each memory gets a
    ``reembed`` history event, so other processes' vector indexes catch up.
    """
    if clear:
        conn.execute(
            sql_delete(VECTORS).where(
                VECTORS.c.seq.in_(select(m.seq).where(m.namespace == namespace))
            )
        )
    else:
        seqs = [seq for _, seq, _ in vectors]
        for start in range(0, len(seqs), 500):
            conn.execute(sql_delete(VECTORS).where(VECTORS.c.seq.in_(seqs[start : start + 500])))
    if vectors:
        conn.execute(
            _INSERT_VECTOR,
            [
                {"seq": seq, "model": model, "dim": len(blob) // 4, "vector": blob}
                for _, seq, blob in vectors
            ],
        )
        ids = [i for i, _, _ in vectors]
        now = utcnow()
        for start in range(0, len(ids), 500):
            rows = conn.execute(
                select(m.id, m.version).where(m.id.in_(ids[start : start + 500]))
            ).all()
            record(conn, namespace, [(str(i), int(v)) for i, v in rows], "reembed", now)
    return len(vectors)


def namespace_vectors(conn: Connection, namespace: str, model: str) -> list[tuple[str, bytes]]:
    """``(memory id, packed vector)`` of every memory of a namespace, archived ones too."""
    query = (
        select(m.id, VECTORS.c.vector)
        .join_from(MEMORIES, VECTORS, VECTORS.c.seq == m.seq)
        .where(m.namespace == namespace, VECTORS.c.model == model)
    )
    return [(i, bytes(v)) for i, v in conn.execute(query)]


def last_event(conn: Connection) -> int:
    """Id of the newest history event (0 for none): a cursor into what changed since."""
    return int(conn.execute(select(func.max(HISTORY.c.id))).scalar_one_or_none() or 0)


def events_since(conn: Connection, namespace: str, after: int) -> list[tuple[int, str, str]]:
    """``(event id, memory id, event)`` of a namespace after event ``after``, oldest first."""
    query = (
        select(HISTORY.c.id, HISTORY.c.memory_id, HISTORY.c.event)
        .where(HISTORY.c.id > after, HISTORY.c.namespace == namespace)
        .order_by(HISTORY.c.id)
    )
    return [(int(i), str(mid), str(e)) for i, mid, e in conn.execute(query)]


def compact_active_index(conn: Connection) -> None:
    """Merge the active keyword index so deleted entries stop costing every query.

    FTS5 keeps a tombstone for each archived memory until its segments merge; in a
    capped store nearly every memory is archived eventually, so without this the
    small active index would drag along the whole history.
    """
    conn.exec_driver_sql("INSERT INTO memories_active_fts(memories_active_fts) VALUES ('optimize')")


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
