"""The storage layer on a real store: schema, history, indexes, hostile queries, processes.

Each test's store is a SQLite file or a PostgreSQL database (``db_url``); the rows are
read directly through ``_db.py``. Tests marked ``sqlite_only`` look at what only a
SQLite file has (its journal mode, FTS5's own index, its query planner); one looks at
PostgreSQL's planner instead.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from _db import DB_ERRORS, dump_text, execute, rows, scalar, sqlite_path
from _stores import on_postgres

import aimem
import aimem.storage.postgres_search as pg_search
import aimem.storage.sqlite_search as lite_search
from aimem.storage.schema import SCHEMA_VERSION
from aimem.testing import FixedJudge
from aimem.text.keywords import fts_query, scoped


@contextmanager
def _sqlite(db_url: str) -> Iterator[sqlite3.Connection]:
    path = sqlite_path(db_url)
    assert path is not None, "a sqlite_only test"
    con = sqlite3.connect(path)
    try:
        yield con
    finally:
        con.close()


@pytest.mark.sqlite_only  # the file's journal mode
def test_database_file_is_in_wal_mode(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.save("I like tea")
    with _sqlite(db_url) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_the_schema_version_is_stamped(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.save("I like tea")
    version = scalar(db_url, "SELECT value FROM aimem_meta WHERE key = 'schema_version'")
    assert int(version) == SCHEMA_VERSION


@pytest.mark.sqlite_only  # the default store is a SQLite file in the platform data dir
def test_default_database_lives_in_platform_data_dir(tmp_path: Path) -> None:
    expected = tmp_path / "xdg-data" / "aimem" / "aimem.db"
    with aimem.MemoryStore(judge=FixedJudge()) as store:
        store.save("first use creates the file")
        assert store.database_url.startswith("sqlite:///")
        assert Path(store.database_url.removeprefix("sqlite:///")) == expected
    assert expected.is_file()


def _create(db_url: str) -> None:
    """Create the store (a store is created by its first write, and prune writes)."""
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.prune()


def test_newer_schema_is_refused(db_url: str) -> None:
    _create(db_url)
    execute(db_url, "UPDATE aimem_meta SET value = ? WHERE key = 'schema_version'", ("999",))
    with pytest.raises(aimem.StorageError, match="upgrade aimem"):
        aimem.MemoryStore(db_url, judge=FixedJudge())


@pytest.mark.sqlite_only  # SQLite's private in-memory databases
@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_in_memory_stores_work_and_are_private(url: str) -> None:
    with (
        aimem.MemoryStore(url, judge=FixedJudge()) as one,
        aimem.MemoryStore(url, judge=FixedJudge()) as other,
    ):
        saved = one.save("Quick test memory about tea")
        assert [h.memory.id for h in one.search("tea")] == [saved.id]
        assert other.list() == []  # each in-memory store is its own database


def _events(db_url: str, memory_id: str) -> list[tuple[str, int]]:
    return rows(
        db_url,
        "SELECT event, version FROM memory_history WHERE memory_id = ? ORDER BY id",
        (memory_id,),
    )


def test_history_records_every_event_in_order(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=1) as store:
        m = store.save("keep me [score=0.50]")
        store.pin(m.id)
        store.unpin(m.id)
        store.save("better one [score=0.90]")  # archives m (cap 1)
        store.restore(m.id)  # archives the other to make room
        store.update(m.id, "keep me, edited [score=0.60]")
        store.delete(m.id)
    assert [tuple(e) for e in _events(db_url, m.id)] == [
        ("save", 1),
        ("pin", 2),
        ("unpin", 3),
        ("archive", 4),
        ("restore", 5),
        ("update", 6),
        ("delete", 6),
    ]


def test_history_is_append_only(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.save("something")
    for statement in ("UPDATE memory_history SET event = 'x'", "DELETE FROM memory_history"):
        with pytest.raises(DB_ERRORS, match="append-only"):
            execute(db_url, statement, ())
    assert scalar(db_url, "SELECT count(*) FROM memory_history") == 1


def test_delete_leaves_no_text_behind(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        kept = store.save("a kept note about tea")
        m = store.save("my secret diary entry")
        store.update(m.id, "my secret diary entry, edited")  # a stored previous version too
        store.delete(m.id)
        with pytest.raises(aimem.NotFoundError):
            store.get(m.id)
    dump = dump_text(db_url)
    assert "kept note" in dump  # the dump does show stored text
    # Neither the text nor its keyword terms ("diary" is stemmed to "diari").
    assert "secret" not in dump and "diar" not in dump
    assert kept.id in dump and m.id in dump  # the delete event keeps the id, never the text


@pytest.mark.sqlite_only  # SQLite's query planner (EXPLAIN QUERY PLAN)
def test_capacity_queries_use_the_index(db_url: str) -> None:
    _create(db_url)
    with _sqlite(db_url) as con:
        plans = [
            " ".join(str(r[-1]) for r in con.execute("EXPLAIN QUERY PLAN " + sql, params))
            for sql, params in [
                (
                    "SELECT id FROM memories WHERE namespace = ? AND archived_at IS NULL "
                    "AND pinned = 0 AND priority_score IS NOT NULL AND priority_score < ? "
                    "ORDER BY priority_score, created_at, id",
                    ("default", 0.3),
                ),
                (
                    "SELECT id FROM memories WHERE namespace = ? AND archived_at IS NULL "
                    "AND pinned = 0 AND priority_score IS NOT NULL "
                    "AND priority_score >= ? ORDER BY priority_score, created_at, id LIMIT 3",
                    ("default", 0.3),
                ),
            ]
        ]
    for plan in plans:
        assert "ix_memories_capacity" in plan
        assert "TEMP B-TREE" not in plan  # no sort of every row


@pytest.mark.skipif(not on_postgres(), reason="PostgreSQL's planner")
def test_capacity_queries_use_the_index_on_postgresql(db_url: str) -> None:
    # aimem's own statements, planned with sorting and full scans priced out: the index
    # must answer them in forgetting order, reading only the rows asked for.
    from aimem.storage import sql_capacity

    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.prune()
        engine = store._async._db.engine  # the store's own pool, not a public API
        params = {"ns": "default", "threshold": 0.3, "limit": 3}
        with engine.connect() as conn:
            for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
                conn.exec_driver_sql(f"SET {setting} = off")
            for statement in (sql_capacity._BELOW_MIN, sql_capacity._LOWEST_ABOVE_MIN):
                query = statement.compile(dialect=conn.dialect)
                explained = conn.exec_driver_sql(f"EXPLAIN {query}", query.construct_params(params))
                plan = "\n".join(r[0] for r in explained)
                assert "ix_memories_capacity" in plan, plan
                assert "Sort" not in plan, plan  # no sort of every row


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "a NEAR b",
        "foo*",
        "-bar",
        "(x OR",
        "content:secret",
        "AND",
        "^start",
        "'; DROP TABLE memories; --",
        "私の猫",
        "🙂",
    ],
)
def test_fts_syntax_in_queries_never_raises(db_url: str, query: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.save("content secret start bar foo memories 私の猫")
        store.search(query)  # must not raise


def test_fts_query_quotes_every_term() -> None:
    assert fts_query('say "hi" NEAR you*') == '"say" OR "hi" OR "near"'
    assert fts_query("what is it") == '"what" OR "is" OR "it"'  # nothing else to go on
    assert fts_query("?!") is None


def _save_from_process(url: str, worker: int) -> None:
    with aimem.MemoryStore(url, judge=FixedJudge(), max_memories=1000) as store:
        for i in range(10):
            store.save(f"worker {worker} memory {i}")


def test_several_processes_create_and_write_one_file(db_url: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_save_from_process, args=(db_url, w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=1000) as store:
        assert store.stats().total == 40


def test_other_databases_are_refused_until_supported() -> None:
    # PostgreSQL is served now (tests/test_postgres.py); other servers are not.
    with pytest.raises(aimem.StorageError, match="SQLite only"):
        aimem.MemoryStore("mysql://user@localhost/aimem", judge=FixedJudge())


def test_capped_counts_stay_exact_through_every_transition(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=3) as store:
        ids = [store.save(f"m{i} [score=0.{i + 4}]").id for i in range(5)]  # 2 archived
        store.pin(ids[4])
        store.restore(ids[0])
        store.unpin(ids[4])
        store.delete(ids[3])
        store.update(ids[2], "m2 changed [score=0.1]")  # below min: archived
        store.save("low [score=0.1]")
        kept = scalar(db_url, "SELECT capped FROM namespace_counts WHERE namespace = 'default'")
        actual = scalar(
            db_url,
            "SELECT count(*) FROM memories WHERE namespace = 'default' AND archived_at IS NULL"
            " AND NOT pinned AND priority_score IS NOT NULL",
        )
        assert kept == actual == len(store.list()) <= 3


def test_long_inputs_keep_their_longest_words() -> None:
    query = fts_query("a b cc dd eee ffff ggggg", max_terms=3)
    assert query == '"eee" OR "ffff" OR "ggggg"'


def _garden_churn(store: aimem.MemoryStore) -> None:
    """Archive (cap 2), restore and reword memories, checking keyword search at each step."""
    saved = [store.save(f"garden note {i} [score=0.{i + 4}]") for i in range(6)]
    active = {m.id for m in store.list()}
    assert {h.memory.id for h in store.search("garden")} == active
    everything = store.search("garden", include_archived=True)
    assert {h.memory.id for h in everything} == {m.id for m in saved}
    store.restore(saved[0].id)
    store.update(saved[0].id, "orchard note [score=0.95]")
    assert [h.memory.id for h in store.search("orchard")] == [saved[0].id]
    assert saved[0].id not in {h.memory.id for h in store.search("garden")}
    assert {h.memory.id for h in store.search("garden")} == {
        m.id for m in store.list() if m.id != saved[0].id
    }


def test_keyword_search_stays_right_through_archive_restore_and_update(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=2) as store:
        _garden_churn(store)


@pytest.mark.sqlite_only  # FTS5's own integrity check, after SQLite's index compaction
def test_keyword_indexes_stay_right_through_archive_restore_and_compaction(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("aimem.storage.sqlite.COMPACT_EVERY", 3)
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=2) as store:
        _garden_churn(store)
    with _sqlite(db_url) as con:  # the full index mirrors the table exactly
        con.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")


def _affordable(conn: Any, words: list[str]) -> list[str]:
    """The dialect's choice of terms within a budget of 3 matches, at most 6 terms."""
    terms = scoped(words, "default")
    if on_postgres():
        _, _, frequencies = pg_search.term_stats(conn, "default", terms, active=True)
        chosen = pg_search.affordable_terms(terms, frequencies, 3, 6, keep_rarest=False)
        return [term for term, _ in chosen]
    return lite_search.affordable_terms(conn, "memories_active_fts", terms, 3, 6, keep_rarest=False)


def test_term_budget_never_picks_a_common_word_by_rarity(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    search = pg_search if on_postgres() else lite_search
    for module in (pg_search, lite_search):  # PostgreSQL's copies are its own
        monkeypatch.setattr(module, "RELATED_POSTINGS", 3)
        monkeypatch.setattr(module, "SEARCH_POSTINGS", 3)
    with aimem.MemoryStore(db_url, judge=FixedJudge(), min_priority_score=0.0) as store:
        for i in range(6):
            store.save(f"common words everywhere, note {i}")
        store.save("a rare zebra sighting")
        db = store._async._db  # the store's own connection pool, not a public API
        with db.engine.connect() as conn:
            counts_capped = _affordable(conn, ["common", "words", "everywhere"])
            assert counts_capped == [], "every term is over the budget: none is 'rarest'"
            assert _affordable(conn, ["common", "zebra"]) == scoped(["zebra"], "default")
            related = search.keyword_matches(
                conn, "default", "common words everywhere", limit=5, related=True
            )
            assert related == []
        # A search still answers, from one over-budget term.
        assert len(store.search("common words everywhere", mode="keyword")) == 6
