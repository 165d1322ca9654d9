"""Creating aimem's schema in a new file and bringing older files up to date.

Both run inside one write transaction of the caller's (``BEGIN IMMEDIATE``), so two
processes opening one old file at once migrate it once: the second finds the new
version stamp when its turn comes.

Versions: 1 the first schema; 2 added ``idempotency_keys``; 3 indexes aimem's own
namespace-scoped keyword terms (``memories.terms``) instead of SQLite's tokenization of
the texts, so one namespace's data can change neither another's results nor its costs.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import Connection, bindparam, inspect, select, update
from sqlmodel import SQLModel

from ..exceptions import StorageError
from ..keywords import index_terms
from .schema import (
    FTS_TABLES,
    FTS_TRIGGERS,
    SCHEMA_VERSION,
    SQLITE_FTS_DDL,
    SQLITE_FTS_FILL,
    SQLITE_TRIGGER_DDL,
    MemoryRow,
    MetaRow,
)

__all__ = ["create_schema", "migrate", "stored_version"]

log = logging.getLogger("aimem")

_META: Any = MetaRow.__table__  # type: ignore[attr-defined]
_MEMORIES: Any = MemoryRow.__table__  # type: ignore[attr-defined]
_BATCH = 2000


def stored_version(conn: Connection) -> int | None:
    """The schema version stamped in the file, or None before aimem created its schema."""
    if not inspect(conn).has_table("aimem_meta"):
        return None
    value = conn.execute(
        select(_META.c.value).where(_META.c.key == "schema_version")
    ).scalar_one_or_none()
    return None if value is None else int(value)


def create_schema(conn: Connection) -> None:
    """Create every table, index and trigger (those missing), stamped with this version."""
    SQLModel.metadata.create_all(conn)
    for ddl in (*SQLITE_FTS_DDL, *SQLITE_TRIGGER_DDL):
        conn.exec_driver_sql(ddl)
    if stored_version(conn) is None:
        conn.execute(_META.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))


def migrate(conn: Connection) -> None:
    """Bring the file's schema to this version (a no-op when another process already did).

    Raises:
        StorageError: the file is stamped with a newer version than this aimem knows.
    """
    stored = stored_version(conn)
    if stored is None:
        create_schema(conn)
        return
    if stored > SCHEMA_VERSION:
        raise StorageError(
            f"This database uses schema version {stored}, newer than this aimem "
            f"understands ({SCHEMA_VERSION}): upgrade aimem."
        )
    if stored == SCHEMA_VERSION:
        return
    SQLModel.metadata.create_all(conn)  # version 2's idempotency_keys, among others
    if stored < 3:
        _namespaced_keyword_terms(conn)
    for ddl in (*SQLITE_FTS_DDL, *SQLITE_TRIGGER_DDL):
        conn.exec_driver_sql(ddl)
    conn.execute(
        update(_META).where(_META.c.key == "schema_version").values(value=str(SCHEMA_VERSION))
    )


def _namespaced_keyword_terms(conn: Connection) -> None:
    """Version 3: compute ``memories.terms`` for every row and rebuild both keyword indexes."""
    columns = {row[1] for row in conn.exec_driver_sql("PRAGMA table_info(memories)")}
    if "terms" not in columns:
        conn.exec_driver_sql("ALTER TABLE memories ADD COLUMN terms TEXT NOT NULL DEFAULT ''")
    for trigger in FTS_TRIGGERS:
        conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {trigger}")
    for table in FTS_TABLES:
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {table}")
    total = 0
    last = 0
    m = _MEMORIES.c
    while True:
        rows = conn.execute(
            select(m.seq, m.content, m.interpreted_content)
            .where(m.seq > last)
            .order_by(m.seq)
            .limit(_BATCH)
        ).all()
        if not rows:
            break
        conn.execute(
            update(_MEMORIES).where(m.seq == bindparam("b_seq")).values(terms=bindparam("b_terms")),
            [{"b_seq": seq, "b_terms": index_terms((c, i))} for seq, c, i in rows],
        )
        total += len(rows)
        last = rows[-1][0]
    for ddl in SQLITE_FTS_DDL:
        conn.exec_driver_sql(ddl)
    for fill in SQLITE_FTS_FILL:
        conn.exec_driver_sql(fill)
    if total:
        log.info("aimem: rebuilt the keyword index of %d memories (schema version 3)", total)
