"""The SQLite layer on a real file: schema, history, indexes, hostile queries, processes."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

import aimem
from aimem.keywords import fts_query, scoped
from aimem.storage.schema import SCHEMA_VERSION
from aimem.testing import FixedJudge

pytestmark = pytest.mark.sqlite_only  # inspects the SQLite file itself


def _path(url: str) -> str:
    return url.removeprefix("sqlite:///")


def test_database_file_created_with_wal_and_schema_version(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.save("I like tea")
    con = sqlite3.connect(_path(db_url))
    try:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        (version,) = con.execute(
            "SELECT value FROM aimem_meta WHERE key = 'schema_version'"
        ).fetchone()
        assert int(version) == SCHEMA_VERSION
    finally:
        con.close()


def test_default_database_lives_in_platform_data_dir(tmp_path: Path) -> None:
    with aimem.MemoryStore(judge=FixedJudge()) as store:
        store.save("first use creates the file")
        assert store.database_url == f"sqlite:///{tmp_path / 'xdg-data' / 'aimem' / 'aimem.db'}"
    assert (tmp_path / "xdg-data" / "aimem" / "aimem.db").is_file()


def _create(db_url: str) -> None:
    """Create the file (a store is created by its first write, and prune writes)."""
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.prune()


def test_newer_schema_is_refused(db_url: str) -> None:
    _create(db_url)
    con = sqlite3.connect(_path(db_url))
    con.execute("UPDATE aimem_meta SET value = '999' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with pytest.raises(aimem.StorageError, match="upgrade aimem"):
        aimem.MemoryStore(db_url, judge=FixedJudge())


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
    con = sqlite3.connect(_path(db_url))
    try:
        return con.execute(
            "SELECT event, version FROM memory_history WHERE memory_id = ? ORDER BY id",
            (memory_id,),
        ).fetchall()
    finally:
        con.close()


def test_history_records_every_event_in_order(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=1) as store:
        m = store.save("keep me [score=0.50]")
        store.pin(m.id)
        store.unpin(m.id)
        store.save("better one [score=0.90]")  # archives m (cap 1)
        store.restore(m.id)  # archives the other to make room
        store.update(m.id, "keep me, edited [score=0.60]")
        store.delete(m.id)
    assert _events(db_url, m.id) == [
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
    con = sqlite3.connect(_path(db_url))
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            con.execute("UPDATE memory_history SET event = 'x'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            con.execute("DELETE FROM memory_history")
    finally:
        con.close()


def test_delete_leaves_no_text_behind(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        m = store.save("my secret diary entry")
        store.delete(m.id)
        with pytest.raises(aimem.NotFoundError):
            store.get(m.id)
    con = sqlite3.connect(_path(db_url))
    try:
        dump = "\n".join(con.iterdump())
    finally:
        con.close()
    assert "secret diary" not in dump


def test_capacity_queries_use_the_index(db_url: str) -> None:
    _create(db_url)
    con = sqlite3.connect(_path(db_url))
    try:
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
    finally:
        con.close()
    for plan in plans:
        assert "ix_memories_capacity" in plan
        assert "TEMP B-TREE" not in plan  # no sort of every row


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
        con = sqlite3.connect(_path(db_url))
        try:
            (kept,) = con.execute(
                "SELECT capped FROM namespace_counts WHERE namespace = 'default'"
            ).fetchone()
            (actual,) = con.execute(
                "SELECT count(*) FROM memories WHERE namespace = 'default' AND archived_at IS NULL"
                " AND pinned = 0 AND priority_score IS NOT NULL"
            ).fetchone()
        finally:
            con.close()
        assert kept == actual == len(store.list()) <= 3


def test_long_inputs_keep_their_longest_words() -> None:
    query = fts_query("a b cc dd eee ffff ggggg", max_terms=3)
    assert query == '"eee" OR "ffff" OR "ggggg"'


def test_keyword_indexes_stay_right_through_archive_restore_and_compaction(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("aimem.storage.sqlite.COMPACT_EVERY", 3)
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=2) as store:
        saved = [store.save(f"garden note {i} [score=0.{i + 4}]") for i in range(6)]
        active = {m.id for m in store.list()}
        assert {h.memory.id for h in store.search("garden")} == active
        everything = store.search("garden", include_archived=True)
        assert {h.memory.id for h in everything} == {m.id for m in saved}
        store.restore(saved[0].id)
        store.update(saved[0].id, "orchard note [score=0.95]")
        assert [h.memory.id for h in store.search("orchard")] == [saved[0].id]
        assert saved[0].id not in {h.memory.id for h in store.search("garden")}
    con = sqlite3.connect(_path(db_url))
    try:  # the full index mirrors the table exactly
        con.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")
    finally:
        con.close()


def test_term_budget_never_picks_a_common_word_by_rarity(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aimem.storage.sqlite_search as q

    monkeypatch.setattr(q, "RELATED_POSTINGS", 3)
    monkeypatch.setattr(q, "SEARCH_POSTINGS", 3)
    with aimem.MemoryStore(db_url, judge=FixedJudge(), min_priority_score=0.0) as store:
        for i in range(6):
            store.save(f"common words everywhere, note {i}")
        store.save("a rare zebra sighting")
        db = store._async._db  # the store's own connection pool, not a public API
        with db.engine.connect() as conn:
            counts_capped = q.affordable_terms(
                conn,
                "memories_active_fts",
                scoped(["common", "words", "everywhere"], "default"),
                3,
                6,
                keep_rarest=False,
            )
            assert counts_capped == [], "every term is over the budget: none is 'rarest'"
            assert q.affordable_terms(
                conn,
                "memories_active_fts",
                scoped(["common", "zebra"], "default"),
                3,
                6,
                keep_rarest=False,
            ) == scoped(["zebra"], "default")
            related = q.keyword_matches(
                conn, "default", "common words everywhere", limit=5, related=True
            )
            assert related == []
        # A search still answers, from one over-budget term.
        assert len(store.search("common words everywhere", mode="keyword")) == 6
