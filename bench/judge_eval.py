"""Evaluate a judge's ordering on labelled judge data (the protocol of README-judge.md).

Usage::

    python bench/judge_eval.py [PATH ...] [--worst N] [--split]

Prints, per file: pairwise ordering accuracy pooled and per band pair, per-band mean
priority and mean microseconds per item for ``aimem.HeuristicJudge``. The measure itself
is library code, ``aimem.judges.evaluation``; the default file is the dev set it ships.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from aimem.judges.evaluation import evaluate, load_rows, time_judge  # noqa: E402

DEFAULT_PATH = ROOT / "aimem" / "data" / "judge-dev.jsonl"
Row = Mapping[str, Any]


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
