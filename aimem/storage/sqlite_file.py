"""Where a SQLite store lives, what is in that file, and how aimem connects to it.

One open path for every store, so that opening never changes what it should only read:

* ``parse_url`` turns a URL into a ``Target`` (a file, or memory) or a typed error;
  nothing is touched.
* ``inspect`` looks at an existing file through a read-only connection: an aimem store
  (and its schema version), an empty file, another application's database, or not a
  database at all. It never creates, migrates or switches the journal mode.
* ``make_engine`` connects: read-write, read-only (``?mode=ro``, or a file aimem may not
  write), or a private in-memory database. WAL is switched on by the store before its
  first write (``enable_wal``), never by opening.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import QueuePool, StaticPool

from aimem.exceptions import StorageError
from aimem.storage.schema import METADATA

__all__ = ["BUSY_TIMEOUT_MS", "FileState", "Target", "enable_wal", "inspect", "make_engine"]

#: How long a writer waits for SQLite's lock before the store's own retry loop takes over.
BUSY_TIMEOUT_MS = 10_000
#: Tables aimem creates; a file holding only these (and no stamp) is an unfinished aimem store.
AIMEM_TABLES = frozenset(
    {
        "memories",
        "memory_history",
        "idempotency_keys",
        "core",
        "namespace_counts",
        "memory_vectors",
        "memory_versions",
        "aimem_meta",
    }
)
#: The columns each of them has: a table of one of these names without them is not ours.
_COLUMNS = {t.name: frozenset(t.columns.keys()) for t in METADATA.sorted_tables}
_URL_HINT = "use a URL such as sqlite:///agent.db (or sqlite:///:memory: for a store in memory)"


@dataclass(frozen=True)
class Target:
    """A parsed store location: a file (``path``) or, with ``path`` None, memory."""

    path: Path | None
    read_only: bool = False

    @property
    def in_memory(self) -> bool:
        """True for a private, unshared database that ends with the store."""
        return self.path is None


@dataclass(frozen=True)
class FileState:
    """What ``inspect`` found: ``kind`` and, for an aimem store, its schema version."""

    kind: Literal["absent", "empty", "aimem"]
    version: int | None = None
    writable: bool = True


def parse_url(url: str) -> Target:
    """The store a URL names; StorageError (never echoing a password) if it names none.

    Accepted: ``sqlite:///path``, ``sqlite:////abs/path``, ``sqlite:///:memory:`` and
    ``sqlite://`` (memory), with ``?mode=ro`` for read-only use; SQLAlchemy's
    ``sqlite:///file:path?mode=ro&uri=true`` form too.
    """
    if not isinstance(url, str) or not url.strip():
        raise StorageError(f"The database URL is empty: {_URL_HINT}")
    try:
        parsed = make_url(url)
        backend = parsed.get_backend_name()
    except (ArgumentError, ValueError) as exc:
        raise StorageError(f"Cannot parse the database URL: {_URL_HINT}") from exc
    if backend != "sqlite":  # PostgreSQL URLs never get here (open_backend)
        raise StorageError(
            f"This version of aimem stores memories in SQLite only ({backend} is not "
            f"supported yet): {_URL_HINT}"
        )
    query = {k: (v if isinstance(v, str) else v[-1]) for k, v in parsed.query.items()}
    database = parsed.database or ""
    if database.startswith("file:"):
        if query.pop("uri", "").lower() not in ("true", "1"):
            raise StorageError(f"A file: database needs ?uri=true in the URL, or {_URL_HINT}")
        database = database.removeprefix("file:")
        if database.startswith("//"):
            database = database.removeprefix("//")
    mode = query.pop("mode", "rwc")
    if query:
        raise StorageError(
            f"Unknown option(s) in the database URL: {', '.join(sorted(query))}; "
            "aimem understands only ?mode=ro"
        )
    if mode not in ("ro", "rw", "rwc", "memory"):
        raise StorageError(f"Unknown ?mode={mode} in the database URL: use ?mode=ro or none")
    if database in ("", ":memory:") or mode == "memory":
        return Target(None)
    return Target(Path(database).expanduser(), read_only=mode == "ro")


def inspect(target: Target) -> FileState:
    """Classify the file behind ``target`` without writing a byte to it.

    Raises:
        StorageError: not a SQLite database, another application's database, a schema
            version stamp that is not a number, or a path that is a directory.
    """
    assert target.path is not None
    path = target.path
    if not path.exists():
        if target.read_only:
            raise StorageError(f"No database at {path}: a read-only store needs an existing file")
        return FileState("absent")
    if path.is_dir():
        raise StorageError(f"{path} is a directory, not a database file: {_URL_HINT}")
    writable = not target.read_only and _writable(path)
    try:
        con = _connect_read_only(path)
    except sqlite3.OperationalError as exc:
        raise StorageError(f"Cannot open {path} for reading: {exc}") from exc
    except sqlite3.DatabaseError as exc:
        raise StorageError(
            f"{path} is not a SQLite database ({exc}); aimem left it untouched: "
            "point aimem at another file"
        ) from exc
    try:
        try:
            tables = {
                name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"{path} is not a SQLite database ({exc}); aimem left it untouched: "
                "point aimem at another file"
            ) from exc
        if not tables:
            return FileState("empty", writable=writable)
        if "aimem_meta" not in tables:
            foreign = sorted(t for t in tables if not _fts_shadow(t) and not _ours(con, t))
            if not foreign:
                return FileState("empty", writable=writable)  # an unfinished aimem store
            shown = ", ".join(foreign[:5])
            raise StorageError(
                f"{path} belongs to another application (tables: {shown}); aimem left it "
                "untouched: point aimem at its own file"
            )
        row = con.execute("SELECT value FROM aimem_meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"Cannot read {path}: {exc}") from exc
    finally:
        con.close()
    if row is None:
        return FileState("empty", writable=writable)
    try:
        version = int(str(row[0]).strip())
    except ValueError:
        raise StorageError(
            f"{path} has a damaged schema version stamp ({str(row[0])[:20]!r}); aimem left it "
            "untouched: restore it from a backup or an export"
        ) from None
    return FileState("aimem", version=version, writable=writable)


def make_engine(target: Target, *, read_only: bool) -> Engine:
    """An engine for ``target``: pooled file connections, or one private in-memory one.

    Writers begin with ``BEGIN IMMEDIATE`` (execution option ``aimem_write``), so they
    take the write lock up front and queue on the busy timeout instead of deadlocking.
    """
    if target.path is None:
        engine = create_engine(
            "sqlite://",
            creator=lambda: sqlite3.connect(":memory:", check_same_thread=False),
            poolclass=StaticPool,
        )
    else:
        path = target.path

        def connect() -> sqlite3.Connection:
            if read_only:
                return _connect_read_only(path)
            return sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)

        engine = create_engine("sqlite://", creator=connect, poolclass=QueuePool)
    _install_hooks(engine)
    return engine


def enable_wal(engine: Engine) -> None:
    """Switch the file to WAL (once, persistent) so readers never wait for writers."""
    raw = engine.raw_connection()
    try:
        cursor = raw.driver_connection.cursor()  # type: ignore[union-attr]
        for _ in range(200):
            try:
                if cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                    return
                cursor.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:  # another process is switching it too
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                time.sleep(0.05)
    finally:
        raw.close()


def _install_hooks(engine: Engine) -> None:
    """Busy timeout, and transactions begun by SQLAlchemy's "begin" event.

    pysqlite's own transaction handling is off, so readers take no lock and writers
    take the write lock at BEGIN.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        write = conn.get_execution_options().get("aimem_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write: ``mode=ro``, or ``immutable`` when even that fails.

    A WAL file in a folder aimem may not write cannot get its shared-memory file, which
    a ``mode=ro`` reader needs; such a store is read as an immutable file instead.
    """
    uri = f"file:{quote(str(path.absolute()))}"
    con = sqlite3.connect(
        f"{uri}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
    )
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return con
    except sqlite3.OperationalError:
        con.close()
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)


def _writable(path: Path) -> bool:
    """Whether aimem may write the file (and beside it: WAL keeps two files next to it)."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)


def _ours(con: sqlite3.Connection, table: str) -> bool:
    """One of aimem's tables by name and by shape: another ``memories (id, body)`` is not."""
    if table not in AIMEM_TABLES:
        return False
    columns = {row[1] for row in con.execute(f"PRAGMA table_info({table})")}
    return columns >= _COLUMNS.get(table, frozenset())


def _fts_shadow(table: str) -> bool:
    """FTS5's own tables (``memories_fts_data`` ...), which come with aimem's indexes."""
    return table.startswith(("memories_fts", "memories_active_fts"))
