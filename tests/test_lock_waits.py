"""A store waiting for a database lock holds up no other store (issue 24, item 8).

Every sync store shares aimem's one private event loop. Each runs its database calls on
threads of its own, so while one store's save waits for a write lock, every other store
of the process keeps working. The lock is held by another connection, as a writer in
another process would hold it. PostgreSQL locks per namespace, so another namespace's
save goes through. SQLite has one write lock per file: a save to another namespace of
the same file waits its turn, while reads of that file and saves to another file go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _db import reader, sqlite_path
from _stores import on_postgres

import aimem
from aimem.testing import FixedJudge

#: Seconds a call that must not wait may take before it counts as stuck (it needs far less).
STUCK = 20
#: PostgreSQL: sessions of this database waiting for an advisory lock right now.
_WAITING = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
)


class _Call(threading.Thread):
    """``fn()`` on a thread of its own, keeping its result or error."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self._fn = fn
        self.result: Any = None
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self.result = self._fn()
        except BaseException as exc:
            self.error = exc

    def finished(self, timeout: float = STUCK) -> Any:
        """The result once done; fails the test if still running after ``timeout``."""
        self.join(timeout)
        assert not self.is_alive(), f"still waiting after {timeout} s"
        if self.error is not None:
            raise self.error
        return self.result


@contextlib.contextmanager
def _write_lock_held(url: str, namespace: str) -> Iterator[None]:
    """Another connection holds the lock ``namespace``'s writers take, until the end."""
    path = sqlite_path(url)
    if path is None:  # PostgreSQL: the namespace's advisory lock (postgres.py, _LOCK)
        with reader(url) as read:
            read("BEGIN", ())
            read("SELECT pg_advisory_xact_lock(hashtext(?))", (namespace,))
            try:
                yield
            finally:
                read("ROLLBACK", ())
        return
    holder = sqlite3.connect(path, isolation_level=None)  # SQLite: the file's one lock
    try:
        holder.execute("BEGIN IMMEDIATE")
        yield
        holder.execute("ROLLBACK")
    finally:
        holder.close()


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + STUCK
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


class _Entered(FixedJudge):
    """A FixedJudge that says when a save reached it (just before its write)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()

    async def interpret(self, content: str, **kwargs: Any) -> aimem.Interpretation:
        self.entered.set()
        return await super().interpret(content, **kwargs)


@pytest.mark.skipif(not on_postgres(), reason="PostgreSQL: set AIMEM_TEST_DATABASE_URL")
def test_a_save_waiting_for_its_namespaces_lock_holds_up_no_other_namespace(db_url: str) -> None:
    a = aimem.MemoryStore(db_url, judge=FixedJudge(), namespace="a")
    b = aimem.MemoryStore(db_url, judge=FixedJudge(), namespace="b")

    def waiting() -> bool:
        with reader(db_url) as read:
            return bool(read(_WAITING, ())[0][0])

    with _write_lock_held(db_url, "a"):
        a_save = _Call(lambda: a.save("A: waits for its namespace's lock [score=0.80]"))
        _until(waiting, "A's save to wait for namespace a's lock")
        b_memory = _Call(lambda: b.save("B: another namespace [score=0.70]")).finished()
        assert a_save.is_alive()  # B was saved while A still waited
        assert [m.id for m in b.list()] == [b_memory.id]
    a_memory = a_save.finished()
    assert [m.id for m in a.list()] == [a_memory.id]
    a.close()
    b.close()


@pytest.mark.skipif(not on_postgres(), reason="PostgreSQL: set AIMEM_TEST_DATABASE_URL")
def test_on_a_users_loop_another_namespace_saves_while_one_waits(db_url: str) -> None:
    async def scenario() -> None:
        a = aimem.AsyncMemoryStore(db_url, judge=FixedJudge(), namespace="a")
        b = aimem.AsyncMemoryStore(db_url, judge=FixedJudge(), namespace="b")
        with _write_lock_held(db_url, "a"):
            a_save = asyncio.ensure_future(a.save("A: waits [score=0.80]"))
            await asyncio.sleep(0.3)
            await asyncio.wait_for(b.save("B: goes through [score=0.70]"), STUCK)
            assert not a_save.done()
        assert (await asyncio.wait_for(a_save, STUCK)).namespace == "a"
        await a.aclose()
        await b.aclose()

    asyncio.run(scenario())


@pytest.mark.sqlite_only
def test_a_save_waiting_for_the_file_lock_holds_up_no_other_store(
    db_url_factory: Callable[[str], str],
) -> None:
    shared, elsewhere = db_url_factory("shared"), db_url_factory("elsewhere")
    judge = _Entered()
    a = aimem.MemoryStore(shared, judge=judge, namespace="a")
    b = aimem.MemoryStore(shared, judge=FixedJudge(), namespace="b")
    c = aimem.MemoryStore(elsewhere, judge=FixedJudge(), namespace="c")
    kept = b.save("B: saved before the lock was taken [score=0.70]")  # creates the file
    with _write_lock_held(shared, "a"):
        a_save = _Call(lambda: a.save("A: waits for the file's lock [score=0.80]"))
        assert judge.entered.wait(STUCK)
        time.sleep(0.3)  # from the judge to BEGIN IMMEDIATE, where it waits
        assert a_save.is_alive()
        # Reads of the same file and saves to another file go on meanwhile.
        assert [m.id for m in _Call(b.list).finished()] == [kept.id]
        assert _Call(lambda: b.get(kept.id)).finished().content == kept.content
        c_memory = _Call(lambda: c.save("C: another file [score=0.60]")).finished()
        # A write to another namespace of the same file waits its turn: one lock per file
        # (a search too: it bumps the access counts of what it found).
        b_save = _Call(lambda: b.save("B: waits for the file too [score=0.50]"))
        b_save.join(0.5)
        assert b_save.is_alive() and a_save.is_alive()
    assert a_save.finished().namespace == "a"
    assert b_save.finished().namespace == "b"
    assert [m.id for m in c.list()] == [c_memory.id]
    for store in (a, b, c):
        store.close()
