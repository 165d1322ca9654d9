"""Evaluate a judge's ordering on labelled judge data (the protocol of README-judge.md).

Usage::

    python bench/judge_eval.py [PATH ...] [--worst N] [--split]

Prints, per file: pairwise ordering accuracy pooled and per band pair, per-band mean
priority and mean microseconds per item for ``aimem.HeuristicJudge``. ``evaluate`` and
``load_rows`` are importable for notebooks and other judges.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PATH = ROOT / "bench" / "data" / "judge-dev.jsonl"
RANK = {"low": 0, "medium": 1, "high": 2}
BANDS = ("high", "medium", "low")
PAIRS = (("high", "medium"), ("high", "low"), ("medium", "low"))

Row = Mapping[str, Any]


@dataclass
class Evaluation:
    """Pairwise accuracy (ties count half) and band means for one set of priorities."""

    accuracy: float
    pairs: int
    by_pair: dict[str, float]
    means: dict[str, float]
    #: id -> fraction of its cross-band pairs the judge got wrong, worst first.
    errors: list[tuple[str, float]] = field(default_factory=list)


def load_rows(path: str | Path) -> list[dict[str, Any]]:
    """Read one JSONL file of ``{"id", "text", "band", ...}`` objects."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def evaluate(rows: Sequence[Row], priority: Mapping[str, float]) -> Evaluation:
    """Score ``priority`` ({id: float}) against the rows' bands, as README-judge.md defines.

    Works for any band sizes (the README's ``/ 50`` assumes the dev file's 50 per band).
    """
    hits: dict[str, float] = {f"{a}>{b}": 0.0 for a, b in PAIRS}
    counts: dict[str, int] = dict.fromkeys(hits, 0)
    wrong: dict[str, float] = {r["id"]: 0.0 for r in rows}
    seen: dict[str, int] = {r["id"]: 0 for r in rows}
    for a, b in itertools.combinations(rows, 2):
        if a["band"] == b["band"]:
            continue
        hi, lo = (a, b) if RANK[a["band"]] > RANK[b["band"]] else (b, a)
        p_hi, p_lo = priority[hi["id"]], priority[lo["id"]]
        score = 1.0 if p_hi > p_lo else 0.5 if p_hi == p_lo else 0.0
        key = f"{hi['band']}>{lo['band']}"
        hits[key] += score
        counts[key] += 1
        for item in (hi, lo):
            wrong[item["id"]] += 1.0 - score
            seen[item["id"]] += 1
    total = sum(counts.values())
    means = {}
    for band in BANDS:
        values = [priority[r["id"]] for r in rows if r["band"] == band]
        means[band] = sum(values) / len(values) if values else float("nan")
    errors = sorted(
        ((i, wrong[i] / seen[i]) for i in wrong if seen[i]), key=lambda kv: (-kv[1], kv[0])
    )
    return Evaluation(
        accuracy=sum(hits.values()) / total if total else float("nan"),
        pairs=total,
        by_pair={k: hits[k] / counts[k] if counts[k] else float("nan") for k in hits},
        means=means,
        errors=errors,
    )


def time_judge(
    score: Callable[[str], float], texts: Iterable[str], repeats: int = 5
) -> tuple[dict[str, float], float]:
    """Run ``score`` over ``texts``; return {text: priority} and microseconds per item.

    The time is the best of ``repeats`` passes, as ``timeit`` advises: on a shared
    machine the slower passes measure other processes, not the judge.
    """
    texts = list(texts)
    out = {t: score(t) for t in texts}  # warm-up, and the values
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for t in texts:
            score(t)
        best = min(best, time.perf_counter() - start)
    return out, best / max(len(texts), 1) * 1e6


def _report(name: str, rows: Sequence[Row], priority: Mapping[str, float], worst: int) -> None:
    ev = evaluate(rows, priority)
    pair_text = "  ".join(f"{k} {v:.3f}" for k, v in ev.by_pair.items())
    mean_text = "  ".join(f"{k} {v:.3f}" for k, v in ev.means.items())
    print(f"{name}: n={len(rows)} pairs={ev.pairs} accuracy={ev.accuracy:.3f}")
    print(f"  by pair: {pair_text}")
    print(f"  means:   {mean_text}")
    if worst:
        by_id = {r["id"]: r for r in rows}
        for item_id, frac in ev.errors[:worst]:
            r = by_id[item_id]
            print(
                f"  {frac:.2f} {item_id} [{r['band']}] p={priority[item_id]:.3f} {r['text'][:90]}"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[DEFAULT_PATH])
    parser.add_argument("--worst", type=int, default=0, help="list the N worst-ranked items")
    parser.add_argument("--split", action="store_true", help="also report odd/even id halves")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from aimem.judges.heuristic import HeuristicJudge

    judge = HeuristicJudge()
    for path in args.paths:
        rows = load_rows(path)
        by_text, micros = time_judge(
            lambda t: judge.score(t).priority_score, (r["text"] for r in rows)
        )
        priority = {r["id"]: by_text[r["text"]] for r in rows}
        _report(str(path), rows, priority, args.worst)
        print(f"  speed:   {micros:.1f} µs/item (HeuristicJudge heuristic-v{judge.version})")
        if args.split:
            for parity, label in ((1, "odd ids"), (0, "even ids")):
                half = [r for r in rows if int(str(r["id"]).rsplit("-", 1)[-1]) % 2 == parity]
                _report(f"  {label}", half, priority, 0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
