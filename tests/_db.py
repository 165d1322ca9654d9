"""A test store's rows, read (or set up) directly, on either backend.

Tests reach past aimem's API only to check what it stored (a count, a row, that nothing
was written) or to make a state the API cannot (a damaged stamp, an injected fault).
``store_url`` (``_stores.py``) picks the backend; these helpers take that URL, or the
``Path`` of a SQLite file (a backup), and run the SQL through sqlite3 or psycopg.

Queries use SQLite's placeholders (``?`` and ``:name``) and SQL both backends speak
(``NOT pinned``, not ``pinned = 0``); for psycopg they become ``%s`` and ``%(name)s``.
Reads see the latest committed state and leave no transaction open: SQLite through a
read-only connection, PostgreSQL in autocommit.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

try:
    import psycopg
except ImportError:  # pragma: no cover - SQLite-only environments
    psycopg = None  # type: ignore[assignment]

__all__ = [
    "DB_ERRORS",
    "Target",
    "capped_count",
    "dump_text",
    "execute",
    "fingerprint",
    "is_postgres",
    "present_ids",
    "reader",
    "rows",
    "scalar",
    "sqlite_path",
    "tables",
]

#: A store URL (``store_url``), or a SQLite file's path.
Target = str | Path
Params = Sequence[Any] | Mapping[str, Any]
#: What a statement the database refuses raises, whichever the backend.
DB_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error,) + (
    (psycopg.Error,) if psycopg is not None else ()
)
#: The rows the capacity manager bounds, exactly as DESIGN.md defines them.
CAPPED_SQL = (
    "SELECT count(*) FROM memories WHERE namespace = ? AND archived_at IS NULL "
    "AND NOT pinned AND priority_score IS NOT NULL"
)
#: Options aimem reads off a PostgreSQL URL; libpq would refuse them.
_AIMEM_OPTIONS = {"pool_size", "max_overflow", "statement_timeout", "reconnect_timeout"}
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def is_postgres(target: Target) -> bool:
    """Whether ``target`` names a PostgreSQL database."""
    return isinstance(target, str) and target.partition("://")[0] in (
        "postgresql",
        "postgresql+psycopg",
        "postgres",
    )


def sqlite_path(target: Target) -> Path | None:
    """The SQLite file behind ``target``; None for PostgreSQL."""
    if isinstance(target, Path):
        return target
    if is_postgres(target):
        return None
    assert target.startswith("sqlite:///"), target
    return Path(target.removeprefix("sqlite:///").partition("?")[0])


def _conninfo(url: str) -> str:
    _, netloc, path, query, fragment = urlsplit(url)
    kept = [(k, v) for k, v in parse_qsl(query) if k not in _AIMEM_OPTIONS]
    return urlunsplit(("postgresql", netloc, path, urlencode(kept, quote_via=quote), fragment))


def _pg(sql: str, params: Params) -> tuple[str, Params | None]:
    if not params:
        return sql, None  # psycopg reads no placeholders (nor %%) without parameters
    sql = _NAMED.sub(r"%(\1)s", sql.replace("%", "%%"))
    return sql.replace("?", "%s"), params


Run = Callable[[str, Params], list[tuple[Any, ...]]]


@contextlib.contextmanager
def reader(target: Target) -> Iterator[Run]:
    """``read(sql, params)`` on one connection; each call sees the latest commit."""
    path = sqlite_path(target)
    if path is None:
        assert psycopg is not None and isinstance(target, str)
        with psycopg.connect(_conninfo(target), autocommit=True) as conn:

            def read_pg(sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
                cursor = conn.execute(*_pg(sql, params))  # type: ignore[call-overload]
                return list(cursor.fetchall()) if cursor.description else []

            yield read_pg
        return
    uri = f"{path.absolute().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=10)) as con:

        def read_sqlite(sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
            return con.execute(sql, params).fetchall()

        yield read_sqlite


def rows(target: Target, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
    """Every row ``sql`` answers."""
    with reader(target) as read:
        return read(sql, params)


def scalar(target: Target, sql: str, params: Params = ()) -> Any:
    """The one value of the one row ``sql`` answers."""
    [(value,)] = rows(target, sql, params)
    return value


def execute(target: Target, sql: str, params: Params = ()) -> None:
    """Run one statement (or, without ``params``, a script) and commit it."""
    path = sqlite_path(target)
    if path is None:
        assert psycopg is not None and isinstance(target, str)
        with psycopg.connect(_conninfo(target)) as conn:
            conn.execute(*_pg(sql, params))  # type: ignore[call-overload]
        return
    with contextlib.closing(sqlite3.connect(path, timeout=10)) as con:
        if params:
            con.execute(sql, params)
        else:
            con.executescript(sql)
        con.commit()


def tables(target: Target) -> set[str]:
    """The names of the database's own tables."""
    if sqlite_path(target) is not None:
        return {n for (n,) in rows(target, "SELECT name FROM sqlite_master WHERE type='table'")}
    return {n for _, n in _pg_tables(target)}


def _pg_tables(target: Target) -> list[tuple[str, str]]:
    return [
        (str(s), str(n))
        for s, n in rows(
            target,
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' "
            "AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2",
        )
    ]


def dump_text(target: Target) -> str:
    """Every row of every table as text (SQLite: ``iterdump``, the schema included)."""
    path = sqlite_path(target)
    if path is not None:
        with contextlib.closing(sqlite3.connect(path)) as con:
            return "\n".join(con.iterdump())
    with reader(target) as read:
        return "\n".join(
            f"{schema}.{table}: {row[0]}"
            for schema, table in _pg_tables(target)
            for row in read(f'SELECT t::text FROM "{schema}"."{table}" t ORDER BY 1', ())
        )


def fingerprint(target: Target) -> str:
    """A digest that changes if anything in the database does.

    SQLite: the file's bytes (a journal mode switch, a table, a row all show). PostgreSQL:
    every table's columns, rows and triggers, and every function of the database's own.
    """
    path = sqlite_path(target)
    if path is not None:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    with reader(target) as read:
        described = [
            read(
                "SELECT table_schema, table_name, column_name, data_type "
                "FROM information_schema.columns "
                "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2, 3",
                (),
            ),
            read("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1", ()),
            read(
                "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
                (),
            ),
            read("SELECT indexname FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1", ()),
        ]
    return hashlib.sha256(f"{described!r}\n{dump_text(target)}".encode()).hexdigest()


def capped_count(target: Target, namespace: str = "default") -> int:
    """Active, unpinned, judged memories, counted from the table itself."""
    return int(scalar(target, CAPPED_SQL, (namespace,)))


def present_ids(target: Target, ids: Iterable[str]) -> set[str]:
    """Which of ``ids`` have a row (active or archived)."""
    wanted = list(ids)
    found: set[str] = set()
    with reader(target) as read:
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                r[0] for r in read(f"SELECT id FROM memories WHERE id IN ({marks})", chunk)
            )
    return found
