"""Reliability under concurrency and crashes: many writers on one store, SIGKILL.

The store is a SQLite file shared by processes and threads, or (``store_url`` with
``AIMEM_TEST_DATABASE_URL``) a PostgreSQL database whose writers are each their own
client of the server. Processes run the entry points of ``tests/_workers.py`` in fresh
interpreters. A save counts as acknowledged only once its id is fsync'ed to the
worker's acknowledgement file, which the worker writes after ``save()`` returned;
"lost" means acknowledged but not in the database (archived rows are present:
archiving is not losing). The database is watched and checked from outside through
``_db.py``: read-only SQLite connections, or psycopg sessions of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import _workers
from _db import capped_count, present_ids, reader, sqlite_path
from _stores import store_url
from _workers import (
    NAMESPACE,
    CapObserver,
    content_for,
    integrity,
    read_acks,
    run_sigkill_round,
    run_stress,
    spawn,
    stop_all,
)

import aimem
from aimem.testing import FixedJudge

CAP = 100


def _store(url: str, judge: Any = None, **overrides: Any) -> aimem.MemoryStore:
    settings = {"max_memories": CAP, "min_priority_score": 0.0, **overrides}
    return aimem.MemoryStore(url, judge=judge or FixedJudge(), **settings)


def _create(url: str, **overrides: Any) -> None:
    """Create the store and schema (a store is created by its first write: prune writes)."""
    with _store(url, **overrides) as store:
        store.prune()


def _forgetting_key(m: aimem.Memory) -> tuple[float, Any, str]:
    """DESIGN.md: the lowest (priority asc, created_at asc, id asc) is archived first."""
    assert m.priority_score is not None
    return (m.priority_score, m.created_at, m.id)


# -- 1. several processes ---------------------------------------------------------------


def test_four_processes_x_250_saves_lose_nothing_and_the_cap_holds(tmp_path: Path) -> None:
    url = store_url(tmp_path / "stress.db")
    result = run_stress(tmp_path, url=url, processes=4, saves=250, max_memories=CAP)

    # No error of any kind reached a caller ("database is locked" included).
    assert result.errors == []
    assert result.exit_codes == [0, 0, 0, 0]
    for err in result.stderr:
        assert "Traceback" not in err and "locked" not in err.lower(), err
    assert [s["acknowledged"] for s in result.summaries] == [250, 250, 250, 250]

    # Zero lost acknowledged saves, and nothing written that was not acknowledged.
    acked = {(w, i): memory_id for w, acks in result.acks.items() for i, memory_id in acks.items()}
    assert len(acked) == 1000 and len(set(acked.values())) == 1000
    assert result.present == 1000
    assert result.total_rows == 1000

    # The cap held at every sampled moment and at every commit in the history log.
    assert result.observer_errors == []
    assert result.observer_samples >= 50
    assert result.max_observed_active <= CAP
    assert result.history_events == {"save", "archive"}
    assert result.history_peak <= CAP
    assert result.final_active == CAP

    with _store(url) as store:
        everything = store.list(include_archived=True)
        assert {m.id for m in everything} == set(acked.values())
        by_id = {m.id: m for m in everything}
        for (w, i), memory_id in acked.items():  # each acknowledgement names its own row
            assert by_id[memory_id].content == content_for(w, i)
        active = {m.id for m in everything if m.archived_at is None}
        assert len(active) == CAP
        # Whatever the interleaving, what stays is the top 100 by the forgetting order.
        expected = {m.id for m in sorted(everything, key=_forgetting_key, reverse=True)[:CAP]}
        assert active == expected
        archived = [m for m in everything if m.archived_at is not None]
        assert {m.archive_reason for m in archived} == {"over_capacity"}
        assert store.stats().count == CAP


# -- 2. threads -------------------------------------------------------------------------


def _run_threads(count: int, target: Callable[[int], list[str]]) -> tuple[list[str], list[str]]:
    """Run ``target(i)`` in ``count`` threads started together; (ids, errors)."""
    barrier = threading.Barrier(count)
    ids: list[list[str]] = [[] for _ in range(count)]
    errors: list[str] = []

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            ids[i] = target(i)
        except Exception as exc:
            errors.append(f"thread {i}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a saving thread hung"
    return [memory_id for chunk in ids for memory_id in chunk], errors


def _check_threads_outcome(
    url: str, ids: Sequence[str], errors: list[str], expected: int, cap: int
) -> None:
    assert errors == []
    assert len(ids) == len(set(ids)) == expected
    with _store(url, max_memories=cap) as store:
        everything = store.list(include_archived=True)
    assert {m.id for m in everything} == set(ids)
    assert capped_count(url) == min(cap, expected)


def test_eight_threads_sharing_one_store(db_url: str) -> None:
    url, cap, saves_per_thread = db_url, 50, 40
    observer = CapObserver(url)
    with _store(url, max_memories=cap) as store:
        store.prune()  # creates the store the observer reads
        observer.start()
        try:
            ids, errors = _run_threads(
                8,
                lambda t: [store.save(content_for(t, i)).id for i in range(saves_per_thread)],
            )
        finally:
            observer.stop()
    _check_threads_outcome(url, ids, errors, 8 * saves_per_thread, cap)
    assert observer.errors == [] and observer.samples > 0 and observer.max_seen <= cap


def test_four_threads_each_with_its_own_store(db_url: str) -> None:
    url, cap = db_url, 50
    _create(url, max_memories=cap)

    def saver(t: int) -> list[str]:
        with _store(url, max_memories=cap) as store:
            return [store.save(content_for(t, i)).id for i in range(50)]

    ids, errors = _run_threads(4, saver)
    _check_threads_outcome(url, ids, errors, 200, cap)


def test_async_stores_in_four_threads_write_on_parallel_connections(db_url: str) -> None:
    # The sync stores of one process share aimem's one background loop; async stores on
    # their own loops send their queries to worker threads, so here connections really
    # do write at the same time: 4 loops x 25 concurrent saves.
    url, cap = db_url, 30
    _create(url, max_memories=cap)

    async def burst(t: int) -> list[str]:
        async with aimem.AsyncMemoryStore(
            url, judge=FixedJudge(), max_memories=cap, min_priority_score=0.0
        ) as store:
            saved = await asyncio.gather(*(store.save(content_for(t, i)) for i in range(25)))
            return [m.id for m in saved]

    observer = CapObserver(url)
    observer.start()
    try:
        ids, errors = _run_threads(4, lambda t: asyncio.run(burst(t)))
    finally:
        observer.stop()
    _check_threads_outcome(url, ids, errors, 100, cap)
    assert observer.errors == [] and observer.samples > 0 and observer.max_seen <= cap


# -- 3. the judge runs outside any write transaction -------------------------------------


def test_other_process_saves_while_a_judgement_is_in_progress(tmp_path: Path) -> None:
    url = store_url(tmp_path / "judge.db")
    _create(url)
    entered, release, left = tmp_path / "entered", tmp_path / "release", tmp_path / "left"
    ack = tmp_path / "a-ack.txt"
    procs = []
    try:
        a = spawn(
            [
                "blocked-save",
                f"--url={url}",
                "--content=process A's slow judgement [score=0.90]",
                f"--ack={ack}",
                f"--entered={entered}",
                f"--release={release}",
                f"--left={left}",
                "--max-wait=60",
            ],
            tmp_path,
            "process-a",
        )
        procs.append(a)
        _workers.wait_for(lambda: entered.exists() or a.poll() is not None, 60, "A's judge")
        assert a.poll() is None, (tmp_path / "process-a.err").read_text()

        # B saves 20 memories while A sits inside interpret(); A can only leave once
        # B is done and we create the release file, so B cannot have waited for A.
        b_ids: list[str] = []
        b_errors: list[str] = []

        def process_b_saves() -> None:
            try:
                with _store(url) as store:
                    b_ids.extend(store.save(f"B note {i} [score=0.5]").id for i in range(20))
            except Exception as exc:
                b_errors.append(f"{type(exc).__name__}: {exc}")

        b = threading.Thread(target=process_b_saves)
        b.start()
        # Far below what waiting on a held lock costs (SQLite: a 10 s busy timeout x 5
        # retries; PostgreSQL: the 30 s statement timeout).
        b.join(timeout=30)
        finished_in_time = not b.is_alive()
        still_inside = not left.exists()
        release.touch()
        b.join(timeout=120)
        assert a.wait(timeout=60) == 0, (tmp_path / "process-a.err").read_text()
    finally:
        release.touch()
        stop_all(procs)
    assert finished_in_time, "B's saves waited for A's judgement: a lock was held around it"
    assert b_errors == []
    assert still_inside, "A left interpret() before B's saves were done"
    assert left.read_text().startswith("released")  # A's judge really waited for B
    a_ids = list(read_acks(ack).values())
    assert len(a_ids) == 1
    assert present_ids(url, [*a_ids, *b_ids]) == {*a_ids, *b_ids}
    assert len(b_ids) == 20


#: PostgreSQL: the lock aimem's writers of a namespace take (``postgres.py``), tried.
_TRY_NAMESPACE_LOCK = "SELECT pg_try_advisory_xact_lock(hashtext(?))"
#: PostgreSQL: other sessions of this database inside a transaction that wrote (has an xid).
_WRITING_TRANSACTIONS = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL"
)


def _write_lock_free(url: str) -> bool:
    """True when another connection could take the store's write lock right now.

    SQLite: the file's write lock (``BEGIN IMMEDIATE``, no wait). PostgreSQL: the
    namespace's advisory lock, and no other session of the database inside a
    transaction that wrote. A read snapshot may be open meanwhile: another item's
    lookup of related memories, running on the store's threads while this one is judged.
    """
    path = sqlite_path(url)
    if path is None:
        with reader(url) as read:
            [(writing,)] = read(_WRITING_TRANSACTIONS, ())
            read("BEGIN", ())
            [(taken,)] = read(_TRY_NAMESPACE_LOCK, (NAMESPACE,))
            read("ROLLBACK", ())
        return bool(taken) and writing == 0
    con = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        con.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
        return False
    finally:
        con.close()


class LockHolder:
    """Another connection holding the store's write lock (to show the probe sees it)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> LockHolder:
        path = sqlite_path(self.url)
        if path is None:
            read = self._stack.enter_context(reader(self.url))
            read("BEGIN", ())
            read("SELECT pg_advisory_xact_lock(hashtext(?))", (NAMESPACE,))
            self._stack.callback(read, "ROLLBACK", ())
        else:
            holder = sqlite3.connect(path, isolation_level=None)
            self._stack.callback(holder.close)
            holder.execute("BEGIN IMMEDIATE")
            self._stack.callback(holder.execute, "ROLLBACK")
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()


class LockProbeJudge(FixedJudge):
    """Records, from inside every interpret(), whether the write lock was free."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self.probes: list[bool] = []

    async def interpret(
        self, content: str, *, user_context: str | None = None, related: Sequence[Any] = ()
    ) -> aimem.Interpretation:
        self.probes.append(_write_lock_free(self.url))
        return await super().interpret(content, user_context=user_context, related=related)


def test_every_judgement_runs_with_the_write_lock_free(db_url: str) -> None:
    url = db_url
    judge = LockProbeJudge(url)
    with _store(url, judge=judge, max_memories=5) as store:
        store.prune()  # the store exists before the probe looks at it
        # The probe itself works: it sees a lock another connection holds...
        with LockHolder(url):
            assert _write_lock_free(url) is False
        assert _write_lock_free(url) is True  # ...and sees it go

        saved = [store.save(f"tea note {i} [score=0.{i + 1}]") for i in range(8)]  # archives
        store.save_many([f"tea batch {i}" for i in range(4)])
        store.update(saved[-1].id, "tea note, edited [score=0.95]")
        store.compress(["tea summary [score=0.9]"])
    assert len(judge.probes) == 8 + 4 + 1 + 1
    assert all(judge.probes), judge.probes


def test_async_saves_complete_while_another_judgement_is_pending(db_url: str) -> None:
    url = db_url

    class GateJudge(FixedJudge):
        def __init__(self) -> None:
            super().__init__()
            self.entered = asyncio.Event()
            self.gate = asyncio.Event()

        async def interpret(self, content: str, **kwargs: Any) -> aimem.Interpretation:
            if "[gate]" in content:
                self.entered.set()
                await self.gate.wait()
            return await super().interpret(content, **kwargs)

    async def scenario() -> tuple[bool, int]:
        judge = GateJudge()
        async with aimem.AsyncMemoryStore(
            url, judge=judge, max_memories=CAP, min_priority_score=0.0
        ) as store:
            slow = asyncio.create_task(store.save("slow one [gate] [score=0.9]"))
            await asyncio.wait_for(judge.entered.wait(), 30)
            others = await asyncio.wait_for(
                asyncio.gather(*(store.save(f"quick {i} [score=0.5]") for i in range(20))), 30
            )
            slow_still_waiting = not slow.done()
            judge.gate.set()
            await asyncio.wait_for(slow, 30)
            return slow_still_waiting, len({m.id for m in others})

    assert asyncio.run(scenario()) == (True, 20)


# -- 4. SIGKILL mid-burst -----------------------------------------------------------------


def test_sigkill_mid_burst_leaves_a_sound_database_with_every_acknowledged_save(
    tmp_path: Path,
) -> None:
    url = store_url(tmp_path / "kill.db")
    _workers.create_database(url, CAP)
    all_acked: list[str] = []
    for round_no, kill_after in enumerate([50, 120, 75]):  # one store, killed three times
        r = run_sigkill_round(tmp_path, url, round_no, kill_after, seed=round_no)
        assert r.returncode == -signal.SIGKILL, r.figures()  # killed mid-burst, not finished
        assert r.acknowledged >= kill_after
        assert r.present == r.acknowledged, r.figures()
        assert r.integrity == "ok", r.figures()
        assert r.counts_row == r.capped_after <= CAP
        assert r.companion_errors == []
        assert r.companion_present == r.companion_acknowledged
        assert r.companion_acks_after_kill >= 20  # a writer dying leaves no lock behind
        assert r.reopened_save_ok
        assert _workers.read_jsonl(tmp_path / f"round-{round_no}-errors.jsonl") == []
        all_acked += r.acked_ids.values()
    # Earlier rounds' acknowledged saves survive the later kills too.
    assert present_ids(url, all_acked) == set(all_acked)
    assert integrity(url) == "ok"
