"""The only module that touches the database: queries, transactions, history, schema.

Every method is synchronous and takes the namespace explicitly; the facades in
``memory.py`` call them (from a worker thread in the async one). Writes run in
``BEGIN IMMEDIATE`` transactions so concurrent writers queue on SQLite's busy
timeout instead of failing half way, and no LLM call ever happens inside one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from sqlalchemy import Engine, Integer, case, event, func, text, update
from sqlalchemy import select as sa_select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlmodel import Session, SQLModel, col, create_engine, delete, select

from .capacity import Candidate, CapacityPolicy, choose_forgotten, needed_candidates
from .exceptions import AimemError, NotFoundError, StorageError
from .models import Interpretation, Memory, Stats
from .tables import (
    SCHEMA_VERSION,
    SQLITE_FTS_DDL,
    CoreRow,
    HistoryRow,
    MemoryRow,
    MetaRow,
    NamespaceCountRow,
    utcnow,
)

__all__ = ["Database", "NewMemory", "content_hash"]

log = logging.getLogger("aimem")

T = TypeVar("T")
Order = Literal["priority", "recent"]

#: How long a writer waits for SQLite's lock before our own retry loop takes over.
BUSY_TIMEOUT_MS = 10_000
_LOCK_RETRIES = 5
_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_QUERY_TERMS = 32


def content_hash(content: str) -> str:
    """Exact-duplicate key: SHA-256 of the verbatim content."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class NewMemory:
    """A judged (or client-scored) memory ready to insert."""

    content: str
    interpretation: Interpretation
    score_source: str
    user_context: str | None = None


def _memory(row: MemoryRow) -> Memory:
    return Memory.model_validate(row, from_attributes=True)


# Words that match most memories and say nothing about any of them: OR-ing them into a
# query only makes SQLite rank every row. Dropped unless a query has nothing else.
_STOPWORDS = frozenset(
    "a an and are as at be but by do does did for from had has have he her him his how i "
    "i'm in is it its me my of on or our she so that the their them they this to was we "
    "were what when where which who why will with you your s t m ll re ve d".split()
)


def fts_query(text_: str) -> str | None:
    """Turn free text into an FTS5 query that can never be parsed as FTS syntax.

    Each word becomes a quoted term and the terms are OR-ed: a raw sentence passed
    to MATCH is an implicit AND and would find almost nothing.
    """
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text_)))
    terms = [w for w in words if w not in _STOPWORDS] or words
    terms = terms[:_MAX_QUERY_TERMS]
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class Database:
    """A SQLite (or any SQLAlchemy) database holding memories of many namespaces."""

    def __init__(self, url: str) -> None:
        self.url = url
        parsed = make_url(url)
        if parsed.get_backend_name() != "sqlite":
            raise StorageError(
                "This version of aimem stores memories in SQLite only: use a URL such as "
                "sqlite:///agent.db (PostgreSQL support is planned, not yet available)"
            )
        database = parsed.database or ""
        if database in ("", ":memory:") or database.startswith("file:"):
            raise StorageError(
                "aimem needs a SQLite file, not an in-memory database: "
                "pass a path such as sqlite:///agent.db"
            )
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self.engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000}
        )
        _install_sqlite_hooks(self.engine)
        self._writer = self.engine.execution_options(aimem_write=True)
        self._with_retry(self._init_schema)

    def close(self) -> None:
        """Release every pooled connection."""
        self.engine.dispose()

    # -- sessions and retries ---------------------------------------------------------

    @contextmanager
    def _read(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session:
            yield session

    @contextmanager
    def _write(self) -> Iterator[Session]:
        with Session(self._writer, expire_on_commit=False) as session, session.begin():
            yield session

    def _with_retry(self, operation: Callable[[], T]) -> T:
        """Run ``operation``, retrying a bounded number of times while SQLite stays locked."""
        for attempt in range(_LOCK_RETRIES):
            try:
                return operation()
            except OperationalError as exc:
                if not _is_lock_error(exc) or attempt == _LOCK_RETRIES - 1:
                    raise StorageError(f"Database error: {_short(exc)}") from exc
                time.sleep(0.05 * 2**attempt)
            except AimemError:
                raise
            except SQLAlchemyError as exc:
                raise StorageError(f"Database error: {_short(exc)}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _init_schema(self) -> None:
        with self._writer.connect() as conn, conn.begin():
            SQLModel.metadata.create_all(conn)
            for ddl in SQLITE_FTS_DDL:
                conn.exec_driver_sql(ddl)
            stored = conn.execute(
                select(MetaRow.value).where(MetaRow.key == "schema_version")
            ).scalar_one_or_none()
            if stored is None:
                conn.execute(
                    MetaRow.__table__.insert().values(  # type: ignore[attr-defined]
                        key="schema_version", value=str(SCHEMA_VERSION)
                    )
                )
            elif int(stored) > SCHEMA_VERSION:
                raise StorageError(
                    f"This database uses schema version {stored}, newer than this aimem "
                    f"understands ({SCHEMA_VERSION}): upgrade aimem."
                )

    # -- reads ----------------------------------------------------------------------

    def get(self, namespace: str, memory_id: str) -> Memory:
        """One memory, archived or not; NotFoundError outside the namespace."""
        return self._with_retry(lambda: _memory(self._get_row_read(namespace, memory_id)))

    def _get_row_read(self, namespace: str, memory_id: str) -> MemoryRow:
        with self._read() as session:
            return _require(session, namespace, memory_id)

    def list_memories(
        self,
        namespace: str,
        *,
        min_score: float | None = None,
        limit: int | None = None,
        order: Order = "priority",
        include_archived: bool = False,
    ) -> list[Memory]:
        """Memories in priority order (pending last) or newest first."""

        def run() -> list[Memory]:
            query = select(MemoryRow).where(MemoryRow.namespace == namespace)
            if not include_archived:
                query = query.where(col(MemoryRow.archived_at).is_(None))
            if min_score is not None:
                query = query.where(col(MemoryRow.priority_score) >= min_score)
            if order == "priority":
                query = query.order_by(
                    col(MemoryRow.priority_score).is_(None),
                    col(MemoryRow.priority_score).desc(),
                    col(MemoryRow.created_at).desc(),
                    col(MemoryRow.id).desc(),
                )
            else:
                query = query.order_by(col(MemoryRow.created_at).desc(), col(MemoryRow.id).desc())
            if limit is not None:
                query = query.limit(limit)
            with self._read() as session:
                return [_memory(r) for r in session.exec(query)]

        return self._with_retry(run)

    def find_active_duplicate(self, namespace: str, digest: str) -> Memory | None:
        """The active memory with exactly this content, reinforced; None if there is none."""

        def run() -> Memory | None:
            # Most saves are new content: look first without taking the write lock.
            with self._read() as session:
                if _active_duplicate(session, namespace, digest) is None:
                    return None
            with self._write() as session:
                row = _active_duplicate(session, namespace, digest)
                if row is None:  # archived or deleted in between
                    return None
                _reinforce(session, [row.id])
                session.flush()
                session.refresh(row)
                return _memory(row)

        return self._with_retry(run)

    def keyword_search(
        self,
        namespace: str,
        query: str,
        *,
        limit: int,
        min_score: float | None = None,
        include_archived: bool = False,
    ) -> list[tuple[Memory, float]]:
        """BM25 keyword matches as ``(memory, bm25)``; lower bm25 is better (SQLite's sign)."""
        match = fts_query(query)
        if match is None:
            return []

        def run() -> list[tuple[Memory, float]]:
            sql = (
                "SELECT m.seq, bm25(memories_fts) AS rank FROM memories_fts "
                "JOIN memories m ON m.seq = memories_fts.rowid "
                "WHERE memories_fts MATCH :match AND m.namespace = :ns "
                + ("" if include_archived else "AND m.archived_at IS NULL ")
                + ("" if min_score is None else "AND m.priority_score >= :min ")
                + "ORDER BY rank LIMIT :limit"
            )
            params = {"match": match, "ns": namespace, "min": min_score, "limit": limit}
            with self._read() as session:
                ranked = session.connection().execute(text(sql), params).all()
                if not ranked:
                    return []
                seqs = [r[0] for r in ranked]
                rows = {
                    r.seq: r
                    for r in session.exec(select(MemoryRow).where(col(MemoryRow.seq).in_(seqs)))
                }
                return [(_memory(rows[seq]), float(rank)) for seq, rank in ranked]

        return self._with_retry(run)

    def related(self, namespace: str, content: str, limit: int) -> list[Memory]:
        """Active memories sharing words with ``content``, best first, for judging novelty."""
        if limit <= 0:
            return []
        return [m for m, _ in self.keyword_search(namespace, content, limit=limit)]

    def stats(self, namespace: str, policy: CapacityPolicy) -> Stats:
        """Counts and token totals of one namespace, in one query."""

        def run() -> Stats:
            active = col(MemoryRow.archived_at).is_(None)
            judged = col(MemoryRow.priority_score).is_not(None)
            query = sa_select(
                func.count(),
                func.sum((active & judged & ~col(MemoryRow.pinned)).cast(int_type())),
                func.sum((~active).cast(int_type())),
                func.sum((active & ~judged).cast(int_type())),
                func.sum((active & col(MemoryRow.pinned)).cast(int_type())),
                func.avg(_case_active_priority()),
                func.sum(MemoryRow.prompt_tokens),
                func.sum(MemoryRow.completion_tokens),
            ).where(col(MemoryRow.namespace) == namespace)
            with self._read() as session:
                total, capped, archived, pending, pinned, mean, ptok, ctok = session.execute(
                    query
                ).one()
            return Stats(
                namespace=namespace,
                count=int(capped or 0) + int(pinned or 0) + int(pending or 0),
                archived=int(archived or 0),
                pending=int(pending or 0),
                pinned=int(pinned or 0),
                total=int(total or 0),
                mean_priority=None if mean is None else float(mean),
                prompt_tokens=int(ptok or 0),
                completion_tokens=int(ctok or 0),
                max_memories=policy.max_memories,
                min_priority_score=policy.min_priority_score,
            )

        return self._with_retry(run)

    def get_core(self, namespace: str) -> str:
        """The namespace's core text ('' until set)."""

        def run() -> str:
            with self._read() as session:
                row = session.get(CoreRow, namespace)
                return row.text if row else ""

        return self._with_retry(run)

    # -- writes ---------------------------------------------------------------------

    def insert(
        self,
        namespace: str,
        items: Sequence[NewMemory],
        policy: CapacityPolicy,
        *,
        archive_others: str | None = None,
    ) -> tuple[list[Memory], list[Memory]]:
        """Insert judged memories and run the capacity manager, all in one transaction.

        An item whose exact content became active meanwhile (another writer) is not
        inserted twice: the existing memory is returned, reinforced. With
        ``archive_others`` every other active unpinned memory is archived with that
        reason first (``compress``).

        Returns:
            ``(memories in input order, memories archived by this transaction)``.
        """

        def run() -> tuple[list[Memory], list[Memory]]:
            now = utcnow()
            with self._write() as session:
                archived_rows: list[MemoryRow] = []
                if archive_others is not None:
                    archived_rows += _archive_all_unpinned(session, namespace, archive_others, now)
                rows: list[MemoryRow] = []
                fresh: dict[str, MemoryRow] = {}
                for item in items:
                    digest = content_hash(item.content)
                    existing = fresh.get(digest) or _active_duplicate(session, namespace, digest)
                    if existing is not None:
                        _reinforce(session, [existing.id])
                        rows.append(existing)
                        continue
                    row = _new_row(namespace, item, digest, now=utcnow())
                    session.add(row)
                    session.flush()
                    _history(session, row, "save", {"priority_score": row.priority_score})
                    fresh[digest] = row
                    rows.append(row)
                if policy.auto_prune:
                    archived_rows += _apply_capacity(session, namespace, policy, now=now)
                session.flush()
                for row in {id(r): r for r in rows}.values():
                    session.refresh(row)
                return [_memory(r) for r in rows], [_memory(r) for r in archived_rows]

        return self._with_retry(run)

    def reinterpret(
        self,
        namespace: str,
        memory_id: str,
        item: NewMemory,
        policy: CapacityPolicy,
    ) -> tuple[Memory, list[Memory]]:
        """Replace a memory's content and judgement (``update``), then run the capacity manager."""

        def run() -> tuple[Memory, list[Memory]]:
            now = utcnow()
            with self._write() as session:
                row = _require(session, namespace, memory_id)
                _set_interpretation(row, item)
                row.content_hash = content_hash(item.content)
                row.updated_at = now
                row.version += 1
                session.add(row)
                session.flush()
                _history(session, row, "update", {"priority_score": row.priority_score})
                archived = (
                    _apply_capacity(session, namespace, policy, now=now)
                    if (policy.auto_prune and row.archived_at is None)
                    else []
                )
                session.flush()
                session.refresh(row)
                return _memory(row), [_memory(r) for r in archived]

        return self._with_retry(run)

    def set_pinned(self, namespace: str, memory_id: str, pinned: bool) -> Memory:
        """Pin or unpin; unpinning can push the namespace over its cap, so callers prune."""

        def run() -> Memory:
            with self._write() as session:
                row = _require(session, namespace, memory_id)
                if row.pinned != pinned:
                    row.pinned = pinned
                    row.version += 1
                    row.updated_at = utcnow()
                    session.add(row)
                    session.flush()
                    _history(session, row, "pin" if pinned else "unpin", {})
                return _memory(row)

        return self._with_retry(run)

    def restore(
        self, namespace: str, memory_id: str, policy: CapacityPolicy
    ) -> tuple[Memory, list[Memory]]:
        """Un-archive a memory, making room by archiving the next lowest (never it)."""

        def run() -> tuple[Memory, list[Memory]]:
            now = utcnow()
            with self._write() as session:
                row = _require(session, namespace, memory_id)
                archived: list[MemoryRow] = []
                if row.archived_at is not None:
                    row.archived_at = None
                    row.archive_reason = None
                    row.version += 1
                    row.updated_at = now
                    session.add(row)
                    session.flush()
                    _history(session, row, "restore", {})
                    if policy.auto_prune:
                        archived = _apply_capacity(
                            session, namespace, policy, now=now, protected=frozenset({row.id})
                        )
                session.flush()
                session.refresh(row)
                return _memory(row), [_memory(r) for r in archived]

        return self._with_retry(run)

    def prune(self, namespace: str, policy: CapacityPolicy, *, dry_run: bool) -> list[Memory]:
        """Apply the capacity rules now; with ``dry_run`` report without changing anything."""

        def run() -> list[Memory]:
            now = utcnow()
            with self._write() as session:
                if dry_run:
                    chosen = _plan_capacity(session, namespace, policy, frozenset())
                    rows = _rows_by_id(session, [c.id for c, _ in chosen])
                    # Detached copies showing what *would* happen; the transaction rolls back.
                    preview = [
                        _memory(rows[c.id]).model_copy(
                            update={"archived_at": now, "archive_reason": reason}
                        )
                        for c, reason in chosen
                    ]
                    session.rollback()
                    return preview
                return [_memory(r) for r in _apply_capacity(session, namespace, policy, now=now)]

        return self._with_retry(run)

    def count_capped(self, namespace: str) -> int:
        """Active, unpinned, judged memories: the number the cap bounds."""

        def run() -> int:
            with self._read() as session:
                return _count_capped(session, namespace)

        return self._with_retry(run)

    def delete(self, namespace: str, memory_id: str) -> None:
        """Hard-delete one memory (history keeps the event, never the text)."""

        def run() -> None:
            with self._write() as session:
                row = _require(session, namespace, memory_id)
                _history(session, row, "delete", {})
                session.exec(delete(MemoryRow).where(col(MemoryRow.seq) == row.seq))

        self._with_retry(run)

    def set_core(self, namespace: str, text_: str) -> None:
        """Replace the namespace's core text."""

        def run() -> None:
            with self._write() as session:
                row = session.get(CoreRow, namespace) or CoreRow(namespace=namespace)
                row.text = text_
                row.updated_at = utcnow()
                session.add(row)

        self._with_retry(run)

    def reinforce(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Bump access counters of memories just returned to a caller, in one statement."""
        if not memory_ids:
            return

        def run() -> None:
            with self._write() as session:
                _reinforce(session, memory_ids, namespace=namespace)

        self._with_retry(run)


# -- helpers used inside transactions ------------------------------------------------


def int_type() -> Any:
    """Integer SQL type for boolean sums (portable across SQLite and PostgreSQL)."""
    return Integer()


def _case_active_priority() -> Any:
    return case((col(MemoryRow.archived_at).is_(None), MemoryRow.priority_score), else_=None)


def _require(session: Session, namespace: str, memory_id: str) -> MemoryRow:
    if not isinstance(memory_id, str) or not memory_id:
        raise NotFoundError(f"No memory with id {memory_id!r} in namespace {namespace!r}")
    row = session.exec(
        select(MemoryRow).where(MemoryRow.namespace == namespace, MemoryRow.id == memory_id)
    ).one_or_none()
    if row is None:
        raise NotFoundError(
            f"No memory with id {memory_id!r} in namespace {namespace!r}: "
            "check the id with store.list(include_archived=True)"
        )
    return row


def _rows_by_id(session: Session, ids: Sequence[str]) -> dict[str, MemoryRow]:
    if not ids:
        return {}
    return {r.id: r for r in session.exec(select(MemoryRow).where(col(MemoryRow.id).in_(ids)))}


def _active_duplicate(session: Session, namespace: str, digest: str) -> MemoryRow | None:
    return session.exec(
        select(MemoryRow)
        .where(
            MemoryRow.namespace == namespace,
            MemoryRow.content_hash == digest,
            col(MemoryRow.archived_at).is_(None),
        )
        .limit(1)
    ).first()


def _reinforce(session: Session, ids: Sequence[str], namespace: str | None = None) -> None:
    statement = (
        update(MemoryRow)
        .where(col(MemoryRow.id).in_(list(ids)))
        .values(access_count=MemoryRow.access_count + 1, last_accessed_at=utcnow())
    )
    if namespace is not None:
        statement = statement.where(col(MemoryRow.namespace) == namespace)
    session.execute(statement)


def _set_interpretation(row: MemoryRow, item: NewMemory) -> None:
    interp = item.interpretation
    usage = interp.usage
    row.content = item.content
    row.interpreted_content = interp.interpreted_content
    row.emotional_impact = interp.emotional_impact
    row.user_relevance = interp.user_relevance
    row.novelty = interp.novelty
    row.utility = interp.utility
    row.priority_score = interp.priority_score
    row.rationale = interp.rationale
    row.score_source = item.score_source
    row.model = interp.model or (usage.model if usage else None)
    row.prompt_version = interp.prompt_version
    row.prompt_tokens = usage.prompt_tokens if usage else 0
    row.completion_tokens = usage.completion_tokens if usage else 0
    row.judge_latency_ms = usage.latency_ms if usage else 0.0
    row.judge_retries = usage.retries if usage else 0
    if item.user_context is not None:
        row.user_context = item.user_context


def _new_row(namespace: str, item: NewMemory, digest: str, *, now: datetime) -> MemoryRow:
    from .ids import new_id

    row = MemoryRow(
        id=new_id(),
        namespace=namespace,
        content=item.content,
        content_hash=digest,
        interpreted_content="",
        score_source=item.score_source,
        user_context=item.user_context,
        created_at=now,
        updated_at=now,
        last_accessed_at=now,
    )
    _set_interpretation(row, item)
    return row


def _history(session: Session, row: MemoryRow, event_: str, detail: dict[str, Any]) -> None:
    session.add(
        HistoryRow(
            memory_id=row.id,
            namespace=row.namespace,
            event=event_,
            version=row.version,
            at=utcnow(),
            detail=json.dumps(detail, sort_keys=True),
        )
    )


def _capped(namespace: str) -> Any:
    return (
        (col(MemoryRow.namespace) == namespace)
        & col(MemoryRow.archived_at).is_(None)
        & (col(MemoryRow.pinned) == False)  # noqa: E712 - SQL expression, not a Python test
        & col(MemoryRow.priority_score).is_not(None)
    )


def _count_capped(session: Session, namespace: str) -> int:
    row = session.get(NamespaceCountRow, namespace)
    return row.capped if row is not None else 0


def _lowest(session: Session, namespace: str, condition: Any, limit: int | None) -> list[Candidate]:
    query = (
        select(MemoryRow.id, MemoryRow.priority_score, MemoryRow.created_at)
        .where(_capped(namespace) & condition)
        .order_by(col(MemoryRow.priority_score), col(MemoryRow.created_at), col(MemoryRow.id))
    )
    if limit is not None:
        query = query.limit(limit)
    return [Candidate(i, float(p or 0.0), c) for i, p, c in session.exec(query)]


def _plan_capacity(
    session: Session, namespace: str, policy: CapacityPolicy, protected: frozenset[str]
) -> list[tuple[Candidate, str]]:
    """Read only what can be archived: every below-min row, then the few lowest above it.

    With auto-prune on, below-min rows are archived as they arrive, so the first query
    normally returns at most the memory just saved; nothing here scans the namespace.
    """
    active = _count_capped(session, namespace)
    priority = col(MemoryRow.priority_score)
    below = _lowest(session, namespace, priority < policy.min_priority_score, None)
    wanted = needed_candidates(active - len(below), policy.max_memories, len(protected))
    above = (
        _lowest(session, namespace, priority >= policy.min_priority_score, wanted) if wanted else []
    )
    return choose_forgotten(below + above, active=active, policy=policy, protected=protected)


def _apply_capacity(
    session: Session,
    namespace: str,
    policy: CapacityPolicy,
    *,
    now: datetime,
    protected: frozenset[str] = frozenset(),
) -> list[MemoryRow]:
    session.flush()
    chosen = _plan_capacity(session, namespace, policy, protected)
    rows = _rows_by_id(session, [c.id for c, _ in chosen])
    archived = []
    for candidate, reason in chosen:
        row = rows[candidate.id]
        _archive(session, row, reason, now)
        archived.append(row)
    return archived


def _archive(session: Session, row: MemoryRow, reason: str, now: datetime) -> None:
    row.archived_at = now
    row.archive_reason = reason
    row.version += 1
    row.updated_at = now
    session.add(row)
    _history(session, row, "archive", {"reason": reason, "priority_score": row.priority_score})


def _archive_all_unpinned(
    session: Session, namespace: str, reason: str, now: datetime
) -> list[MemoryRow]:
    rows = list(
        session.exec(
            select(MemoryRow).where(
                MemoryRow.namespace == namespace,
                col(MemoryRow.archived_at).is_(None),
                col(MemoryRow.pinned) == False,  # noqa: E712 - SQL expression
            )
        )
    )
    for row in rows:
        _archive(session, row, reason, now)
    return rows


# -- SQLite plumbing ------------------------------------------------------------------


def _install_sqlite_hooks(engine: Engine) -> None:
    """WAL, busy timeout, foreign keys, and BEGIN IMMEDIATE for writers.

    pysqlite's own transaction handling is switched off so SQLAlchemy's "begin" event
    decides how each transaction starts: readers take no lock, writers take the write
    lock up front and so cannot deadlock upgrading a read lock.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        for _ in range(50):
            try:
                cursor.execute("PRAGMA journal_mode = WAL")
                break
            except sqlite3.OperationalError as exc:  # another process is switching it too
                if "locked" not in str(exc):
                    raise
                time.sleep(0.05)
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        write = conn.get_execution_options().get("aimem_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _is_lock_error(exc: OperationalError) -> bool:
    message = str(exc.orig).lower()
    return "locked" in message or "busy" in message


def _short(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    return str(orig or exc).splitlines()[0][:200]
