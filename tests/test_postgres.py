"""PostgreSQL-only checks: real processes on a real server (AIMEM_TEST_DATABASE_URL).

Writers run in their own interpreters with their own connection pools (each one a
"host" as far as the server can tell), acknowledging a save only after ``save()``
returned; the server is inspected with psycopg directly. The server is never restarted
here: it is shared with whoever else runs against it. The restart tests start a private
server of their own instead (``_pgserver.py``: the same binaries, a throwaway data
directory and port), and skip where the binaries are not installed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pgserver import PrivateServer, binaries
from _stores import POSTGRES_URL, store_url

import aimem
from aimem.testing import FixedJudge, HashEmbedder

pytestmark = pytest.mark.skipif(
    POSTGRES_URL is None,
    reason="no PostgreSQL server configured: set AIMEM_TEST_DATABASE_URL=postgresql://...",
)

HERE = Path(__file__).resolve().parent
_WRITER = textwrap.dedent(
    """
    import os, sys
    import aimem
    from aimem.testing import FixedJudge, HashEmbedder
    url, acks = sys.argv[1], sys.argv[5]
    worker, count, cap = (int(a) for a in sys.argv[2:5])
    embedder = HashEmbedder() if os.environ.get("EMBED") else None
    namespace = os.environ.get("NAMESPACE", "default")
    with aimem.MemoryStore(
        url, judge=FixedJudge(), max_memories=cap, embedder=embedder, namespace=namespace
    ) as store:
        for i in range(count):
            score = ((worker * 7919 + i * 104729) % 97 + 1) / 100
            m = store.save(f"worker {worker} note {i} about tea [score={score:.2f}]")
            fd = os.open(acks, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(fd, f"{i}\\t{m.id}\\n".encode()); os.fsync(fd); os.close(fd)
    """
)


def _writer(url: str, worker: int, count: int, cap: int, acks: Path, **env: str):  # type: ignore[no-untyped-def]
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, url, str(worker), str(count), str(cap), str(acks)],
        env={**os.environ, **env, "PYTHONPATH": str(HERE)},
    )


def _acked(path: Path) -> set[str]:
    if not path.exists():
        return set()
    lines = path.read_text().splitlines(keepends=True)
    return {line.split("\t")[1].strip() for line in lines if line.endswith("\n")}


def _sql(url: str, query: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        return list(conn.execute(query))  # type: ignore[arg-type]


_CAPPED = (
    "SELECT count(*) FROM memories WHERE namespace = 'default' AND archived_at IS NULL "
    "AND NOT pinned AND priority_score IS NOT NULL"
)


def _create(url: str, cap: int) -> None:
    with aimem.MemoryStore(url, judge=FixedJudge(), max_memories=cap) as store:
        store.stats()


def test_cap_holds_and_no_acknowledged_save_is_lost_across_processes(tmp_path: Path) -> None:
    url, cap = store_url(tmp_path / "shared.db"), 5
    _create(url, cap)
    acks = [tmp_path / f"acks{w}" for w in range(4)]
    writers = [_writer(url, w, 12, cap, acks[w]) for w in range(4)]
    peak = 0
    while any(w.poll() is None for w in writers):
        peak = max(peak, int(_sql(url, _CAPPED)[0][0]))  # type: ignore[call-overload]
    assert [w.returncode for w in writers] == [0, 0, 0, 0]
    assert peak <= cap
    acked = set().union(*(_acked(a) for a in acks))
    assert len(acked) == 48
    stored = {str(r[0]) for r in _sql(url, "SELECT id FROM memories")}
    assert acked <= stored
    assert int(_sql(url, _CAPPED)[0][0]) == cap  # type: ignore[call-overload]
    counted = _sql(url, "SELECT capped FROM namespace_counts WHERE namespace = 'default'")
    assert counted == [(cap,)]


def test_sigkill_of_a_writer_loses_no_acknowledged_save(tmp_path: Path) -> None:
    url, cap = store_url(tmp_path / "killed.db"), 4
    _create(url, cap)
    victim, survivor = tmp_path / "victim", tmp_path / "survivor"
    killed = _writer(url, 1, 10_000, cap, victim)
    other = _writer(url, 2, 20, cap, survivor)
    deadline = time.monotonic() + 120
    while len(_acked(victim)) < 10 and time.monotonic() < deadline and killed.poll() is None:
        time.sleep(0.01)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert other.wait() == 0
    stored = {str(r[0]) for r in _sql(url, "SELECT id FROM memories")}
    assert _acked(victim) <= stored and _acked(survivor) <= stored
    assert len(_acked(victim)) >= 10
    with aimem.MemoryStore(url, judge=FixedJudge(), max_memories=cap) as store:
        store.save("after the kill [score=0.99]")  # the store recovers, the lock is free
    assert int(_sql(url, _CAPPED)[0][0]) == cap  # type: ignore[call-overload]


def test_semantic_search_sees_another_process_writes(tmp_path: Path) -> None:
    url = store_url(tmp_path / "vectors.db")
    with aimem.MemoryStore(url, judge=FixedJudge(), embedder=HashEmbedder()) as store:
        store.save("first about coffee [score=0.50]")
        assert [h.memory.content for h in store.search("coffee", mode="semantic", limit=1)]
        acks = tmp_path / "acks"
        assert _writer(url, 3, 5, 100, acks, EMBED="1").wait() == 0
        # The index this process kept up to date answers as one built afresh now.
        query = "worker 3 note about tea"
        kept = [h.memory.id for h in store.search(query, mode="semantic", limit=10)]
    with aimem.MemoryStore(url, judge=FixedJudge(), embedder=HashEmbedder()) as fresh:
        assert [h.memory.id for h in fresh.search(query, mode="semantic", limit=10)] == kept
    assert len(_acked(acks)) == 5


def test_namespaces_written_by_concurrent_processes_stay_isolated(tmp_path: Path) -> None:
    url = store_url(tmp_path / "isolated.db")
    _create(url, 3)
    names = {"alice": 3, "bob": 5, "carol": 100}  # each namespace with a cap of its own
    acks = {ns: tmp_path / f"acks-{ns}" for ns in names}
    writers = [
        _writer(url, w, 15, cap, acks[ns], NAMESPACE=ns, EMBED="1")
        for w, (ns, cap) in enumerate(names.items())
    ]
    assert [w.wait(timeout=300) for w in writers] == [0, 0, 0]
    for w, (ns, cap) in enumerate(names.items()):
        rows = _sql(url, f"SELECT id, content FROM memories WHERE namespace = '{ns}'")
        assert {str(r[0]) for r in rows} == _acked(acks[ns])  # every ack, nobody else's
        assert all(str(r[1]).startswith(f"worker {w} ") for r in rows)
        with aimem.MemoryStore(
            url, judge=FixedJudge(), namespace=ns, max_memories=cap, embedder=HashEmbedder()
        ) as store:
            scores = [((w * 7919 + i * 104729) % 97 + 1) / 100 for i in range(15)]
            kept = sum(score >= 0.3 for score in scores)  # the default min_priority_score
            assert len(store.list()) == min(cap, kept)
            for mode in ("keyword", "semantic"):
                hits = store.search("worker note about tea", mode=mode, limit=50)  # type: ignore[arg-type]
                assert hits and all(h.memory.content.startswith(f"worker {w} ") for h in hits)
            assert store.stats().total == 15


def test_export_sqlite_import_postgres_export_is_byte_identical(tmp_path: Path) -> None:
    lite = f"sqlite:///{tmp_path / 'lite.db'}"
    pg = store_url(tmp_path / "pg.db")
    back = f"sqlite:///{tmp_path / 'back.db'}"
    with aimem.MemoryStore(lite, judge=FixedJudge(), embedder=HashEmbedder()) as store:
        for i, text in enumerate(["猫が大好きです [score=0.9]", "tea lover [score=0.4]", "rust"]):
            store.save(f"{text} {i}", idempotency_key=f"k{i}")
        first = store.list()[0]
        store.update(first.id, "changed wording [score=0.8]")
        store.export_to(tmp_path / "a.jsonl")
    with aimem.MemoryStore(pg, judge=FixedJudge(), embedder=HashEmbedder()) as store:
        store.import_from(tmp_path / "a.jsonl")
        store.export_to(tmp_path / "b.jsonl")  # before a search bumps access counts
        assert store.search("tea", mode="keyword", limit=1)[0].memory.content.startswith("tea")
    with aimem.MemoryStore(back, judge=FixedJudge(), embedder=HashEmbedder()) as store:
        store.import_from(tmp_path / "b.jsonl")
        store.export_to(tmp_path / "c.jsonl")

    def memory_lines(name: str) -> list[str]:
        lines = (tmp_path / name).read_text(encoding="utf-8").splitlines()
        return [line for line in lines if json.loads(line)["kind"] == "memory"]

    assert memory_lines("a.jsonl") == memory_lines("b.jsonl") == memory_lines("c.jsonl")
    assert len(memory_lines("a.jsonl")) == 3


def test_credentials_never_appear(tmp_path: Path) -> None:
    url = store_url(tmp_path / "secret.db").replace("://root@", "://root:hunter2-secret@")
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:  # trust auth ignores it
        assert "hunter2" not in store.database_url and "***" in store.database_url
    dead = "postgresql://root:hunter2-secret@127.0.0.1:1/nothing"
    with pytest.raises(aimem.StorageError) as info:
        aimem.MemoryStore(dead, judge=FixedJudge())
    assert "hunter2" not in str(info.value)
    assert "hunter2" not in repr(info.value.__cause__ or "")


def test_a_dead_server_is_a_typed_storage_error(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(aimem.StorageError, match="cannot reach the PostgreSQL server") as info:
        aimem.MemoryStore("postgres://root@127.0.0.1:1/test?connect_timeout=1")
    assert time.monotonic() - started < 5  # a server that never answered is not waited for
    assert "\n" not in str(info.value)


def test_backup_is_refused_with_what_to_use_instead(tmp_path: Path) -> None:
    with aimem.MemoryStore(store_url(tmp_path / "b.db"), judge=FixedJudge()) as store:
        with pytest.raises(aimem.StorageError, match="pg_dump"):
            store.backup(tmp_path / "copy.db")
        assert not (tmp_path / "copy.db").exists()


def test_import_aimem_does_not_import_psycopg() -> None:
    code = "import sys, aimem; assert 'psycopg' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.fixture
def private_server() -> Iterator[PrivateServer]:
    """A PostgreSQL server of this test's own, to restart without disturbing anyone."""
    bindir = binaries()
    if bindir is None:
        pytest.skip("the PostgreSQL server binaries (initdb, pg_ctl) are not installed here")
    server = PrivateServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def test_a_server_restart_mid_run_loses_no_acknowledged_save(
    private_server: PrivateServer, tmp_path: Path
) -> None:
    url, cap = private_server.url, 6
    with aimem.MemoryStore(url, judge=FixedJudge(), max_memories=cap) as store:
        store.save("saved before the restart [score=0.10]")
        acks = [tmp_path / "host-a", tmp_path / "host-b"]  # two hosts: own processes, own pools
        writers = [_writer(url, w, 150, cap, acks[w]) for w in range(2)]
        deadline = time.monotonic() + 120
        while min(len(_acked(a)) for a in acks) < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert all(w.poll() is None for w in writers), "the writers ended before the restart"
        before = sum(len(_acked(a)) for a in acks)
        private_server.restart()
        assert [w.wait(timeout=180) for w in writers] == [0, 0]
        assert sum(len(_acked(a)) for a in acks) == 300 > before
        # The store opened before the restart carries on without being reopened.
        after = store.save("saved after the restart [score=0.99]")
        assert store.get(after.id).content.startswith("saved after")
    acked = set().union(*(_acked(a) for a in acks))
    stored = {str(r[0]) for r in _sql(url, "SELECT id FROM memories")}
    assert acked <= stored and after.id in stored
    assert int(_sql(url, _CAPPED)[0][0]) == cap  # type: ignore[call-overload]


def test_a_server_gone_for_good_is_a_typed_error_after_the_reconnect_window(
    private_server: PrivateServer,
) -> None:
    url = private_server.url + "?reconnect_timeout=2"
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        store.save("kept [score=0.5]")
        private_server.stop()
        started = time.monotonic()
        with pytest.raises(aimem.StorageError, match="cannot reach the PostgreSQL server"):
            store.save("never acknowledged [score=0.5]")
        assert time.monotonic() - started < 10


# -- a read replica (?read_host=): tested against the one server, both URLs naming it --------


def _with_option(url: str, option: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{option}"


def _applications(url: str) -> set[str]:
    """The application names of the connections open to this store's database."""
    database = url.split("?")[0].rsplit("/", 1)[1]
    rows = _sql(
        url,
        "SELECT application_name FROM pg_stat_activity "
        f"WHERE datname = '{database}' AND pid <> pg_backend_pid()",
    )
    return {str(name) for (name,) in rows}


def test_reads_go_to_the_read_host_and_writes_to_the_primary(tmp_path: Path) -> None:
    url = store_url(tmp_path / "replica")
    host = url.split("@", 1)[1].split("/", 1)[0]  # host:port of the one server
    replicated = _with_option(url, f"read_host={host}")
    embedder = HashEmbedder()
    with aimem.MemoryStore(replicated, judge=FixedJudge(), embedder=embedder) as store:
        backend = store._async._db
        assert backend.reads_from_replica
        saved = store.save("I keep bees on the roof [score=0.60]")
        hits = store.search("bees", mode="hybrid")
        assert [h.memory.id for h in hits] == [saved.id]
        assert store.get(saved.id).content == saved.content
        assert [m.id for m in store.list()] == [saved.id]
        assert _applications(url) == {"aimem", "aimem-read"}
    assert _applications(url) == set()  # closing released both pools


def test_without_a_read_host_reads_share_the_primary_pool(tmp_path: Path) -> None:
    url = store_url(tmp_path / "primary-only")
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        store.save("I keep bees on the roof [score=0.60]")
        assert store.search("bees", mode="keyword")
        assert not store._async._db.reads_from_replica
        assert _applications(url) == {"aimem"}


@pytest.mark.parametrize(
    "value", ["", "db.example:port", "db.example:0", "db.example:70000", "db.example/x"]
)
def test_a_bad_read_host_is_one_line_and_opens_nothing(tmp_path: Path, value: str) -> None:
    url = store_url(tmp_path / "bad-read-host")
    option = f"read_host={value}"
    if not value:  # an empty value means no replica, not an error
        with aimem.MemoryStore(_with_option(url, option), judge=FixedJudge()) as store:
            assert not store._async._db.reads_from_replica
        return
    with pytest.raises(aimem.StorageError) as refused:
        aimem.MemoryStore(_with_option(url, option), judge=FixedJudge())
    assert "\n" not in str(refused.value) and "read_host" in str(refused.value)
    assert _applications(url) == set()
