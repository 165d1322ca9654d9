"""A store keeps working in a process forked after the parent used it (issue 24, item 7).

Forking after aimem was used is common: multiprocessing's default start method on
Linux, gunicorn --preload, Celery's prefork pool. The child inherits no loop thread
and no database threads, plus the parent's pooled connections and the judge's HTTP
connections. Each test forks real children with multiprocessing's ``fork`` context. It
fails if a child is still running after the join timeout (a hang check, not a timing
target) or exits non-zero, then checks from the parent what the children saved. The
store is the run's backend (``db_url``): a SQLite file, or PostgreSQL with
``AIMEM_TEST_DATABASE_URL``.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import threading
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _db import is_postgres, reader

import aimem
from aimem.sync_store import run_sync
from aimem.testing import FixedJudge, OpenAIStub

pytestmark = [
    pytest.mark.skipif(
        "fork" not in multiprocessing.get_all_start_methods(), reason="no fork() here"
    ),
    # Python 3.12+ warns on any fork of a process with threads; forking one is the point.
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]

#: Seconds a child may take before it counts as hung (it needs well under one).
HANG = 60


def _in_children(target: Callable[..., None], *args_per_child: tuple[Any, ...]) -> None:
    """Run ``target(*args)`` in one forked child per args, all at once; each must succeed."""
    fork = multiprocessing.get_context("fork")
    children = [fork.Process(target=target, args=args) for args in args_per_child]
    for child in children:
        child.start()
    for child in children:
        child.join(HANG)
    hung = [child for child in children if child.is_alive()]
    for child in hung:
        child.kill()
        child.join()
    assert not hung, f"{len(hung)} forked child(ren) still running after {HANG} s: a hang"
    assert [child.exitcode for child in children] == [0] * len(children)


def _write(path: Path, value: object) -> None:
    path.write_text(json.dumps(value), encoding="utf-8")


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_store_inherited_across_fork_saves_and_reads_in_children(
    db_url: str, tmp_path: Path
) -> None:
    store = aimem.MemoryStore(db_url, judge=FixedJudge())
    first = store.save("Parent: prefers green tea [score=0.80]")
    assert [h.memory.id for h in store.search("green tea")] == [first.id]

    def child(n: int) -> None:
        ids = [store.save(f"Child {n}: note {i} about ferries [score=0.60]").id for i in range(3)]
        seen = {m.id for m in store.list()}
        found = {h.memory.id for h in store.search(f"Child {n} ferries", limit=10)}
        assert set(ids) <= seen and set(ids) <= found and first.id in seen
        assert store.get(ids[0]).content.startswith(f"Child {n}:")
        _write(tmp_path / f"child-{n}.json", ids)

    # The parent keeps using its connections while the children use theirs.
    busy = threading.Event()

    def parent_saves() -> None:
        while not busy.is_set():
            store.save(f"Parent: busy note {len(store.list())} [score=0.50]")

    saver = threading.Thread(target=parent_saves, daemon=True)
    saver.start()
    try:
        _in_children(child, (1,), (2,))
    finally:
        busy.set()
        saver.join(HANG)
    # A child on the parent's PostgreSQL socket can leave the parent waiting forever.
    assert not saver.is_alive(), "the parent's saves hung after the fork"
    children = [*_read(tmp_path / "child-1.json"), *_read(tmp_path / "child-2.json")]
    assert set(children) <= {m.id for m in store.list()}
    again = store.save("Parent: after the children, still here [score=0.70]")
    assert store.get(again.id).content.startswith("Parent: after")
    store.close()


def test_a_store_opened_in_a_forked_child_works(db_url: str, tmp_path: Path) -> None:
    parent = aimem.MemoryStore(db_url, judge=FixedJudge())
    parent.save("Parent: uses aimem before the fork [score=0.80]")  # loop and threads started

    def child() -> None:
        with aimem.MemoryStore(db_url, judge=FixedJudge(), namespace="child") as own:
            memory = own.save("Child: opened its own store [score=0.70]")
            assert [m.id for m in own.list()] == [memory.id]
            _write(tmp_path / "child.json", memory.id)

    _in_children(child, ())
    with aimem.MemoryStore(db_url, judge=FixedJudge(), namespace="child") as seen:
        assert [m.id for m in seen.list()] == [_read(tmp_path / "child.json")]
    parent.close()


#: PostgreSQL: the server sessions of aimem's pools on this database.
_AIMEM_SESSIONS = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    "AND application_name = 'aimem'"
)


def _sessions(url: str) -> set[int]:
    with reader(url) as read:
        return {pid for (pid,) in read(_AIMEM_SESSIONS, ())}


def test_a_forked_child_opens_database_sessions_of_its_own(db_url: str, tmp_path: Path) -> None:
    """Two processes on one PostgreSQL socket would read each other's replies."""
    if not is_postgres(db_url):
        pytest.skip("PostgreSQL: a SQLite file has no sessions to count")
    store = aimem.MemoryStore(db_url, judge=FixedJudge())
    store.save("Parent: leaves an idle connection in its pool [score=0.80]")
    parents = _sessions(db_url)
    assert parents

    def child() -> None:
        store.save("Child: saves on a connection of its own [score=0.60]")
        _write(tmp_path / "child.json", sorted(_sessions(db_url)))  # its pool is still open

    _in_children(child, ())
    assert set(_read(tmp_path / "child.json")) - parents  # a session the child opened
    assert parents <= _sessions(db_url)  # and the parent's own are still there, unharmed
    assert len(store.list()) == 2
    store.close()


def test_an_async_store_inherited_across_fork_works_on_the_childs_own_loop(
    db_url: str, tmp_path: Path
) -> None:
    store = aimem.AsyncMemoryStore(db_url, judge=FixedJudge())
    first = asyncio.run(store.save("Parent: prefers oolong [score=0.80]"))

    async def use() -> list[str]:
        await store.save("Child: on a loop of its own [score=0.60]")
        return [m.id for m in await store.list()]

    def child() -> None:
        _write(tmp_path / "child.json", asyncio.run(use()))

    _in_children(child, ())
    listed = _read(tmp_path / "child.json")
    assert first.id in listed and len(listed) == 2
    assert {m.id for m in asyncio.run(store.list())} == set(listed)
    asyncio.run(store.aclose())


def test_an_in_memory_store_is_the_childs_own_copy(tmp_path: Path) -> None:
    store = aimem.MemoryStore("sqlite:///:memory:", judge=FixedJudge())
    first = store.save("Parent: before the fork [score=0.80]")

    def child() -> None:
        store.save("Child: only in the child's copy [score=0.60]")
        _write(tmp_path / "child.json", len(store.list()))

    _in_children(child, ())
    assert _read(tmp_path / "child.json") == 2
    assert [m.id for m in store.list()] == [first.id]  # the child's copy was its own
    store.close()


class _KeepAlive(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive in front of ``OpenAIStub`` (which closes every
    connection), recording the client port each request came on: a connection."""

    protocol_version = "HTTP/1.1"
    server: _Front

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.ports.append(self.client_address[1])
        url = self.server.target + self.path.removeprefix("/v1")
        request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request) as reply:
            data, status = reply.read(), reply.status
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Front(ThreadingHTTPServer):
    daemon_threads = True
    target = ""
    ports: list[int]


@pytest.fixture
def keep_alive_llm() -> Iterator[_Front]:
    """An OpenAI-compatible endpoint that keeps connections open, as real ones do."""
    with OpenAIStub() as stub:
        front = _Front(("127.0.0.1", 0), _KeepAlive)
        front.target, front.ports = stub.base_url, []
        thread = threading.Thread(target=front.serve_forever, kwargs={"poll_interval": 0.05})
        thread.start()
        try:
            yield front
        finally:
            front.shutdown()
            front.server_close()
            thread.join()


def test_the_judges_http_connections_stay_the_parents(
    db_url: str, tmp_path: Path, keep_alive_llm: _Front
) -> None:
    base_url = f"http://127.0.0.1:{keep_alive_llm.server_address[1]}/v1"
    judge = aimem.OpenAIJudge(base_url=base_url, api_key="test", timeout=10)
    store = aimem.MemoryStore(db_url, judge=judge)
    assert store.save("Parent: prefers green tea [score=0.80]").score_source == "llm"
    before_fork = set(keep_alive_llm.ports)  # a pooled connection, kept open

    def child() -> None:
        memory = store.save("Child: lives in Osaka [score=0.70]")
        _write(tmp_path / "child.json", [memory.id, memory.score_source, memory.judge_retries])

    _in_children(child, ())
    memory_id, source, retries = _read(tmp_path / "child.json")
    # Judged by the LLM at the first try, on a connection of the child's own: a request
    # on the parent's socket would race the parent for the reply.
    assert (source, retries) == ("llm", 0)
    child_ports = set(keep_alive_llm.ports[len(before_fork) :])
    assert child_ports and not child_ports & before_fork
    assert store.get(memory_id).priority_score == pytest.approx(0.7)
    after = store.save("Parent: still judged after the fork [score=0.60]")
    assert (after.score_source, after.judge_retries) == ("llm", 0)
    store.close()
    run_sync(judge.aclose())  # the caller's judge: the store leaves it open
