"""Fault-injection counts: how every save ends when the LLM endpoint misbehaves.

Runs the scenario table of ``tests/test_fault_injection.py`` (HTTP 429/5xx/4xx, hangs
past the timeout, garbage and truncated bodies, socket resets, refused connections,
hostile model output) under both ``on_judge_error`` policies, through ``save`` and
``save_many``, against the loopback OpenAI-compatible stub: offline, no key. Each
save must end judged (scores as the endpoint stated them), pending (raw content, no
scores, outside the cap) or raised (``JudgeError``, nothing written); anything else
is a violation. Prints one JSON line; exits 1 if there is any violation.

The table and the checks live in the test file, loaded here by path, so the test and
this report can never disagree (tests do not import from ``bench/``).

    python bench/fault_injection.py
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import ModuleType

SUITE = Path(__file__).resolve().parents[1] / "tests" / "test_fault_injection.py"
POLICIES = ("pending", "raise")
METHODS = ("save", "save_many")


def load_suite() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fault_injection_suite", SUITE)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {SUITE}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def main() -> int:
    # The pending policy logs a WARNING per pending memory: expected, and not our output.
    logging.getLogger("aimem").addHandler(logging.NullHandler())
    suite = load_suite()
    started = time.perf_counter()
    totals: Counter[str] = Counter()
    by_policy: dict[str, Counter[str]] = {p: Counter() for p in POLICIES}
    by_scenario: dict[str, dict[str, str]] = {}
    siblings: Counter[str] = Counter()
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, suite.FaultStub() as stub:
        for i, scenario in enumerate(suite.SCENARIOS):
            row: dict[str, str] = {}
            for policy in POLICIES:
                for method in METHODS:
                    workdir = Path(tmp) / str(i)
                    workdir.mkdir(exist_ok=True)
                    result = suite.run_case(scenario, policy, method, workdir, stub)
                    row[f"{policy}/{method}"] = result.outcome
                    totals[result.outcome] += 1
                    by_policy[policy][result.outcome] += 1
                    if method == "save_many":
                        target = suite.BATCH.index(suite.TARGET)
                        siblings.update(
                            "not_written" if item == "raised" else item
                            for j, item in enumerate(result.items)
                            if j != target
                        )
                    if result.violations:
                        failures += [
                            f"{scenario.name}/{policy}/{method}: {v}" for v in result.violations
                        ]
            by_scenario[scenario.name] = row
    report = {
        "scenarios": len(suite.SCENARIOS),
        "saves": sum(totals.values()),
        "judged": totals["judged"],
        "pending": totals["pending"],
        "raised": totals["raised"],
        "violations": len(failures),
        "by_policy": {p: dict(sorted(c.items())) for p, c in by_policy.items()},
        "batch_siblings": dict(sorted(siblings.items())),
        "seconds": round(time.perf_counter() - started, 1),
        "by_scenario": by_scenario,
    }
    if failures:
        report["violation_details"] = failures[:50]
    print(json.dumps(report, ensure_ascii=False))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
