"""Knowledge updates: when a later memory supersedes an earlier one, does search answer with it?

Adapted from ``../shared/bench/knowledge_updates.py`` (same protocol, same figures). Data:
JSON Lines, one item per line (format in ``../shared/data/README-updates.md``): ``old``,
``new``, ``query``, ``kind`` ("update": ``new`` supersedes ``old``; "control": both stay
true, ``old_query`` asks for the old one), ``distractors``. Each item gets its own
namespace; the store sees half the distractors, ``old``, the other half, ``new``, in that
order, through the public API. Then:

  update   current-first: ``new`` is in the top 5 of search(query) and ranks above ``old``
           (or ``old`` is absent); stale top-1: ``old`` is the top hit; old retired:
           ``old`` was archived (superseded)
  control  kept: ``old`` is still active and in the top 5 of search(old_query)

Usage: python bench/knowledge_updates.py [DATA.jsonl] [--embedder local|none]
       [--min-score 0.3] [--base-url URL --model NAME]
Default data: ../shared/data/updates-dev.jsonl; bench/data/updates-heldout.jsonl (tuning data
despite its name) and bench/data/updates-fresh.jsonl (written blind, run once, now tuning) are ours.
Prints a table on stderr and one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import aimem

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "updates-dev.jsonl"


def rank(hits: list[aimem.SearchHit], memory_id: str) -> int | None:
    return next((i for i, h in enumerate(hits) if h.memory.id == memory_id), None)


def run(items: list[dict], judge: object, embedder: object | None, overrides: dict) -> dict:
    res: dict[str, list[float]] = defaultdict(list)
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'updates.db'}"
        for n, it in enumerate(items):
            kw = dict(judge=judge, namespace=f"item{n}", **overrides)
            if embedder is not None:
                kw["embedder"] = embedder
            with aimem.MemoryStore(url, **kw) as store:
                d = it["distractors"]
                half = len(d) // 2
                for text in d[:half]:
                    store.save(text)
                old = store.save(it["old"])
                for text in d[half:]:
                    store.save(text)
                new = store.save(it["new"])
                hits = store.search(it["query"], limit=5)
                r_new, r_old = rank(hits, new.id), rank(hits, old.id)
                lang = it.get("lang", "en")
                distractors_retired = sum(
                    m.archive_reason == "superseded"
                    for m in store.list(include_archived=True)
                    if m.id not in (old.id, new.id)
                )
                res["distractors_superseded"].append(float(distractors_retired))
                if it["kind"] == "update":
                    ok = r_new is not None and (r_old is None or r_new < r_old)
                    for key in ("update", f"update_{lang}"):
                        res[f"{key}_current_first"].append(float(ok))
                        res[f"{key}_stale_top1"].append(float(r_old == 0))
                    retired = store.get(old.id).archive_reason == "superseded"
                    res["update_old_retired"].append(float(retired))
                    res[f"update_{lang}_old_retired"].append(float(retired))
                    if not ok:
                        misses.append(f"{it.get('id', n)} {it.get('category', '')}")
                else:
                    old_hits = store.search(it["old_query"], limit=5)
                    kept = (
                        store.get(old.id).archived_at is None and rank(old_hits, old.id) is not None
                    )
                    for key in ("control", f"control_{lang}"):
                        res[f"{key}_kept"].append(float(kept))
                        res[f"{key}_new_found"].append(float(r_new is not None))
                    if not kept:
                        misses.append(f"{it.get('id', n)} control {it.get('category', '')}")
    out: dict = {k: round(statistics.mean(v), 4) for k, v in sorted(res.items())}
    out["n_update"] = len(res["update_current_first"])
    out["n_control"] = len(res["control_kept"])
    out["misses"] = misses
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    ap.add_argument("--embedder", choices=["local", "none"], default="none")
    ap.add_argument("--min-score", type=float, default=None, help="min_priority_score")
    ap.add_argument("--base-url")
    ap.add_argument("--model", default="gpt-4o-mini")
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    lines = Path(args.data).read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines if line.strip()]
    if args.limit:
        items = items[: args.limit]
    embedder = aimem.LocalEmbedder("all-MiniLM-L6-v2") if args.embedder == "local" else None
    judge = (
        aimem.OpenAIJudge(model=args.model, base_url=args.base_url, api_key="x")
        if args.base_url
        else aimem.HeuristicJudge()
    )
    overrides = {} if args.min_score is None else {"min_priority_score": args.min_score}
    t0 = time.perf_counter()
    out = run(items, judge, embedder, overrides)
    print(
        f"updates: current-first {out.get('update_current_first', 0):.3f}  stale top-1 "
        f"{out.get('update_stale_top1', 0):.3f}  old retired "
        f"{out.get('update_old_retired', 0):.3f}  | "
        f"controls kept {out.get('control_kept', 0):.3f}  | distractors superseded per item "
        f"{out.get('distractors_superseded', 0):.3f}  (n={out['n_update']}/{out['n_control']})",
        file=sys.stderr,
    )
    out["data"] = Path(args.data).name
    out["judge"] = "openai" if args.base_url else "heuristic"
    out["embedder"] = args.embedder
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
