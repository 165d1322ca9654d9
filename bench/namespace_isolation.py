"""What another namespace's data does to this namespace's keyword results and their cost.

Namespace ``alice`` holds ``--own`` memories about a harbour; its keyword search and its
related lookup (the one every save makes before judging) are timed. Then ``bob`` saves
``--flood`` memories using the same words, and the same calls are timed again. Results
must be identical and the cost should not move beyond noise (compare within one run).

    python bench/namespace_isolation.py --own 50 --flood 10000

Prints one JSON line: p50/p95 in ms before and after, the ratios, and whether alice's
results were the same. Run it with PYTHONPATH pointing at another checkout to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import aimem
from aimem.testing import FixedJudge


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def measure(store: aimem.MemoryStore, rounds: int) -> tuple[dict[str, float], list[object]]:
    """Time keyword searches and related lookups; return timings and what they found."""
    retriever = store._async._retriever  # the lookup a save makes before judging
    search_ms: list[float] = []
    related_ms: list[float] = []
    found: list[object] = []
    for i in range(rounds):
        started = time.perf_counter()
        hits = store.search("harbor boat sails", limit=10, mode="keyword")
        search_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        related = asyncio.run(retriever.related(f"Repainted the boat in the harbor {i}", None))
        related_ms.append((time.perf_counter() - started) * 1000)
        if i == 0:
            found = [[h.memory.id for h in hits], [m.id for m in related]]
    return {
        "search_p50_ms": _p(search_ms, 0.5),
        "search_p95_ms": _p(search_ms, 0.95),
        "related_p50_ms": _p(related_ms, 0.5),
        "related_p95_ms": _p(related_ms, 0.95),
        "search_mean_ms": round(statistics.fmean(search_ms), 3),
    }, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--own", type=int, default=50)
    parser.add_argument("--flood", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aimem-ns-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'shared.db'}"
        judge = FixedJudge(scorer=lambda _: 0.6)
        cap = {"max_memories": args.own + args.flood + 10}
        with aimem.MemoryStore(url, judge=judge, namespace="alice", **cap) as alice:
            alice.save_many([f"harbor note {i}: the boat and its sails" for i in range(args.own)])
            before, found_before = measure(alice, args.rounds)
            with aimem.MemoryStore(url, judge=judge, namespace="bob", **cap) as bob:
                texts = [f"harbor boat sails, bob's note {i}" for i in range(args.flood)]
                for start in range(0, len(texts), 2000):
                    bob.save_many(texts[start : start + 2000])
            after, found_after = measure(alice, args.rounds)
    print(
        json.dumps(
            {
                "bench": "namespace_isolation",
                "aimem": aimem.__file__,
                "own": args.own,
                "flood": args.flood,
                "before": before,
                "after": after,
                "search_p50_ratio": round(after["search_p50_ms"] / before["search_p50_ms"], 2),
                "related_p50_ratio": round(after["related_p50_ms"] / before["related_p50_ms"], 2),
                "same_results": found_before == found_after,
                "related_found_after": len(found_after[1]) if found_after else 0,
            }
        )
    )


if __name__ == "__main__":
    main()
