"""Measure the offline supersession detector on knowledge-update data (README-updates.md).

Usage::

    python bench/supersession_rules.py [PATH] [--show] [--precise]

For each item, ``find_superseded(new, [old, *distractors])`` is asked once. An update
should name index 0 (recall), a control must not (false positive), and no item may name
a distractor (collateral: retiring a memory that still holds, the worse error). Prints
recall overall, per language, inside requests or not (``in_request``, where the data has
it) and per category, the control false-positive rate, precision (right retirements over
all retirements, wrong ones being a control's old memory or any distractor), the
collateral rate per item and per pair, and the time per call. ``--show`` lists misses;
``--precise`` keeps only the rules that may amend a small model's answer.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from aimem.judges.heuristic.supersession import find_superseded, read  # noqa: E402

DEFAULT_PATH = Path("../shared/data/updates-dev.jsonl")


def _resolve(path: Path) -> Path:
    """The path as given, else relative to the repository root."""
    return path if path.exists() or path.is_absolute() else ROOT / path


def _rate(hits: int, total: int) -> str:
    return f"{hits / total:.3f} ({hits}/{total})" if total else "n/a"


def main(argv: list[str] | None = None) -> int:
    """Run the bench; the exit code is 0 (figures are for reading, not gating)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--show", action="store_true", help="list misses and false positives")
    parser.add_argument(
        "--precise",
        action="store_true",
        help="only the precise rules (what may amend a small model's answer)",
    )
    args = parser.parse_args(argv)
    path = _resolve(args.path)
    items: list[dict[str, Any]] = [
        json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()
    ]
    recall: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    fp = [0, 0]
    collateral_items = collateral_pairs = pairs = 0
    elapsed = 0.0
    for item in items:
        related = [item["old"], *item["distractors"]]
        read.cache_clear()  # time the uncached work a store would do
        start = time.perf_counter()
        found = find_superseded(item["new"], related, precise=args.precise)
        elapsed += time.perf_counter() - start
        hit = any(i == 0 for i, _ in found)
        bad = [i for i, _ in found if i > 0]
        pairs += len(item["distractors"])
        collateral_pairs += len(bad)
        collateral_items += bool(bad)
        if item["kind"] == "update":
            keys = ["all", item["lang"], item["category"]]
            if "in_request" in item:
                keys.append("in request" if item["in_request"] else "plain")
            for key in keys:
                recall[key][0] += hit
                recall[key][1] += 1
        else:
            fp[0] += hit
            fp[1] += 1
        if args.show and (hit != (item["kind"] == "update") or bad):
            label = (
                "MISS"
                if item["kind"] == "update" and not hit
                else "FP"
                if hit and item["kind"] == "control"
                else "COLL"
            )
            if label == "COLL" or hit != (item["kind"] == "update"):
                print(f"{label} {item['id']} {item['kind']}/{item['category']}: {found}")
                print(f"    old: {item['old']}\n    new: {item['new']}")
                for i in bad:
                    print(f"    distractor {i}: {related[i]}")
    print(f"{path.name}: {len(items)} items" + (" (precise rules only)" if args.precise else ""))
    for key in ("all", "en", "ja", "in request", "plain"):
        if key in recall:
            print(f"  update recall {key:>3}: {_rate(*recall[key])}")
    cats = sorted(k for k in recall if k not in ("all", "en", "ja", "in request", "plain"))
    print("  per category: " + "  ".join(f"{c} {_rate(*recall[c])}" for c in cats))
    print(f"  control false positives: {_rate(*fp)}")
    retired = recall["all"][0] + fp[0] + collateral_pairs
    print(
        f"  precision (right retirements / all): {_rate(recall['all'][0], retired)}"
        " (wrong: a control's old memory or any distractor retired)"
    )
    print(
        f"  distractor collateral: items {_rate(collateral_items, len(items))}, "
        f"pairs {_rate(collateral_pairs, pairs)}"
    )
    print(
        f"  time per call: {elapsed / max(1, len(items)) * 1e3:.3f} ms "
        f"(mean over {len(items)} calls, {pairs / max(1, len(items)) + 1:.1f} related each)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
