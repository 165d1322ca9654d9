"""SQLite's schema: its keyword index and triggers, creating it, and upgrading old files.

Both run inside one write transaction of the caller's (``BEGIN IMMEDIATE``), so two
processes opening one old file at once migrate it once: the second finds the new
version stamp when its turn comes.

Versions: 1 the first schema; 2 added ``idempotency_keys``; 3 indexes aimem's own
namespace-scoped keyword terms (``memories.terms``) instead of SQLite's tokenization of
the texts, so one namespace's data can change neither another's results nor its costs;
4 records supersession (``superseded_by``), restores (``restored_at``) and the previous
versions of edited memories (``memory_versions``); 5 adds ``recall_terms`` and
``contested_by``, rewrites the offline judge's framed interpretations and re-indexes every
memory without the store's framing words (``sql_migrations.readable_interpretations``).
"""

from __future__ import annotations

import logging

from sqlalchemy import Connection, bindparam, inspect, select, update

from aimem.exceptions import StorageError
from aimem.storage.schema import MEMORIES, META, METADATA, SCHEMA_VERSION
from aimem.storage.sql_migrations import readable_interpretations
from aimem.text.keywords import memory_terms

__all__ = ["create_schema", "migrate", "stored_version"]

# Two keyword indexes over ``memories.terms``, kept in step by triggers: memories_fts
# holds every memory (searches that include the archive), and memories_active_fts only
# the active ones, so the everyday search and the related lookup on each save cost what
# the active set costs, however large the archive grows. Each term is prefixed with its
# namespace (``keywords.namespace_prefix``), so posting lists, document counts and costs
# are the namespace's own. Contentless: the text is in ``memories`` already; the
# triggers hand the index the exact terms to add or remove. aimem stems and folds the
# terms itself, so the tokenizer only splits on spaces.
_FTS_OPTIONS = "terms, content='', tokenize='ascii'"


def _scoped_terms(row: str) -> str:
    """SQL for ``row``'s terms, each prefixed with its namespace's hex and ``q``."""
    prefix = f"lower(hex({row}.namespace)) || 'q'"
    return (
        f"CASE WHEN {row}.terms = '' THEN '' ELSE "
        f"{prefix} || replace({row}.terms, ' ', ' ' || {prefix}) END"
    )


def _fts_add(index: str, row: str, when: str = "") -> str:
    """Index ``row`` ('new' or 'old') in ``index``, only if ``when`` holds."""
    return f"INSERT INTO {index}(rowid, terms) SELECT {row}.seq, {_scoped_terms(row)} {when};"


def _fts_remove(index: str, row: str, when: str = "") -> str:
    """Remove ``row`` from a contentless index (it must pass the indexed terms)."""
    return (
        f"INSERT INTO {index}({index}, rowid, terms) "
        f"SELECT 'delete', {row}.seq, {_scoped_terms(row)} {when};"
    )


_NEW_ACTIVE, _OLD_ACTIVE = "WHERE new.archived_at IS NULL", "WHERE old.archived_at IS NULL"
#: Keyword index objects, dropped and rebuilt by the schema 3 migration.
FTS_TABLES = ("memories_fts", "memories_active_fts")
FTS_TRIGGERS = ("memories_fts_ai", "memories_fts_ad", "memories_fts_au", "memories_active_fts_au")
SQLITE_FTS_DDL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5({_FTS_OPTIONS})",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS memories_active_fts USING fts5({_FTS_OPTIONS})",
    f"""CREATE TRIGGER IF NOT EXISTS memories_fts_ai AFTER INSERT ON memories BEGIN
        {_fts_add("memories_fts", "new")}
        {_fts_add("memories_active_fts", "new", _NEW_ACTIVE)} END""",
    f"""CREATE TRIGGER IF NOT EXISTS memories_fts_ad AFTER DELETE ON memories BEGIN
        {_fts_remove("memories_fts", "old")}
        {_fts_remove("memories_active_fts", "old", _OLD_ACTIVE)} END""",
    f"""CREATE TRIGGER IF NOT EXISTS memories_fts_au AFTER UPDATE OF terms ON memories BEGIN
        {_fts_remove("memories_fts", "old")}
        {_fts_add("memories_fts", "new")} END""",
    f"""CREATE TRIGGER IF NOT EXISTS memories_active_fts_au
        AFTER UPDATE OF terms, archived_at ON memories BEGIN
        {_fts_remove("memories_active_fts", "old", _OLD_ACTIVE)}
        {_fts_add("memories_active_fts", "new", _NEW_ACTIVE)} END""",
)
#: Fill freshly created keyword indexes from the table (the schema 3 migration).
SQLITE_FTS_FILL = (
    f"INSERT INTO memories_fts(rowid, terms) SELECT seq, {_scoped_terms('memories')} FROM memories",
    f"INSERT INTO memories_active_fts(rowid, terms) SELECT seq, {_scoped_terms('memories')} "
    "FROM memories WHERE archived_at IS NULL",
)
#: Counters, cascades and the append-only guard, alongside the keyword index.
SQLITE_TRIGGER_DDL = (
    # A row is "capped" (counts toward max_memories) while active, unpinned and judged.
    """CREATE TRIGGER IF NOT EXISTS memories_count_ai AFTER INSERT ON memories
        WHEN new.archived_at IS NULL AND NOT new.pinned AND new.priority_score IS NOT NULL
        BEGIN INSERT INTO namespace_counts(namespace, capped) VALUES (new.namespace, 1)
        ON CONFLICT(namespace) DO UPDATE SET capped = capped + 1; END""",
    """CREATE TRIGGER IF NOT EXISTS memories_count_ad AFTER DELETE ON memories
        WHEN old.archived_at IS NULL AND NOT old.pinned AND old.priority_score IS NOT NULL
        BEGIN UPDATE namespace_counts SET capped = capped - 1
        WHERE namespace = old.namespace; END""",
    """CREATE TRIGGER IF NOT EXISTS memories_count_au AFTER UPDATE OF
        archived_at, pinned, priority_score, namespace ON memories BEGIN
        UPDATE namespace_counts SET capped = capped - 1 WHERE namespace = old.namespace
          AND old.archived_at IS NULL AND NOT old.pinned AND old.priority_score IS NOT NULL;
        INSERT INTO namespace_counts(namespace, capped)
          SELECT new.namespace, 1 WHERE new.archived_at IS NULL AND NOT new.pinned
            AND new.priority_score IS NOT NULL
          ON CONFLICT(namespace) DO UPDATE SET capped = capped + 1; END""",
    """CREATE TRIGGER IF NOT EXISTS memories_vector_ad AFTER DELETE ON memories BEGIN
        DELETE FROM memory_vectors WHERE seq = old.seq; END""",
    """CREATE TRIGGER IF NOT EXISTS memories_keys_ad AFTER DELETE ON memories BEGIN
        DELETE FROM idempotency_keys WHERE memory_id = old.id; END""",
    """CREATE TRIGGER IF NOT EXISTS memories_versions_ad AFTER DELETE ON memories BEGIN
        DELETE FROM memory_versions WHERE memory_id = old.id; END""",
    """CREATE TRIGGER IF NOT EXISTS memory_history_no_update BEFORE UPDATE ON memory_history
        BEGIN SELECT RAISE(ABORT, 'memory_history is append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS memory_history_no_delete BEFORE DELETE ON memory_history
        BEGIN SELECT RAISE(ABORT, 'memory_history is append-only'); END""",
)


log = logging.getLogger("aimem")

_BATCH = 2000


def stored_version(conn: Connection) -> int | None:
    """The schema version stamped in the file, or None before aimem created its schema."""
    if not inspect(conn).has_table("aimem_meta"):
        return None
    value = conn.execute(
        select(META.c.value).where(META.c.key == "schema_version")
    ).scalar_one_or_none()
    return None if value is None else int(value)


def create_schema(conn: Connection) -> None:
    """Create every table, index and trigger (those missing), stamped with this version."""
    METADATA.create_all(conn)
    for ddl in (*SQLITE_FTS_DDL, *SQLITE_TRIGGER_DDL):
        conn.exec_driver_sql(ddl)
    if stored_version(conn) is None:
        conn.execute(META.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))


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
    METADATA.create_all(conn)  # version 2's idempotency_keys, among others
    if stored < 3:
        _namespaced_keyword_terms(conn)
    if stored < 4:
        _changing_facts(conn)
    if stored < 5:
        _readable_interpretations(conn)
    for ddl in (*SQLITE_FTS_DDL, *SQLITE_TRIGGER_DDL):
        conn.exec_driver_sql(ddl)
    conn.execute(
        update(META).where(META.c.key == "schema_version").values(value=str(SCHEMA_VERSION))
    )


def _changing_facts(conn: Connection) -> None:
    """Version 4: who superseded a memory, when it was restored (``memory_versions`` is new)."""
    columns = {row[1] for row in conn.exec_driver_sql("PRAGMA table_info(memories)")}
    if "superseded_by" not in columns:
        conn.exec_driver_sql("ALTER TABLE memories ADD COLUMN superseded_by VARCHAR(36)")
    if "restored_at" not in columns:
        conn.exec_driver_sql("ALTER TABLE memories ADD COLUMN restored_at DATETIME")
    conn.exec_driver_sql(
        "CREATE INDEX IF NOT EXISTS ix_memories_restored ON memories (namespace, restored_at)"
    )


def _readable_interpretations(conn: Connection) -> None:
    """Version 5: recall terms and contested links; framing out of texts and the index."""
    columns = {row[1] for row in conn.exec_driver_sql("PRAGMA table_info(memories)")}
    if "recall_terms" not in columns:
        conn.exec_driver_sql(
            "ALTER TABLE memories ADD COLUMN recall_terms TEXT NOT NULL DEFAULT ''"
        )
    if "contested_by" not in columns:
        conn.exec_driver_sql("ALTER TABLE memories ADD COLUMN contested_by VARCHAR(36)")
    conn.exec_driver_sql(
        "CREATE INDEX IF NOT EXISTS ix_memories_contested ON memories (namespace, contested_by)"
    )
    for ddl in SQLITE_FTS_DDL:  # a file older than version 3 gets its index first
        conn.exec_driver_sql(ddl)
    readable_interpretations(conn)


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
    m = MEMORIES.c
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
            update(MEMORIES).where(m.seq == bindparam("b_seq")).values(terms=bindparam("b_terms")),
            [{"b_seq": seq, "b_terms": memory_terms(c, i)} for seq, c, i in rows],
        )
        total += len(rows)
        last = rows[-1][0]
    for ddl in SQLITE_FTS_DDL:
        conn.exec_driver_sql(ddl)
    for fill in SQLITE_FTS_FILL:
        conn.exec_driver_sql(fill)
    if total:
        log.info("aimem: rebuilt the keyword index of %d memories (schema version 3)", total)
