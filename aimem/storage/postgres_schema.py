"""PostgreSQL's schema: the portable tables plus full text, triggers, and migrations.

The portable tables (``schema.py``) are created by SQLAlchemy; this module adds what
SQLite gets from ``sqlite_schema.py``, as PostgreSQL does it:

* ``memories.fts``, a stored generated ``tsvector`` of aimem's own namespace-scoped terms
  (``memories.terms``, each prefixed as ``keywords.namespace_prefix`` does), with a GIN
  index over every memory and a partial one over the active ones (the everyday search
  and the related lookup on each save cost what the active set costs). The lexemes are
  built verbatim (no parser, no dictionary): aimem stems and folds the terms itself, and
  CJK characters and bigrams must stay exactly as ``keywords`` made them.
* plpgsql triggers for the ``namespace_counts`` and ``aimem_fts_stats`` counters (one
  write per statement, from its transition tables), deleting a memory's vector, keys
  and versions with it, and keeping ``memory_history`` append-only.

Migrations are aimem's own, not Alembic: the SQLite side stamps ``aimem_meta`` with
``SCHEMA_VERSION`` and steps through its upgrades inside the store's own write
transaction; PostgreSQL does the same under a transaction-level advisory lock, so
two processes opening one old database migrate it once, and the two backends share one
version number and one place (``MIGRATIONS``) to add a step. Alembic would bring a
second version table, a dependency and a migration environment for a handful of DDL
statements. PostgreSQL stores began at version 4; version 5 is the first step.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from aimem.exceptions import StorageError
from aimem.storage.schema import META, METADATA, SCHEMA_VERSION
from aimem.storage.sql_migrations import readable_interpretations

__all__ = ["MIGRATIONS", "create_schema", "migrate", "stored_version"]

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

#: What one row adds to each counter: toward ``max_memories`` (active, unpinned, judged),
#: and to BM25's document and token counts, of every memory and of the active ones.
_CAPPED = {"capped": "(archived_at IS NULL AND NOT pinned AND priority_score IS NOT NULL)::int"}
_FTS = {
    "docs": "1",
    "tokens": "term_count",
    "active_docs": "(archived_at IS NULL)::int",
    "active_tokens": "CASE WHEN archived_at IS NULL THEN term_count ELSE 0 END",
}


def _net(table: str, adds: dict[str, str], *sources: str) -> str:
    """Add one statement's net change per namespace to a counter table, in one write.

    ``old_rows`` count negatively, ``new_rows`` positively; namespaces whose counts did
    not move (most updates: a reinforced memory, a pin of a pending one) are not written.
    """
    sign = {"old_rows": "-", "new_rows": ""}
    rows = " UNION ALL ".join(
        "SELECT namespace, "
        + ", ".join(f"{sign[source]}({add}) AS {name}" for name, add in adds.items())
        + f" FROM {source}"
        for source in sources
    )
    return (
        f"INSERT INTO {table} AS t (namespace, {', '.join(adds)}) "
        f"SELECT namespace, {', '.join(f'sum({name})' for name in adds)} FROM ({rows}) AS d "
        f"GROUP BY namespace HAVING {' OR '.join(f'sum({name}) <> 0' for name in adds)} "
        "ON CONFLICT (namespace) DO UPDATE SET "
        + ", ".join(f"{name} = t.{name} + EXCLUDED.{name}" for name in adds)
    )


def _counter(name: str, table: str, adds: dict[str, str]) -> str:
    """The function behind one counter's three per-statement triggers."""
    return f"""CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        {_net(table, adds, "new_rows")};
      ELSIF TG_OP = 'DELETE' THEN
        {_net(table, adds, "old_rows")};
      ELSE
        {_net(table, adds, "old_rows", "new_rows")};
      END IF;
      RETURN NULL;
    END $$"""


def _per_statement(name: str, function: str) -> tuple[str, ...]:
    """One AFTER ... FOR EACH STATEMENT trigger per event, each with its transition tables.

    Per row, archiving 20,000 memories in one UPDATE rewrote the same counter row 20,000
    times in one transaction; PostgreSQL walks every earlier version of a row to update
    it again, so the UPDATE was quadratic and outran the statement timeout. A transition
    table may serve only one event, and none a column list, hence three triggers.
    """
    tables = {
        "INSERT": "NEW TABLE AS new_rows",
        "UPDATE": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
        "DELETE": "OLD TABLE AS old_rows",
    }
    return tuple(
        ddl
        for event, referencing in tables.items()
        for ddl in (
            f"DROP TRIGGER IF EXISTS {name}_{event.lower()} ON memories",
            f"CREATE TRIGGER {name}_{event.lower()} AFTER {event} ON memories "
            f"REFERENCING {referencing} FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
        )
    )


_TRIGGER_DDL = (
    _FTS_FUNCTION,
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS fts tsvector "
    "GENERATED ALWAYS AS (aimem_fts(namespace, terms)) STORED",
    # Tokens per memory, for BM25's length normalisation (postgres_search.py).
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS term_count integer GENERATED ALWAYS AS "
    "(coalesce(array_length(string_to_array(nullif(terms, ''), ' '), 1), 0)) STORED",
    # Revision 2's GIN indexes: searches read aimem_postings now (below).
    "DROP INDEX IF EXISTS ix_memories_fts",
    "DROP INDEX IF EXISTS ix_memories_active_fts",
    # The vector cache's per-namespace cursor (vector_cache.py) reads these.
    "CREATE INDEX IF NOT EXISTS ix_history_namespace ON memory_history (namespace, id)",
    _counter("aimem_counts", "namespace_counts", _CAPPED),
    # BM25's document count and average length, per namespace, for both indexes.
    """CREATE TABLE IF NOT EXISTS aimem_fts_stats (
        namespace varchar(64) PRIMARY KEY, docs bigint NOT NULL DEFAULT 0,
        tokens bigint NOT NULL DEFAULT 0, active_docs bigint NOT NULL DEFAULT 0,
        active_tokens bigint NOT NULL DEFAULT 0)""",
    _counter("aimem_fts_stats", "aimem_fts_stats", _FTS),
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
    # Revision 1's per-row counters, replaced by the per-statement ones below.
    "DROP TRIGGER IF EXISTS memories_count ON memories",
    "DROP TRIGGER IF EXISTS memories_fts_stats ON memories",
    *_per_statement("memories_count", "aimem_counts"),
    *_per_statement("memories_fts_stats", "aimem_fts_stats"),
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


def _term_sources(event: str) -> str:
    """Each changed row's distinct terms, -1 for the row before and +1 for the row after.

    An UPDATE counts only rows whose terms or active state moved: a search's access bump
    touches many rows and must not unpack their terms.
    """
    before = (
        "SELECT u.t, -1 AS d, -(o.archived_at IS NULL)::int AS a FROM {old} o, "
        "unnest(tsvector_to_array(o.fts)) AS u(t)"
    )
    after = (
        "SELECT u.t, 1 AS d, (n.archived_at IS NULL)::int AS a FROM {new} n, "
        "unnest(tsvector_to_array(n.fts)) AS u(t)"
    )
    if event == "INSERT":
        return after.format(new="new_rows")
    if event == "DELETE":
        return before.format(old="old_rows")
    moved = (
        "(SELECT {side}.* FROM old_rows o JOIN new_rows n ON n.seq = o.seq "
        "WHERE o.fts IS DISTINCT FROM n.fts OR (o.archived_at IS NULL) <> (n.archived_at IS NULL))"
    )
    return (
        before.format(old=moved.format(side="o"))
        + " UNION ALL "
        + after.format(new=moved.format(side="n"))
    )


#: Per namespaced term, the memories holding it (all, and active): BM25's document
#: frequencies read in one indexed lookup instead of counted through the GIN index on
#: every search (``postgres_search.py``).
_TERMS_FUNCTION = """CREATE OR REPLACE FUNCTION aimem_terms() RETURNS trigger
LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        {insert};
      ELSIF TG_OP = 'DELETE' THEN
        {delete};
        DELETE FROM aimem_terms WHERE docs = 0;
      ELSE
        {update};
        DELETE FROM aimem_terms WHERE docs = 0;
      END IF;
      RETURN NULL;
    END $$""".format(
    **{
        event.lower(): "INSERT INTO aimem_terms AS t (term, docs, active_docs) "
        f"SELECT d.t, sum(d.d), sum(d.a) FROM ({_term_sources(event)}) AS d GROUP BY d.t "
        "HAVING sum(d.d) <> 0 OR sum(d.a) <> 0 ORDER BY d.t "
        "ON CONFLICT (term) DO UPDATE SET docs = t.docs + EXCLUDED.docs, "
        "active_docs = t.active_docs + EXCLUDED.active_docs"
        for event in ("INSERT", "DELETE", "UPDATE")
    }
)

#: One row per (namespaced term, memory) with what BM25 needs from that memory: how often
#: the term occurs in it, its length, and whether it is active. A search reads the
#: postings of its few chosen terms through the primary key and ranks them, touching no
#: memory row but the ones it returns. (Matching through a GIN index on ``fts`` instead
#: had to recheck and unpack each matching row's ``tsvector``, and the planner scans
#: the whole table once a term is in a tenth of the rows: about 20 ms at 10,000
#: memories against 3 ms here.)
_POSTING = (
    "SELECT u.lexeme AS term, {row}.seq, coalesce(array_length(u.positions, 1), 1) AS tf, "
    "{row}.term_count AS doclen, {row}.archived_at IS NULL AS active FROM {rows} {row}, "
    "unnest({row}.fts) AS u"
)
_POSTINGS_INSERT = (
    "INSERT INTO aimem_postings (term, seq, tf, doclen, active) SELECT * FROM ("
    + _POSTING
    + ") AS p ORDER BY term, seq"
)
_POSTINGS_DELETE = (
    "DELETE FROM aimem_postings AS p USING (SELECT u.t, {row}.seq FROM {rows} {row}, "
    "unnest(tsvector_to_array({row}.fts)) AS u(t)) AS d WHERE p.term = d.t AND p.seq = d.seq"
)
#: Rows of an UPDATE whose terms changed (postings replaced), or only their active state.
_RETERMED = (
    "(SELECT {side}.* FROM old_rows o JOIN new_rows n ON n.seq = o.seq "
    "WHERE o.fts IS DISTINCT FROM n.fts)"
)
_MOVED = (
    "(SELECT n.* FROM old_rows o JOIN new_rows n ON n.seq = o.seq "
    "WHERE o.fts IS NOT DISTINCT FROM n.fts "
    "AND (o.archived_at IS NULL) <> (n.archived_at IS NULL))"
)
_POSTINGS_FUNCTION = f"""CREATE OR REPLACE FUNCTION aimem_postings() RETURNS trigger
LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        {_POSTINGS_INSERT.format(row="n", rows="new_rows")};
      ELSIF TG_OP = 'DELETE' THEN
        {_POSTINGS_DELETE.format(row="o", rows="old_rows")};
      ELSE
        {_POSTINGS_DELETE.format(row="o", rows=_RETERMED.format(side="o"))};
        {_POSTINGS_INSERT.format(row="n", rows=_RETERMED.format(side="n"))};
        UPDATE aimem_postings AS p SET active = d.active FROM (SELECT u.t, n.seq,
            n.archived_at IS NULL AS active FROM {_MOVED} n,
            unnest(tsvector_to_array(n.fts)) AS u(t)) AS d
          WHERE p.term = d.t AND p.seq = d.seq;
      END IF;
      RETURN NULL;
    END $$"""

_TERMS_DDL = (
    """CREATE TABLE IF NOT EXISTS aimem_terms (
        term text PRIMARY KEY, docs bigint NOT NULL DEFAULT 0,
        active_docs bigint NOT NULL DEFAULT 0)""",
    # A term no memory holds any more is dropped (a deleted memory leaves no word behind);
    # this index finds those rows without reading the table.
    "CREATE INDEX IF NOT EXISTS ix_aimem_terms_unused ON aimem_terms (term) WHERE docs = 0",
    _TERMS_FUNCTION,
    *_per_statement("memories_terms", "aimem_terms"),
    """CREATE TABLE IF NOT EXISTS aimem_postings (
        term text NOT NULL, seq integer NOT NULL, tf integer NOT NULL,
        doclen integer NOT NULL, active boolean NOT NULL, PRIMARY KEY (term, seq))""",
    _POSTINGS_FUNCTION,
    *_per_statement("memories_postings", "aimem_postings"),
)

#: Counts and posts every stored memory's terms afresh (revision 2 had neither table).
_TERMS_BACKFILL = (
    "TRUNCATE aimem_terms, aimem_postings",
    "INSERT INTO aimem_terms (term, docs, active_docs) SELECT u.t, count(*), "
    "count(*) FILTER (WHERE m.archived_at IS NULL) FROM memories m, "
    "unnest(tsvector_to_array(m.fts)) AS u(t) GROUP BY u.t",
    _POSTINGS_INSERT.format(row="m", rows="memories"),
)


def _readable_interpretations(conn: Connection) -> None:
    """Version 5: recall terms and contested links; framing out of texts and the index."""
    conn.exec_driver_sql(
        "ALTER TABLE memories ADD COLUMN IF NOT EXISTS recall_terms TEXT NOT NULL DEFAULT ''"
    )
    conn.exec_driver_sql("ALTER TABLE memories ADD COLUMN IF NOT EXISTS contested_by VARCHAR(36)")
    readable_interpretations(conn)


#: ``version -> step`` bringing a database at ``version - 1`` to ``version``.
MIGRATIONS: dict[int, Callable[[Connection], None]] = {5: _readable_interpretations}
#: The first version a PostgreSQL store was created at.
FIRST_VERSION = 4
#: PostgreSQL's own functions and triggers, which change with no table changing: stamped
#: apart from the shared ``SCHEMA_VERSION`` (SQLite has nothing to migrate) and brought
#: up to date at open. 2: the counters are kept per statement, not per row. 3: per-term
#: document counts (``aimem_terms``) and postings (``aimem_postings``) replace the GIN indexes.
TRIGGERS_REVISION = 3
_REVISION_KEY = "pg_triggers"


#: Every column of each table aimem creates, by table: a table of that name without them
#: is another application's (a ``memories (id, body)`` of its own).
_OUR_COLUMNS = {
    **{t.name: frozenset(t.columns.keys()) for t in METADATA.sorted_tables},
    "aimem_fts_stats": frozenset({"namespace", *_FTS}),
    "aimem_terms": frozenset({"term", "docs", "active_docs"}),
    "aimem_postings": frozenset({"term", "seq", "tf", "doclen", "active"}),
}
_TABLE_COLUMNS = text(
    "SELECT c.relname, a.attname FROM pg_class c "
    "JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema() "
    "LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
    "WHERE c.relkind IN ('r', 'p')"
)


def _refuse_foreign_tables(conn: Connection) -> None:
    """A schema holding another application's tables (and no stamp) is left untouched.

    A table is ours only by name and shape: one called ``memories`` without aimem's
    columns would otherwise fail halfway through creating the schema, with a message
    about a missing column instead of this refusal.

    Raises:
        StorageError: it holds tables aimem does not create, or one of aimem's names
            without aimem's columns.
    """
    found: dict[str, set[str]] = {}
    for table, column in conn.execute(_TABLE_COLUMNS):
        found.setdefault(table, set()).update([column] if column else [])
    foreign = sorted(t for t, cols in found.items() if not cols >= _OUR_COLUMNS.get(t, {"?"}))
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
        select(META.c.value).where(META.c.key == "schema_version")
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


def _triggers_revision(conn: Connection) -> int:
    """The revision of the functions and triggers in place (1 before it was stamped)."""
    value = conn.execute(
        select(META.c.value).where(META.c.key == _REVISION_KEY)
    ).scalar_one_or_none()
    return int(value) if value is not None and str(value).isdigit() else 1


def create_schema(conn: Connection) -> None:
    """Create every table, index, function and trigger, stamped with this version."""
    METADATA.create_all(conn)
    revision = _triggers_revision(conn) if stored_version(conn) is not None else None
    for ddl in (*_TRIGGER_DDL, *_TERMS_DDL):
        conn.exec_driver_sql(ddl)
    if revision is not None and revision < 3:  # the counts start from what is stored
        for ddl in _TERMS_BACKFILL:
            conn.exec_driver_sql(ddl)
    if stored_version(conn) is None:
        conn.execute(META.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
    stamp = pg_insert(META).values(key=_REVISION_KEY, value=str(TRIGGERS_REVISION))
    conn.execute(
        stamp.on_conflict_do_update(index_elements=["key"], set_={"value": stamp.excluded.value})
    )


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
        if _triggers_revision(conn) < TRIGGERS_REVISION:
            create_schema(conn)  # every statement is idempotent
        return
    for version in range(max(stored, FIRST_VERSION) + 1, SCHEMA_VERSION + 1):
        MIGRATIONS[version](conn)
    create_schema(conn)  # new tables, indexes and triggers of this version
    conn.execute(
        update(META).where(META.c.key == "schema_version").values(value=str(SCHEMA_VERSION))
    )
