"""Reliability figures: many processes saving into one SQLite file, and SIGKILL mid-burst.

Default mode: ``--processes`` workers each make ``--saves`` saves into one fresh file with
``max_memories=--max-memories`` (``min_priority_score=0``, judge ``FixedJudge`` with
varied ``[score=...]`` markers), all starting at once. Each worker fsyncs the id of every
save that returned to its acknowledgement file; an observer thread samples the capped
count through a read-only connection of its own during the run, and the history log is
replayed for the count at every commit. Prints one JSON line: processes,
saves_per_process, acknowledged, present, lost, total_rows, final_active, cap,
max_observed_active, observer_samples, history_peak_active, errors, exit_codes, wall_s,
saves_per_s.

``--sigkill N``: N rounds on one file; each SIGKILLs a saving worker after a random
number of acknowledged saves while a companion worker keeps saving, then checks the
file. Prints one JSON line with each round's acknowledged/present/lost/integrity.

Runs offline in a temporary directory (``--workdir`` to keep the files):

    python bench/stress.py --processes 4 --saves 250 --max-memories 100
    python bench/stress.py --sigkill 5
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import _workers  # the worker entry points live beside the tests


def stress(workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    result = _workers.run_stress(
        workdir,
        processes=args.processes,
        saves=args.saves,
        max_memories=args.max_memories,
        timeout=args.timeout,
    )
    return {"mode": "stress", **result.figures()}


def sigkill(workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    db = workdir / "kill.db"
    _workers.create_database(f"sqlite:///{db}", args.max_memories)
    rounds = []
    for round_no in range(args.sigkill):
        kill_after = rng.randint(20, 200)
        outcome = _workers.run_sigkill_round(
            workdir,
            db,
            round_no,
            kill_after,
            max_memories=args.max_memories,
            seed=rng.randrange(2**32),
            timeout=args.timeout,
        )
        rounds.append(outcome.figures())
    return {
        "mode": "sigkill",
        "rounds": rounds,
        "acknowledged": sum(r["acknowledged"] for r in rounds),
        "lost": sum(r["lost"] + r["companion_lost"] for r in rounds),
        "integrity_ok": all(r["integrity"] == "ok" for r in rounds),
        "final_integrity": _workers.integrity(db),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--saves", type=int, default=250, help="saves per process")
    parser.add_argument("--max-memories", type=int, default=100)
    parser.add_argument("--sigkill", type=int, metavar="N", help="run N SIGKILL rounds instead")
    parser.add_argument("--seed", type=int, default=0, help="kill points of --sigkill")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per phase")
    parser.add_argument("--workdir", type=Path, help="keep the files here (default: temp)")
    args = parser.parse_args()
    run = sigkill if args.sigkill else stress
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        figures = run(args.workdir, args)
    else:
        with tempfile.TemporaryDirectory(prefix="aimem-stress-") as tmp:
            figures = run(Path(tmp), args)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
