"""One ``save_many`` at the batch bound, on SQLite and on PostgreSQL, and one over it.

For each backend (a fresh SQLite file; a fresh PostgreSQL database on the server
``--pg-url`` names, with aimem's default 30 s statement timeout, dropped afterwards) and
each of ``--items`` (default: the ``max_batch_items`` default, 10,000):

* **lands**: ``save_many`` of that many distinct items into an empty namespace with an
  instant in-process judge and ``max_memories=100``, so all but 100 are archived by the
  capacity step in the same transaction: wall time, the longest single statement (what a
  statement timeout sees), and whether the cap held. ``max_batch_items`` is raised to
  the count for sizes over the default.
* **refused**: the default bound plus one item: the time until ``ValidationError``
  (before anything is judged or written).

Prints one JSON line per measurement and a summary line. Without a reachable server the
PostgreSQL rows say why and the SQLite rows still print.

    python bench/batch_bounds.py
    python bench/batch_bounds.py --items 5000,10000,20000 --related-limit 5
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event

import aimem
from aimem.testing import FixedJudge

DEFAULT_PG = os.environ.get("AIMEM_BENCH_PG_URL", "postgresql://root@127.0.0.1:5432/postgres")
BOUND: int = aimem.Settings.model_fields["max_batch_items"].default


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


def texts(n: int) -> list[str]:
    topics = ["tea", "cello", "Leeds", "penicillin", "Rust", "Miso the cat", "running", "Kyoto"]
    return [
        f"Memory {i}: the user mentioned {topics[i % len(topics)]} on day {i // 7} "
        f"[score={(i * 37 % 97 + 1) / 100:.2f}]"
        for i in range(n)
    ]


@contextmanager
def longest_statement(store: aimem.MemoryStore) -> Iterator[list[float]]:
    """The slowest statement the store's engine ran meanwhile, in seconds (``[0]``)."""
    engine = store._async._db.engine  # a bench may look inside; nothing else does
    longest = [0.0]

    def before(conn: Any, *_: Any) -> None:
        conn.info["aimem_bench_t0"] = time.perf_counter()

    def after(conn: Any, *_: Any) -> None:
        longest[0] = max(longest[0], time.perf_counter() - conn.info.pop("aimem_bench_t0"))

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    try:
        yield longest
    finally:
        event.remove(engine, "before_cursor_execute", before)
        event.remove(engine, "after_cursor_execute", after)


def lands(url: str, items: int, related_limit: int) -> dict[str, Any]:
    contents = texts(items)
    with aimem.MemoryStore(
        url,
        judge=FixedJudge(),
        max_memories=100,
        related_limit=related_limit,
        max_batch_items=max(items, BOUND),
    ) as store:
        with longest_statement(store) as longest:
            started = time.perf_counter()
            report = store.save_many_with_report(contents)
            seconds = time.perf_counter() - started
        stats = store.stats()
    return {
        "items": items,
        "seconds": round(seconds, 2),
        "longest_statement_s": round(longest[0], 3),
        "archived": len(report.archived),
        "active": stats.count,
        "cap_held": stats.count == 100 and stats.total == items,
    }


def refused(url: str) -> dict[str, Any]:
    judge = FixedJudge()
    contents = texts(BOUND + 1)
    with aimem.MemoryStore(url, judge=judge) as store:
        started = time.perf_counter()
        try:
            store.save_many(contents)
            message = None
        except aimem.ValidationError as exc:
            message = str(exc)
        seconds = time.perf_counter() - started
        written = store.stats().total
    return {
        "items": BOUND + 1,
        "refused_ms": round(seconds * 1000, 2),
        "message": message,
        "judged": len(judge.calls),
        "written": written,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pg-url", default=DEFAULT_PG, help="an admin URL of the server")
    parser.add_argument("--items", default=str(BOUND), help="comma-separated batch sizes")
    parser.add_argument("--related-limit", type=int, default=0, help="0: no related lookups")
    args = parser.parse_args()
    sizes = [int(s) for s in args.items.split(",")]
    summary: dict[str, Any] = {"bench": "batch_bounds", "summary": True, "bound": BOUND}
    with tempfile.TemporaryDirectory() as tmp:
        backends: list[tuple[str, Callable[[str], Any]]] = [
            ("sqlite", lambda name: sqlite_url(Path(tmp), name)),
            ("postgresql", lambda name: postgres_url(args.pg_url, name)),
        ]
        for backend, fresh in backends:
            try:
                for size in sizes:
                    with fresh(f"b{size}") as url:
                        row = {"bench": "batch_bounds", "backend": backend}
                        row.update(lands(url, size, args.related_limit))
                        print(json.dumps(row), flush=True)
                        summary[f"{backend}_{size}_s"] = row["seconds"]
                        summary[f"{backend}_{size}_longest_statement_s"] = row[
                            "longest_statement_s"
                        ]
                with fresh("refused") as url:
                    row = {"bench": "batch_bounds", "backend": backend, **refused(url)}
                    print(json.dumps(row), flush=True)
                    summary[f"{backend}_refused_ms"] = row["refused_ms"]
            except Exception as exc:  # a server that is not there: say so, keep the rest
                print(json.dumps({"bench": "batch_bounds", "backend": backend, "error": str(exc)}))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
