"""The PostgreSQL backend: one server holding many namespaces, shared by many hosts.

What only PostgreSQL needs lives here, on top of the shared ``Backend``: parsing the URL
(``postgresql://``, ``postgresql+psycopg://``, ``postgres://``; pool size and timeouts
may ride on it), a pooled psycopg 3 engine, writers serialised per namespace by a
transaction-level advisory lock (``pg_advisory_xact_lock(hashtext(namespace))``: the
server holds it, so "the cap holds, the lowest go first" stays true with writers on
several machines, and it goes with the transaction however that ends), reads in a
read-only ``REPEATABLE READ`` snapshot (an export, or the vector cache's cursor and the
vectors it reads, see one moment), which errors are worth a retry, full-text keyword
search (``postgres_search.py``) and the schema (``postgres_schema.py``).

psycopg is imported here only, and this module only when a URL asks for PostgreSQL, so
``import aimem`` never needs the ``aimem[postgres]`` extra. Passwords never leave this
module: ``url`` and every message show the URL masked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, OperationalError

from aimem.exceptions import StorageError
from aimem.models import Memory
from aimem.storage import postgres_search, postgres_vectors
from aimem.storage.base import Backend
from aimem.storage.postgres_schema import migrate
from aimem.storage.postgres_vectors import SESSION_SETTINGS
from aimem.storage.sql import SearchFilters
from aimem.storage.vector_cache import VectorCache

__all__ = ["DEFAULTS", "READ_HOST", "SCHEMES", "PostgresBackend", "masked", "parse_url", "read_url"]

SCHEMES = ("postgresql", "postgresql+psycopg", "postgres")
#: Options aimem reads off the URL's query, with their defaults (the rest go to psycopg).
DEFAULTS = {
    "pool_size": 5,  # connections kept per process
    "max_overflow": 10,  # extra connections under a burst, closed when returned
    "connect_timeout": 5,  # seconds: a dead server fails fast
    "statement_timeout": 30_000,  # ms: a stuck statement (or lock wait) ends as an error
    "reconnect_timeout": 15,  # seconds an open store keeps retrying a lost server (restarts)
    "vector_cache_mb": 256,  # without pgvector: what this process's vector indexes may hold
}
#: ``?read_host=host[:port]``: searches, listings and exports read from that server (a
#: streaming replica), with the primary's user, password and database; writes, and the
#: reads inside them, stay on the primary.
READ_HOST = "read_host"
_LOCK = text("SELECT pg_advisory_xact_lock(hashtext(:ns))")
#: SQLSTATEs a second try may fix: serialization failure, deadlock ...
_CONFLICT = frozenset({"40001", "40P01"})
#: ... and the server shutting down or not yet accepting connections (restart, failover).
_SERVER_GONE = frozenset({"57P01", "57P02", "57P03"})
_HINT = "use a URL such as postgresql://user@host:5432/database"
T = TypeVar("T")


def masked(url: str | URL) -> str:
    """``url`` with its password (if any) replaced by ``***``: safe to show or log."""
    try:
        parsed = url if isinstance(url, URL) else make_url(_normalised(url))
    except (ArgumentError, ValueError):
        return "<a database URL aimem cannot parse>"
    if parsed.password is None:
        return url if isinstance(url, str) else parsed.render_as_string(hide_password=False)
    return parsed.render_as_string(hide_password=True)


def _normalised(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if sep and scheme in ("postgres", "postgresql"):
        return f"postgresql+psycopg://{rest}"
    return url


def parse_url(url: str) -> tuple[URL, dict[str, int]]:
    """The SQLAlchemy URL (psycopg driver) and aimem's options; StorageError, masked.

    ``?read_host=`` stays on the returned URL: ``read_url`` makes the replica's from it.
    """
    try:
        parsed = make_url(_normalised(url))
    except (ArgumentError, ValueError) as exc:
        raise StorageError(f"Cannot parse the database URL: {_HINT}") from exc
    if parsed.drivername != "postgresql+psycopg":
        raise StorageError(
            f"aimem talks to PostgreSQL through psycopg 3, not {parsed.drivername}: {_HINT}"
        )
    if not parsed.database:
        raise StorageError(f"The database URL {masked(parsed)} names no database: {_HINT}")
    options: dict[str, int] = {}
    query = dict(parsed.query)
    for name, default in DEFAULTS.items():
        raw = query.pop(name, None)
        value = raw[-1] if isinstance(raw, tuple) else raw
        try:
            options[name] = default if value is None else int(value)
        except ValueError:
            raise StorageError(
                f"?{name}={str(value)[:20]} in the database URL is not a whole number"
            ) from None
        if options[name] < 0 or (name == "pool_size" and options[name] < 1):
            raise StorageError(f"?{name} in the database URL must be positive")
    return parsed.set(query=query), options


def read_url(parsed: URL) -> URL | None:
    """The replica's URL from ``?read_host=host[:port]`` (None: read from the primary).

    Raises:
        StorageError: the value is not a host, or its port is not a port number.
    """
    raw = parsed.query.get(READ_HOST)
    value = (raw[-1] if isinstance(raw, tuple) else raw or "").strip()
    if not value:
        return None
    host, sep, port = value.rpartition(":") if value.count(":") == 1 else (value, "", "")
    if not host or any(c in host for c in "/?#@ ") or (sep and not port.isdigit()):
        raise StorageError(f"?{READ_HOST}={value[:40]} in the database URL is not host[:port]")
    number = int(port) if sep else parsed.port
    if number is not None and not 0 < number < 65536:
        raise StorageError(f"?{READ_HOST}={value[:40]} in the database URL has no valid port")
    primary = parsed.difference_update_query([READ_HOST])
    return primary.set(host=host, port=number)


def _state(exc: OperationalError) -> str | None:
    """The SQLSTATE the server answered with, if it answered at all."""
    state = getattr(exc.orig, "sqlstate", None)
    return state if isinstance(state, str) else None


def _server_options(parsed: URL, statement_timeout: int) -> str:
    """The server options for libpq: ours first, then any the URL carries.

    Ours: the statement timeout, and pgvector's search settings (``SESSION_SETTINGS``;
    harmless placeholders on a server without pgvector).
    """
    given = parsed.query.get("options")
    extra = given[-1] if isinstance(given, tuple) else given
    settings = {"statement_timeout": str(statement_timeout), **SESSION_SETTINGS}
    ours = " ".join(f"-c {name}={value}" for name, value in settings.items())
    return " ".join(filter(None, [ours, extra]))


class PostgresBackend(Backend):
    """A PostgreSQL database as an aimem store (``aimem[postgres]``)."""

    def __init__(self, url: str) -> None:
        parsed, options = parse_url(url)
        # ?vectors=auto|server|memory: where search by meaning runs (postgres_vectors.py).
        parsed, self._vector_mode = postgres_vectors.mode_of(parsed)
        super().__init__(masked(url))
        self._password = parsed.password or None
        # Sequence values commit out of order: see vector_cache for the scoped cursor.
        self._vectors = VectorCache(
            scoped_cursor=True, budget_bytes=options["vector_cache_mb"] << 20
        )
        self._reconnect_timeout = float(options["reconnect_timeout"])
        #: Set once the server has answered: a server that never did fails at once.
        self._reached = False
        try:
            import psycopg  # noqa: F401 - only to name the missing extra
        except ImportError:
            raise StorageError(
                'PostgreSQL needs the psycopg driver: pip install "aimem[postgres]"'
            ) from None
        connect_args: dict[str, Any] = {
            "connect_timeout": options["connect_timeout"],
            "options": _server_options(parsed, options["statement_timeout"]),
            "application_name": "aimem",
        }
        replica = read_url(parsed)

        def engine_for(target: URL, application: str) -> Engine:
            return create_engine(
                target.difference_update_query(["options", READ_HOST]),
                pool_size=options["pool_size"],
                max_overflow=options["max_overflow"],
                # No ping per checkout (a round trip per unit of work): a connection the
                # server dropped fails its first statement, SQLAlchemy empties the pool,
                # and _with_retry runs the unit of work again on a fresh one (restarts).
                pool_pre_ping=False,
                connect_args={**connect_args, "application_name": application},
                hide_parameters=True,  # a failing statement's message never carries values
            )

        self.engine = engine_for(parsed, "aimem")
        postgres_vectors.watch_notices(self.engine)  # before its first connection
        #: Where reads go: the replica ``?read_host=`` names, else the primary. Its
        #: connections say ``aimem-read`` in ``pg_stat_activity``.
        self._read_engine = self.engine if replica is None else engine_for(replica, "aimem-read")
        self._reader = self._read_engine.execution_options(
            isolation_level="REPEATABLE READ", postgresql_readonly=True
        )
        self._statement_reader = self._read_engine.execution_options(isolation_level="AUTOCOMMIT")
        self._writes_ready = False
        try:
            self._prepare_writes()
        except BaseException:
            self.close()
            raise

    @property
    def path(self) -> Path | None:
        """None: a server has no file."""
        return None

    @property
    def reads_from_replica(self) -> bool:
        """Whether reads go to the server ``?read_host=`` names rather than the primary."""
        return self._read_engine is not self.engine

    def close(self) -> None:
        """Release every pooled connection, the replica's too."""
        super().close()
        if self.reads_from_replica:
            self._read_engine.dispose()

    def after_fork(self) -> None:
        """In a forked child: leave the parent's connections, the replica's too."""
        super().after_fork()
        if self.reads_from_replica:
            self._read_engine.dispose(close=False)

    def _with_retry(self, operation: Callable[[], T]) -> T:
        """The shared retry loop, with the password scrubbed from any message it raises."""
        try:
            return super()._with_retry(operation)
        except StorageError as exc:
            message = str(exc)
            cause = exc.__cause__
            if isinstance(cause, OperationalError) and self._server_lost(cause):
                detail = message.removeprefix("Database error: ")
                where = f"cannot reach the PostgreSQL server at {self.url}"
                message = f"Database error: {where}: {detail}"
            secret = str(self._password or "")
            if secret and secret in message:
                raise StorageError(message.replace(secret, "***")) from None
            if message != str(exc):
                raise StorageError(message) from cause
            raise

    def _prepare_writes(self) -> None:
        """Create or migrate the schema (on open: reads need the tables too)."""

        def run() -> None:
            with self.engine.begin() as conn:
                migrate(conn)
                if postgres_vectors.prepare(conn, self._vector_mode):
                    self._vectors = postgres_vectors.ServerVectors()

        self._with_retry(run)
        self._writes_ready = True
        self._reached = True

    # -- transactions and retries -------------------------------------------------------

    @contextmanager
    def _read(self, snapshot: bool = True) -> Iterator[Connection]:
        # Without a snapshot, each statement is its own transaction: no BEGIN, no ROLLBACK.
        with (self._reader if snapshot else self._statement_reader).connect() as conn:
            yield conn

    @contextmanager
    def _write(self, namespace: str) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            # Held until this transaction ends; other namespaces' writers never wait.
            conn.execute(_LOCK, {"ns": namespace})
            yield conn

    def _is_transient(self, exc: OperationalError) -> bool:
        """Serialization failures, deadlocks, and a connection lost or refused (restarts)."""
        return _state(exc) in _CONFLICT or self._server_lost(exc)

    def _server_lost(self, exc: OperationalError) -> bool:
        if exc.connection_invalidated:
            return True
        state = _state(exc)
        if state is None:  # no answer from the server: refused, reset, timed out
            return True
        return state in _SERVER_GONE or state.startswith("08")

    def _retry_wait(self, exc: OperationalError, attempt: int, elapsed: float) -> float | None:
        """A lost server is waited for up to ``reconnect_timeout`` once it has answered.

        A restart or a failover takes seconds, longer than the shared bound for a
        conflict: an open store rides it out, and the unit of work (a whole save with its
        capacity pass) runs again from the start on a fresh connection, so nothing it
        acknowledged is lost and nothing half-done is kept. A server that never answered
        is a wrong URL or a dead server: that fails at once, within ``connect_timeout``.
        """
        if not self._server_lost(exc):
            return super()._retry_wait(exc, attempt, elapsed)
        if not self._reached:
            return None
        wait = min(0.1 * 2.0 ** (attempt - 1), 1.0)
        if elapsed + wait > self._reconnect_timeout:
            return None
        return wait

    # -- hooks of Backend ---------------------------------------------------------------

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
        return postgres_search.keyword_matches(
            conn, namespace, query, limit=limit, filters=filters, related=related
        )

    def backup(self, target: Path) -> None:
        """Refused: a server's database is backed up with the server's own tools."""
        raise StorageError(
            "A PostgreSQL store is backed up with the server's tools: run pg_dump (or "
            "use your managed backups), or store.export_to(path) for one namespace"
        )
