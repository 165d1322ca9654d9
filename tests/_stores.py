"""Where the suite's stores live: the one place that picks the backend for every test.

By default a SQLite file in the test's tmp_path. With ``AIMEM_TEST_DATABASE_URL`` naming
a PostgreSQL server (``postgresql://root@127.0.0.1:5432/postgres``: any database the
role may connect to and that lets it ``CREATE DATABASE``), each path gets a fresh
database of its own on that server instead, created on first use (the same path again
is the same store, so a test can reopen it) and dropped at the end of the session
(``drop_databases``, called by ``conftest.py``). ``conftest.py`` builds the ``db_url``
and ``db_url_factory`` fixtures on ``store_url``; tests that need a store URL outside a
fixture (helpers, subprocess arguments) call ``store_url`` directly.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

__all__ = ["POSTGRES_URL", "drop_databases", "on_postgres", "store_url"]

#: Read once at import: conftest clears every AIMEM_* variable around each test.
POSTGRES_URL = os.environ.get("AIMEM_TEST_DATABASE_URL", "").strip() or None
_SESSION = uuid.uuid4().hex[:8]
_created: dict[str, str] = {}


def on_postgres() -> bool:
    """Whether this run's stores are PostgreSQL databases."""
    return POSTGRES_URL is not None


def store_url(path: Path | str) -> str:
    """The URL of a fresh store for ``path`` (a file in the test's tmp_path)."""
    if POSTGRES_URL is None:
        return f"sqlite:///{path}"
    key = str(Path(path).absolute())
    if key not in _created:
        digest = hashlib.sha1(f"{_SESSION}:{key}".encode()).hexdigest()[:16]
        name = f"aimem_t_{_SESSION}_{digest}"
        _admin(f'CREATE DATABASE "{name}"')
        _created[key] = name
    return _with_database(POSTGRES_URL, _created[key])


def drop_databases() -> None:
    """Drop every database this session created (connections left open are ended)."""
    while _created:
        _, name = _created.popitem()
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


#: Test stores need no durability across a server crash: commits skip the WAL flush.
_FAST = "options=-c%20synchronous_commit%3Doff"


def _with_database(url: str, name: str) -> str:
    head, _, tail = url.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{name}?" + "&".join(filter(None, [tail, _FAST]))


def _admin(statement: str) -> None:
    import psycopg

    assert POSTGRES_URL is not None
    conninfo = POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(statement)  # type: ignore[arg-type]
