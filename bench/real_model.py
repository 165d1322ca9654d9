"""What a user gets from a real local model as judge, beside the offline judge, in one run.

Usage::

    bench/real_model.sh start
    python bench/real_model.py [--url URL] [--model NAME] [--items 30] [--heldout-items 30]
                               [--skip-single] [--skip-batched] [--skip-updates]
                               [--update-items 6]

Everything goes through aimem's public API with default judge settings (the judge that
``OPENAI_BASE_URL`` alone would build). Prints, for single saves and for ``save_many``:
the share judged (not pending), re-asks per save, interpretations the faithfulness guard
replaced by the content, latency and tokens per save; pairwise accuracy on the labelled
dev set and on held-out items for the model alone, the offline heuristic alone and
blends of the two (the default blend for a small model is 0.5); and knowledge-update
current-first on a subset, model judge beside the heuristic. Each labelled item is
judged in its own namespace, so no related memory changes its novelty.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import aimem  # noqa: E402
from aimem.judges.evaluation import evaluate, load_rows  # noqa: E402
from aimem.judges.openai import KEPT_CONTENT_FLAG  # noqa: E402
from aimem.judges.requests import SMALL_MODEL_WEIGHT, is_small_model  # noqa: E402
from aimem.loop import run_sync  # noqa: E402
from aimem.scoring import COMPONENTS  # noqa: E402

DEV = ROOT / "aimem" / "data" / "judge-dev.jsonl"
HELDOUT = ROOT / "bench" / "data" / "judge-extra.jsonl"
UPDATES = [
    ROOT.parent / "shared" / "data" / "updates-dev.jsonl",
    ROOT / "bench" / "data" / "updates-heldout.jsonl",
]
WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
FLAG = KEPT_CONTENT_FLAG.split("{")[0]


def spread(rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """``n`` rows taken evenly across the file (bands and languages stay mixed)."""
    if n >= len(rows):
        return rows
    step = len(rows) / n
    return [rows[int(i * step)] for i in range(n)]


def judge(args: argparse.Namespace) -> aimem.OpenAIJudge:
    """The judge aimem's settings build from OPENAI_BASE_URL and AIMEM_MODEL alone."""
    settings = aimem.Settings.load(openai_base_url=args.url, model=args.model)
    from aimem.saving.contents import default_judge

    built = default_judge(settings)
    assert isinstance(built, aimem.OpenAIJudge)
    return built


def summary(name: str, memories: Sequence[aimem.Memory], seconds: float) -> dict[str, float]:
    judged = [m for m in memories if not m.pending]
    kept = sum(1 for m in judged if m.rationale.startswith(FLAG))
    latency = [m.judge_latency_ms / 1000 for m in judged]
    row = {
        "judged": len(judged) / max(1, len(memories)),
        "reasks": statistics.mean(m.judge_retries for m in memories) if memories else 0.0,
        "kept_content": kept,
        "latency_p50": statistics.median(latency) if latency else float("nan"),
        "prompt_tokens": statistics.mean(m.prompt_tokens for m in judged) if judged else 0,
        "completion_tokens": statistics.mean(m.completion_tokens for m in judged) if judged else 0,
        "seconds_per_save": seconds / max(1, len(memories)),
    }
    print(
        f"{name:<10} judged {len(judged)}/{len(memories)} ({row['judged']:.0%})  "
        f"re-asks/save {row['reasks']:.2f}  content kept {kept}  "
        f"latency p50 {row['latency_p50']:.1f} s  tokens {row['prompt_tokens']:.0f}+"
        f"{row['completion_tokens']:.0f}  wall {row['seconds_per_save']:.1f} s/save"
    )
    for m in judged:
        if m.rationale.startswith(FLAG):  # what the faithfulness guard refused, and why
            reason = m.rationale[len(FLAG) :].split("]")[0]
            print(f"{'':<10}   kept {m.content[:60]!r}: {reason}")
    return row


def single_saves(
    args: argparse.Namespace, rows: list[dict[str, Any]], db: str
) -> list[aimem.Memory]:
    """Each labelled item saved alone, in its own namespace, by the default-settings judge."""
    the_judge = judge(args)
    out = []
    for n, row in enumerate(rows):
        with aimem.MemoryStore(
            db, judge=the_judge, namespace=f"single{n}", min_priority_score=0
        ) as s:
            out.append(s.save(row["text"]))
    run_sync(the_judge.aclose())
    return out


def batched_saves(
    args: argparse.Namespace, rows: list[dict[str, Any]], db: str
) -> list[aimem.Memory]:
    the_judge = judge(args)
    with aimem.MemoryStore(
        db, judge=the_judge, namespace="batched", max_memories=1000, min_priority_score=0
    ) as s:
        saved = s.save_many([r["text"] for r in rows])
    run_sync(the_judge.aclose())
    return saved


def accuracy_table(name: str, rows: list[dict[str, Any]], memories: Sequence[aimem.Memory]) -> None:
    """Pairwise accuracy of the model alone, the heuristic alone and blends.

    The stored components are the default blend ``w*h + (1-w)*m`` (w = the judge's
    weight for this model); the heuristic's ``h`` is deterministic, so the model's own
    ``m`` is recovered exactly and every blend computed from the same replies.
    """
    offline = aimem.HeuristicJudge()
    weight = SMALL_MODEL_WEIGHT if is_small_model(memories[0].model) else 0.0
    pairs = []
    for row, memory in zip(rows, memories, strict=True):
        if memory.pending:
            continue
        h = offline.score(row["text"])
        m = {}
        for c in COMPONENTS:
            stored = getattr(memory, c)
            m[c] = (stored - weight * getattr(h, c)) / (1 - weight) if weight < 1 else stored
        pairs.append((row, m, h))
    judged_rows = [r for r, _, _ in pairs]
    cells = []
    for w in WEIGHTS:
        priority = {
            r["id"]: sum(w * getattr(h, c) + (1 - w) * m[c] for c in COMPONENTS)
            for r, m, h in pairs
        }
        cells.append(f"w={w:.2f} {evaluate(judged_rows, priority).accuracy:.3f}")
    print(
        f"{name:<10} pairwise accuracy (n={len(judged_rows)}; w = heuristic share): "
        + "  ".join(cells)
        + f"   [default w={weight}]"
    )


def updates(args: argparse.Namespace, db: str) -> None:
    path = next((p for p in UPDATES if p.is_file()), None)
    if path is None:
        print("updates    skipped: no knowledge-update data")
        return
    import json

    items = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    items = [i for i in items if i["kind"] == "update"][: args.update_items]
    judges: tuple[tuple[str, Any], ...] = (
        ("model", judge(args)),
        ("heuristic", aimem.HeuristicJudge()),
    )
    for label, the_judge in judges:  # one judge for every item, as a user would hold it
        ok = 0
        start = time.perf_counter()
        for n, it in enumerate(items):
            with aimem.MemoryStore(db, judge=the_judge, namespace=f"upd-{label}-{n}") as s:
                half = len(it["distractors"]) // 2
                s.save_many(it["distractors"][:half])
                old = s.save(it["old"])
                s.save_many(it["distractors"][half:])
                new = s.save(it["new"])
                ids = [h.memory.id for h in s.search(it["query"], limit=5)]
                ok += new.id in ids and (old.id not in ids or ids.index(new.id) < ids.index(old.id))
        print(
            f"updates    {label:<9} current-first {ok}/{len(items)} ({ok / max(1, len(items)):.2f})"
            f"  {time.perf_counter() - start:.0f} s  [{path.name}]"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--url", default=os.environ.get("AIMEM_TEST_MODEL_URL", "http://127.0.0.1:8089/v1")
    )
    parser.add_argument(
        "--model",
        default=os.environ.get("AIMEM_TEST_MODEL", "gpt-4o-mini"),
        help="the name sent (llama-server answers with its own alias)",
    )
    parser.add_argument("--data", type=Path, default=DEV)
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--heldout", type=Path, default=HELDOUT)
    parser.add_argument("--heldout-items", type=int, default=30)
    parser.add_argument("--update-items", type=int, default=6)
    parser.add_argument(
        "--skip-single", action="store_true", help="no single saves (nor dev accuracy)"
    )
    parser.add_argument("--skip-batched", action="store_true")
    parser.add_argument("--skip-updates", action="store_true")
    args = parser.parse_args(argv)

    dev = spread(load_rows(args.data), args.items)
    heldout = spread(load_rows(args.heldout), args.heldout_items) if args.heldout_items else []
    print(
        f"model server {args.url}; dev {len(dev)} items from {args.data.name}, "
        f"held-out {len(heldout)} from {args.heldout.name}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{Path(tmp) / 'real_model.db'}"
        singles: list[aimem.Memory] = []
        if not args.skip_single:
            start = time.perf_counter()
            singles = single_saves(args, dev, db)
            summary("single", singles, time.perf_counter() - start)
        if not args.skip_batched:
            start = time.perf_counter()
            batch = batched_saves(args, dev, db)
            summary("batched", batch, time.perf_counter() - start)
        if singles:
            accuracy_table("dev", dev, singles)
        if heldout:
            start = time.perf_counter()
            held = single_saves(args, heldout, db)
            summary("held-out", held, time.perf_counter() - start)
            accuracy_table("held-out", heldout, held)
        if not args.skip_updates:
            updates(args, db)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
