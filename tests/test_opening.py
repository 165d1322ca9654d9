"""Opening reads before it writes: foreign, newer, damaged, read-only and missing stores.

Every check goes through the public surface (the API, or the CLI in a subprocess) on a
real store (``store_url``: a SQLite file, or a PostgreSQL database), and compares a
fingerprint of the database before and after where nothing may change (``_db.py``:
the file's bytes, or every table, row, trigger and function on the server). Tests
marked ``sqlite_only`` are about files: a missing folder, WAL, a file that is no
database, ``?mode=ro`` and file permissions, SQLite's dynamic typing, and the schema 2
files aimem 0.1 wrote (PostgreSQL stores began at schema 4).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _db import execute, fingerprint, is_postgres, sqlite_path, tables
from _stores import store_url

import aimem
from aimem.storage.schema import SCHEMA_VERSION
from aimem.testing import FixedJudge

AIMEM = str(Path(sys.executable).with_name("aimem"))
V2_SCHEMA = Path(__file__).parent / "data" / "schema_v2.sql"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([AIMEM, *args], capture_output=True, text=True, timeout=60)


def _file(url: str) -> Path:
    path = sqlite_path(url)
    assert path is not None, "a sqlite_only test"
    return path


def _made(url: str) -> None:
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        store.save("I am allergic to penicillin")


@pytest.mark.sqlite_only  # a missing folder and file; PostgreSQL creates its schema on open
def test_reading_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    url = store_url(tmp_path / "not" / "yet" / "memories.db")
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        assert store.list() == []
        assert store.stats().total == 0
        assert store.search("anything") == []
        assert store.get_core() == ""
    assert not (tmp_path / "not").exists()
    for command in (["list"], ["stats"], ["search", "tea"], ["list", "--json"]):
        result = _cli("--database-url", url, *command)
        assert result.returncode == 0, result.stderr
    assert not (tmp_path / "not").exists()


@pytest.mark.sqlite_only  # the folder, the file and its journal mode
def test_the_first_write_creates_folder_file_and_wal(tmp_path: Path) -> None:
    url = store_url(tmp_path / "new" / "memories.db")
    path = _file(url)
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        assert not path.exists()
        saved = store.save("first memory")
        assert [m.id for m in store.list()] == [saved.id]
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        con.close()


def test_a_store_sees_a_store_another_process_created_after_it_opened(tmp_path: Path) -> None:
    url = store_url(tmp_path / "late.db")
    with aimem.MemoryStore(url, judge=FixedJudge()) as reader:
        assert reader.list() == []
        _made(url)
        assert [m.content for m in reader.list()] == ["I am allergic to penicillin"]


def _invoices(url: str) -> None:
    """Another application's database: one table of its own, one row."""
    execute(url, "CREATE TABLE invoices (number TEXT PRIMARY KEY, total REAL)", ())
    execute(url, "INSERT INTO invoices VALUES (?, ?)", ("A-1", 9.5))


def test_another_applications_database_is_refused_untouched(tmp_path: Path) -> None:
    url = store_url(tmp_path / "other.sqlite")
    _invoices(url)
    before = fingerprint(url)
    with pytest.raises(aimem.StorageError, match="another application"):
        aimem.MemoryStore(url, judge=FixedJudge())
    result = _cli("--database-url", url, "stats")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "another application" in result.stderr
    assert "Traceback" not in result.stderr
    assert fingerprint(url) == before
    assert tables(url) == {"invoices"}


def test_a_table_with_aimems_name_but_not_its_shape_is_refused_untouched(tmp_path: Path) -> None:
    url = store_url(tmp_path / "other.sqlite")
    key = "serial" if is_postgres(url) else "INTEGER"
    execute(url, f"CREATE TABLE memories (id {key} PRIMARY KEY, body TEXT)", ())
    execute(url, "INSERT INTO memories (body) VALUES (?)", ("an invoice",))
    before = fingerprint(url)
    with pytest.raises(aimem.StorageError) as refused:
        aimem.MemoryStore(url, judge=FixedJudge())
    assert "belongs to another application (tables: memories)" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert fingerprint(url) == before
    assert tables(url) == {"memories"}


@pytest.mark.sqlite_only  # random bytes in a file
def test_not_a_database_is_a_typed_error(tmp_path: Path) -> None:
    path = _file(store_url(tmp_path / "garbage.db"))
    path.write_bytes(os.urandom(4096))
    before = _digest(path)
    with pytest.raises(aimem.StorageError, match="not a SQLite database"):
        aimem.MemoryStore(store_url(path), judge=FixedJudge())
    assert _digest(path) == before


def _stamp(url: str, value: str) -> None:
    """Overwrite the schema version stamp (a SQLite file is left in rollback-journal mode,
    checkpointed: one self-contained file whose bytes say everything)."""
    path = sqlite_path(url)
    if path is None:
        execute(url, "UPDATE aimem_meta SET value = ? WHERE key = 'schema_version'", (value,))
        return
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = delete")
    con.execute("UPDATE aimem_meta SET value = ? WHERE key = 'schema_version'", (value,))
    con.commit()
    con.close()


def test_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    url = store_url(tmp_path / "future.db")
    _made(url)
    _stamp(url, "999")
    before = fingerprint(url)
    with pytest.raises(aimem.StorageError, match="upgrade aimem"):
        aimem.MemoryStore(url, judge=FixedJudge())
    result = _cli("--database-url", url, "list")
    assert result.returncode == 1 and "upgrade aimem" in result.stderr
    assert "Traceback" not in result.stderr
    assert fingerprint(url) == before


@pytest.mark.sqlite_only  # the file's journal mode and WAL files
@pytest.mark.parametrize("refused", ["another application", "newer schema"])
def test_a_refused_file_keeps_its_journal_mode(tmp_path: Path, refused: str) -> None:
    url = store_url(tmp_path / "refused.db")
    if refused == "another application":
        _invoices(url)
    else:
        _made(url)
        _stamp(url, "999")
    with pytest.raises(aimem.StorageError):
        aimem.MemoryStore(url, judge=FixedJudge())
    path = _file(url)
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    finally:
        con.close()


def test_a_damaged_schema_stamp_is_a_typed_error(tmp_path: Path) -> None:
    url = store_url(tmp_path / "damaged.db")
    _made(url)
    _stamp(url, "three")
    before = fingerprint(url)
    with pytest.raises(aimem.StorageError, match="damaged schema version stamp"):
        aimem.MemoryStore(url, judge=FixedJudge())
    result = _cli("--database-url", url, "list")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert fingerprint(url) == before


@pytest.mark.sqlite_only  # ?mode=ro on a file
def test_read_only_url_reads_and_refuses_writes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = store_url(tmp_path / "ro.db")
    _made(url)
    _stamp(url, str(SCHEMA_VERSION))  # checkpointed, rollback journal: nothing pending
    path = _file(url)
    before = _digest(path)
    with aimem.MemoryStore(f"{url}?mode=ro", judge=FixedJudge()) as store:
        [memory] = store.list()
        caplog.set_level(logging.DEBUG, logger="aimem")
        hits = store.search("penicillin")
        assert [h.memory.id for h in hits] == [memory.id]
        assert "read-only" in caplog.text  # the skipped reinforcement is said, at debug level
        assert store.get(memory.id).access_count == memory.access_count
        with pytest.raises(aimem.StorageError, match="read-only"):
            store.save("a new memory")
        with pytest.raises(aimem.StorageError, match="read-only"):
            store.set_core("x")
    assert _digest(path) == before
    result = _cli("--database-url", f"{url}?mode=ro", "search", "penicillin")
    assert result.returncode == 0 and "penicillin" in result.stdout
    result = _cli("--database-url", f"{url}?mode=ro", "save", "more")
    assert result.returncode == 1 and "read-only" in result.stderr
    assert _digest(path) == before


@pytest.mark.sqlite_only  # SQLAlchemy's sqlite:///file:...?uri=true form
def test_sqlalchemy_style_read_only_uri(tmp_path: Path) -> None:
    url = store_url(tmp_path / "ro.db")
    _made(url)
    file_uri = url.replace("sqlite:///", "sqlite:///file:", 1) + "?mode=ro&uri=true"
    with aimem.MemoryStore(file_uri, judge=FixedJudge()) as store:
        assert len(store.list()) == 1
        with pytest.raises(aimem.StorageError, match="read-only"):
            store.save("no")


@pytest.mark.sqlite_only  # the file's write permission (os.access)
def test_a_file_aimem_may_not_write_opens_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As root, permissions stop nobody: say the OS refuses write access, as it would a user.
    url = store_url(tmp_path / "perm.db")
    _made(url)
    _stamp(url, str(SCHEMA_VERSION))
    path = _file(url)
    before = _digest(path)
    real_access = os.access

    def access(target: object, mode: int, **kwargs: object) -> bool:
        if mode & os.W_OK and Path(str(target)) in (path, path.parent):
            return False
        return real_access(target, mode, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("aimem.storage.sqlite_file.os.access", access)
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        assert len(store.search("penicillin")) == 1
        with pytest.raises(aimem.StorageError, match="read-only"):
            store.save("no")
    assert _digest(path) == before


@pytest.mark.sqlite_only  # file permissions
@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_file_without_write_permission_is_read_only(tmp_path: Path) -> None:
    (tmp_path / "locked").mkdir()
    url = store_url(tmp_path / "locked" / "perm.db")
    _made(url)
    _stamp(url, str(SCHEMA_VERSION))
    path = _file(url)
    path.chmod(0o444)
    path.parent.chmod(0o555)
    try:
        with aimem.MemoryStore(url, judge=FixedJudge()) as store:
            assert len(store.search("penicillin")) == 1
            with pytest.raises(aimem.StorageError, match="read-only"):
                store.save("no")
    finally:
        path.parent.chmod(0o755)


@pytest.mark.parametrize(
    "url",
    ["not a url", "postgresql+nosuchdriver://u:secret@h/db", "sqlite:///x.db?foo=1"],
)
def test_unusable_urls_are_typed_errors_without_secrets(url: str) -> None:
    with pytest.raises(aimem.StorageError) as caught:
        aimem.MemoryStore(url, judge=FixedJudge())
    assert "secret" not in str(caught.value)


def test_unparseable_url_is_one_cli_line(tmp_path: Path) -> None:
    for command in (["list"], ["stats"], ["save", "x"], []):
        result = _cli("--database-url", "not a url", *command)
        assert result.returncode == 1, (command, result)
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def _v2_database(url: str) -> Path:
    """A schema-2 file as aimem 0.1 wrote it (its DDL, recorded in tests/data)."""
    path = _file(url)
    con = sqlite3.connect(path)
    con.executescript(V2_SCHEMA.read_text())
    con.execute("INSERT INTO aimem_meta VALUES ('schema_version', '2')")
    rows = [
        ("01900000-0000-7000-8000-000000000001", "default", "I am allergic to penicillin", ""),
        ("01900000-0000-7000-8000-000000000002", "default", "猫が好きです", "猫 が 好 き で す"),
        ("01900000-0000-7000-8000-000000000003", "other", "penicillin for the other one", ""),
    ]
    for memory_id, namespace, content, cjk in rows:
        con.execute(
            "INSERT INTO memories (id, namespace, content, content_hash, cjk_terms, "
            "interpreted_content, emotional_impact, user_relevance, novelty, utility, "
            "priority_score, rationale, score_source, prompt_tokens, completion_tokens, "
            "judge_latency_ms, judge_retries, created_at, updated_at, last_accessed_at, "
            "access_count, pinned, version) VALUES (?, ?, ?, ?, ?, ?, 0.1, 0.1, 0.1, 0.1, 0.4, "
            "'', 'heuristic', 0, 0, 0, 0, '2026-01-01 00:00:00', '2026-01-01 00:00:00', "
            "'2026-01-01 00:00:00', 0, 0, 1)",
            (
                memory_id,
                namespace,
                content,
                hashlib.sha256(content.encode()).hexdigest(),
                cjk,
                content,
            ),
        )
    con.commit()
    con.close()
    return path


@pytest.mark.sqlite_only  # aimem 0.1's SQLite schema 2 (PostgreSQL stores began at 4)
def test_a_version_2_file_is_upgraded_to_namespaced_keyword_terms(tmp_path: Path) -> None:
    url = store_url(tmp_path / "v2.db")
    path = _v2_database(url)
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        assert [h.memory.content for h in store.search("penicillin")] == [
            "I am allergic to penicillin"
        ]
        assert [h.memory.content for h in store.search("猫が")] == ["猫が好きです"]
        store.save("penicillin again, newly saved")
        assert len(store.search("penicillin")) == 2
    con = sqlite3.connect(path)
    try:
        [(version,)] = con.execute("SELECT value FROM aimem_meta WHERE key = 'schema_version'")
        assert version == str(SCHEMA_VERSION)
        con.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")
    finally:
        con.close()


@pytest.mark.sqlite_only  # aimem 0.1's SQLite schema 2 (PostgreSQL stores began at 4)
def test_an_upgraded_file_records_supersession_versions_and_restores(tmp_path: Path) -> None:
    url = store_url(tmp_path / "v2.db")
    _v2_database(url)
    old_id = "01900000-0000-7000-8000-000000000001"
    with aimem.MemoryStore(url, judge=aimem.HeuristicJudge()) as store:
        home = store.save("I live in Sendai.")
        store.save("We moved to Sapporo last month.")
        assert store.get(home.id).archive_reason == "superseded"
        store.update(old_id, "I am severely allergic to penicillin")
        [event] = [e for e in store.history(old_id) if e.event == "update"]
        assert event.previous is not None
        assert event.previous["content"] == "I am allergic to penicillin"
        assert store.restore(home.id).restored_at is not None


@pytest.mark.sqlite_only  # aimem 0.1's SQLite schema 2, opened with ?mode=ro
def test_a_read_only_version_2_file_asks_for_one_writable_open(tmp_path: Path) -> None:
    url = store_url(tmp_path / "v2.db")
    path = _v2_database(url)
    before = _digest(path)
    with pytest.raises(aimem.StorageError, match="write access"):
        aimem.MemoryStore(f"{url}?mode=ro", judge=FixedJudge())
    assert _digest(path) == before


# SQLite's dynamic typing lets a column hold text of any kind; PostgreSQL's typed columns
# refuse such a row, so it cannot be damaged this way there.
@pytest.mark.sqlite_only
def test_a_damaged_row_is_a_typed_error_that_quotes_no_data(tmp_path: Path) -> None:
    url = store_url(tmp_path / "rows.db")
    _made(url)
    con = sqlite3.connect(_file(url))
    con.execute("UPDATE memories SET created_at = 'my secret diary', priority_score = 'x'")
    con.commit()
    con.close()
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        for read in (store.list, store.context, lambda: store.search("penicillin")):
            with pytest.raises(aimem.StorageError, match="damaged") as caught:
                read()
            assert "secret" not in str(caught.value) and "\n" not in str(caught.value)
