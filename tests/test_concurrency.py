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
import json
import os
import random
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import _workers
from _db import DB_ERRORS, capped_count, present_ids, reader, rows, sqlite_path
from _stores import store_url
from _workers import (
    NAMESPACE,
    KillRound,
    StressResult,
    content_for,
    read_acks,
    read_jsonl,
    spawn,
    stop_all,
    wait_for,
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


# -- watching and checking the database from outside ------------------------------------


class CapObserver(threading.Thread):
    """Samples the capped count on a connection of its own until stopped.

    Each sample sees the latest committed state, a snapshot between two commits (SQLite:
    a read-only connection; PostgreSQL: an autocommit session). ``max_seen`` is the
    highest count any sample saw.
    """

    def __init__(self, url: str, namespace: str = NAMESPACE, interval: float = 0.002) -> None:
        super().__init__(name="cap-observer", daemon=True)
        self.url, self.namespace, self.interval = url, namespace, interval
        self.samples = 0
        self.max_seen = 0
        self.errors: list[str] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        try:
            with reader(self.url) as read:
                while not self._stop_event.is_set():
                    try:
                        [(count,)] = read(_workers.CAPPED_SQL, (self.namespace,))
                    except DB_ERRORS as exc:
                        self.errors.append(f"{type(exc).__name__}: {exc}")
                    else:
                        self.samples += 1
                        self.max_seen = max(self.max_seen, int(count))
                    self._stop_event.wait(self.interval)
        except DB_ERRORS as exc:  # could not connect at all
            self.errors.append(f"{type(exc).__name__}: {exc}")

    def stop(self) -> None:
        """Stop sampling and wait for the thread."""
        self._stop_event.set()
        self.join(timeout=10)


def history_cap_peaks(url: str, namespace: str = NAMESPACE) -> tuple[int, set[str]]:
    """Replay the history log: the highest capped count at any commit boundary.

    Each save transaction writes one ``save`` event, then the ``archive`` events it
    caused, and history ids follow commit order (SQLite has one writer at a time;
    PostgreSQL serialises a namespace's writers on an advisory lock held until commit,
    so its ids follow commit order within the namespace); so the count just before each
    ``save`` event (and at the end) is the count after a commit. Returns that peak and
    the set of event kinds seen (the replay understands only ``save`` and ``archive``).
    """
    events = rows(
        url, "SELECT event FROM memory_history WHERE namespace = ? ORDER BY id", (namespace,)
    )
    count = peak = 0
    kinds: set[str] = set()
    for (event,) in events:
        kinds.add(event)
        if event == "save":
            peak = max(peak, count)
            count += 1
        elif event == "archive":
            count -= 1
    return max(peak, count), kinds


def integrity(url: str) -> str:
    """ "ok" when the database and everything derived from the memories agree.

    SQLite: ``PRAGMA integrity_check`` and the keyword indexes' documents
    (``_workers.integrity``). PostgreSQL: the capacity counter, BM25's per-namespace
    statistics and the rows deleted with a memory, each against the memories; and
    ``amcheck`` over every table and B-tree index where the extension is installed.
    """
    path = sqlite_path(url)
    if path is not None:
        return _workers.integrity(path)
    problems: list[str] = []
    with reader(url) as read:
        counted = {
            ns: n for ns, n in read("SELECT namespace, capped FROM namespace_counts", ()) if n
        }
        actual = dict(
            read(
                "SELECT namespace, count(*) FROM memories WHERE archived_at IS NULL "
                "AND NOT pinned AND priority_score IS NOT NULL GROUP BY namespace",
                (),
            )
        )
        if counted != actual:
            problems.append(f"namespace_counts {counted} != memories {actual}")
        kept = read(
            "SELECT namespace, docs, tokens, active_docs, active_tokens FROM aimem_fts_stats "
            "WHERE docs <> 0 ORDER BY 1",
            (),
        )
        derived = read(
            "SELECT namespace, count(*), sum(term_count), "
            "count(*) FILTER (WHERE archived_at IS NULL), "
            "coalesce(sum(term_count) FILTER (WHERE archived_at IS NULL), 0) "
            "FROM memories GROUP BY namespace ORDER BY 1",
            (),
        )
        if [tuple(map(str, r)) for r in kept] != [tuple(map(str, r)) for r in derived]:
            problems.append(f"aimem_fts_stats {kept} != memories {derived}")
        for table, column, key in (
            ("memory_vectors", "seq", "seq"),
            ("idempotency_keys", "memory_id", "id"),
            ("memory_versions", "memory_id", "id"),
        ):
            [(orphans,)] = read(
                f"SELECT count(*) FROM {table} t WHERE NOT EXISTS "
                f"(SELECT 1 FROM memories m WHERE m.{key} = t.{column})",
                (),
            )
            if orphans:
                problems.append(f"{orphans} rows of {table} outlived their memory")
        if read("SELECT 1 FROM pg_available_extensions WHERE name = 'amcheck'", ()):
            read("CREATE EXTENSION IF NOT EXISTS amcheck", ())
            relations = read(
                "SELECT c.oid::regclass::text, c.relkind FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "LEFT JOIN pg_am a ON a.oid = c.relam "
                "WHERE n.nspname = 'public' AND (c.relkind = 'r' OR a.amname = 'btree')",
                (),
            )
            for name, kind in relations:
                if kind == "r":
                    damage = read("SELECT * FROM verify_heapam(?::regclass)", (name,))
                    problems += [f"{name}: {d}" for d in damage]
                else:
                    read("SELECT bt_index_check(?::regclass, true)", (name,))
    return "; ".join(problems) or "ok"


def run_stress(
    workdir: Path,
    *,
    processes: int = 4,
    saves: int = 250,
    max_memories: int = 100,
    timeout: float = 120.0,
) -> tuple[str, StressResult]:
    """``processes`` workers x ``saves`` saves into one store at once, watched by an observer.

    ``_workers.run_stress`` (which ``bench/stress.py`` runs) on any store: (url, result).
    """
    url = store_url(workdir / "stress.db")
    _workers.create_database(url, max_memories)
    go, ready = workdir / "go", workdir / "ready"
    procs: list[subprocess.Popen[bytes]] = []
    observer = CapObserver(url)
    try:
        for w in range(processes):
            args = [
                "save",
                f"--url={url}",
                f"--worker={w}",
                f"--count={saves}",
                f"--ack={workdir / f'ack-{w}.txt'}",
                f"--errors={workdir / f'errors-{w}.jsonl'}",
                f"--max-memories={max_memories}",
                "--min-priority=0.0",
                f"--ready={ready}",
                f"--go={go}",
            ]
            procs.append(spawn(args, workdir, f"worker-{w}"))
        wait_for(
            lambda: ready.exists() and len(ready.read_text().splitlines()) == processes,
            timeout,
            "the workers to open their stores",
        )
        observer.start()
        started = time.perf_counter()
        go.touch()  # every worker starts its burst now
        deadline = time.monotonic() + timeout
        for proc in procs:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
        wall = time.perf_counter() - started
    finally:
        if observer.is_alive():
            observer.stop()
        stop_all(procs)
    acks = {w: read_acks(workdir / f"ack-{w}.txt") for w in range(processes)}
    errors = [
        {"worker": w, **e}
        for w in range(processes)
        for e in read_jsonl(workdir / f"errors-{w}.jsonl")
    ]
    summaries = [
        json.loads(lines[-1])
        for w in range(processes)
        if (lines := (workdir / f"worker-{w}.out").read_text().splitlines())
    ]
    all_ids = [i for a in acks.values() for i in a.values()]
    [(total,)] = rows(url, "SELECT count(*) FROM memories WHERE namespace = ?", (NAMESPACE,))
    peak, kinds = history_cap_peaks(url)
    return url, StressResult(
        processes=processes,
        saves_per_process=saves,
        cap=max_memories,
        acks=acks,
        errors=errors,
        exit_codes=[p.returncode for p in procs],
        summaries=summaries,
        stderr=[(workdir / f"worker-{w}.err").read_text() for w in range(processes)],
        present=len(present_ids(url, all_ids)),
        total_rows=int(total),
        final_active=capped_count(url),
        max_observed_active=observer.max_seen,
        observer_samples=observer.samples,
        observer_errors=observer.errors,
        history_peak=peak,
        history_events=kinds,
        wall_s=wall,
    )


def run_sigkill_round(
    workdir: Path,
    url: str,
    round_no: int,
    kill_after: int,
    *,
    max_memories: int = 100,
    seed: int | None = None,
    timeout: float = 60.0,
) -> KillRound:
    """SIGKILL a saving worker mid-burst while a companion keeps saving; check the store.

    ``_workers.run_sigkill_round`` on any store. The victim saves until killed, right
    after it has acknowledged ``kill_after`` saves plus a random 0-20 ms (so the kill
    lands at varied points, often inside a transaction). The companion saves into the
    same store throughout and must see no error, before or after the kill: the dead
    process's locks (SQLite's file lock, or its server session's advisory lock) must
    not linger.
    """
    rng = random.Random(seed)
    tag = f"round-{round_no}"
    ack, companion_ack = workdir / f"{tag}-ack.txt", workdir / f"{tag}-companion-ack.txt"
    stop = workdir / f"{tag}-stop"
    companion_errors = workdir / f"{tag}-companion-errors.jsonl"
    common = [f"--url={url}", f"--max-memories={max_memories}", "--min-priority=0.0"]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        victim = spawn(
            [
                "save",
                *common,
                f"--worker={100 + round_no}",
                "--count=1000000",
                f"--ack={ack}",
                f"--errors={workdir / f'{tag}-errors.jsonl'}",
            ],
            workdir,
            f"{tag}-victim",
        )
        procs.append(victim)
        companion = spawn(
            [
                "save",
                *common,
                f"--worker={200 + round_no}",
                "--count=1000000",
                f"--ack={companion_ack}",
                f"--errors={companion_errors}",
                f"--until={stop}",
            ],
            workdir,
            f"{tag}-companion",
        )
        procs.append(companion)
        wait_for(
            lambda: len(read_acks(ack)) >= kill_after or victim.poll() is not None,
            timeout,
            f"{kill_after} acknowledged saves",
            interval=0.001,
        )
        time.sleep(rng.uniform(0.0, 0.02))
        if victim.poll() is None:
            os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
        # The companion must go on saving after the kill.
        before = len(read_acks(companion_ack))
        wait_for(
            lambda: len(read_acks(companion_ack)) >= before + 20 or companion.poll() is not None,
            timeout,
            "the companion to save after the kill",
        )
        after_kill = len(read_acks(companion_ack)) - before
        stop.touch()
        companion.wait(timeout=timeout)
    finally:
        stop_all(procs)
    acked, companion_acked = read_acks(ack), read_acks(companion_ack)
    check = integrity(url)
    row = rows(url, "SELECT capped FROM namespace_counts WHERE namespace = ?", (NAMESPACE,))
    capped = capped_count(url)
    reopened = _workers._reopen_and_save(url, max_memories, round_no)
    return KillRound(
        round=round_no,
        kill_after=kill_after,
        returncode=victim.returncode,
        acknowledged=len(acked),
        present=len(present_ids(url, acked.values())),
        integrity=check,
        capped_after=capped,
        counts_row=int(row[0][0]) if row else -1,
        companion_errors=read_jsonl(companion_errors),
        companion_acknowledged=len(companion_acked),
        companion_present=len(present_ids(url, companion_acked.values())),
        companion_acks_after_kill=after_kill,
        reopened_save_ok=reopened,
        acked_ids=acked,
    )


# -- 1. several processes ---------------------------------------------------------------


def test_four_processes_x_250_saves_lose_nothing_and_the_cap_holds(tmp_path: Path) -> None:
    url, result = run_stress(tmp_path, processes=4, saves=250, max_memories=CAP)

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
