"""The SQLite backend: one file (or a private in-memory database) holding many namespaces.

What only SQLite needs lives here, on top of the shared ``Backend``: the open path
(``sqlite_file.py`` decides what may be done to the file before anything is written:
a store that does not exist yet reads as an empty one and is created by its first
write), ``BEGIN IMMEDIATE`` writers that queue on the busy timeout, which errors are
worth retrying (a locked database), FTS5 keyword search (``sqlite_search.py``), the
periodic compaction of the active keyword index, and the online backup API.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import OperationalError

from aimem.exceptions import StorageError
from aimem.forking import keep
from aimem.models import Memory
from aimem.storage import sqlite_search
from aimem.storage.base import Backend
from aimem.storage.schema import SCHEMA_VERSION
from aimem.storage.sql import SearchFilters
from aimem.storage.sqlite_file import Target, enable_wal, inspect, make_engine, parse_url
from aimem.storage.sqlite_schema import create_schema, migrate

__all__ = ["COMPACT_EVERY", "SQLiteBackend"]

#: Archived memories after which this process compacts the active keyword index.
COMPACT_EVERY = 256


class SQLiteBackend(Backend):
    """A SQLite file (or ``sqlite:///:memory:``) as an aimem store."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self._target = parse_url(url)
        self._lock = threading.RLock()
        self._archived_since_compaction = 0
        #: True while the file does not exist yet: reads see an empty store in memory.
        self._absent = False
        self._writes_ready = False
        if self._target.in_memory:
            self._use(make_engine(self._target, read_only=False), serial=True)
            with self._guard(), self._writer.begin() as conn:
                create_schema(conn)
            self._writes_ready = True
        else:
            self._open_file()

    def after_fork(self) -> None:
        """In a forked child: a file's connections are left to the parent, never closed here.

        pysqlite closes a connection it collects, even the parent's, so the parent's pool
        stays referenced. A store in memory keeps its one connection: its own copy.
        """
        self._lock = threading.RLock()
        if self._serial:
            self._vectors.forget()
            return
        keep(self.engine.pool)
        super().after_fork()

    @property
    def path(self) -> Path | None:
        """The database file, or None for an in-memory store."""
        return self._target.path

    # -- opening ------------------------------------------------------------------------

    def _open_file(self) -> None:
        """Inspect the file read-only; connect to it, or stand in with an empty store."""
        state = inspect(self._target)
        self.read_only = not state.writable
        if state.kind != "aimem":
            self._absent = True
            self._use(self._empty_engine(), serial=True)
            return
        assert state.version is not None
        if state.version > SCHEMA_VERSION:
            raise StorageError(
                f"This database uses schema version {state.version}, newer than this aimem "
                f"understands ({SCHEMA_VERSION}): upgrade aimem. The file was not changed."
            )
        self._absent = False
        self._use(make_engine(self._target, read_only=self.read_only), serial=False)
        if state.version < SCHEMA_VERSION:
            if self.read_only:
                raise StorageError(
                    f"This database uses schema version {state.version} and is read-only: "
                    "open it once with write access so aimem can upgrade it"
                )
            self._prepare_writes()

    def _empty_engine(self) -> Engine:
        engine = make_engine(Target(None), read_only=False)
        with engine.execution_options(aimem_write=True).begin() as conn:
            create_schema(conn)
        return engine

    def _use(self, engine: Engine, *, serial: bool) -> None:
        """Switch to ``engine``; ``serial`` for a single shared connection (memory)."""
        self.engine = engine
        self._writer = engine.execution_options(aimem_write=True)
        self._serial = serial

    def _prepare_writes(self) -> None:
        """Before the first write: create the file if needed, WAL, schema up to date."""
        with self._lock:
            if self._writes_ready:
                return
            if self.read_only:
                raise StorageError(
                    "This database is open read-only (?mode=ro, or no write permission): "
                    "reading works, saving or changing memories does not"
                )
            if self._absent:
                # Build the file completely before any reader is pointed at it.
                engine = self._create_file()
                stand_in = self.engine
                self._use(engine, serial=False)
                self._absent = False
                stand_in.dispose()
            else:
                self._ready_for_writes(self.engine)
            self._writes_ready = True

    def _ready_for_writes(self, engine: Engine) -> None:
        """WAL on, and the schema created or migrated (a no-op when current)."""
        try:
            enable_wal(engine)
        except sqlite3.Error as exc:
            raise StorageError(f"Cannot prepare the database for writing: {exc}") from exc
        writer = engine.execution_options(aimem_write=True)

        def run() -> None:
            with writer.begin() as conn:
                migrate(conn)

        self._with_retry(run)

    def _create_file(self) -> Engine:
        """The database file (and its folder), with its schema: made by the first write."""
        assert self._target.path is not None
        state = inspect(self._target)  # another process may have created it meanwhile
        if state.kind == "aimem" and (state.version or 0) > SCHEMA_VERSION:
            raise StorageError(
                f"This database uses schema version {state.version}, newer than this aimem "
                f"understands ({SCHEMA_VERSION}): upgrade aimem. The file was not changed."
            )
        try:
            self._target.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"Cannot create the database folder: {exc.strerror}") from exc
        engine = make_engine(self._target, read_only=False)
        try:
            self._ready_for_writes(engine)
        except BaseException:
            engine.dispose()
            raise
        return engine

    def _refresh_absent(self) -> None:
        """A store read as empty: if another process created the file since, read it."""
        if self._target.path is None or not self._target.path.exists():
            return
        with self._lock:
            if not self._absent:
                return
            state = inspect(self._target)
            if state.kind == "aimem":
                stand_in = self.engine
                self._open_file()
                stand_in.dispose()

    # -- transactions and retries -------------------------------------------------------

    def _guard(self) -> AbstractContextManager[object]:
        """The lock one shared connection (a store in memory) needs; none for a file's pool."""
        return self._lock if self._serial else nullcontext()

    @contextmanager
    def _read(self, snapshot: bool = True) -> Iterator[Connection]:
        # A read is one deferred transaction either way: SQLite has no round trips to save.
        if self._absent:
            self._refresh_absent()
        with self._guard(), self.engine.connect() as conn:
            yield conn

    @contextmanager
    def _write(self, namespace: str) -> Iterator[Connection]:
        # One writer at a time for the whole file: BEGIN IMMEDIATE covers every namespace.
        with self._guard(), self._writer.begin() as conn:
            yield conn

    # -- hooks of Backend ---------------------------------------------------------------

    def _is_transient(self, exc: OperationalError) -> bool:
        """A locked or busy database: another writer holds the lock for a moment."""
        message = str(exc.orig).lower()
        return "locked" in message or "busy" in message

    def _keyword_matches(
        self,
        conn: Connection,
        namespace: str,
        query: str,
        *,
        limit: int,
        filters: SearchFilters,
        related: bool,
    ) -> list[tuple[Memory, float]]:
        return sqlite_search.keyword_matches(
            conn, namespace, query, limit=limit, filters=filters, related=related
        )

    def _after_archive(self, conn: Connection, count: int) -> None:
        """Now and then merge the active keyword index (FTS5 keeps a tombstone per row)."""
        self._archived_since_compaction += count
        if self._archived_since_compaction >= COMPACT_EVERY:
            sqlite_search.compact_active_index(conn)
            self._archived_since_compaction = 0

    def backup(self, target: Path) -> None:
        """Copy the whole database to ``target`` with SQLite's online backup API."""

        def run(conn: Connection) -> None:
            source = conn.connection.driver_connection
            try:
                destination = sqlite3.connect(target)
                try:
                    source.backup(destination)  # type: ignore[union-attr]
                finally:
                    destination.close()
            except sqlite3.Error as exc:
                raise StorageError(f"Backup failed: {exc}") from exc

        self._reading(run)
