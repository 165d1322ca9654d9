"""The only module that holds the engine: connections, transactions, retries, schema.

Every method is synchronous and takes the namespace explicitly; the facades in
``memory.py`` call them (from a worker thread in the async one). Writes run in
``BEGIN IMMEDIATE`` transactions so concurrent writers queue on SQLite's busy
timeout instead of failing half way, and no LLM call ever happens inside one.
The statements themselves live in ``queries.py``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, insert, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlmodel import SQLModel

from . import queries as q
from . import transfer
from .capacity import CapacityPolicy
from .exceptions import AimemError, ConflictError, StorageError
from .models import Memory, Stats
from .queries import NewMemory, SearchFilters, content_hash
from .tables import SCHEMA_VERSION, SQLITE_FTS_DDL, MetaRow, utcnow
from .vector_cache import VectorCache
from .vectors import Vector, VectorIndex, unpack

__all__ = ["Database", "NewMemory", "Order", "SearchFilters", "check_version", "content_hash"]

T = TypeVar("T")
Order = Literal["priority", "recent"]

#: How long a writer waits for SQLite's lock before our own retry loop takes over.
BUSY_TIMEOUT_MS = 10_000
_LOCK_RETRIES = 5
#: Archived memories after which this process compacts the active keyword index.
COMPACT_EVERY = 256
_m = q.MEMORIES.c


class Database:
    """One SQLite file holding the memories of many namespaces."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = _sqlite_engine(url)
        self._writer = self.engine.execution_options(aimem_write=True)
        self._archived_since_compaction = 0
        self._vectors = VectorCache()
        self._with_retry(self._init_schema)

    def close(self) -> None:
        """Release every pooled connection."""
        self.engine.dispose()

    # -- transactions and retries -------------------------------------------------------

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            yield conn

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        with self._writer.begin() as conn:
            yield conn

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

    def _reading(self, work: Callable[[Connection], T]) -> T:
        def run() -> T:
            with self._read() as conn:
                return work(conn)

        return self._with_retry(run)

    def _writing(self, work: Callable[[Connection], T]) -> T:
        def run() -> T:
            with self._write() as conn:
                return work(conn)

        return self._with_retry(run)

    def _archived(self, conn: Connection, count: int) -> None:
        """Note archived memories; now and then compact the active index in this transaction."""
        self._archived_since_compaction += count
        if self._archived_since_compaction >= COMPACT_EVERY:
            q.compact_active_index(conn)
            self._archived_since_compaction = 0

    def _init_schema(self) -> None:
        meta = MetaRow.__table__  # type: ignore[attr-defined]
        with self._write() as conn:
            SQLModel.metadata.create_all(conn)
            for ddl in SQLITE_FTS_DDL:
                conn.exec_driver_sql(ddl)
            stored = conn.execute(
                select(meta.c.value).where(meta.c.key == "schema_version")
            ).scalar_one_or_none()
            if stored is None:
                conn.execute(insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
            elif int(stored) > SCHEMA_VERSION:
                raise StorageError(
                    f"This database uses schema version {stored}, newer than this aimem "
                    f"understands ({SCHEMA_VERSION}): upgrade aimem."
                )
            elif int(stored) < SCHEMA_VERSION:
                # Every migration so far only adds tables and triggers, created above.
                conn.execute(
                    update(meta)
                    .where(meta.c.key == "schema_version")
                    .values(value=str(SCHEMA_VERSION))
                )

    # -- reads --------------------------------------------------------------------------

    def get(self, namespace: str, memory_id: str) -> Memory:
        """One memory, archived or not; NotFoundError outside the namespace."""
        return self._reading(lambda conn: q.require(conn, namespace, memory_id))

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
        query = q.select_memories().where(_m.namespace == namespace)
        if not include_archived:
            query = query.where(_m.archived_at.is_(None))
        if min_score is not None:
            query = query.where(_m.priority_score >= min_score)
        if order == "priority":
            query = query.order_by(
                _m.priority_score.is_(None),
                _m.priority_score.desc(),
                _m.created_at.desc(),
                _m.id.desc(),
            )
        else:
            query = query.order_by(_m.created_at.desc(), _m.id.desc())
        if limit is not None:
            query = query.limit(limit)
        return self._reading(lambda conn: q.memories(conn, query))

    def keyword_search(
        self,
        namespace: str,
        query: str,
        *,
        limit: int,
        filters: SearchFilters = SearchFilters(),  # noqa: B008 - frozen, safe to share
        related: bool = False,
    ) -> list[tuple[Memory, float]]:
        """BM25 keyword matches as ``(memory, bm25)``; lower bm25 is better (SQLite's sign)."""
        return self._reading(
            lambda conn: q.keyword_matches(
                conn,
                namespace,
                query,
                limit=limit,
                filters=filters,
                related=related,
            )
        )

    def semantic_search(
        self,
        namespace: str,
        model: str,
        vector: Vector,
        *,
        limit: int,
        filters: SearchFilters = SearchFilters(),  # noqa: B008 - frozen, safe to share
    ) -> list[tuple[Memory, float]]:
        """Memories embedded by ``model`` most similar to ``vector``, as ``(memory, cosine)``.

        Active memories are searched in an in-memory index kept in step with the history
        log; a search that includes the archive reads its vectors from disk instead.
        """

        def run(conn: Connection) -> list[tuple[Memory, float]]:
            if filters.include_archived:
                index = VectorIndex(len(vector))
                for memory_id, blob in q.namespace_vectors(conn, namespace, model):
                    index.upsert(memory_id, unpack(blob))
            else:
                index = self._vectors.index(conn, namespace, model, len(vector))
            # Fetch extra candidates when filters may reject some of them.
            plain = filters == SearchFilters(include_archived=filters.include_archived)
            ranked = index.search(vector, limit if plain else max(limit * 4, 50))
            found = q.by_ids(conn, [memory_id for memory_id, _ in ranked])
            hits = [
                (found[i], cosine)
                for i, cosine in ranked
                if i in found and filters.admits(found[i])
            ]
            return hits[:limit]

        return self._reading(run)

    def stats(self, namespace: str, policy: CapacityPolicy) -> Stats:
        """Counts and token totals of one namespace."""
        values = self._reading(lambda conn: q.namespace_stats(conn, namespace))
        return Stats(
            namespace=namespace,
            max_memories=policy.max_memories,
            min_priority_score=policy.min_priority_score,
            **values,
        )

    def count_capped(self, namespace: str) -> int:
        """Active, unpinned, judged memories: the number the cap bounds."""
        return self._reading(lambda conn: q.count_capped(conn, namespace))

    def get_core(self, namespace: str) -> str:
        """The namespace's core text ('' until set)."""
        return self._reading(lambda conn: q.get_core(conn, namespace))

    # -- writes -------------------------------------------------------------------------

    def find_by_key(self, namespace: str, key: str, digest: str) -> Memory | None:
        """The memory an idempotency key already answers (archived or not), reinforced.

        Raises:
            ConflictError: the key was used for different content.
        """

        def look(conn: Connection) -> str | None:
            bound = q.key_target(conn, namespace, key)
            if bound is None:
                return None
            return q.bind_key(conn, namespace, key, bound[0], digest)  # raises on a mismatch

        memory_id = self._reading(look)
        if memory_id is None:
            return None

        def reinforce(conn: Connection) -> Memory:
            q.reinforce(conn, namespace, [memory_id])
            return q.require(conn, namespace, memory_id)

        return self._writing(reinforce)

    def find_active_duplicate(
        self, namespace: str, digest: str, key: str | None = None
    ) -> Memory | None:
        """The active memory with exactly this content, reinforced; None if there is none.

        With ``key``, the key is bound to that memory in the same transaction.
        """
        # Most saves are new content: look first without taking the write lock.
        if self._reading(lambda conn: q.active_duplicate(conn, namespace, digest)) is None:
            return None

        def reinforce(conn: Connection) -> Memory | None:
            found = q.active_duplicate(conn, namespace, digest)
            if found is None:  # archived or deleted in between
                return None
            if key is not None:
                found = q.bind_key(conn, namespace, key, found, digest)
            q.reinforce(conn, namespace, [found])
            return q.require(conn, namespace, found)

        return self._writing(reinforce)

    def insert(
        self,
        namespace: str,
        items: Sequence[NewMemory],
        policy: CapacityPolicy,
        *,
        archive_others: str | None = None,
    ) -> tuple[list[Memory], list[Memory]]:
        """Insert judged memories and run the capacity manager, all in one transaction.

        An item whose exact content became active meanwhile (another writer), or whose
        idempotency key another writer bound meanwhile, is not inserted twice: the
        existing memory is returned, reinforced. With ``archive_others`` every other
        active unpinned memory is archived with that reason first (``compress``).

        Returns:
            ``(memories in input order, memories archived by this transaction)``.

        Raises:
            ConflictError: an item's idempotency key is bound to different content.
        """

        def work(conn: Connection) -> tuple[list[Memory], list[Memory]]:
            archived: list[str] = []
            if archive_others is not None:
                archived += q.archive_all_unpinned(conn, namespace, archive_others)
            ids: list[str] = []
            for item in items:
                digest = content_hash(item.content)
                key = item.idempotency_key
                bound = None if key is None else q.key_target(conn, namespace, key)
                existing = q.active_duplicate(conn, namespace, digest)
                if bound is not None:
                    memory_id = q.bind_key(conn, namespace, key or "", bound[0], digest)
                    q.reinforce(conn, namespace, [memory_id])
                elif existing is not None:
                    q.reinforce(conn, namespace, [existing])
                    memory_id = existing
                else:
                    memory_id = q.insert_memory(conn, namespace, item, digest)
                if key is not None and bound is None:
                    q.bind_key(conn, namespace, key, memory_id, digest)
                ids.append(memory_id)
            if policy.auto_prune:
                archived += q.apply_capacity(conn, namespace, policy)
            self._archived(conn, len(archived))
            current = q.by_ids(conn, [*ids, *archived])
            return [current[i] for i in ids], [current[i] for i in archived]

        return self._writing(work)

    def reinterpret(
        self,
        namespace: str,
        memory_id: str,
        item: NewMemory,
        policy: CapacityPolicy,
        *,
        expected_version: int | None = None,
        event: str = "update",
    ) -> tuple[Memory, list[Memory]]:
        """Replace a memory's content and judgement, then run the capacity manager.

        Raises:
            ConflictError: ``expected_version`` is given and the stored version differs
                (someone changed the memory since the caller read it); nothing is written.
        """

        def work(conn: Connection) -> tuple[Memory, list[Memory]]:
            current = q.require(conn, namespace, memory_id)
            check_version(current, expected_version)
            if event == "judge" and current.priority_score is not None:
                return current, []  # judged meanwhile by another process: keep that
            q.replace_interpretation(
                conn, namespace, memory_id, item, content_hash(item.content), event
            )
            archived = q.apply_capacity(conn, namespace, policy) if policy.auto_prune else []
            self._archived(conn, len(archived))
            current_ = q.by_ids(conn, [memory_id, *archived])
            return current_[memory_id], [current_[i] for i in archived]

        return self._writing(work)

    def export_lines(self, namespace: str, *, include_history: bool) -> list[str]:
        """A namespace's export file as lines, read from one snapshot."""
        return self._reading(
            lambda conn: list(
                transfer.export_lines(conn, namespace, include_history=include_history)
            )
        )

    def import_parsed(
        self,
        namespace: str,
        parsed: transfer.ParsedExport,
        policy: CapacityPolicy,
        *,
        dry_run: bool,
    ) -> tuple[list[str], list[Memory]]:
        """Check the file against the database, then (unless ``dry_run``) write it.

        Clashes (ids, keys, active duplicates) are added to ``parsed.errors`` and nothing
        is written. Returns ``(imported ids, memories the capacity manager archived)``.
        """
        if dry_run:
            parsed.errors += self._reading(lambda conn: transfer.conflicts(conn, namespace, parsed))
            return [], []

        def work(conn: Connection) -> tuple[list[str], list[Memory]]:
            clashes = transfer.conflicts(conn, namespace, parsed)
            if clashes:
                parsed.errors += clashes
                return [], []
            ids = transfer.write_import(conn, namespace, parsed)
            archived = q.apply_capacity(conn, namespace, policy) if policy.auto_prune else []
            self._archived(conn, len(archived))
            found = q.by_ids(conn, archived)
            return ids, [found[i] for i in archived]

        return self._writing(work)

    def backup(self, target: Path) -> None:
        """Copy the whole database to ``target`` with SQLite's online backup API."""

        def run() -> None:
            source = self.engine.raw_connection()
            try:
                destination = sqlite3.connect(target)
                try:
                    source.driver_connection.backup(destination)  # type: ignore[union-attr]
                finally:
                    destination.close()
            finally:
                source.close()

        self._with_retry(run)

    def pending_ids(self, namespace: str, limit: int | None) -> list[str]:
        """Active memories saved while the judge was failing, oldest first."""
        return self._reading(lambda conn: q.pending_ids(conn, namespace, limit))

    def set_pinned(self, namespace: str, memory_id: str, pinned: bool) -> Memory:
        """Pin or unpin (a no-op when already so); callers prune after an unpin."""

        def work(conn: Connection) -> Memory:
            current = q.require(conn, namespace, memory_id)
            if current.pinned == pinned:
                return current
            version = q.set_fields(conn, namespace, memory_id, {"pinned": pinned})
            event_ = "pin" if pinned else "unpin"
            q.record(conn, namespace, [(memory_id, version)], event_, utcnow())
            return q.require(conn, namespace, memory_id)

        return self._writing(work)

    def restore(
        self, namespace: str, memory_id: str, policy: CapacityPolicy
    ) -> tuple[Memory, list[Memory]]:
        """Un-archive a memory, making room by archiving the next lowest (never it)."""

        def work(conn: Connection) -> tuple[Memory, list[Memory]]:
            current = q.require(conn, namespace, memory_id)
            if current.archived_at is None:
                return current, []
            fields = {"archived_at": None, "archive_reason": None}
            version = q.set_fields(conn, namespace, memory_id, fields)
            q.record(conn, namespace, [(memory_id, version)], "restore", utcnow())
            archived = (
                q.apply_capacity(conn, namespace, policy, protected=frozenset({memory_id}))
                if policy.auto_prune
                else []
            )
            self._archived(conn, len(archived))
            now = q.by_ids(conn, [memory_id, *archived])
            return now[memory_id], [now[i] for i in archived]

        return self._writing(work)

    def prune(self, namespace: str, policy: CapacityPolicy, *, dry_run: bool) -> list[Memory]:
        """Apply the capacity rules now; with ``dry_run`` report without changing anything."""
        if dry_run:

            def preview(conn: Connection) -> list[Memory]:
                chosen = q.plan_capacity(conn, namespace, policy)
                found = q.by_ids(conn, [c.id for c, _ in chosen])
                now = utcnow()
                return [
                    found[c.id].model_copy(update={"archived_at": now, "archive_reason": reason})
                    for c, reason in chosen
                ]

            return self._reading(preview)

        def work(conn: Connection) -> list[Memory]:
            archived = q.apply_capacity(conn, namespace, policy)
            self._archived(conn, len(archived))
            found = q.by_ids(conn, archived)
            return [found[i] for i in archived]

        return self._writing(work)

    def delete(self, namespace: str, memory_id: str) -> None:
        """Hard-delete one memory (history keeps the event, never the text)."""
        self._writing(lambda conn: q.delete_memory(conn, namespace, memory_id))

    def set_core(self, namespace: str, text: str) -> None:
        """Replace the namespace's core text."""
        self._writing(lambda conn: q.set_core(conn, namespace, text))

    def reinforce(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Bump access counters of memories just returned to a caller, in one statement."""
        if memory_ids:
            self._writing(lambda conn: q.reinforce(conn, namespace, memory_ids))


def check_version(current: Memory, expected_version: int | None) -> None:
    """Optimistic concurrency: refuse to change a memory someone else changed first."""
    if expected_version is not None and current.version != expected_version:
        raise ConflictError(
            f"Memory {current.id!r} is at version {current.version}, not the expected "
            f"{expected_version}: it changed since you read it. Read it again and retry."
        )


# -- SQLite plumbing ------------------------------------------------------------------


def _sqlite_engine(url: str) -> Engine:
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
    engine = create_engine(
        url, connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000}
    )
    _install_sqlite_hooks(engine)
    return engine


def _install_sqlite_hooks(engine: Engine) -> None:
    """WAL, busy timeout, and BEGIN IMMEDIATE for writers.

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
