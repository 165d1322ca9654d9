"""Worker entry points and scenario drivers for the concurrency and crash-safety tests.

Workers run in their own interpreter (``python -c "import _workers; _workers.main()" ...``)
so they are real OS processes with their own database connections and locks, and can be
killed with SIGKILL. Every worker records each save only *after* ``save()`` returned:
one line ``"<index>\\t<id>\\n"`` appended to its acknowledgement file and fsync'ed, so a
line on disk is proof that the caller was told "saved".

``tests/test_concurrency.py`` and ``bench/stress.py`` both drive the same scenarios
through :func:`run_stress` and :func:`run_sigkill_round`, on a SQLite file or (the tests,
with ``AIMEM_TEST_DATABASE_URL``) a PostgreSQL database; the database is watched and
checked from outside through ``_db.py``. This module has no tests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _db import (
    CAPPED_SQL,
    DB_ERRORS,
    Target,
    capped_count,
    present_ids,
    reader,
    rows,
    sqlite_path,
)

HERE = Path(__file__).resolve().parent
NAMESPACE = "default"


# -- contents ---------------------------------------------------------------------------


def score_for(worker: int, index: int) -> float:
    """A varied priority in [0.01, 0.97], many ties (97 values): ties exercise the order."""
    return ((worker * 7919 + index * 104729) % 97 + 1) / 100


def content_for(worker: int, index: int) -> str:
    """Unique content per worker and index, carrying a FixedJudge ``[score=...]`` marker."""
    topic = ("tea", "rust", "garden", "music", "travel")[(worker + index) % 5]
    score = score_for(worker, index)
    return f"worker {worker} save {index}: a note about {topic} [score={score:.2f}]"


# -- small file helpers ------------------------------------------------------------------


def append_synced(path: Path, line: str) -> None:
    """Append one line and fsync it: once this returns, the line survives a kill."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def read_acks(path: Path) -> dict[int, str]:
    """``index -> id`` of every complete acknowledgement line (a torn last line is ignored)."""
    if not path.exists():
        return {}
    acks: dict[int, str] = {}
    text = path.read_text(encoding="utf-8")
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            continue  # killed mid-write: not an acknowledgement
        index, memory_id = line.rstrip("\n").split("\t")
        acks[int(index)] = memory_id
    return acks


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every complete JSON line of ``path`` ([] when it does not exist)."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return [json.loads(line) for line in lines if line.endswith("\n")]


def wait_for(predicate: Any, timeout: float, what: str, interval: float = 0.005) -> None:
    """Poll ``predicate`` until true; TimeoutError naming ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


# -- judges -----------------------------------------------------------------------------


class BlockingJudge:
    """A judge that stays inside ``interpret`` until a release file appears.

    On entry it creates ``entered``; it then waits (without holding anything) until
    ``release`` exists or ``max_wait`` seconds pass, and writes ``released`` or
    ``timeout`` into ``left`` just before returning. Scores follow the marker rule.
    """

    source = "blocking"

    def __init__(self, entered: Path, release: Path, left: Path, max_wait: float = 30.0) -> None:
        self.entered, self.release, self.left, self.max_wait = entered, release, left, max_wait

    async def interpret(
        self, content: str, *, user_context: str | None = None, related: Sequence[Any] = ()
    ) -> Any:
        import aimem
        from aimem.testing import marker_scores

        append_synced(self.entered, f"{time.time()}\n")
        deadline = time.monotonic() + self.max_wait
        while not self.release.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        outcome = "released" if self.release.exists() else "timeout"
        append_synced(self.left, f"{outcome}\t{time.time()}\n")
        return aimem.Interpretation(
            interpreted_content="Interpreted: " + content,
            **marker_scores(content),
            rationale="blocking judge",
        )


# -- worker processes -------------------------------------------------------------------


def _save_worker(args: argparse.Namespace) -> int:
    import aimem
    from aimem.testing import FixedJudge

    ack, errors = Path(args.ack), Path(args.errors)
    store = aimem.MemoryStore(
        args.url,
        judge=FixedJudge(),
        max_memories=args.max_memories,
        min_priority_score=args.min_priority,
    )
    try:
        if args.ready:
            append_synced(Path(args.ready), "ready\n")
        if args.go:
            go = Path(args.go)
            while not go.exists():
                time.sleep(0.001)
        until = Path(args.until) if args.until else None
        started = time.perf_counter()
        acknowledged = failed = index = 0
        while index < args.count and not (until is not None and until.exists()):
            try:
                memory = store.save(content_for(args.worker, index))
            except Exception as exc:
                failed += 1
                record = {"index": index, "type": type(exc).__name__, "message": str(exc)}
                append_synced(errors, json.dumps(record) + "\n")
            else:
                append_synced(ack, f"{index}\t{memory.id}\n")  # only after save() returned
                acknowledged += 1
            index += 1
        summary = {
            "worker": args.worker,
            "attempted": index,
            "acknowledged": acknowledged,
            "errors": failed,
            "elapsed_s": round(time.perf_counter() - started, 3),
        }
        print(json.dumps(summary), flush=True)
    finally:
        store.close()
    return 0


def _blocked_save_worker(args: argparse.Namespace) -> int:
    import aimem

    judge = BlockingJudge(Path(args.entered), Path(args.release), Path(args.left), args.max_wait)
    with aimem.MemoryStore(
        args.url, judge=judge, max_memories=args.max_memories, min_priority_score=0.0
    ) as store:
        memory = store.save(args.content)
        append_synced(Path(args.ack), f"0\t{memory.id}\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line of the worker processes (see :func:`worker_command`)."""
    parser = argparse.ArgumentParser(prog="_workers")
    sub = parser.add_subparsers(dest="mode", required=True)
    save = sub.add_parser("save", help="a burst of saves, each acknowledged after it returned")
    save.add_argument("--url", required=True)
    save.add_argument("--worker", type=int, required=True)
    save.add_argument("--count", type=int, required=True)
    save.add_argument("--ack", required=True)
    save.add_argument("--errors", required=True)
    save.add_argument("--max-memories", type=int, default=100)
    save.add_argument("--min-priority", type=float, default=0.0)
    save.add_argument("--ready", help="file to append to once the store is open")
    save.add_argument("--go", help="file whose appearance starts the burst")
    save.add_argument("--until", help="file whose appearance ends the burst early")
    blocked = sub.add_parser("blocked-save", help="one save whose judge blocks until released")
    blocked.add_argument("--url", required=True)
    blocked.add_argument("--content", required=True)
    blocked.add_argument("--ack", required=True)
    blocked.add_argument("--entered", required=True)
    blocked.add_argument("--release", required=True)
    blocked.add_argument("--left", required=True)
    blocked.add_argument("--max-wait", type=float, default=30.0)
    blocked.add_argument("--max-memories", type=int, default=100)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.mode == "save":
        return _save_worker(args)
    return _blocked_save_worker(args)


def worker_command(*args: str) -> list[str]:
    """The argv that runs ``main(args)`` in a fresh interpreter."""
    return [sys.executable, "-c", "import sys, _workers; sys.exit(_workers.main())", *args]


def spawn(args: Sequence[str], log_dir: Path, name: str) -> subprocess.Popen[bytes]:
    """Start a worker process; its stdout/stderr go to ``log_dir/name.out|.err``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH")) if p)
    with (log_dir / f"{name}.out").open("wb") as out, (log_dir / f"{name}.err").open("wb") as err:
        return subprocess.Popen(worker_command(*args), env=env, stdout=out, stderr=err)


def stop_all(procs: Iterable[subprocess.Popen[bytes]]) -> None:
    """Kill and reap every process still running (cleanup in ``finally``)."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):  # a zombie we cannot reap
            proc.wait(timeout=10)


# -- observing the database from outside -------------------------------------------------


class CapObserver(threading.Thread):
    """Samples the capped count on a connection of its own until stopped.

    Each sample sees the latest committed state, a snapshot between two commits (SQLite:
    a read-only connection; PostgreSQL: an autocommit session). ``max_seen`` is the
    highest count any sample saw.
    """

    def __init__(self, target: Target, namespace: str = NAMESPACE, interval: float = 0.002) -> None:
        super().__init__(name="cap-observer", daemon=True)
        self.target, self.namespace, self.interval = target, namespace, interval
        self.samples = 0
        self.max_seen = 0
        self.errors: list[str] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        try:
            with reader(self.target) as read:
                while not self._stop_event.is_set():
                    try:
                        [(count,)] = read(CAPPED_SQL, (self.namespace,))
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


def history_cap_peaks(target: Target, namespace: str = NAMESPACE) -> tuple[int, set[str]]:
    """Replay the history log: the highest capped count at any commit boundary.

    Each save transaction writes one ``save`` event, then the ``archive`` events it
    caused, and history ids follow commit order (SQLite has one writer at a time;
    PostgreSQL serialises a namespace's writers on an advisory lock held until commit,
    so its ids follow commit order within the namespace); so the count just before each
    ``save`` event (and at the end) is the count after a commit. Returns that peak and
    the set of event kinds seen (the replay understands only ``save`` and ``archive``).
    """
    events = rows(
        target, "SELECT event FROM memory_history WHERE namespace = ? ORDER BY id", (namespace,)
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


_ACTIVE_SEQ_SQL = "SELECT seq FROM memories WHERE archived_at IS NULL"


def _sqlite_integrity(path: Path) -> str:
    """``PRAGMA integrity_check`` plus the keyword indexes' checks: "ok" when all pass.

    Assumes every memory has at least one word (true of the contents made here), so
    every active memory has a document in the active keyword index.
    """
    con = sqlite3.connect(path, timeout=10)
    try:
        result = "; ".join(row[0] for row in con.execute("PRAGMA integrity_check"))
        # Both keyword indexes are contentless (aimem hands them its own terms), so only
        # their structure can be checked...
        for table in ("memories_fts", "memories_active_fts"):
            try:
                con.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
            except sqlite3.DatabaseError as exc:
                result += f"; {table}: {exc}"
        # ...so compare the documents each index holds with the rows it should hold.
        con.execute(
            "CREATE VIRTUAL TABLE temp.all_terms USING fts5vocab(main, memories_fts, instance)"
        )
        indexed_all = {row[0] for row in con.execute("SELECT DISTINCT doc FROM temp.all_terms")}
        every = {row[0] for row in con.execute("SELECT seq FROM memories")}
        if indexed_all != every:
            result += (
                f"; memories_fts: {len(indexed_all - every)} stale, "
                f"{len(every - indexed_all)} missing documents"
            )
        con.execute(
            "CREATE VIRTUAL TABLE temp.active_terms "
            "USING fts5vocab(main, memories_active_fts, instance)"
        )
        indexed = {row[0] for row in con.execute("SELECT DISTINCT doc FROM temp.active_terms")}
        active = {row[0] for row in con.execute(_ACTIVE_SEQ_SQL)}
        if indexed != active:
            result += (
                f"; memories_active_fts: {len(indexed - active)} stale, "
                f"{len(active - indexed)} missing documents"
            )
        return result
    finally:
        con.close()


def integrity(target: Target) -> str:
    """ "ok" when the database and everything derived from the memories agree.

    SQLite: ``PRAGMA integrity_check`` and the keyword indexes' documents
    (:func:`_sqlite_integrity`). PostgreSQL: the capacity counter, BM25's per-namespace
    statistics and the rows deleted with a memory, each against the memories; and
    ``amcheck`` over every table and B-tree index where the extension is installed.
    """
    path = sqlite_path(target)
    if path is not None:
        return _sqlite_integrity(path)
    problems: list[str] = []
    with reader(target) as read:
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


# -- scenarios ----------------------------------------------------------------------------


@dataclass
class StressResult:
    """What one multi-process stress run did and found."""

    processes: int
    saves_per_process: int
    cap: int
    acks: dict[int, dict[int, str]]  # worker -> index -> id
    errors: list[dict[str, Any]]
    exit_codes: list[int | None]
    summaries: list[dict[str, Any]]
    stderr: list[str]
    present: int
    total_rows: int
    final_active: int
    max_observed_active: int
    observer_samples: int
    observer_errors: list[str]
    history_peak: int
    history_events: set[str]
    wall_s: float

    @property
    def acknowledged(self) -> int:
        """How many saves returned to their caller."""
        return sum(len(a) for a in self.acks.values())

    def figures(self) -> dict[str, Any]:
        """The one-line JSON figures ``bench/stress.py`` prints."""
        return {
            "processes": self.processes,
            "saves_per_process": self.saves_per_process,
            "acknowledged": self.acknowledged,
            "present": self.present,
            "lost": self.acknowledged - self.present,
            "total_rows": self.total_rows,
            "final_active": self.final_active,
            "cap": self.cap,
            "max_observed_active": self.max_observed_active,
            "observer_samples": self.observer_samples,
            "history_peak_active": self.history_peak,
            "errors": len(self.errors) + len(self.observer_errors),
            "exit_codes": self.exit_codes,
            "wall_s": round(self.wall_s, 3),
            "saves_per_s": round(self.acknowledged / self.wall_s, 1) if self.wall_s else None,
        }


def create_database(url: str, max_memories: int) -> None:
    """Create the file and schema up front, so workers and the observer find it.

    Opening alone creates nothing (a store is created by its first write): prune writes.
    """
    import aimem
    from aimem.testing import FixedJudge

    with aimem.MemoryStore(
        url, judge=FixedJudge(), max_memories=max_memories, min_priority_score=0.0
    ) as store:
        store.prune()


def _sqlite_url(target: Target) -> str:
    return target if isinstance(target, str) else f"sqlite:///{target}"


def run_stress(
    workdir: Path,
    *,
    url: str | None = None,
    processes: int = 4,
    saves: int = 250,
    max_memories: int = 100,
    timeout: float = 120.0,
) -> StressResult:
    """``processes`` workers x ``saves`` saves into one store at once, watched by an observer.

    The store is ``url`` (any backend), by default a fresh SQLite file in ``workdir``.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    url = url or _sqlite_url(workdir / "stress.db")
    create_database(url, max_memories)
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
    return StressResult(
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


@dataclass
class KillRound:
    """One SIGKILL round: what was acknowledged, what survived, and the checks after it."""

    round: int
    kill_after: int
    returncode: int | None
    acknowledged: int
    present: int
    integrity: str
    capped_after: int
    counts_row: int
    companion_errors: list[dict[str, Any]]
    companion_acknowledged: int
    companion_present: int
    companion_acks_after_kill: int
    reopened_save_ok: bool
    acked_ids: dict[int, str] = field(repr=False, default_factory=dict)

    def figures(self) -> dict[str, Any]:
        """One JSON-friendly line per round."""
        return {
            "round": self.round,
            "kill_after_acks": self.kill_after,
            "killed_by": -self.returncode if self.returncode and self.returncode < 0 else None,
            "acknowledged": self.acknowledged,
            "present": self.present,
            "lost": self.acknowledged - self.present,
            "integrity": self.integrity,
            "capped_after": self.capped_after,
            "counts_row": self.counts_row,
            "companion_errors": len(self.companion_errors),
            "companion_lost": self.companion_acknowledged - self.companion_present,
            "companion_acks_after_kill": self.companion_acks_after_kill,
            "reopened_save_ok": self.reopened_save_ok,
        }


def run_sigkill_round(
    workdir: Path,
    target: Target,
    round_no: int,
    kill_after: int,
    *,
    max_memories: int = 100,
    seed: int | None = None,
    timeout: float = 60.0,
) -> KillRound:
    """SIGKILL a saving worker mid-burst while a companion keeps saving; check the store.

    ``target`` is a store URL (any backend) or a SQLite file. The victim saves until
    killed, right after it has acknowledged ``kill_after`` saves plus a random 0-20 ms
    (so the kill lands at varied points, often inside a transaction). The companion
    saves into the same store throughout and must see no error, before or after the
    kill: the dead process's locks (SQLite's file lock, or its server session's advisory
    lock) must not linger.
    """
    rng = random.Random(seed)
    url = _sqlite_url(target)
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
    reopened = _reopen_and_save(url, max_memories, round_no)
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


def _reopen_and_save(url: str, max_memories: int, round_no: int) -> bool:
    """A fresh store opens the file (WAL recovery done) and a save reads back."""
    import aimem
    from aimem.testing import FixedJudge

    with aimem.MemoryStore(
        url, judge=FixedJudge(), max_memories=max_memories, min_priority_score=0.0
    ) as store:
        memory = store.save(f"after kill round {round_no} [score=0.99]")
        return store.get(memory.id).content == memory.content


if __name__ == "__main__":  # pragma: no cover - the workers use main() via -c
    sys.exit(main())
