"""How long the ``aimem`` command takes to start: ``--help``, ``--version`` and ``list``.

Each command runs N times in a fresh subprocess (the installed ``aimem`` script of this
venv, so Python's own start-up is included, as a user feels it) against a small SQLite
store of a few memories made once with the heuristic judge. A last run of each command
under ``python -c`` records which heavy modules the command imported.

Prints one JSON line per command: median, min and max wall seconds, the runs, and the
heavy modules imported (openai, httpx, sentence_transformers, torch, numpy, sqlalchemy,
mcp, rich); then a summary line with the issue's check (every median under 0.3 s).

    .venv/bin/python bench/cli_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("openai", "httpx", "sentence_transformers", "torch", "numpy", "sqlalchemy", "mcp", "rich")
AIMEM = str(Path(sys.executable).with_name("aimem"))
COMMANDS = (["--help"], ["--version"], ["list"])
BUDGET_S = 0.3

# Runs the CLI in-process, then prints the heavy modules that got imported.
_PROBE = """
import contextlib, io, json, sys
from aimem.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
heavy = %r
print(json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""


def _env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    env.update(AIMEM_DATABASE_URL=url, COLUMNS="80")
    return env


def _fill(url: str) -> None:
    import aimem

    with aimem.MemoryStore(url, judge=aimem.HeuristicJudge()) as store:
        for text in (
            "I'm allergic to penicillin",
            "User prefers Rust for systems work",
            "The user's daughter is called Mia",
            "Meeting with the landlord on Friday at 10",
        ):
            store.save(text)


def _time(args: list[str], env: dict[str, str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([AIMEM, *args], env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return times


def _imported(args: list[str], env: dict[str, str]) -> list[str]:
    probe = _PROBE % (HEAVY,)
    done = subprocess.run(
        [sys.executable, "-c", probe, *args], env=env, capture_output=True, text=True, check=True
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    """Time each command and print the JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per command (default 7)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aimem-startup-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'small.db'}"
        _fill(url)
        env = _env(url)
        medians = {}
        for args in COMMANDS:
            _time(args, env, 1)  # warm the page cache and .pyc files
            times = _time(args, env, opts.runs)
            name = " ".join(["aimem", *args])
            medians[name] = statistics.median(times)
            print(
                json.dumps(
                    {
                        "command": name,
                        "median_s": round(medians[name], 3),
                        "min_s": round(min(times), 3),
                        "max_s": round(max(times), 3),
                        "runs": opts.runs,
                        "heavy_imported": _imported(args, env),
                    }
                )
            )
        print(
            json.dumps(
                {
                    "summary": True,
                    "budget_s": BUDGET_S,
                    "all_under_budget": all(m < BUDGET_S for m in medians.values()),
                    "python": sys.version.split()[0],
                }
            )
        )


if __name__ == "__main__":
    main()
