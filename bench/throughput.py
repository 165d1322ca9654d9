"""save_many throughput against a slow LLM: items per second vs judge concurrency and batch size.

One ``save_many`` of ``--items`` new memories per configuration, each into a fresh
SQLite file (``max_memories`` above the item count, so nothing is archived), judged by
``OpenAIJudge`` against ``harness.CountingStub`` on 127.0.0.1 answering every request
after ``--latency`` seconds (300 ms by default), embedder ``HashEmbedder(dim=384)``
in-process. Configurations: ``judge_concurrency`` 1, 4, 16, 32 with
``judge_batch_size=1`` (one LLM call per item), then the same with
``judge_batch_size=8``; a batch size the installed aimem does not know is reported as
``"batch": "unsupported"``. The speedups are against concurrency 1 with batch size 1,
the sequential rate. ``max_in_flight`` is the most requests the stub served at once.

Prints one JSON line:

    python bench/throughput.py --items 96 --latency 0.3
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import CountingStub, emit, text_source

import aimem
from aimem.testing import HashEmbedder

CONCURRENCY = (1, 4, 16, 32)


def run(
    stub: CountingStub, workdir: Path, texts: list[str], concurrency: int, batch_size: int
) -> dict[str, Any]:
    """One save_many of ``texts``; figures, or why it could not run."""
    url = f"sqlite:///{workdir / f'tp-c{concurrency}-b{batch_size}.db'}"
    judge = aimem.OpenAIJudge(base_url=stub.base_url, api_key="sk-bench", model="bench")
    settings: dict[str, Any] = {"judge_concurrency": concurrency}
    if batch_size != 1 or "judge_batch_size" in aimem.Settings.model_fields:
        settings["judge_batch_size"] = batch_size
    try:
        store = aimem.MemoryStore(
            url,
            judge=judge,
            embedder=HashEmbedder(dim=384),
            max_memories=len(texts) + 100,
            **settings,
        )
    except aimem.ValidationError as exc:
        return {"batch": "unsupported", "reason": str(exc)[:200]}
    with store:
        stub.reset_peak()
        before = stub.counts()
        began = time.perf_counter()
        memories = store.save_many(texts)
        wall = time.perf_counter() - began
        seen = stub.counts() - before
    return {
        "items": len(memories),
        "seconds": round(wall, 3),
        "items_per_s": round(len(memories) / wall, 2),
        "llm_calls": seen.chat,
        "max_in_flight": seen.max_in_flight,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=96, help="memories per save_many")
    parser.add_argument("--latency", type=float, default=0.3, help="stub seconds per reply")
    parser.add_argument(
        "--concurrency",
        default=",".join(map(str, CONCURRENCY)),
        help="comma-separated judge_concurrency values",
    )
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",") if c.strip()]
    source, text = text_source()
    report: dict[str, Any] = {
        "bench": "throughput",
        "items": args.items,
        "latency_s": args.latency,
        "texts": source,
        "embedder": "HashEmbedder(dim=384) in-process",
    }
    runs: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()
    next_text = 0
    with (
        tempfile.TemporaryDirectory(prefix="aimem-tp-") as tmp,
        CountingStub(latency=args.latency, embedding_dim=384) as stub,
    ):
        report["tokens"] = stub.tokens
        report["stub_connections"] = stub.connections
        for batch_size in (1, 8):
            for concurrency in levels:
                texts = [text(next_text + i) for i in range(args.items)]
                next_text += args.items
                result = run(stub, Path(tmp), texts, concurrency, batch_size)
                runs[f"bs{batch_size}_c{concurrency}"] = result
                if result.get("batch") == "unsupported":
                    break  # no point asking again at another concurrency
    base = runs.get(f"bs1_c{levels[0]}", {}).get("items_per_s")
    for result in runs.values():
        if base and "items_per_s" in result:
            result["speedup_vs_sequential"] = round(result["items_per_s"] / base, 2)
    report["runs"] = runs
    c16 = runs.get("bs1_c16", {}).get("speedup_vs_sequential")
    bs8 = runs.get("bs8_c1", {})
    report["checks"] = {
        "save_many_c16_speedup_ge_12": c16 >= 12 if c16 is not None else None,
        "batch8_supported": bs8.get("batch") != "unsupported" if bs8 else None,
    }
    report["seconds"] = round(time.perf_counter() - started, 1)
    emit(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
