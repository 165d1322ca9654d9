"""The storage seam: every unit of work of a store, written once over ``sql.py``.

``Backend`` is what the facades call (``store.py``, ``retrieval/retriever.py``): plain values in
(namespaces, ids, ``NewMemory``), ``aimem`` models out, typed errors only (httpx's
transport is the model). Every method is synchronous and takes the namespace
explicitly; no LLM call ever happens inside a transaction. Capacity, duplicates,
idempotency, history and versions are decided here, once; a dialect (``sqlite.py``)
fills only the hooks: how to open and begin, which errors are worth a retry, keyword
search (relevance higher is better), upkeep after archiving, and backup.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from aimem.capacity import CapacityPolicy
from aimem.exceptions import AimemError, ConflictError, StorageError
from aimem.models import HistoryEvent, Memory, Stats
from aimem.storage import sql, sql_capacity, sql_history, sql_transfer, sql_vectors
from aimem.storage.schema import utcnow
from aimem.storage.sql import NewMemory, SearchFilters, content_hash
from aimem.storage.vector_cache import VectorCache
from aimem.transfer import export_file as transfer
from aimem.vectors import Vector

__all__ = [
    "Backend",
    "NewMemory",
    "Order",
    "SearchFilters",
    "check_unique_content",
    "check_version",
    "content_hash",
]

log = logging.getLogger("aimem")

T = TypeVar("T")
Order = Literal["priority", "recent"]

_RETRIES = 5
_m = sql.MEMORIES.c


class VectorSearch(Protocol):
    """Search by meaning as a backend holds it (``VectorCache``, ``ServerVectors``).

    ``VectorCache`` keeps indexes in this process; a dialect may search on its server
    instead (``postgres_vectors.ServerVectors`` with pgvector).
    """

    #: Whether ``nearest`` needs its statements in one transaction (a snapshot read).
    needs_snapshot: bool

    def nearest(
        self, conn: Connection, namespace: str, model: str, vector: Vector, limit: int,
        filters: SearchFilters,
    ) -> list[tuple[Memory, float]]: ...  # fmt: skip

    def forget(self) -> None: ...

    def written(self, conn: Connection) -> Callable[[Connection], None] | None:
        """At the end of a write, upkeep to run in a transaction of its own after it."""
        ...

    def report(self) -> dict[str, Any]: ...


class Backend:
    """A store's database, many namespaces in one; subclasses are the dialects."""

    engine: Engine

    def __init__(self, url: str) -> None:
        self.url = url
        #: True when the database may only be read.
        self.read_only = False
        self._vectors: VectorSearch = VectorCache()

    # -- hooks a dialect fills ------------------------------------------------------------

    def close(self) -> None:
        """Release every pooled connection."""
        self.engine.dispose()

    def after_fork(self) -> None:
        """In a forked child: the parent's pooled connections stay its own, unclosed."""
        self.engine.dispose(close=False)
        self._vectors.forget()  # and the lock a vanished thread may hold

    @property
    def path(self) -> Path | None:
        """The database file, or None where there is none (memory, a server)."""
        return None

    def _read(self, snapshot: bool = True) -> AbstractContextManager[Connection]:
        """A connection for a read-only unit of work.

        ``snapshot=False``: the work needs no single moment across its statements (one
        statement, or a search whose parts may see a write land between them), so a
        dialect may skip the transaction around it: two round trips fewer on a server.
        """
        raise NotImplementedError

    def _write(self, namespace: str) -> AbstractContextManager[Connection]:
        """A write transaction for ``namespace``, its writers serialised as the dialect must."""
        raise NotImplementedError

    def _prepare_writes(self) -> None:
        """Anything to do once before the first write (create, migrate)."""

    _writes_ready = True

    def _is_transient(self, exc: OperationalError) -> bool:
        """Whether an operational error is worth running the unit of work again."""
        return False

    def _retry_wait(self, exc: OperationalError, attempt: int, elapsed: float) -> float | None:
        """Seconds before try ``attempt + 1`` (None: give up); ~0.75 s in all by default."""
        if not self._is_transient(exc) or attempt >= _RETRIES:
            return None
        return 0.05 * 2.0 ** (attempt - 1)

    def _keyword_matches(
        self, conn: Connection, namespace: str, query: str, *, limit: int,
        filters: SearchFilters, related: bool,
    ) -> list[tuple[Memory, float]]:  # fmt: skip
        """Keyword matches of the namespace as ``(memory, relevance)``, higher is better."""
        raise NotImplementedError

    def _after_archive(self, conn: Connection, count: int) -> None:
        """Upkeep after ``count`` memories were archived in this transaction."""

    def backup(self, target: Path) -> None:
        """Copy the whole database to ``target``."""
        raise StorageError("This database has no file to copy: use export_to(path) instead")

    # -- running units of work ----------------------------------------------------------

    def _with_retry(self, operation: Callable[[], T]) -> T:
        """Run ``operation``, retrying within a bound while the error is transient."""
        started, attempt = time.monotonic(), 0
        while True:
            attempt += 1
            try:
                return operation()
            except OperationalError as exc:
                wait = self._retry_wait(exc, attempt, time.monotonic() - started)
                if wait is None:
                    raise StorageError(f"Database error: {_short(exc)}") from exc
                time.sleep(wait)
            except AimemError:
                raise
            except SQLAlchemyError as exc:
                raise StorageError(f"Database error: {_short(exc)}") from exc
            except ValueError as exc:  # a stored value the driver cannot read back
                raise StorageError(
                    "A stored value is damaged and cannot be read: restore the memories from "
                    "an export or a backup"
                ) from exc

    def _reading(self, work: Callable[[Connection], T], *, snapshot: bool = True) -> T:
        def run() -> T:
            with self._read(snapshot) as conn:
                return work(conn)

        return self._with_retry(run)

    def _writing(self, namespace: str, work: Callable[[Connection], T]) -> T:
        if not self._writes_ready:
            self._prepare_writes()

        upkeep: list[Callable[[Connection], None] | None] = [None]

        def run() -> T:
            with self._write(namespace) as conn:
                result = work(conn)
                upkeep[0] = self._vectors.written(conn)  # e.g. index a new dimension
                return result

        result = self._with_retry(run)
        if upkeep[0] is not None:
            self._run_upkeep(upkeep[0])
        return result

    def _run_upkeep(self, upkeep: Callable[[Connection], None]) -> None:
        """Upkeep after a committed write, in its own transaction, never failing the write.

        Apart so it holds no lock of the write's: building an index inside the write
        waited for other writers' rows while they waited for its lock (a deadlock).
        """

        def run() -> None:
            with self.engine.begin() as conn:
                upkeep(conn)

        try:
            self._with_retry(run)
        except StorageError as exc:  # the next write that needs it tries again
            log.warning("aimem: upkeep after a write failed and will be retried: %s", exc)

    def _settle(
        self,
        conn: Connection,
        namespace: str,
        policy: CapacityPolicy,
        ids: Sequence[str],
        *,
        archived: Sequence[str] = (),
        protected: frozenset[str] = frozenset(),
        force: bool = False,
        supersessions: Sequence[sql_capacity.Supersession] = (),
    ) -> tuple[list[Memory], list[Memory]]:
        """Every write's tail: supersessions, capacity (auto-prune or ``force``), reload.

        Returns ``(the memories ids names, as they are now; every memory archived)``.
        """
        capacity = policy.auto_prune or force
        gone = [*archived]
        gone += sql_capacity.supersede_then_apply(
            conn, namespace, policy, supersessions, protected=protected, capacity=capacity
        )
        self._after_archive(conn, len(gone))
        now = sql.by_ids(conn, [*ids, *gone])
        return [now[i] for i in ids], [now[i] for i in gone]

    # -- reads --------------------------------------------------------------------------

    def get(self, namespace: str, memory_id: str) -> Memory:
        """One memory, archived or not; NotFoundError outside the namespace."""
        return self._reading(lambda conn: sql.require(conn, namespace, memory_id), snapshot=False)

    def ids_with_prefix(self, namespace: str, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` ids of the namespace (archived included) starting with ``prefix``."""
        return self._reading(lambda conn: sql.ids_with_prefix(conn, namespace, prefix, limit))

    def all_ids(self, namespace: str) -> list[str]:
        """Every memory id of the namespace, archived included (for short display prefixes)."""
        return self._reading(lambda conn: sql.all_ids(conn, namespace))

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
        query = sql.list_query(namespace, min_score, limit, order, include_archived)
        return self._reading(lambda conn: sql.memories(conn, query), snapshot=False)

    def keyword_search(
        self,
        namespace: str,
        query: str,
        *,
        limit: int,
        filters: SearchFilters = SearchFilters(),  # noqa: B008 - frozen, safe to share
        related: bool = False,
    ) -> list[tuple[Memory, float]]:
        """Keyword matches as ``(memory, relevance)``, best first: higher is better."""
        return self._reading(
            lambda conn: self._keyword_matches(
                conn, namespace, query, limit=limit, filters=filters, related=related
            ),
            snapshot=False,
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
        return self._reading(
            lambda conn: self._vectors.nearest(conn, namespace, model, vector, limit, filters),
            snapshot=self._vectors.needs_snapshot,
        )

    def related_search(
        self,
        namespace: str,
        queries: Sequence[str],
        *,
        limit: int,
        model: str | None = None,
        vector: Vector | None = None,
    ) -> tuple[list[list[tuple[Memory, float]]], list[tuple[Memory, float]]]:
        """A related lookup in one read: keyword matches per query, and the nearest vectors.

        What a save asks before it is judged (the content, its stated facts, its slot
        words; with an embedder, the nearest memories by ``model``): one connection and
        one trip to the store's threads instead of one per search.
        """
        filters = SearchFilters()

        def work(
            conn: Connection,
        ) -> tuple[list[list[tuple[Memory, float]]], list[tuple[Memory, float]]]:
            keyword = [
                self._keyword_matches(
                    conn, namespace, query, limit=limit, filters=filters, related=True
                )
                for query in queries
            ]
            semantic = (
                self._vectors.nearest(conn, namespace, model, vector, limit, filters)
                if model is not None and vector is not None
                else []
            )
            return keyword, semantic

        return self._reading(work, snapshot=vector is not None and self._vectors.needs_snapshot)

    def vector_models(self, namespace: str) -> dict[str, int]:
        """Active memories with a vector, per embedder name (what the stored vectors came from)."""
        return self._reading(lambda conn: sql_vectors.vector_models(conn, namespace))

    def vector_dim(self, namespace: str, model: str) -> int | None:
        """Dimension of the namespace's stored vectors from ``model`` (None: none stored)."""
        return self._reading(lambda conn: sql_vectors.vector_dim(conn, namespace, model))

    def contents_to_embed(
        self, namespace: str, model: str, *, missing_only: bool = False
    ) -> list[tuple[str, int, str]]:
        """``(id, seq, content)`` of the memories to (re-)embed, archived ones too."""
        return self._reading(
            lambda conn: sql_vectors.contents_to_embed(
                conn, namespace, model, missing_only=missing_only
            )
        )

    def replace_vectors(
        self,
        namespace: str,
        model: str,
        vectors: Sequence[tuple[str, int, bytes]],
        *,
        clear: bool,
    ) -> int:
        """Write re-computed vectors in one transaction (``clear``: drop all others first)."""
        return self._writing(
            namespace,
            lambda conn: sql_vectors.replace_vectors(conn, namespace, model, vectors, clear=clear),
        )

    def stats(self, namespace: str, policy: CapacityPolicy) -> Stats:
        """Counts and token totals of one namespace."""
        values = self._reading(lambda conn: sql.namespace_stats(conn, namespace))
        return Stats(
            namespace=namespace,
            max_memories=policy.max_memories,
            min_priority_score=policy.min_priority_score,
            **values,
            **self._vectors.report(),  # where search by meaning runs, and what it holds
        )

    def count_capped(self, namespace: str) -> int:
        """Active, unpinned, judged memories: the number the cap bounds."""
        return self._reading(
            lambda conn: sql_capacity.count_capped(conn, namespace), snapshot=False
        )

    def get_core(self, namespace: str) -> str:
        """The namespace's core text ('' until set)."""
        return self._reading(lambda conn: sql.get_core(conn, namespace))

    # -- writes -------------------------------------------------------------------------

    def ensure_unique_content(self, namespace: str, memory_id: str, content: str) -> None:
        """ConflictError when another active memory holds ``content`` (checked before judging)."""
        self._reading(
            lambda conn: check_unique_content(conn, namespace, memory_id, content), snapshot=False
        )

    def find_by_key(self, namespace: str, key: str, digest: str) -> Memory | None:
        """The memory a key answers (archived or not), reinforced; ConflictError on a misuse."""

        def look(conn: Connection) -> str | None:
            bound = sql.key_target(conn, namespace, key)
            if bound is None:
                return None
            return sql.bind_key(conn, namespace, key, bound[0], digest)  # raises on a mismatch

        memory_id = self._reading(look)
        if memory_id is None:
            return None

        def reinforce(conn: Connection) -> Memory:
            sql.reinforce(conn, namespace, [memory_id])
            return sql.require(conn, namespace, memory_id)

        return self._writing(namespace, reinforce)

    def find_active_duplicate(
        self, namespace: str, digest: str, key: str | None = None, *, reinforce: bool = True
    ) -> Memory | None:
        """The active memory with exactly this content, reinforced; None if there is none.

        With ``key``, the key is bound to that memory in the same transaction. Without
        ``reinforce`` nothing is written (a look before a judgement that may still fail).
        """
        # Most saves are new content: look first without taking the write lock.
        seen = self._reading(
            lambda conn: sql.active_duplicate(conn, namespace, digest), snapshot=False
        )
        if seen is None or not reinforce:
            return None if seen is None else self.get(namespace, seen)

        def bump(conn: Connection) -> Memory | None:
            found = sql.active_duplicate(conn, namespace, digest)
            if found is None:  # archived or deleted in between
                return None
            if key is not None:
                found = sql.bind_key(conn, namespace, key, found, digest)
            sql.reinforce(conn, namespace, [found])
            return sql.require(conn, namespace, found)

        return self._writing(namespace, bump)

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
                archived += sql_capacity.archive_all_unpinned(conn, namespace, archive_others)
            ids: list[str] = []
            supersessions: list[sql_capacity.Supersession] = []
            digests = [content_hash(item.content) for item in items]  # looked up once, not per item
            maybe = sql.active_hashes(conn, namespace, digests) if len(items) > 1 else set(digests)
            for item, digest in zip(items, digests, strict=True):
                key = item.idempotency_key
                bound = None if key is None else sql.key_target(conn, namespace, key)
                existing = (
                    sql.active_duplicate(conn, namespace, digest) if digest in maybe else None
                )
                if bound is not None:
                    memory_id = sql.bind_key(conn, namespace, key or "", bound[0], digest)
                    sql.reinforce(conn, namespace, [memory_id])
                elif existing is not None:
                    sql.reinforce(conn, namespace, [existing])
                    memory_id = existing
                else:
                    via = "compress" if archive_others is not None else None
                    memory_id = sql.insert_memory(conn, namespace, item, digest, via)
                    maybe.add(digest)
                    if item.supersedes_earlier:
                        earlier = tuple(ids[j] for j in item.supersedes_earlier)
                        item = replace(item, supersedes=(*item.supersedes, *earlier))
                    supersessions.append((memory_id, item, None))
                if key is not None and bound is None:
                    sql.bind_key(conn, namespace, key, memory_id, digest)
                ids.append(memory_id)
            return self._settle(
                conn, namespace, policy, ids, archived=archived, supersessions=supersessions
            )

        return self._writing(namespace, work)

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
                (someone changed the memory since the caller read it), or another active
                memory already holds the new content; nothing is written.
        """

        def work(conn: Connection) -> tuple[Memory, list[Memory]]:
            current = sql.require(conn, namespace, memory_id)
            check_version(current, expected_version)
            if event == "judge" and current.priority_score is not None:
                return current, []  # judged meanwhile by another process: keep that
            if current.archived_at is None:
                check_unique_content(conn, namespace, memory_id, item.content)
            if event == "update":  # the edit replaces it: keep what it said
                sql_history.save_version(conn, current, utcnow())
            sql.replace_interpretation(
                conn, namespace, memory_id, item, content_hash(item.content), event
            )
            # A pending memory judged late never retires newer news.
            late = current.created_at if event == "judge" else None
            [memory], archived = self._settle(
                conn, namespace, policy, [memory_id], supersessions=[(memory_id, item, late)]
            )
            return memory, archived

        return self._writing(namespace, work)

    def export_lines(self, namespace: str, *, include_history: bool) -> list[str]:
        """A namespace's export file as lines, read from one snapshot."""
        return self._reading(
            lambda conn: list(
                transfer.export_lines(
                    sql_transfer.export_data(conn, namespace, include_history=include_history)
                )
            )
        )

    def import_parsed(
        self,
        namespace: str,
        parsed: transfer.ParsedExport,
        policy: CapacityPolicy,
        *,
        dry_run: bool,
        embedder: tuple[str, int | None] | None = None,
    ) -> tuple[list[str], list[Memory]]:
        """Check the file against the database, then (unless ``dry_run``) write it.

        Clashes (ids, keys, active duplicates, vector dimensions) are added to
        ``parsed`` and nothing is written. Returns ``(imported ids, memories the capacity
        manager archived)``.
        """
        if dry_run:
            found = self._reading(lambda c: sql_transfer.conflicts(c, namespace, parsed, embedder))
            parsed.fail_all(found)
            return [], []

        def work(conn: Connection) -> tuple[list[str], list[Memory]]:
            clashes = sql_transfer.conflicts(conn, namespace, parsed, embedder)
            if clashes:
                parsed.fail_all(clashes)
                return [], []
            ids = sql_transfer.write_import(conn, namespace, parsed)
            # What the user restored stays, as it did where it came from (see restore()).
            protected = transfer.restored_last(parsed)
            _, archived = self._settle(conn, namespace, policy, [], protected=protected)
            return ids, archived

        return self._writing(namespace, work)

    def history(self, namespace: str, memory_id: str) -> list[HistoryEvent]:
        """A memory's events, oldest first (an update carries the version it replaced)."""
        return self._reading(lambda conn: sql_history.history(conn, namespace, memory_id))

    def pending_ids(self, namespace: str, limit: int | None) -> list[str]:
        """Active memories saved while the judge was failing, oldest first."""
        return self._reading(lambda conn: sql.pending_ids(conn, namespace, limit))

    def set_pinned(self, namespace: str, memory_id: str, pinned: bool) -> Memory:
        """Pin or unpin (a no-op when already so); callers prune after an unpin."""

        def work(conn: Connection) -> Memory:
            current = sql.require(conn, namespace, memory_id)
            if current.pinned == pinned:
                return current
            version = sql.set_fields(conn, namespace, memory_id, {"pinned": pinned})
            event_ = "pin" if pinned else "unpin"
            sql.record(conn, namespace, [(memory_id, version)], event_, utcnow())
            return sql.require(conn, namespace, memory_id)

        return self._writing(namespace, work)

    def restore(
        self, namespace: str, memory_id: str, policy: CapacityPolicy
    ) -> tuple[Memory, list[Memory]]:
        """Un-archive a memory, making room by archiving the next lowest (sparing it this once).

        Raises:
            ConflictError: an active memory already holds the same content (two active
                memories never share one); nothing is written.
        """

        def work(conn: Connection) -> tuple[Memory, list[Memory]]:
            current = sql.require(conn, namespace, memory_id)
            if current.archived_at is None:
                return current, []
            check_unique_content(conn, namespace, memory_id, current.content)
            fields = {"archived_at": None, "archive_reason": None, "superseded_by": None}
            version = sql.set_fields(
                conn, namespace, memory_id, {**fields, "restored_at": utcnow()}
            )
            sql.record(conn, namespace, [(memory_id, version)], "restore", utcnow())
            protected = frozenset({memory_id})
            [memory], archived = self._settle(
                conn, namespace, policy, [memory_id], protected=protected
            )
            return memory, archived

        return self._writing(namespace, work)

    def prune(self, namespace: str, policy: CapacityPolicy, *, dry_run: bool) -> list[Memory]:
        """Apply the capacity rules now; with ``dry_run`` report without changing anything."""
        if dry_run:

            def preview(conn: Connection) -> list[Memory]:
                chosen = sql_capacity.plan_capacity(conn, namespace, policy)
                found = sql.by_ids(conn, [c.id for c, _ in chosen])
                now = utcnow()
                return [
                    found[c.id].model_copy(update={"archived_at": now, "archive_reason": reason})
                    for c, reason in chosen
                ]

            return self._reading(preview)

        def work(conn: Connection) -> list[Memory]:
            return self._settle(conn, namespace, policy, [], force=True)[1]

        return self._writing(namespace, work)

    def delete(self, namespace: str, memory_id: str) -> None:
        """Hard-delete one memory (history keeps the event, never the text)."""
        self._writing(namespace, lambda conn: sql.delete_memory(conn, namespace, memory_id))

    def set_core(self, namespace: str, text: str) -> None:
        """Replace the namespace's core text."""
        self._writing(namespace, lambda conn: sql.set_core(conn, namespace, text))

    def reinforce(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Bump access counters of memories just returned to a caller, in one statement.

        A read-only store answers searches without it (said at debug level).
        """
        if not memory_ids:
            return
        if self.read_only:
            log.debug(
                "aimem: read-only store, access counts of %d memories not bumped", len(memory_ids)
            )
            return
        self._writing(namespace, lambda conn: sql.reinforce(conn, namespace, memory_ids))


def check_unique_content(conn: Connection, namespace: str, memory_id: str, content: str) -> None:
    """Two active memories of a namespace never hold the same content."""
    other = sql.active_duplicate(conn, namespace, content_hash(content))
    if other is not None and other != memory_id:
        raise ConflictError(
            f"Memory {other!r} already holds this exact content and is active: two active "
            "memories never share one. Use that memory, or delete or change it first."
        )


def check_version(current: Memory, expected_version: int | None) -> None:
    """Optimistic concurrency: refuse to change a memory someone else changed first."""
    if expected_version is not None and current.version != expected_version:
        raise ConflictError(
            f"Memory {current.id!r} is at version {current.version}, not the expected "
            f"{expected_version}: it changed since you read it. Read it again and retry."
        )


# -- errors ----------------------------------------------------------------------------


def _short(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    return str(orig or exc).splitlines()[0][:200]
