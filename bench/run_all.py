"""Run every bench script, each as a subprocess with a time budget, in under 10 minutes.

Order and budgets (seconds; a script also stops at the overall ``--budget``):

=================  ======================================================  ======
perf               perf.py --sizes 1000,10000,100000 (+ max_memories=100)     330
throughput         throughput.py (96 items, 300 ms latency)                   100
save_overhead      save_overhead.py --size 10000 --saves 500                   90
retrieval          retrieval.py (part A, LoCoMo dev; skipped without data)    120
judge_eval         judge_eval.py aimem/data/judge-dev.jsonl                    30
stress             stress.py (4 processes x 250 saves)                         60
fault_injection    fault_injection.py                                          90
=================  ======================================================  ======

Shortened for the budget: retrieval runs part A only (part B's 100k embedding fill
alone takes ~13 min here; run it by hand). Everything else runs with the arguments
above. Each script's JSON lines are printed with ``"script"`` added (judge_eval's text
report is turned into one JSON line), then one ``"run_all"`` line: per-script status
and seconds, the must-show checks gathered from perf and throughput, and the total
time. Each script gets its own TMPDIR, removed afterwards (a timed-out script's whole
process group is killed). Exits 1 if any script failed, timed out or printed nothing.

    python bench/run_all.py
    python bench/run_all.py --only perf,throughput
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
LOCOMO = ROOT.parent / "shared" / "data" / "locomo-dev"


@dataclass(frozen=True)
class Script:
    name: str
    args: tuple[str, ...]
    budget: float
    needs: Path | None = None  # skipped with a note when this is missing


SCRIPTS = (
    Script("perf", ("perf.py", "--sizes", "1000,10000,100000"), 330),
    Script("throughput", ("throughput.py",), 100),
    Script("save_overhead", ("save_overhead.py", "--size", "10000", "--saves", "500"), 90),
    Script("retrieval", ("retrieval.py", "--part", "A"), 120, needs=LOCOMO / "memories.jsonl"),
    Script(
        "judge_eval",
        ("judge_eval.py", str(BENCH.parent / "aimem" / "data" / "judge-dev.jsonl")),
        30,
    ),
    Script("stress", ("stress.py",), 60),
    Script("fault_injection", ("fault_injection.py",), 90),
)


def judge_eval_record(text: str) -> dict[str, Any] | None:
    """judge_eval.py prints a text report: its first file's figures as one record."""
    head = re.search(r"^(\S.*): n=(\d+) pairs=(\d+) accuracy=([\d.]+|nan)$", text, re.M)
    if head is None:
        return None
    record: dict[str, Any] = {
        "file": Path(head.group(1)).name,
        "n": int(head.group(2)),
        "pairs": int(head.group(3)),
        "accuracy": float(head.group(4)),
    }
    for label, key in (("by pair", "by_pair"), ("means", "means")):
        line = re.search(rf"^\s+{label}:\s+(.*)$", text, re.M)
        if line:
            pairs = re.findall(r"(\S+) ([\d.]+|nan)", line.group(1))
            record[key] = {k: float(v) for k, v in pairs}
    speed = re.search(r"speed:\s+([\d.]+) µs/item \((.*)\)", text)
    if speed:
        record["us_per_item"] = float(speed.group(1))
        record["judge"] = speed.group(2)
    return record


def git_state() -> str | None:
    """HEAD and whether the work tree differs from it: the code these figures are of."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "aimem"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.split("\n")
    except OSError:
        return None
    dirty = [line[3:] for line in changed if line.strip()]
    return f"{head} + uncommitted changes in {', '.join(dirty)}" if dirty else head or None


def run(script: Script, budget: float, tmp: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(status, JSON records) of one script run in its own process group.

    Its temporary files go under ``tmp`` (TMPDIR), removed afterwards even when the
    script had to be killed.
    """
    command = [sys.executable, str(BENCH / script.args[0]), *script.args[1:]]
    if script.name == "perf":  # let perf stop itself, reporting the size it reached
        command += ["--budget", str(max(budget - 15, 30))]
    began = time.perf_counter()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TMPDIR": str(tmp)}
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # so a timeout can end its workers too
    )
    try:
        stdout, stderr = process.communicate(timeout=budget)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        timed_out = True
    seconds = round(time.perf_counter() - began, 1)
    records = []
    for line in stdout.splitlines():
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                records.append(json.loads(line))
    if script.name == "judge_eval" and not records:
        parsed = judge_eval_record(stdout)
        records = [parsed] if parsed else []
    status: dict[str, Any] = {"seconds": seconds, "returncode": process.returncode}
    if timed_out:
        status["status"] = f"timeout after {budget:.0f} s"
    elif process.returncode != 0:
        status["status"] = "failed"
    elif not records:
        status["status"] = "no output"
    else:
        status["status"] = "ok"
    if status["status"] != "ok":
        status["stderr_tail"] = stderr[-800:]
    return status, records


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--budget", type=float, default=590.0, help="seconds for everything")
    parser.add_argument("--only", default=None, help="comma-separated script names")
    args = parser.parse_args()
    chosen = set(args.only.split(",")) if args.only else None
    started = time.perf_counter()
    statuses: dict[str, dict[str, Any]] = {}
    checks: dict[str, Any] = {}
    for script in SCRIPTS:
        if chosen is not None and script.name not in chosen:
            continue
        if script.needs is not None and not script.needs.exists():
            statuses[script.name] = {"status": "skipped", "note": f"no {script.needs}"}
            continue
        left = args.budget - (time.perf_counter() - started)
        if left < 5:
            statuses[script.name] = {"status": "not run: overall budget spent"}
            continue
        with tempfile.TemporaryDirectory(prefix=f"aimem-bench-{script.name}-") as tmp:
            status, records = run(script, min(script.budget, left), Path(tmp))
        statuses[script.name] = status
        for record in records:
            print(json.dumps({"script": script.name, **record}), flush=True)
            for name, value in (record.get("checks") or {}).items():
                checks[name] = value
    bad = [n for n, s in statuses.items() if s["status"] not in ("ok", "skipped")]
    tree = git_state()
    print(
        json.dumps(
            {
                "run_all": True,
                "total_seconds": round(time.perf_counter() - started, 1),
                "budget_seconds": args.budget,
                "git": tree,
                "loadavg_1m_at_end": round(os.getloadavg()[0], 2),
                "scripts": statuses,
                "checks": checks,
                "failed": bad,
                "shortened": "retrieval: part A only (part B's 100k embedding fill takes "
                "~13 min); the rest with the arguments in run_all.py's table",
            }
        ),
        flush=True,
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
