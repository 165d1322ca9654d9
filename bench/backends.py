"""SQLite beside PostgreSQL in one run: save overhead, search latency, concurrent savers.

For each backend (a fresh SQLite file; a fresh PostgreSQL database created on the server
``--pg-url`` names, dropped afterwards):

* **overhead**: fill ``--sizes`` memories with ``save_many`` (instant in-process judge,
  ``related_limit=0``), then time ``--saves`` single saves with an instant judge: the
  time is aimem's own (validation, duplicate check, related lookup, the write
  transaction, capacity). p50/p95 in ms.
* **search**: ``--queries`` keyword and hybrid searches (``HashEmbedder``, in-process)
  over that store: p50/p95 in ms.
* **throughput** (``--throughput``): 1, 4 and 16 processes saving ``--items`` each, into
  one namespace and into one namespace per process, against the loopback OpenAI stub
  answering after ``--latency`` seconds (300 ms): items/s and p95 latency per save,
  timed from the moment every process is connected and ready.

Prints one JSON line per measurement and a summary line. Without a reachable server the
PostgreSQL rows say why and the SQLite rows still print.

    python bench/backends.py --sizes 1000 --throughput
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aimem
from aimem.testing import FixedJudge, HashEmbedder, OpenAIStub

DEFAULT_PG = os.environ.get("AIMEM_BENCH_PG_URL", "postgresql://root@127.0.0.1:5432/postgres")


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


def overhead(url: str, size: int, saves: int, queries: int) -> dict[str, Any]:
    embedder = HashEmbedder(dim=384)
    fill = FixedJudge(scorer=lambda c: 0.3 + (hash(c) % 70) / 100)
    with aimem.MemoryStore(
        url, judge=fill, embedder=embedder, max_memories=size, related_limit=0
    ) as store:
        made = texts(size)
        for i in range(0, size, 500):
            store.save_many(made[i : i + 500])
    analyze(url)
    timings: list[float] = []
    with aimem.MemoryStore(url, judge=FixedJudge(), embedder=embedder, max_memories=size) as store:
        for text in texts(saves, start=size):
            started = time.perf_counter()
            store.save(text)
            timings.append((time.perf_counter() - started) * 1000)
        search: dict[str, list[float]] = {"keyword": [], "hybrid": []}
        for mode in search:
            for i in range(queries):
                started = time.perf_counter()
                store.search(f"what about {['tea', 'cello', 'Leeds', 'Kyoto'][i % 4]} day {i}",
                             mode=mode)  # fmt: skip
                search[mode].append((time.perf_counter() - started) * 1000)
    return {
        "save_ms_p50": percentile(timings, 0.5),
        "save_ms_p95": percentile(timings, 0.95),
        **{f"{m}_search_ms_p50": percentile(v, 0.5) for m, v in search.items()},
        **{f"{m}_search_ms_p95": percentile(v, 0.95) for m, v in search.items()},
    }


def _saver(
    url: str, base_url: str, namespace: str, items: list[str], out: Any, ready: Any, go: Any
) -> None:
    judge = aimem.OpenAIJudge(base_url=base_url, api_key="x", model="bench")
    latencies = []
    with aimem.MemoryStore(url, judge=judge, namespace=namespace, max_memories=50) as store:
        store.stats()  # connected and schema ready before the clock starts
        ready.put(True)
        go.wait()
        for text in items:
            started = time.perf_counter()
            store.save(text)
            latencies.append(time.perf_counter() - started)
    out.put(latencies)


def throughput(url: str, processes: int, items: int, latency: float, shared: bool) -> dict:
    ctx = mp.get_context("spawn")
    out, ready, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    with OpenAIStub(latency=latency) as stub:
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
                ),
            )
            for p in range(processes)
        ]
        for w in workers:  # start-up (imports, connections) is not what is measured
            w.start()
        for _ in workers:
            ready.get(timeout=600)
        started = time.perf_counter()
        go.set()
        latencies = [x for _ in workers for x in out.get(timeout=600)]
        for w in workers:
            w.join()
        seconds = time.perf_counter() - started
    return {
        "processes": processes,
        "namespaces": 1 if shared else processes,
        "items_per_s": round(len(latencies) / seconds, 2),
        "save_s_p95": percentile(latencies, 0.95),
        "seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pg-url", default=DEFAULT_PG, help="an admin URL of the server")
    parser.add_argument("--sizes", default="1000", help="comma-separated store sizes")
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--throughput", action="store_true")
    parser.add_argument("--items", type=int, default=8, help="saves per process")
    parser.add_argument("--latency", type=float, default=0.3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    summary: dict[str, Any] = {"bench": "backends", "summary": True}
    with tempfile.TemporaryDirectory() as tmp:
        backends: list[tuple[str, Callable[[str], Any]]] = [
            ("sqlite", lambda name: sqlite_url(Path(tmp), name)),
            ("postgresql", lambda name: postgres_url(args.pg_url, name)),
        ]
        for backend, fresh in backends:
            try:
                for size in sizes:
                    with fresh(f"o{size}") as url:
                        row = {"bench": "backends", "backend": backend, "size": size}
                        row.update(overhead(url, size, args.saves, args.queries))
                        print(json.dumps(row), flush=True)
                        summary[f"{backend}_{size}_save_ms_p50"] = row["save_ms_p50"]
                if args.throughput:
                    for shared in (True, False):
                        for processes in (1, 4, 16):
                            with fresh(f"t{processes}") as url:
                                row = {"bench": "backends", "backend": backend, "throughput": True}
                                row.update(
                                    throughput(url, processes, args.items, args.latency, shared)
                                )
                                print(json.dumps(row), flush=True)
            except Exception as exc:  # a server that is not there: say so, keep the rest
                print(json.dumps({"bench": "backends", "backend": backend, "error": str(exc)}))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
