"""Search p50 of this checkout against another, in alternating runs (compare within one run).

The read path (relevance, whose fact, siblings) runs in Python for every hit; this measures
what it costs per search. Each run is a fresh process: it opens (or first fills) a SQLite
store of N LoCoMo turns made unique with a counter (``FixedJudge``, ``HashEmbedder(dim=384)``,
everything active), warms up with 20 questions, then times 200 LoCoMo questions per mode
(keyword, hybrid; limit 10) and prints the wall p50 and the process CPU per search.
``--baseline PATH`` names another checkout of aimem (e.g. ``git worktree add /tmp/base
2ebe67a``); the two alternate ``--rounds`` times per size, each with its own store files,
since their schemas may differ.

Usage: python bench/search_cost.py [--sizes 1000,10000] [--rounds 3] [--baseline PATH]
       [--data ../shared/data/locomo-dev]
Prints one JSON line per run on stdout and the medians per checkout and size on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
DATA = HERE / ".." / "shared" / "data" / "locomo-dev"


def one_run(size: int, store_dir: Path, data: Path) -> dict:
    """Fill (once) and time searches with the aimem found first on ``sys.path``."""
    import aimem
    from aimem.testing import FixedJudge, HashEmbedder

    lines = (data / "memories.jsonl").read_text(encoding="utf-8").splitlines()
    turns = [json.loads(line)["text"] for line in lines if line.strip()]
    lines = (data / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    random.Random(0).shuffle(questions)
    path = store_dir / f"search-cost-{size}.db"
    fresh = not path.exists()
    with aimem.MemoryStore(
        f"sqlite:///{path}",
        judge=FixedJudge(),
        embedder=HashEmbedder(dim=384),
        max_memories=size + 10,
        related_limit=0,
    ) as store:
        if fresh:
            texts = [f"{turns[i % len(turns)]} #{i}" for i in range(size)]
            for start in range(0, size, 2000):
                store.save_many(texts[start : start + 2000])
        out: dict = {"size": size, "aimem": str(Path(aimem.__file__).parents[1])}
        for mode in ("keyword", "hybrid"):
            for q in questions[:20]:
                store.search(q, mode=mode, limit=10)
            walls = []
            cpu = time.process_time()
            for q in questions[20:220]:
                t = time.perf_counter()
                store.search(q, mode=mode, limit=10)
                walls.append(time.perf_counter() - t)
            out[f"{mode}_p50_ms"] = round(statistics.median(walls) * 1000, 2)
            out[f"{mode}_cpu_ms"] = round((time.process_time() - cpu) / len(walls) * 1000, 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="another aimem checkout to alternate with")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--one", nargs=2, metavar=("SIZE", "DIR"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_run(int(args.one[0]), Path(args.one[1]), args.data)))
        return
    checkouts = [HERE] + ([args.baseline.resolve()] if args.baseline else [])
    results: dict[tuple[str, int], list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            for _ in range(args.rounds):
                for n, checkout in enumerate(checkouts):
                    store_dir = Path(tmp) / str(n)
                    store_dir.mkdir(exist_ok=True)
                    env = {**os.environ, "PYTHONPATH": str(checkout)}
                    cmd = [sys.executable, __file__, "--data", str(args.data), "--one"]
                    line = subprocess.run(
                        [*cmd, str(size), str(store_dir)],
                        env=env,
                        cwd=checkout,
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout.strip()
                    print(line, flush=True)
                    results.setdefault((str(checkout), size), []).append(json.loads(line))
    for (checkout, size), runs in results.items():
        medians = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k.endswith("_ms")}
        print(f"{checkout} {size}: {medians}", file=sys.stderr)


if __name__ == "__main__":
    main()
