"""Per-component effects of the offline judge's conversation signals (the issue's report).

Three views, on LoCoMo conversations saved turn by turn (``evidence_survival.py``'s protocol):

1. **Components**: the mean of each rubric component (and of priority) over turns that later
   questions cite as evidence vs. all other turns, and how often each cue fires on either kind.
2. **Ablations**: evidence survival at each cap with one signal switched off at a time (the
   judge's module-level tables are patched in-process), beside the full judge, FIFO and oracle.
3. **Labelled set**: judge pairwise accuracy (``aimem.judges.evaluation``) under each ablation, so a
   signal that helps survival but hurts the rubric ordering shows up.

Usage: python bench/judge_components.py [DATA_DIR] [--caps 50,100,200] [--min-score 0.0]
                                        [--only NAME,...] [--no-ablations]
DATA_DIR defaults to ../shared/data/locomo-dev beside the checkout. Prints tables on stdout and
one JSON line last. Not imported by the tests.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
sys.path.insert(0, str(ROOT / "bench"))

from evidence_survival import DEFAULT_DATA, load, measure  # noqa: E402

from aimem.judges.evaluation import dev_set, evaluate  # noqa: E402
from aimem.judges.heuristic import HeuristicJudge  # noqa: E402
from aimem.judges.heuristic import cues as vocab  # noqa: E402
from aimem.judges.heuristic import cues_events as talk  # noqa: E402
from aimem.judges.heuristic import judge as jm  # noqa: E402

NEVER = re.compile(r"(?!x)x")  # matches nothing
COMPONENTS = ("emotional_impact", "user_relevance", "novelty", "utility", "priority_score")


@contextmanager
def patched(target: object, **values: object) -> Iterator[None]:
    """Set attributes on a module for the duration of the block."""
    old = {k: getattr(target, k) for k in values}
    for k, v in values.items():
        setattr(target, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(target, k, v)


@contextmanager
def cue_off(*labels: str, replace: re.Pattern[str] = NEVER) -> Iterator[None]:
    """Replace the regex of cue ``labels`` in the judge's cue table."""
    table = tuple((lab, replace if lab in labels else rx) for lab, rx in jm._CUES)
    with patched(jm, _CUES=table):
        yield


_OLD_MEDICATION = re.compile(vocab.MEDICATION.pattern.replace("|traline)", "|traline|line)"))

#: One entry per signal added for conversations: what switching it off means.
ABLATIONS: dict[str, Callable[[], object]] = {
    "reacting sentences (read only telling sentences)": lambda: patched(
        jm, _told=lambda body: (body, 0.0)
    ),
    "reacting share as damper": lambda: patched(jm, _REACTING_DAMP=0.0),
    "speaker label set aside": lambda: patched(jm, _unlabelled=lambda text: text),
    "event (first-person past, implied, ongoing)": lambda: patched(
        talk, EVENT_PAST=NEVER, EVENT_IMPLIED=NEVER, ONGOING=NEVER
    ),
    "dated (temporal anchors)": lambda: patched(talk, WHEN=NEVER),
    "decision/plan": lambda: cue_off("decision"),
    "change of state": lambda: cue_off("change"),
    "disclosed feeling": lambda: patched(talk, DISCLOSURE=NEVER, DISCLOSURE_JA=NEVER),
    "possession": lambda: patched(talk, POSSESSION=NEVER),
    "specifics bonus (numbers, names, titles)": lambda: patched(
        jm, _SPECIFIC_NOVELTY=0.05, _SPECIFIC_UTILITY=0.0
    ),
    "news outweighs greeting/transient": lambda: patched(jm, _NEWS_OUTWEIGHS=frozenset()),
    "medication stem fix (no '-line' names)": lambda: cue_off(
        "medication", replace=_OLD_MEDICATION
    ),
}


def component_table(data: Path) -> dict[str, dict[str, float]]:
    """Mean components on evidence vs other turns, and cue prevalence on each (related=())."""
    memories = load(data / "memories.jsonl")
    evidence = set()
    for q in load(data / "queries.jsonl"):
        if q.get("evidence") and q["category"] in (1, 2, 3, 4):
            evidence.update((q["conv"], e) for e in q["evidence"])
    judge = HeuristicJudge()
    values: dict[str, dict[str, list[float]]] = {
        "evidence": defaultdict(list),
        "other": defaultdict(list),
    }
    cue_counts: dict[str, Counter[str]] = {"evidence": Counter(), "other": Counter()}
    sizes: Counter[str] = Counter()
    t0 = time.perf_counter()
    for m in memories:
        i = judge.score(m["text"])
        kind = "evidence" if (m["conv"], m["id"]) in evidence else "other"
        sizes[kind] += 1
        for name in COMPONENTS:
            values[kind][name].append(getattr(i, name))
        cue_counts[kind].update(jm._read(m["text"], None).cues)
    micros = (time.perf_counter() - t0) / max(len(memories), 1) * 1e6
    print(
        f"\n== components: mean over turns "
        f"(evidence n={sizes['evidence']}, other n={sizes['other']})"
    )
    print(f"{'component':18s} {'evidence':>9s} {'other':>9s} {'diff':>7s}")
    table: dict[str, dict[str, float]] = {}
    for name in COMPONENTS:
        e, o = statistics.mean(values["evidence"][name]), statistics.mean(values["other"][name])
        table[name] = {"evidence": round(e, 4), "other": round(o, 4)}
        print(f"{name:18s} {e:9.4f} {o:9.4f} {e - o:+7.4f}")
    print(
        f"\n== cue prevalence: share of turns where the cue fires "
        f"({micros:.0f} µs/turn, score + _read)"
    )
    print(f"{'cue':18s} {'evidence':>9s} {'other':>9s} {'ratio':>6s}")
    labels = sorted(
        set(cue_counts["evidence"]) | set(cue_counts["other"]),
        key=lambda k: -cue_counts["evidence"][k] / sizes["evidence"],
    )
    for label in labels:
        e = cue_counts["evidence"][label] / sizes["evidence"]
        o = cue_counts["other"][label] / sizes["other"]
        table[f"cue:{label}"] = {"evidence": round(e, 4), "other": round(o, 4)}
        print(f"{label:18s} {e:9.3f} {o:9.3f} {e / o if o else float('inf'):6.2f}")
    return table


def labelled_accuracy() -> float:
    rows = dev_set()
    judge = HeuristicJudge()
    return round(
        evaluate(rows, {r["id"]: judge.score(r["text"]).priority_score for r in rows}).accuracy, 4
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir", nargs="?", default=str(DEFAULT_DATA))
    ap.add_argument("--caps", default="50,100,200")
    ap.add_argument("--min-score", type=float, default=0.0)
    ap.add_argument("--only", default="", help="comma-separated prefixes of ablation names")
    ap.add_argument("--no-ablations", action="store_true")
    args = ap.parse_args()
    data = Path(args.data_dir)
    caps = [int(c) for c in args.caps.split(",")]
    result: dict[str, object] = {"components": component_table(data)}
    if args.no_ablations:
        print(json.dumps(result))
        return
    names = [
        n for n in ABLATIONS if not args.only or any(n.startswith(p) for p in args.only.split(","))
    ]
    runs: dict[str, dict[str, object]] = {}
    full = measure(data, caps, args.min_score, search=False, report=False)
    runs["full judge"] = {
        "survival": {c: full[c]["aimem"] for c in full},
        "accuracy": labelled_accuracy(),
    }
    for name in names:
        with ABLATIONS[name]():  # type: ignore[attr-defined]
            out = measure(data, caps, args.min_score, search=False, report=False)
            runs[f"- {name}"] = {
                "survival": {c: out[c]["aimem"] for c in out},
                "accuracy": labelled_accuracy(),
            }
    for ref in ("fifo", "oracle"):
        runs[ref] = {"survival": {c: full[c][ref] for c in full}, "accuracy": None}
    print(f"\n== ablations: evidence survival (min-score {args.min_score}), judge-dev accuracy")
    print(f"{'':52s}" + "".join(f"{'cap ' + c:>17s}" for c in full) + f"{'acc':>8s}")
    base = runs["full judge"]["survival"]
    for name, run in runs.items():
        surv = run["survival"]
        cells = "".join(
            f"{surv[c]:9.3f}"
            + (f" ({surv[c] - base[c]:+.3f})" if name.startswith("-") else " " * 9)
            for c in full
        )
        acc = "" if run["accuracy"] is None else f"{run['accuracy']:8.3f}"
        print(f"{name[:52]:52s}{cells}{acc}")
    result["ablations"] = runs
    print(json.dumps(result))


if __name__ == "__main__":
    main()
