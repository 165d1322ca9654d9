"""What ``aimem mcp`` keeps for its cursors: memory after many listings of a large namespace.

Fills a fresh SQLite file with N memories (``save_many`` in batches of 200, the
instant ``FixedJudge``, ``related_limit=0``; not measured), builds the server in-process
(``build_server``, default budget) and calls ``list_memories`` L times through the SDK's
in-process client, keeping each first page's cursor alive as an agent that never
finished its listings would. Then follows one cursor to its second page. Uses only what
the oldest server had, so the same script measures an older checkout.

Prints one JSON line: memories, listings, the process's RSS (MB, from /proc) before the
listings and after them (garbage collected, freed pages handed back with glibc's
``malloc_trim``), its peak RSS, seconds per first page, and seconds of the followed
page. ``--trace`` adds what Python still holds after the listings by ``tracemalloc``
(``traced_mb_kept``); it makes every call several times slower.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import json
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path

from mcp import Client

import aimem
from aimem.mcp.server import build_server
from aimem.testing import FixedJudge

#: save_many batch while filling: each item is checked against the batch before it.
CHUNK = 200


def rss_mb() -> float:
    """The process's resident memory now, not its peak: garbage and freed pages returned."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: malloc keeps its pages
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return round(pages * resource.getpagesize() / 2**20, 1)


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def fill(url: str, size: int) -> None:
    """N distinct memories, priorities spread so the priority order is a real one."""
    judge = FixedJudge(scorer=lambda content: 0.3 + (hash(content) % 700) / 1000)
    with aimem.MemoryStore(url, judge=judge, max_memories=size, related_limit=0) as store:
        for start in range(0, size, CHUNK):
            store.save_many(
                [
                    f"Note {n}: the user mentioned item {n} while talking about the week"
                    for n in range(start, min(size, start + CHUNK))
                ]
            )


async def measure(url: str, listings: int, trace: bool) -> dict[str, float | int]:
    async with aimem.AsyncMemoryStore(url, judge=FixedJudge()) as store:
        server = build_server(store)
        async with Client(server) as client:
            await client.call_tool("memory_stats", {})  # warm: imports, caches, the session
            before = rss_mb()
            if trace:
                tracemalloc.start()
            cursors = []
            started = time.perf_counter()
            for _ in range(listings):
                page = await client.call_tool("list_memories", {})
                assert not page.is_error, page.content
                cursors.append((page.structured_content or {})["next_cursor"])
            first_s = (time.perf_counter() - started) / listings
            after = rss_mb()
            traced = tracemalloc.get_traced_memory()[0] if trace else None
            tracemalloc.stop()
            started = time.perf_counter()
            more = await client.call_tool("list_memories", {"cursor": cursors[-1]})
            assert not more.is_error, more.content
            next_s = time.perf_counter() - started
    record: dict[str, float | int] = (
        {} if traced is None else {"traced_mb_kept": round(traced / 2**20, 1)}
    )
    return record | {
        "rss_mb_before_listings": before,
        "rss_mb_after_listings": after,
        "kept_mb": round(after - before, 1),
        "peak_rss_mb": peak_rss_mb(),
        "seconds_per_first_page": round(first_s, 3),
        "seconds_next_page": round(next_s, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=20000)
    parser.add_argument("--listings", type=int, default=64)
    parser.add_argument("--trace", action="store_true", help="also measure with tracemalloc")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'cursors.db'}"
        started = time.perf_counter()
        fill(url, args.memories)
        record: dict[str, object] = {
            "memories": args.memories,
            "listings": args.listings,
            "fill_seconds": round(time.perf_counter() - started, 1),
        }
        record |= asyncio.run(measure(url, args.listings, args.trace))
    print(json.dumps(record))


if __name__ == "__main__":
    main()
