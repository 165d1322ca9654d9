"""SQLite beside PostgreSQL in one run: save overhead, search latency, concurrent savers.

For each backend (a fresh SQLite file; a fresh PostgreSQL database created on the server
``--pg-url`` names, dropped afterwards):

* **overhead**: fill ``--sizes`` memories with ``save_many`` (instant in-process judge,
  ``related_limit=0``), then time ``--saves`` single saves with an instant judge: the
  time is aimem's own (validation, duplicate check, related lookup, the write
  transaction, capacity). p50/p95 in ms.
* **search**: ``--queries`` keyword and hybrid searches (``HashEmbedder``, in-process)
  over that store: p50/p95 in ms.
* **throughput** (``--throughput``): 1, 4 and 16 (``--processes``) spawned processes
  saving ``--items`` each, into one namespace and into one namespace per process, with
  an ``OpenAIJudge`` against the loopback OpenAI stub answering after ``--latency``
  seconds (300 ms), ``max_memories=50``. Each process connects, reads its stats and
  makes one warm-up save (deleted again; ``--no-warmup`` to skip) before the clock
  starts once every process is ready; the clock stops at the last process's result
  (closing and exiting are not timed). Per row: items/s, p50/p95 per save; the most
  server connections to the database, sampled every 50 ms from ``pg_stat_activity``
  while the workers run (null on SQLite); each worker's peak RSS (``VmHWM``) and
  current RSS (``/proc/self/statm``) after its saves, max and mean in MB; the most chat
  requests the stub answered at once; where a save's time went (the judge's HTTP call,
  each database call, ``db.write_acquire`` = pool checkout + BEGIN + the writer lock, a
  part of ``db.insert``), CPU per save of the workers, of the parent (stub) and of the
  server's backends for the run's connections (``/proc``), and the machine's CPU busy
  share during the run and in the 0.5 s before it (workers idle: the load of everything
  else on a shared host). Then a check, per namespace: the cap holds exactly (active
  unpinned judged == min(50, saved), by a listing and by ``stats()``: ``cap_holds``) and
  nothing acknowledged is lost (every id a ``save()`` returned is there, active or
  archived with an ``archive`` event: ``lost``).

Prints one JSON line per measurement and a summary line (with the 16-vs-1 throughput
ratios, one namespace each and shared). Without a reachable server the PostgreSQL rows
say why and the SQLite rows still print. ``--backend sqlite|postgresql|both``;
``--skip-overhead`` runs the throughput part alone.

    python bench/backends.py --sizes 1000 --throughput
    python bench/backends.py --backend postgresql --skip-overhead --throughput --items 8
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from queue import Empty
from typing import Any, Literal

import aimem
from aimem.testing import FixedJudge, HashEmbedder, OpenAIStub, StubReply

DEFAULT_PG = os.environ.get("AIMEM_BENCH_PG_URL", "postgresql://root@127.0.0.1:5432/postgres")
#: ``max_memories`` of the throughput stores: 16 processes x 8 items overflow it shared.
CAP = 50


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


@contextmanager
def sqlite_url(tmp: Path, name: str) -> Iterator[str]:
    yield f"sqlite:///{tmp / (name + '.db')}"


@contextmanager
def postgres_url(admin: str, name: str) -> Iterator[str]:
    """A fresh database on the server, dropped afterwards."""
    import psycopg

    db = f"aimem_bench_{name}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db}"')
    base, _, _ = admin.rpartition("/")
    try:
        yield f"{base}/{db}"
    finally:
        with psycopg.connect(admin.replace("+psycopg", ""), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


def texts(n: int, start: int = 0) -> list[str]:
    topics = ["tea", "cello", "Leeds", "penicillin", "Rust", "Miso the cat", "running", "Kyoto"]
    return [
        f"Memory {i}: the user mentioned {topics[i % len(topics)]} on day {i // 7} ({i * 37 % 101})"
        for i in range(start, start + n)
    ]


def analyze(url: str) -> None:
    """Planner statistics after the bulk fill, as autovacuum would take them.

    This machine's server runs with ``autovacuum = off``; a server left so would plan
    every query of a never-analysed table on guesses (sequential scans at 100k rows).
    """
    if not url.startswith("postgresql"):
        return
    import psycopg

    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute("ANALYZE")


def explain_plans(store: aimem.MemoryStore, size: int, out: Path) -> None:
    """Append ``EXPLAIN (ANALYZE, BUFFERS)`` of every statement of one save and of one
    keyword and one hybrid search to ``out`` (PostgreSQL; each in a rolled-back
    transaction, so an explained INSERT changes nothing).
    """
    from sqlalchemy import event

    engine = store._async._db.engine  # the store's own pool: not a public API
    captured: list[tuple[str, str, Any]] = []
    phase = ["save"]

    def seen(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool):  # type: ignore[no-untyped-def]
        if not many:
            captured.append((phase[0], statement, params))

    event.listen(engine, "before_cursor_execute", seen)
    try:
        store.save(f"Memory explained at {size}: the user mentioned Kyoto on day 7 (12)")
        for mode in ("keyword", "hybrid"):
            phase[0] = f"{mode} search"
            store.search("what about Kyoto day 7", mode=mode)  # type: ignore[arg-type]
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    lines = [f"## {size:,} memories\n"]
    with engine.connect() as conn:
        for what, statement, params in captured:
            if not statement.lstrip().upper().startswith(("SELECT", "WITH", "INSERT", "UPDATE")):
                continue
            if "pg_advisory" in statement:
                continue
            transaction = conn.begin()
            try:
                plan = conn.exec_driver_sql("EXPLAIN (ANALYZE, BUFFERS) " + statement, params)
                text = "\n".join(str(row[0]) for row in plan)
            except Exception as exc:  # a statement EXPLAIN cannot take: say so
                text = f"(not explained: {str(exc).splitlines()[0][:120]})"
            finally:
                transaction.rollback()
            one_line = " ".join(statement.split())
            lines.append(f"### {what}: {one_line[:160]}\n\n```\n{text}\n```\n")
    with out.open("a") as sink:
        sink.write("\n".join(lines) + "\n")


def overhead(
    url: str,
    size: int,
    saves: int,
    queries: int,
    fills: dict[int, Path],
    fill_dir: Path,
    explain: Path | None = None,
) -> dict[str, Any]:
    """Fill a store with ``size`` memories, then time single saves and searches on it.

    The first backend fills through ``save_many`` and exports what it holds; the next
    imports that file (``fills``), so both measure the same memories, and a 100,000
    memory fill is paid once (``save_many`` takes about 6 ms an item here, an import
    under 1 ms).
    """
    embedder = HashEmbedder(dim=384)
    fill = FixedJudge(scorer=lambda c: 0.3 + (hash(c) % 70) / 100)
    started = time.perf_counter()
    with aimem.MemoryStore(
        url, judge=fill, embedder=embedder, max_memories=size, related_limit=0
    ) as store:
        kept = fill_dir / f"fill-{size}.jsonl"
        if size not in fills and kept.exists():  # --fill-dir from an earlier run
            fills[size] = kept
        if size in fills:
            store.import_from(fills[size])
        else:
            made = texts(size)
            for i in range(0, size, 500):
                store.save_many(made[i : i + 500])
            fills[size] = kept
            store.export_to(fills[size], include_history=False)
        filled = {"fill_s": round(time.perf_counter() - started, 1)}
    analyze(url)
    timings: list[float] = []
    with aimem.MemoryStore(url, judge=FixedJudge(), embedder=embedder, max_memories=size) as store:
        for text in texts(saves, start=size):
            started = time.perf_counter()
            store.save(text)
            timings.append((time.perf_counter() - started) * 1000)
        search: dict[Literal["keyword", "hybrid"], list[float]] = {"keyword": [], "hybrid": []}
        for mode in search:
            for i in range(queries):
                started = time.perf_counter()
                store.search(f"what about {['tea', 'cello', 'Leeds', 'Kyoto'][i % 4]} day {i}",
                             mode=mode)  # fmt: skip
                search[mode].append((time.perf_counter() - started) * 1000)
        filled["vector_search"] = getattr(store.stats(), "vector_search", None)
        if explain is not None and url.startswith("postgresql"):
            explain_plans(store, size, explain)
    return {
        **filled,
        "save_ms_p50": percentile(timings, 0.5),
        "save_ms_p95": percentile(timings, 0.95),
        **{f"{m}_search_ms_p50": percentile(v, 0.5) for m, v in search.items()},
        **{f"{m}_search_ms_p95": percentile(v, 0.95) for m, v in search.items()},
    }


def _peak_rss_kb() -> int:
    """This process's peak resident memory in KB (``VmHWM``).

    Not ``ru_maxrss``: Linux carries it over from the parent through fork and exec, so a
    spawned worker reported the parent's peak (1.3 GB after a 100,000-memory fill).
    """
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _rss_now_mb() -> float:
    """Resident memory of this process now (/proc/self/statm), in MB."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _cpu_s(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _machine_cpu() -> tuple[int, int]:
    """(busy, total) jiffies of every core since boot, from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def _time_phases(store: aimem.MemoryStore, judge: Any, phases: dict[str, float]) -> None:
    """Add each save's time in the judge and in each database call to ``phases``.

    Wraps ``judge.interpret`` (HTTP to the stub, its latency included) and, on the
    store's backend, the calls a single save makes (timed on the database thread, so
    without the hop to it) and ``_write``: taking a pooled connection, BEGIN and the
    writer lock (PostgreSQL's advisory lock per namespace, SQLite's file lock), a part
    of ``db.insert``. Private names: whatever is missing is simply not timed.
    """

    def add(name: str, started: float) -> None:
        phases[name] = phases.get(name, 0.0) + time.perf_counter() - started

    interpret = judge.interpret

    async def timed_interpret(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await interpret(*args, **kwargs)
        finally:
            add("judge", started)

    judge.interpret = timed_interpret
    backend = getattr(getattr(store, "_async", None), "_db", None)
    if backend is None:
        return

    def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                add(f"db.{name}", started)

        return call

    for name in ("find_by_key", "find_active_duplicate", "related_search", "insert"):
        if callable(getattr(backend, name, None)):
            setattr(backend, name, timed(name, getattr(backend, name)))
    write = getattr(backend, "_write", None)
    if write is not None:

        @contextmanager
        def timed_write(namespace: str) -> Iterator[Any]:
            started = time.perf_counter()
            with write(namespace) as conn:
                add("db.write_acquire", started)
                yield conn

        backend._write = timed_write


def _saver(
    url: str,
    base_url: str,
    namespace: str,
    items: list[str],
    out: Any,
    ready: Any,
    go: Any,
    warmup: bool,
) -> None:
    """One worker process; a failure goes to the parent on both queues, not just stderr."""
    try:
        _save_items(url, base_url, namespace, items, out, ready, go, warmup)
    except BaseException:
        failure = {"error": f"worker {os.getpid()} ({namespace}): {traceback.format_exc()}"}
        ready.put(failure)
        out.put(failure)
        raise


def _save_items(
    url: str,
    base_url: str,
    namespace: str,
    items: list[str],
    out: Any,
    ready: Any,
    go: Any,
    warmup: bool,
) -> None:
    judge = aimem.OpenAIJudge(base_url=base_url, api_key="x", model="bench")
    phases: dict[str, float] = {}
    with aimem.MemoryStore(url, judge=judge, namespace=namespace, max_memories=CAP) as store:
        _time_phases(store, judge, phases)
        store.stats()  # connected and schema ready before the clock starts
        if warmup:
            # First-save costs are start-up too: lazy imports (the heuristic reading's
            # vocabularies), the SDK client, SQLAlchemy compiling the statements. One
            # save and its delete, before the clock; the namespace is as it was.
            warm = store.save(f"Warm-up of process {os.getpid()} in {namespace}")
            store.delete(warm.id)
        phases.clear()
        ready.put(True)
        go.wait()
        latencies, ids = [], []
        cpu_started, started = _cpu_s(), time.perf_counter()
        for text in items:
            began = time.perf_counter()
            ids.append(store.save(text).id)
            latencies.append(time.perf_counter() - began)
        wall, cpu = time.perf_counter() - started, _cpu_s() - cpu_started
        peak_kb = _peak_rss_kb()
        out.put(
            {
                "latencies": latencies,
                "ids": ids,
                "namespace": namespace,
                "wall_s": wall,
                "cpu_s": cpu,
                "phases": phases,
                "peak_rss_mb": peak_kb / 1024,
                "rss_mb": _rss_now_mb(),
            }
        )


def _collect(queue: Any, workers: list[Any], timeout: float = 600) -> list[Any]:
    """One message per worker; the first failure (reported, or a silent death) raises."""
    got: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(got) < len(workers):
        try:
            message = queue.get(timeout=1)
        except Empty:
            dead = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
            if dead:
                raise RuntimeError(f"a worker died with exit code {dead[0]}") from None
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(got)} of {len(workers)} workers answered") from None
            continue
        if isinstance(message, dict) and "error" in message:
            raise RuntimeError(message["error"])
        got.append(message)
    return got


class _InFlightStub(OpenAIStub):
    """``OpenAIStub`` that also records the most chat requests it was answering at once."""

    def __init__(self, latency: float) -> None:
        super().__init__(latency=latency)
        self._flight_lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0

    def _chat(self, request: dict[str, Any]) -> StubReply:
        with self._flight_lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            return super()._chat(request)
        finally:
            with self._flight_lock:
                self._in_flight -= 1


def _process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (/proc/PID/stat), None once gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _ConnectionSampler(threading.Thread):
    """Samples the server connections to the store's database every ``interval`` s.

    Its own connection is left out of the count. It also notes each server backend's
    CPU (``/proc``, the server being on this host) at the start and on every sample, so
    ``finish`` gives the server's CPU spent for the run (a backend that exits loses its
    last < 50 ms; /proc counts in 10 ms ticks).
    Nothing to sample on SQLite.
    """

    def __init__(self, url: str, interval: float = 0.05) -> None:
        super().__init__(name="pg-connection-sampler", daemon=True)
        self.interval = interval
        self.samples: list[int] = []
        self.server_cpu_s: float | None = None
        self._cpu_seen: dict[int, float] = {}
        self._cpu_last: dict[int, float] = {}
        self._halt = threading.Event()
        self._conn: Any = None
        if url.startswith("postgres"):
            import psycopg

            self._conn = psycopg.connect(url.replace("+psycopg", ""), autocommit=True)

    def sample(self) -> int | None:
        if self._conn is None:
            return None
        pids = [
            int(pid)
            for (pid,) in self._conn.execute(
                "SELECT pid FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchall()
        ]
        for pid in pids:  # a connection opened during the run: all its CPU is the run's
            self._cpu_seen.setdefault(pid, 0.0)
            if self.is_alive():  # read on every sample: a worker's backends exit as it ends
                cpu = _process_cpu_s(pid)
                if cpu is not None:
                    self._cpu_last[pid] = cpu
        return len(pids)

    def start(self) -> None:
        for pid in self._cpu_seen:  # the CPU of start-up and warm-up is not the run's
            self._cpu_seen[pid] = _process_cpu_s(pid) or 0.0
        super().start()

    def run(self) -> None:
        while not self._halt.is_set():
            count = self.sample()
            if count is None:
                return
            self.samples.append(count)
            self._halt.wait(self.interval)

    def finish(self) -> int | None:
        self._halt.set()
        if self.is_alive():
            self.join()
        if self._conn is not None:
            self._conn.close()
            for pid in self._cpu_seen:
                cpu = _process_cpu_s(pid)
                if cpu is not None:
                    self._cpu_last[pid] = cpu
            self.server_cpu_s = sum(
                self._cpu_last.get(pid, start) - start for pid, start in self._cpu_seen.items()
            )
        return max(self.samples) if self.samples else None


def verify(url: str, saved: dict[str, list[str]]) -> dict[str, Any]:
    """Per namespace: the cap holds exactly, and every acknowledged id is still there.

    ``saved`` maps each namespace to the ids its workers' ``save()`` returned. Active
    unpinned judged memories must number ``min(CAP, saved)`` (by a listing and by
    ``stats()``); each id must be present, active or archived, and an archived one must
    have an ``archive`` event in its history (else it counts as lost too).
    """
    lost = no_history = pending = 0
    cap_holds = True
    capped_counts = []
    for namespace, ids in saved.items():
        with aimem.MemoryStore(
            url, judge=FixedJudge(), namespace=namespace, max_memories=CAP
        ) as store:
            listed = {m.id: m for m in store.list(include_archived=True)}
            stats = store.stats()
            capped = sum(
                1
                for m in listed.values()
                if not m.archived and not m.pinned and m.priority_score is not None
            )
            expected = min(CAP, len(set(ids)))
            by_stats = stats.count - stats.pinned - stats.pending
            cap_holds = cap_holds and capped == expected == by_stats
            capped_counts.append(capped)
            pending += stats.pending
            for memory_id in ids:
                memory = listed.get(memory_id)
                if memory is None:
                    lost += 1
                elif memory.archived and not any(
                    e.event == "archive" for e in store.history(memory_id)
                ):
                    no_history += 1
    return {
        "cap_holds": cap_holds,
        "lost": lost + no_history,
        "archived_without_history": no_history,
        "pending": pending,
        "active_capped": capped_counts if len(capped_counts) > 1 else capped_counts[0],
    }


def throughput(
    url: str, processes: int, items: int, latency: float, shared: bool, warmup: bool = True
) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    out, ready, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    with _InFlightStub(latency=latency) as stub:
        workers = [
            ctx.Process(
                target=_saver,
                args=(
                    url,
                    stub.base_url,
                    "shared" if shared else f"ns{p}",
                    texts(items, start=100_000 * (p + 1)),
                    out,
                    ready,
                    go,
                    warmup,
                ),
            )
            for p in range(processes)
        ]
        try:
            return _run(url, processes, shared, stub, workers, out, ready, go)
        finally:
            for w in workers:  # after a failure: the others wait for a go that never comes
                if w.is_alive():
                    w.terminate()
                    w.join()


def _run(
    url: str,
    processes: int,
    shared: bool,
    stub: _InFlightStub,
    workers: list[Any],
    out: Any,
    ready: Any,
    go: Any,
) -> dict[str, Any]:
    for w in workers:  # start-up (imports, connections, a warm-up save) is not measured
        w.start()
    _collect(ready, workers)
    stub.max_in_flight = 0  # the warm-up saves' requests are not the run's
    # Everything else on the machine (the workers wait idle): a shared host's load.
    before = _machine_cpu()
    time.sleep(0.5)
    idle_busy, idle_total = (b - a for a, b in zip(before, _machine_cpu(), strict=True))
    sampler = _ConnectionSampler(url)
    try:
        at_ready = sampler.sample()
        sampler.start()
        machine_started, parent_cpu = _machine_cpu(), _cpu_s()
        started = time.perf_counter()
        go.set()
        # Timed to the last result: the workers' shutdown (closing pools, exiting) is not.
        results = _collect(out, workers)
        seconds = time.perf_counter() - started
        busy, total = (b - a for a, b in zip(machine_started, _machine_cpu(), strict=True))
        parent_cpu = _cpu_s() - parent_cpu
    finally:
        connections = sampler.finish()
    for w in workers:
        w.join()
    latencies = [x for r in results for x in r["latencies"]]
    saves = len(latencies)
    phases: dict[str, float] = {}
    for r in results:
        for name, value in r["phases"].items():
            phases[name] = phases.get(name, 0.0) + value
    wall = sum(r["wall_s"] for r in results)
    accounted = sum(v for k, v in phases.items() if k != "db.write_acquire")
    phases["other"] = wall - accounted
    peaks = [r["peak_rss_mb"] for r in results]
    now = [r["rss_mb"] for r in results]
    row: dict[str, Any] = {
        "processes": processes,
        "namespaces": 1 if shared else processes,
        "items_per_s": round(saves / seconds, 2),
        "save_s_p50": percentile(latencies, 0.5),
        "save_s_p95": percentile(latencies, 0.95),
        "seconds": round(seconds, 2),
        "pg_connections_max": connections,
        "pg_connections_at_ready": at_ready,
        "worker_peak_rss_mb_max": round(max(peaks), 1),
        "worker_peak_rss_mb_mean": round(sum(peaks) / len(peaks), 1),
        "worker_rss_mb_max": round(max(now), 1),
        "worker_rss_mb_mean": round(sum(now) / len(now), 1),
        "stub_max_in_flight": stub.max_in_flight,
        # where a save's wall time went, mean over every save of every worker
        "phase_ms_per_save": {k: round(v / saves * 1000, 1) for k, v in sorted(phases.items())},
        "worker_cpu_ms_per_save": round(sum(r["cpu_s"] for r in results) / saves * 1000, 1),
        "parent_cpu_ms_per_save": round(parent_cpu / saves * 1000, 1),  # stub + sampler
        "pg_server_cpu_ms_per_save": None
        if sampler.server_cpu_s is None
        else round(sampler.server_cpu_s / saves * 1000, 1),
        "machine_cpu_busy": round(busy / total, 3) if total else None,
        "machine_cpu_busy_before": round(idle_busy / idle_total, 3) if idle_total else None,
        "cores": os.cpu_count(),
    }
    if shared:
        row.update(verify(url, {"shared": [i for r in results for i in r["ids"]]}))
    else:
        row.update(verify(url, {r["namespace"]: r["ids"] for r in results}))
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pg-url", default=DEFAULT_PG, help="an admin URL of the server")
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--sizes", default="1000", help="comma-separated store sizes")
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--skip-overhead", action="store_true", help="no overhead/search rows")
    parser.add_argument("--throughput", action="store_true")
    parser.add_argument("--items", type=int, default=8, help="saves per process")
    parser.add_argument("--processes", default="1,4,16", help="comma-separated process counts")
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--no-warmup", action="store_true", help="no warm-up save per process")
    parser.add_argument(
        "--fill-dir", type=Path, help="keep each size's fill (an export) here and reuse it"
    )
    parser.add_argument(
        "--explain", type=Path, help="append PostgreSQL's EXPLAIN (ANALYZE, BUFFERS) here"
    )
    args = parser.parse_args()
    sizes = [] if args.skip_overhead else [int(s) for s in args.sizes.split(",")]
    counts = [int(p) for p in args.processes.split(",")]
    summary: dict[str, Any] = {"bench": "backends", "summary": True}
    fills: dict[int, Path] = {}  # size -> the first backend's export, the next one imports
    with tempfile.TemporaryDirectory() as tmp:
        backends: list[tuple[str, Callable[[str], Any]]] = [
            ("sqlite", lambda name: sqlite_url(Path(tmp), name)),
            ("postgresql", lambda name: postgres_url(args.pg_url, name)),
        ]
        for backend, fresh in backends:
            if args.backend not in ("both", backend):
                continue
            try:
                for size in sizes:
                    with fresh(f"o{size}") as url:
                        row: dict[str, Any] = {"bench": "backends", "backend": backend}
                        row["size"] = size
                        row.update(
                            overhead(
                                url,
                                size,
                                args.saves,
                                args.queries,
                                fills,
                                args.fill_dir or Path(tmp),
                                args.explain,
                            )
                        )
                        print(json.dumps(row), flush=True)
                        summary[f"{backend}_{size}_save_ms_p50"] = row["save_ms_p50"]
                if not args.throughput:
                    continue
                for shared in (True, False):
                    rates: dict[int, float] = {}
                    for processes in counts:
                        with fresh(f"t{processes}") as url:
                            row = {"bench": "backends", "backend": backend, "throughput": True}
                            row.update(
                                throughput(
                                    url,
                                    processes,
                                    args.items,
                                    args.latency,
                                    shared,
                                    warmup=not args.no_warmup,
                                )
                            )
                            print(json.dumps(row), flush=True)
                        rates[processes] = row["items_per_s"]
                        if shared:
                            summary[f"{backend}_shared_{processes}p_cap_holds"] = row["cap_holds"]
                            summary[f"{backend}_shared_{processes}p_lost"] = row["lost"]
                    kind = "shared" if shared else "separate"
                    summary[f"{backend}_{kind}_items_per_s"] = rates
                    if 1 in rates and len(rates) > 1:
                        most = max(rates)
                        summary[f"{backend}_{kind}_ratio_{most}v1"] = round(
                            rates[most] / rates[1], 2
                        )
            except Exception as exc:  # a server that is not there: say so, keep the rest
                print(
                    json.dumps(
                        {
                            "bench": "backends",
                            "backend": backend,
                            "error": f"{type(exc).__name__}: {exc}",
                        }
                    )
                )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
