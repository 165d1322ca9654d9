"""PostgreSQL's schema: the portable tables plus full text, triggers, and migrations.

The portable tables (``schema.py``) are created by SQLAlchemy; this module adds what
SQLite gets from ``sqlite_schema.py``, as PostgreSQL does it:

* ``memories.fts``, a stored generated ``tsvector`` of aimem's own namespace-scoped terms
  (``memories.terms``, each prefixed as ``keywords.namespace_prefix`` does), with a GIN
  index over every memory and a partial one over the active ones (the everyday search
  and the related lookup on each save cost what the active set costs). The lexemes are
  built verbatim (no parser, no dictionary): aimem stems and folds the terms itself, and
  CJK characters and bigrams must stay exactly as ``keywords`` made them.
* plpgsql triggers for the ``namespace_counts`` counter, deleting a memory's vector,
  keys and versions with it, and keeping ``memory_history`` append-only.

Migrations are aimem's own, not Alembic: the SQLite side stamps ``aimem_meta`` with
``SCHEMA_VERSION`` and steps through its upgrades inside the store's own write
transaction; PostgreSQL does the same under a transaction-level advisory lock, so
two processes opening one old database migrate it once, and the two backends share one
version number and one place (``MIGRATIONS``) to add a step. Alembic would bring a
second version table, a dependency and a migration environment for a handful of DDL
statements. PostgreSQL stores began at version 4, so there is no step yet.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, select, text, update
from sqlmodel import SQLModel

from ..exceptions import StorageError
from .schema import SCHEMA_VERSION, MetaRow

__all__ = ["MIGRATIONS", "create_schema", "migrate", "stored_version"]

_META: Any = MetaRow.__table__  # type: ignore[attr-defined]
#: The advisory lock key under which the schema is created or migrated.
SCHEMA_LOCK = 0x61696D656D  # "aimem"

#: The namespace's prefix (hex of its UTF-8 bytes, then "q") on each term, as a
#: tsvector whose positions keep repeats (``ts_rank`` weighs how often a term occurs).
_FTS_FUNCTION = r"""
CREATE OR REPLACE FUNCTION aimem_fts(ns text, terms text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(
      '''' || replace(replace(encode(convert_to(ns, 'UTF8'), 'hex') || 'q' || t,
                              '\', '\\'), '''', '''''')
      || ''':' || least(i, 16383), ' ')::tsvector, ''::tsvector)
  FROM unnest(string_to_array(nullif(terms, ''), ' ')) WITH ORDINALITY AS u(t, i)
  WHERE t <> '' AND octet_length(t) <= 1024  -- a lexeme holds at most 2047 bytes
$$
"""

_TRIGGER_DDL = (
    _FTS_FUNCTION,
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS fts tsvector "
    "GENERATED ALWAYS AS (aimem_fts(namespace, terms)) STORED",
    # Tokens per memory, for BM25's length normalisation (postgres_search.py).
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS term_count integer GENERATED ALWAYS AS "
    "(coalesce(array_length(string_to_array(nullif(terms, ''), ' '), 1), 0)) STORED",
    "CREATE INDEX IF NOT EXISTS ix_memories_fts ON memories USING gin (fts)",
    "CREATE INDEX IF NOT EXISTS ix_memories_active_fts ON memories USING gin (fts) "
    "WHERE archived_at IS NULL",
    # The vector cache's per-namespace cursor (vector_cache.py) reads these.
    "CREATE INDEX IF NOT EXISTS ix_history_namespace ON memory_history (namespace, id)",
    # A row is "capped" (counts toward max_memories) while active, unpinned and judged.
    """CREATE OR REPLACE FUNCTION aimem_counts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.archived_at IS NULL AND NOT OLD.pinned
         AND OLD.priority_score IS NOT NULL THEN
        UPDATE namespace_counts SET capped = capped - 1 WHERE namespace = OLD.namespace;
      END IF;
      IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.archived_at IS NULL AND NOT NEW.pinned
         AND NEW.priority_score IS NOT NULL THEN
        INSERT INTO namespace_counts (namespace, capped) VALUES (NEW.namespace, 1)
        ON CONFLICT (namespace) DO UPDATE SET capped = namespace_counts.capped + 1;
      END IF;
      RETURN NULL;
    END $$""",
    # BM25's document count and average length, per namespace, for both indexes.
    """CREATE TABLE IF NOT EXISTS aimem_fts_stats (
        namespace varchar(64) PRIMARY KEY, docs bigint NOT NULL DEFAULT 0,
        tokens bigint NOT NULL DEFAULT 0, active_docs bigint NOT NULL DEFAULT 0,
        active_tokens bigint NOT NULL DEFAULT 0)""",
    """CREATE OR REPLACE FUNCTION aimem_fts_stats() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE aimem_fts_stats SET docs = docs - 1, tokens = tokens - OLD.term_count,
          active_docs = active_docs - (OLD.archived_at IS NULL)::int,
          active_tokens = active_tokens
            - CASE WHEN OLD.archived_at IS NULL THEN OLD.term_count ELSE 0 END
        WHERE namespace = OLD.namespace;
      END IF;
      IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO aimem_fts_stats AS s VALUES (NEW.namespace, 1, NEW.term_count,
          (NEW.archived_at IS NULL)::int,
          CASE WHEN NEW.archived_at IS NULL THEN NEW.term_count ELSE 0 END)
        ON CONFLICT (namespace) DO UPDATE SET docs = s.docs + 1,
          tokens = s.tokens + EXCLUDED.tokens, active_docs = s.active_docs
          + EXCLUDED.active_docs, active_tokens = s.active_tokens + EXCLUDED.active_tokens;
      END IF;
      RETURN NULL;
    END $$""",
    """CREATE OR REPLACE FUNCTION aimem_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM memory_vectors WHERE seq = OLD.seq;
      DELETE FROM idempotency_keys WHERE memory_id = OLD.id;
      DELETE FROM memory_versions WHERE memory_id = OLD.id;
      RETURN NULL;
    END $$""",
    """CREATE OR REPLACE FUNCTION aimem_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'memory_history is append-only';
    END $$""",
    "DROP TRIGGER IF EXISTS memories_count ON memories",
    """CREATE TRIGGER memories_count AFTER INSERT OR DELETE OR UPDATE OF
        archived_at, pinned, priority_score, namespace ON memories
        FOR EACH ROW EXECUTE FUNCTION aimem_counts()""",
    "DROP TRIGGER IF EXISTS memories_fts_stats ON memories",
    """CREATE TRIGGER memories_fts_stats AFTER INSERT OR DELETE OR UPDATE OF
        terms, archived_at, namespace ON memories
        FOR EACH ROW EXECUTE FUNCTION aimem_fts_stats()""",
    "DROP TRIGGER IF EXISTS memories_cascade ON memories",
    """CREATE TRIGGER memories_cascade AFTER DELETE ON memories
        FOR EACH ROW EXECUTE FUNCTION aimem_cascade()""",
    "DROP TRIGGER IF EXISTS memory_history_append_only ON memory_history",
    """CREATE TRIGGER memory_history_append_only BEFORE UPDATE OR DELETE ON memory_history
        FOR EACH ROW EXECUTE FUNCTION aimem_append_only()""",
    "DROP TRIGGER IF EXISTS memory_history_no_truncate ON memory_history",
    """CREATE TRIGGER memory_history_no_truncate BEFORE TRUNCATE ON memory_history
        FOR EACH STATEMENT EXECUTE FUNCTION aimem_append_only()""",
)

#: ``version -> step`` bringing a database at ``version - 1`` to ``version``.
MIGRATIONS: dict[int, Callable[[Connection], None]] = {}
#: The first version a PostgreSQL store was created at.
FIRST_VERSION = 4


def _refuse_foreign_tables(conn: Connection) -> None:
    """A schema holding another application's tables (and no stamp) is left untouched.

    Raises:
        StorageError: it holds tables aimem does not create.
    """
    ours = {table.name for table in SQLModel.metadata.sorted_tables} | {"aimem_fts_stats"}
    found = conn.execute(
        text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    ).scalars()
    foreign = sorted(set(found) - ours)
    if foreign:
        raise StorageError(
            f"This database belongs to another application (tables: {', '.join(foreign[:5])}); "
            "aimem left it untouched: point aimem at a database (or a schema, "
            "?options=-csearch_path%3Daimem) of its own"
        )


def stored_version(conn: Connection) -> int | None:
    """The version stamped in the database, or None before aimem created its schema."""
    exists = conn.execute(text("SELECT to_regclass('aimem_meta') IS NOT NULL")).scalar_one()
    if not exists:
        return None
    value = conn.execute(
        select(_META.c.value).where(_META.c.key == "schema_version")
    ).scalar_one_or_none()
    if value is None:
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        raise StorageError(
            f"The database has a damaged schema version stamp ({str(value)[:20]!r}); aimem "
            "left it untouched: restore it from a backup or an export"
        ) from None


def create_schema(conn: Connection) -> None:
    """Create every table, index, function and trigger, stamped with this version."""
    SQLModel.metadata.create_all(conn)
    for ddl in _TRIGGER_DDL:
        conn.exec_driver_sql(ddl)
    if stored_version(conn) is None:
        conn.execute(_META.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))


def migrate(conn: Connection) -> None:
    """Create or upgrade the schema, once however many processes open the database at once.

    Runs in the caller's transaction, under an advisory lock: a second process waits,
    then finds the new stamp.

    Raises:
        StorageError: the database is stamped with a newer version than this aimem knows.
    """
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK})
    stored = stored_version(conn)
    if stored is None:
        _refuse_foreign_tables(conn)
        create_schema(conn)
        return
    if stored > SCHEMA_VERSION:
        raise StorageError(
            f"This database uses schema version {stored}, newer than this aimem "
            f"understands ({SCHEMA_VERSION}): upgrade aimem. Nothing was changed."
        )
    if stored == SCHEMA_VERSION:
        return
    for version in range(max(stored, FIRST_VERSION) + 1, SCHEMA_VERSION + 1):
        MIGRATIONS[version](conn)
    create_schema(conn)  # new tables, indexes and triggers of this version
    conn.execute(
        update(_META).where(_META.c.key == "schema_version").values(value=str(SCHEMA_VERSION))
    )
