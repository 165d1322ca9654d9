"""Where an embedder's cosines say "related": the numbers behind relevance's calibration.

Relevance maps a hit's cosine through the embedder's ``Calibration(low, high)``: 0 at or
below ``low``, 1 at or above ``high``. This prints, for one embedder (default the local
all-MiniLM-L6-v2), the cosine between

* each knowledge-update question and the memory that answers it (``new``; English items of
  ``../shared/data/updates-dev.jsonl`` and ``bench/data/updates-*.jsonl``),
* each LoCoMo dev question and its gold evidence turns (``../shared/data/locomo-dev``),
* general questions nobody's memory answers ("What is the capital of France?") and the
  best of a handful of one user's everyday facts (each knowledge-update item's memories),

as percentiles, and the share of answering pairs at or above ``--low`` against the share of
unrelated questions below it. One JSON line on stdout. ~1 min with the local model.

Usage: HF_HUB_OFFLINE=1 python bench/relevance_calibration.py [--low 0.2] [--high 0.6]
       [--embedder local|SPEC]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from aimem.embedder_spec import embedder_from_spec  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
UPDATES = [
    SHARED / "updates-dev.jsonl",
    ROOT / "bench" / "data" / "updates-heldout.jsonl",
    ROOT / "bench" / "data" / "updates-fresh.jsonl",
]
#: Questions about the world or a task, not about anyone's life.
UNRELATED = [
    "quantum chromodynamics",
    "What is the capital of France?",
    "How do I reverse a linked list in Python?",
    "What's the weather on Mars?",
    "Explain the French revolution",
    "stock price of Apple",
    "Who won the 1998 World Cup?",
    "What is the boiling point of water?",
    "How many moons does Jupiter have?",
    "What's 17 times 23?",
    "How does photosynthesis work?",
    "What year did the Berlin Wall fall?",
    "What is a black hole?",
    "Convert 10 miles to kilometres",
    "Summarise the plot of Hamlet",
]


def _load(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def _unit(vectors: list[list[float]]) -> np.ndarray:
    a = np.asarray(vectors, dtype=np.float32)
    return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)


def _pct(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {f"p{p}": round(float(np.percentile(values, p)), 3) for p in (5, 10, 25, 50, 75, 90)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--low", type=float, default=0.2)
    ap.add_argument("--high", type=float, default=0.6)
    args = ap.parse_args()
    embedder = embedder_from_spec(args.embedder)
    assert embedder is not None
    query_embed = getattr(embedder, "embed_query", embedder.embed)

    def embed(texts: list[str], *, query: bool = False) -> np.ndarray:
        return _unit(asyncio.run((query_embed if query else embedder.embed)(texts)))

    items = [i for path in UPDATES for i in _load(path) if i.get("lang", "en") == "en"]
    updates = [i for i in items if i["kind"] == "update"]
    answer = (
        (embed([i["query"] for i in updates], query=True) * embed([i["new"] for i in updates]))
        .sum(1)
        .tolist()
        if updates
        else []
    )
    unrelated: list[float] = []
    if items:
        questions = embed(UNRELATED, query=True)
        for item in items:
            facts = embed([item["old"], item["new"], *item["distractors"]])
            unrelated += (questions @ facts.T).max(1).tolist()
    evidence: list[float] = []
    locomo = SHARED / "locomo-dev"
    turns = {(m["conv"], m["id"]): m["text"] for m in _load(locomo / "memories.jsonl")}
    asked = [
        q
        for q in _load(locomo / "queries.jsonl")
        if q.get("evidence") and q["category"] in (1, 2, 3, 4)
    ]
    if asked:
        keys = sorted(
            {(q["conv"], e) for q in asked for e in q["evidence"] if (q["conv"], e) in turns}
        )
        vectors = dict(zip(keys, embed([turns[k] for k in keys]), strict=True))
        qv = embed([q["question"] for q in asked], query=True)
        for q, v in zip(asked, qv, strict=True):
            evidence += [
                float(vectors[(q["conv"], e)] @ v)
                for e in q["evidence"]
                if (q["conv"], e) in vectors
            ]
    print(
        json.dumps(
            {
                "bench": "relevance_calibration",
                "embedder": embedder.name,
                "low": args.low,
                "high": args.high,
                "update_answer_cosine": _pct(answer),
                "update_answer_at_or_above_low": round(
                    statistics.mean(c >= args.low for c in answer), 3
                )
                if answer
                else None,
                "locomo_evidence_cosine": _pct(evidence),
                "locomo_evidence_at_or_above_low": round(
                    statistics.mean(c >= args.low for c in evidence), 3
                )
                if evidence
                else None,
                "unrelated_best_fact_cosine": _pct(unrelated),
                "unrelated_below_low": round(statistics.mean(c < args.low for c in unrelated), 3)
                if unrelated
                else None,
                "pairs": {
                    "updates": len(answer),
                    "locomo": len(evidence),
                    "unrelated": len(unrelated),
                },
            }
        )
    )


if __name__ == "__main__":
    main()
