"""PostgreSQL's own schema objects: a foreign table's shape, counters kept per statement.

Each test makes a scratch database of its own on the server ``AIMEM_TEST_DATABASE_URL``
names, and drops it at the end, so it can start from a database aimem never touched.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _stores import POSTGRES_URL, store_url

import aimem
from aimem.storage.postgres_schema import TRIGGERS_REVISION
from aimem.testing import FixedJudge

pytestmark = pytest.mark.skipif(
    POSTGRES_URL is None,
    reason="no PostgreSQL server configured: set AIMEM_TEST_DATABASE_URL=postgresql://...",
)


def _conninfo(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


@pytest.fixture
def scratch() -> Iterator[str]:
    """The URL of a database created for this test, dropped (connections and all) after it."""
    import psycopg

    assert POSTGRES_URL is not None
    name = f"aimem_scratch_{uuid.uuid4().hex[:12]}"
    admin = _conninfo(POSTGRES_URL).split("?")[0]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    try:
        yield f"{admin.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


def _sql(url: str, query: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(_conninfo(url), autocommit=True) as conn:
        cursor = conn.execute(query)  # type: ignore[arg-type]
        return list(cursor) if cursor.description else []


def _objects(url: str) -> list[tuple[Any, ...]]:
    """Every relation, function and trigger of the public schema."""
    return _sql(
        url,
        "SELECT 'rel', relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' UNION ALL SELECT 'fn', proname FROM pg_proc p "
        "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' "
        "UNION ALL SELECT 'trigger', tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2",
    )


def _counters_match(url: str) -> None:
    """Both counter tables agree with the rows they count."""
    kept = _sql(url, "SELECT namespace, capped FROM namespace_counts WHERE capped <> 0 ORDER BY 1")
    actual = _sql(
        url,
        "SELECT namespace, count(*) FROM memories WHERE archived_at IS NULL AND NOT pinned "
        "AND priority_score IS NOT NULL GROUP BY namespace ORDER BY 1",
    )
    assert kept == actual
    stats = _sql(
        url,
        "SELECT namespace, docs, tokens, active_docs, active_tokens FROM aimem_fts_stats "
        "WHERE docs <> 0 ORDER BY 1",
    )
    derived = _sql(
        url,
        "SELECT namespace, count(*), sum(term_count), count(*) FILTER (WHERE archived_at IS NULL), "
        "coalesce(sum(term_count) FILTER (WHERE archived_at IS NULL), 0) FROM memories "
        "GROUP BY namespace ORDER BY 1",
    )
    assert stats == derived
    terms = _sql(url, "SELECT term, docs, active_docs FROM aimem_terms ORDER BY 1")
    counted = _sql(
        url,
        "SELECT u.t, count(*), count(*) FILTER (WHERE archived_at IS NULL) FROM memories, "
        "unnest(tsvector_to_array(fts)) AS u(t) GROUP BY u.t ORDER BY 1",
    )
    assert terms == counted
    postings = _sql(url, "SELECT term, seq, tf, doclen, active FROM aimem_postings ORDER BY 1, 2")
    posted = _sql(
        url,
        "SELECT u.lexeme, seq, coalesce(array_length(u.positions, 1), 1), term_count, "
        "archived_at IS NULL FROM memories, unnest(fts) AS u ORDER BY 1, 2",
    )
    assert postings == posted
    assert _sql(url, "SELECT count(*) FROM aimem_terms WHERE docs < 0 OR active_docs < 0") == [(0,)]


def test_another_applications_memories_table_is_refused_and_nothing_is_created(
    scratch: str,
) -> None:
    _sql(scratch, "CREATE TABLE memories (id serial PRIMARY KEY, body text)")
    _sql(scratch, "INSERT INTO memories (body) VALUES ('an invoice')")
    before = _objects(scratch)
    with pytest.raises(aimem.StorageError) as refused:
        aimem.MemoryStore(scratch, judge=FixedJudge())
    message = str(refused.value)
    assert "\n" not in message
    assert "belongs to another application (tables: memories)" in message
    assert "left it untouched" in message and "column" not in message
    assert _objects(scratch) == before
    assert _sql(scratch, "SELECT id, body FROM memories") == [(1, "an invoice")]


def test_counters_are_written_once_per_statement_and_stay_exact(scratch: str) -> None:
    with aimem.MemoryStore(scratch, judge=FixedJudge(), max_memories=10) as store:
        triggers = _sql(
            scratch,
            "SELECT tgname, tgtype & 1 FROM pg_trigger WHERE tgname LIKE 'memories_count%' "
            "OR tgname LIKE 'memories_fts_stats%' OR tgname LIKE 'memories_terms%' "
            "OR tgname LIKE 'memories_postings%' ORDER BY 1",
        )
        assert [name for name, _ in triggers] == [
            f"{kind}_{event}"
            for kind in (
                "memories_count",
                "memories_fts_stats",
                "memories_postings",
                "memories_terms",
            )
            for event in ("delete", "insert", "update")
        ]
        assert {per_row for _, per_row in triggers} == {0}  # FOR EACH STATEMENT
        # One INSERT per memory, then one UPDATE archiving 290 of them.
        store.save_many([f"Note {i} on tea [score=0.{i % 9 + 1}0]" for i in range(300)])
        _counters_match(scratch)
        assert store.stats().count == 10
        kept = store.list()
        store.pin(kept[0].id)
        store.delete(kept[1].id)
        archived = [m for m in store.list(include_archived=True, limit=None) if m.archived_at]
        store.restore(archived[0].id)
        store.update(kept[2].id, "A rewritten note on coffee [score=0.90]")
        _counters_match(scratch)


def test_per_row_counters_of_an_older_store_are_replaced_at_open(scratch: str) -> None:
    with aimem.MemoryStore(scratch, judge=FixedJudge()) as store:
        store.save("I grow tomatoes [score=0.70]")
    # What revision 1 left: per-row counter triggers, and no revision stamp.
    _sql(scratch, "DROP TRIGGER memories_count_insert ON memories")
    _sql(scratch, "DELETE FROM aimem_meta WHERE key = 'pg_triggers'")
    _sql(
        scratch,
        "CREATE FUNCTION old_counts() RETURNS trigger LANGUAGE plpgsql "
        "AS $$ BEGIN RETURN NULL; END $$",
    )
    _sql(
        scratch,
        "CREATE TRIGGER memories_count AFTER INSERT ON memories "
        "FOR EACH ROW EXECUTE FUNCTION old_counts()",
    )
    with aimem.MemoryStore(scratch, judge=FixedJudge()) as store:
        store.save("I grow basil [score=0.70]")
        assert store.stats().count == 2
    names = {
        name for (name,) in _sql(scratch, "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
    }
    assert "memories_count" not in names and "memories_count_insert" in names
    stamp = _sql(scratch, "SELECT value FROM aimem_meta WHERE key = 'pg_triggers'")
    assert stamp == [(str(TRIGGERS_REVISION),)]
    _counters_match(scratch)


def test_term_counts_of_an_older_store_are_counted_at_open(scratch: str) -> None:
    """Revision 2 had no per-term tables: opening counts what is already stored, once."""
    with aimem.MemoryStore(scratch, judge=FixedJudge(), max_memories=3) as store:
        store.save_many([f"Note {i} about tea and cellos [score=0.{i + 1}0]" for i in range(6)])
    _sql(scratch, "DROP TABLE aimem_terms, aimem_postings CASCADE")
    _sql(scratch, "DROP FUNCTION aimem_terms(), aimem_postings() CASCADE")
    _sql(scratch, "CREATE INDEX ix_memories_active_fts ON memories USING gin (fts)")
    _sql(scratch, "UPDATE aimem_meta SET value = '2' WHERE key = 'pg_triggers'")
    with aimem.MemoryStore(scratch, judge=FixedJudge(), max_memories=3) as store:
        _counters_match(scratch)
        assert not _sql(scratch, "SELECT 1 FROM pg_indexes WHERE indexname LIKE '%fts'")
        assert [hit.memory.content for hit in store.search("cellos", mode="keyword")]
        store.save("A note about violins [score=0.90]")
    _counters_match(scratch)
    with aimem.MemoryStore(scratch, judge=FixedJudge(), max_memories=3):
        _counters_match(scratch)  # counted once: a later open does not count again


def test_a_search_ranks_with_term_counts_it_does_not_count_through_the_index(
    scratch: str,
) -> None:
    """Document frequencies come from aimem_terms, term frequencies from aimem_postings."""
    with aimem.MemoryStore(scratch, judge=FixedJudge()) as store:
        store.save_many(
            [f"Note {i} about tea [score=0.50]" for i in range(5)]
            + ["A rare note about oolong tea [score=0.50]"]
        )
        _sql(scratch, "UPDATE aimem_terms SET docs = 0, active_docs = 0 WHERE term LIKE '%qoolong'")
        assert store.search("oolong", mode="keyword") == []
        _sql(scratch, "UPDATE aimem_terms SET docs = 1, active_docs = 1 WHERE term LIKE '%qoolong'")
        assert [hit.memory.content for hit in store.search("oolong", mode="keyword")] == [
            "A rare note about oolong tea [score=0.50]"
        ]
        _sql(scratch, "DELETE FROM aimem_postings WHERE term LIKE '%qoolong'")
        assert store.search("oolong", mode="keyword") == []


def test_an_import_inserts_its_memories_in_batches_not_one_statement_each(
    scratch: str, tmp_path: Path
) -> None:
    """One INSERT per memory fired the per-statement triggers per memory: each updated the
    same counter rows again in one transaction, walking their earlier versions (quadratic:
    a 100,000-memory import ran for over half an hour)."""
    from sqlalchemy import event

    source_url = store_url(tmp_path / "source.db")  # another database: ids are unique
    with aimem.MemoryStore(source_url, judge=FixedJudge(), max_memories=2000) as source:
        source.save_many([f"Batch note {i} about tea [score=0.60]" for i in range(1200)])
        source.export_to(tmp_path / "batch.jsonl")
    copy = aimem.MemoryStore(scratch, judge=FixedJudge(), max_memories=2000)
    with copy:
        statements: list[str] = []
        engine = copy._async._db.engine  # the store's own pool: not a public API
        event.listen(
            engine, "before_cursor_execute", lambda c, cur, st, p, ctx, many: statements.append(st)
        )
        copy.import_from(tmp_path / "batch.jsonl")
        assert copy.stats().count == 1200
    inserts = [s for s in statements if s.lstrip().upper().startswith("INSERT INTO MEMORIES ")]
    assert 1 <= len(inserts) <= 6, f"{len(inserts)} INSERT statements for 1,200 memories"
    _counters_match(scratch)
