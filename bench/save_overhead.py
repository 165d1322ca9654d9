"""Library overhead per save with an instant judge, at a given store size.

Fills a fresh SQLite file with ``--size`` memories, then times ``--saves`` single
saves through the sync API. The judge answers instantly, so the time is aimem's own:
validation, duplicate check, related lookup, the write transaction and the capacity
check. By default ``max_memories`` equals the size, so all memories stay active and
every measured save also archives one; ``--max-memories 100`` (aimem's default) keeps
100 active and the rest archived, the usual shape of a long-lived store.

Texts: dialog turns from the LoCoMo dev split when ``../shared/data/locomo-dev`` (or
``--texts FILE.jsonl`` with a ``text`` field) is there, each suffixed with a counter so
every memory is distinct; otherwise synthetic sentences with Zipf-distributed words.
Prints one JSON line.

    python bench/save_overhead.py --size 10000 --saves 500
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import aimem
from aimem.testing import FixedJudge

FUNCTION_WORDS = "i my the a to and of in on at is was for with we our it".split()
SYLLABLES = "ka ri mo ten sa lu vor el an dis pe tro mi nau gel ost bri fa yo zen".split()


class TextMaker:
    """Sentences of 8-16 words, about a third function words, content words Zipf-distributed."""

    def __init__(self, rng: random.Random, vocabulary: int = 5_000) -> None:
        self.rng = rng
        words: set[str] = set()
        while len(words) < vocabulary:
            words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
        self.words = sorted(words)
        self.weights = [1.0 / (rank + 1) for rank in range(len(self.words))]

    def __call__(self, i: int) -> str:
        content = self.rng.choices(self.words, self.weights, k=self.rng.randint(8, 16))
        out = [w if self.rng.random() > 0.35 else self.rng.choice(FUNCTION_WORDS) for w in content]
        return f"{i}: " + " ".join(out)


LOCOMO = Path(__file__).resolve().parents[2] / "shared/data/locomo-dev/memories.jsonl"


def _text_source(path: Path | None, rng: random.Random) -> tuple[str, Callable[[int], str]]:
    source = path or (LOCOMO if LOCOMO.is_file() else None)
    if source is None:
        return "synthetic Zipf sentences", TextMaker(rng)
    turns = [json.loads(line)["text"] for line in source.open(encoding="utf-8")]
    return f"{source.name} turns", lambda i: f"{rng.choice(turns)} #{i}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--saves", type=int, default=500)
    parser.add_argument("--max-memories", type=int, default=None, help="default: --size")
    parser.add_argument("--texts", type=Path, default=None, help="JSONL with a text field")
    parser.add_argument("--batch", type=int, default=500, help="save_many batch used to fill")
    args = parser.parse_args()
    rng = random.Random(7)
    source, text = _text_source(args.texts, rng)
    judge = FixedJudge(scorer=lambda _content: round(rng.uniform(0.3, 1.0), 2))
    cap = args.max_memories or args.size
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        with aimem.MemoryStore(url, judge=judge, max_memories=cap) as store:
            fill_start = time.perf_counter()
            for start in range(0, args.size, args.batch):
                store.save_many([text(i) for i in range(start, min(args.size, start + args.batch))])
            fill_s = time.perf_counter() - fill_start
            timings = []
            for i in range(args.saves):
                content = text(args.size + i)
                began = time.perf_counter()
                store.save(content)
                timings.append((time.perf_counter() - began) * 1000)
            stats = store.stats()
    timings.sort()
    print(
        json.dumps(
            {
                "bench": "save_overhead",
                "stored": args.size + args.saves,
                "max_memories": cap,
                "saves": args.saves,
                "judge": "instant (aimem.testing.FixedJudge)",
                "texts": source,
                "overhead_ms_p50": round(statistics.median(timings), 3),
                "overhead_ms_p95": round(timings[int(0.95 * (len(timings) - 1))], 3),
                "fill_seconds": round(fill_s, 1),
                "active_after": stats.count,
                "archived_after": stats.archived,
            }
        )
    )


if __name__ == "__main__":
    main()
