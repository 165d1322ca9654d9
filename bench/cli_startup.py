"""What the ``aimem`` command costs to start: wall and CPU time per command, and why.

Each command runs N times in a fresh subprocess (the installed ``aimem`` script of this
venv, so Python's own start-up is included, as a user feels it) against a temporary
SQLite store of ``--memories`` memories (the judge dev set, saved with the heuristic
judge, all active). Wall time is ``perf_counter`` around the process; CPU time is the
child's user + system time from ``wait4``. Python's bytecode cache is on, in a temporary
``PYTHONPYCACHEPREFIX`` warmed by one unmeasured run, as a pip-installed aimem has it;
``--as-is`` keeps the environment's own setting instead (``PYTHONDONTWRITEBYTECODE=1``
recompiles aimem's modules on every run of an editable install).

Prints JSON lines:

* one per command (``aimem --version``, ``aimem list``, ``aimem search x``): median,
  min and max wall seconds, median CPU seconds, peak RSS, and the heavy modules it
  imported;
* ``imports``: what ``aimem list`` spends importing, by package (``-X importtime`` self
  times summed, the median of 3 runs), the 10 largest and the total;
* ``aimem shell``: one process reading ``search x --json`` lines: the first answer, from
  the process's start (as a one-shot ``aimem search x`` is timed), and each later one,
  wall and CPU (median over ``--runs`` shells of 1 + ``--shell-searches`` searches);
* a summary against the goal (``aimem list`` under 0.5 s) and the target (0.3 s).

``--embedder local`` measures the same with ``AIMEM_EMBEDDER=local`` (all-MiniLM-L6-v2
through sentence-transformers and torch; the store is filled with its vectors), where
each one-shot ``aimem search`` loads torch and the model and ``aimem shell`` pays that
once. ``--checkout PATH`` runs another checkout's code (``python -c`` with PYTHONPATH)
against the same store, to compare before and after.

    .venv/bin/python bench/cli_startup.py [--runs 7] [--memories 200]
    HF_HUB_OFFLINE=1 .venv/bin/python bench/cli_startup.py --embedder local --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HEAVY = ("openai", "httpx", "sentence_transformers", "torch", "numpy", "sqlalchemy", "mcp", "rich")
AIMEM = str(Path(sys.executable).with_name("aimem"))
COMMANDS = (["--version"], ["list"], ["search", "x"])
GOAL_S = 0.5
TARGET_S = 0.3
_MAIN = "import sys; from aimem.cli import main; sys.exit(main())"

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
# The CLI as its console script runs it, printing its peak RSS last, on stderr. Read from
# /proc (VmHWM, reset by exec): rusage's ru_maxrss keeps the forked parent's size.
_PEAK = (
    "import atexit, sys\n"
    "hwm = lambda: open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
    "atexit.register(lambda: sys.stderr.write(f'\\npeak_kb {hwm()}\\n'))\n"
    "from aimem.cli import main\n"
    "sys.exit(main())\n"
)
_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|(\s*)(\S+)")


class Runner:
    """How to start ``aimem`` (this venv's script, or another checkout) and its env."""

    def __init__(self, url: str, opts: argparse.Namespace, cache: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
        env.update(AIMEM_DATABASE_URL=url, AIMEM_MAX_MEMORIES="100000", COLUMNS="80")
        if opts.embedder:
            env.update(AIMEM_EMBEDDER=opts.embedder, HF_HUB_OFFLINE="1")
        if not opts.as_is:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(cache)
        self.checkout = opts.checkout
        if opts.checkout:
            env["PYTHONPATH"] = str(Path(opts.checkout).resolve())
        self.env = env

    def argv(self, args: list[str]) -> list[str]:
        if self.checkout:  # -P: the checkout on PYTHONPATH, not the current directory
            return [sys.executable, "-P", "-c", _MAIN, *args]
        return [AIMEM, *args]

    def once(self, args: list[str]) -> tuple[float, float]:
        """Wall and CPU seconds of one run (which must succeed)."""
        start = time.perf_counter()
        proc = subprocess.Popen(
            self.argv(args),
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"aimem {' '.join(args)} failed: {err.decode(errors='replace')}")
        return wall, usage.ru_utime + usage.ru_stime

    def times(self, args: list[str], runs: int) -> dict[str, float]:
        self.once(args)  # warm the page cache and the bytecode cache
        walls, cpus = zip(*(self.once(args) for _ in range(runs)), strict=True)
        return {
            "median_s": round(statistics.median(walls), 3),
            "min_s": round(min(walls), 3),
            "max_s": round(max(walls), 3),
            "cpu_median_s": round(statistics.median(cpus), 3),
        }

    def python(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-P", *args], env=self.env, capture_output=True, text=True, check=True
        )


def _fill(url: str, n: int, embedder: str | None) -> None:
    import aimem
    from aimem.judges.evaluation import dev_set

    texts = [item["text"] for item in dev_set()]
    contents = [texts[i % len(texts)] + ("" if i < len(texts) else f" ({i})") for i in range(n)]
    with aimem.MemoryStore(
        url, judge=aimem.HeuristicJudge(), embedder=embedder, max_memories=100_000
    ) as store:
        for start in range(0, n, 100):
            store.save_many(contents[start : start + 100])


def _imports(runner: Runner, runs: int = 3) -> dict[str, object]:
    """Self import time of ``aimem list`` by package (aimem by subpackage), median of runs."""
    per_run: list[Counter[str]] = []
    for _ in range(runs):
        err = runner.python("-X", "importtime", "-c", _MAIN.replace("main()", "main(['list'])"))
        costs: Counter[str] = Counter()
        for match in _IMPORT_LINE.finditer(err.stderr):
            name = match.group(3)
            parts = name.split(".")
            key = ".".join(parts[:2]) if parts[0] == "aimem" else parts[0]
            costs[key] += int(match.group(1))
        per_run.append(costs)
    names = set().union(*per_run)
    median = {n: statistics.median(c.get(n, 0) for c in per_run) / 1000 for n in names}
    top = sorted(median.items(), key=lambda kv: -kv[1])[:10]
    return {
        "imports": "aimem list",
        "total_ms": round(statistics.median(sum(c.values()) for c in per_run) / 1000, 1),
        "top_ms": {name: round(ms, 1) for name, ms in top},
    }


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a running process has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _shell(runner: Runner, runs: int, searches: int) -> dict[str, object]:
    """``search x --json`` lines written to one ``aimem shell``, each timed to its answer.

    The first is timed from the process's start (Python, imports, opening the store,
    loading an embedder, the search), so it compares with a one-shot ``aimem search x``;
    each later one from writing its line to the end of its JSON (``]``), with the CPU
    the process used meanwhile (``/proc``). Medians over ``runs`` shells.
    """
    firsts: list[float] = []
    laters: list[float] = []
    cpus: list[float] = []
    rss: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(
            runner.argv(["shell"]),
            env=runner.env | {"PYTHONUNBUFFERED": "1"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        for n in range(1 + searches):
            begun, cpu = time.perf_counter(), _cpu_seconds(proc.pid)
            proc.stdin.write("search x --json\n")
            proc.stdin.flush()
            for line in proc.stdout:
                if line.rstrip() in ("]", "[]"):
                    break
            else:
                raise SystemExit("aimem shell stopped before answering")
            if n == 0:
                firsts.append(time.perf_counter() - start)
            else:
                laters.append(time.perf_counter() - begun)
                cpus.append(_cpu_seconds(proc.pid) - cpu)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        rss.append(int(status.split("VmHWM:")[1].split()[0]) / 1024)
        proc.stdin.close()
        if proc.wait() != 0:
            raise SystemExit(f"aimem shell exited {proc.returncode}")
    return {
        "command": "aimem shell (search x --json, one a line)",
        "first_search_s": round(statistics.median(firsts), 3),
        "later_search_s": round(statistics.median(laters), 3),
        "later_search_cpu_s": round(statistics.median(cpus), 3),
        "peak_rss_mb": round(statistics.median(rss)),
        "later_searches": searches,
        "shells": runs,
    }


def main() -> None:
    """Time each command and print the JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per command (default 7)")
    parser.add_argument("--memories", type=int, default=200, help="store size (default 200)")
    parser.add_argument("--embedder", help="AIMEM_EMBEDDER for the store and the commands")
    parser.add_argument("--checkout", help="run this checkout's aimem instead (PYTHONPATH)")
    parser.add_argument("--as-is", action="store_true", help="keep the env's bytecode setting")
    parser.add_argument("--shell-searches", type=int, default=10, help="later searches timed")
    parser.add_argument("--no-shell", action="store_true", help="skip `aimem shell`")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aimem-startup-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'store.db'}"
        _fill(url, opts.memories, opts.embedder)
        runner = Runner(url, opts, Path(tmp) / "pycache")
        common = {"memories": opts.memories, "embedder": opts.embedder, "runs": opts.runs}
        medians = {}
        for args in COMMANDS:
            name = " ".join(["aimem", *args])
            timing = runner.times(args, opts.runs)
            medians[name] = timing["median_s"]
            probe = runner.python("-c", _PROBE % (HEAVY,), *args)
            heavy = json.loads(probe.stdout.strip().splitlines()[-1])
            peak = int(runner.python("-c", _PEAK, *args).stderr.split("peak_kb")[-1]) / 1024
            print(
                json.dumps(
                    {"command": name, **timing, "peak_rss_mb": round(peak)}
                    | common
                    | {"heavy_imported": heavy}
                )
            )
        print(json.dumps(_imports(runner)))
        if not opts.no_shell:
            print(json.dumps(_shell(runner, opts.runs, opts.shell_searches) | common))
        print(
            json.dumps(
                {
                    "summary": True,
                    "checkout": opts.checkout or "this venv's aimem",
                    "bytecode": "as the environment has it" if opts.as_is else "cached",
                    "list_under_goal": medians["aimem list"] < GOAL_S,
                    "list_under_target": medians["aimem list"] < TARGET_S,
                    "goal_s": GOAL_S,
                    "target_s": TARGET_S,
                    "python": sys.version.split()[0],
                }
            )
        )


if __name__ == "__main__":
    main()
