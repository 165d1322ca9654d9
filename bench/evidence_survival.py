"""Evidence survival under capacity: does priority-based forgetting keep what is asked later?

Each LoCoMo conversation is saved turn by turn, in order, through aimem's public API into
its own namespace with max_memories=CAP. At the end we count, for every answerable question
(categories 1-4), the share of its gold evidence turns still active, and recall@10 of a
search over the active memories only. Baselines on the same caps: FIFO (keep the last CAP
turns), random CAP turns (mean of 20 draws), and an oracle that keeps evidence first.

With ``--conversation`` each session's turns go in as one ``save_conversation`` call of user
messages instead of one ``save`` per turn: what a chat application would do, and (with
``--min-score 0.3``, the default setting) turns judged below the threshold are never stored.

A question naming the turn its answer replaced (``stale``, as ``long_chats.py`` writes)
also counts whether the current value comes first (in the top 5, above the stale turn or
without it) and whether the stale turn is the top hit.

Usage: python bench/evidence_survival.py [DATA_DIR] [--caps 50,100,200] [--min-score 0.0]
       [--no-search] [--conversation] [--embedder none|local|SPEC]
DATA_DIR defaults to ../shared/data/locomo-dev beside the checkout (LoCoMo is CC BY-NC:
read it from there, never copy it into the repository). Prints a table on stderr and one
JSON line on stdout. Not imported by the tests.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import aimem  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo-dev"


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def survival(kept: set[str], qs: list[dict]) -> float:
    return statistics.mean(len(set(q["evidence"]) & kept) / len(set(q["evidence"])) for q in qs)


def _saved(store: aimem.MemoryStore, turns: list[dict], conversation: bool) -> dict[str, set]:
    """Save ``turns`` in order; return memory id -> the turn ids whose text it holds."""
    id_map: dict[str, set[str]] = defaultdict(set)
    if not conversation:
        for t in turns:
            id_map[store.save(t["text"]).id].add(t["id"])
        return id_map
    sessions: list[list[dict]] = []
    for t in turns:
        if not sessions or sessions[-1][0].get("session") != t.get("session"):
            sessions.append([])
        sessions[-1].append(t)
    for session in sessions:
        ids: dict[str, set[str]] = defaultdict(set)
        for t in session:
            ids[t["text"]].add(t["id"])
        messages = [{"role": "user", "content": t["text"]} for t in session]
        for m in store.save_conversation(messages):
            id_map[m.id] |= ids[m.content]
    return id_map


def _current_first(
    ranked: list[set[str]], evidence: set[str], stale: set[str]
) -> tuple[float, float]:
    """(current value in the top 5 and above the stale one, stale one the top hit) as 0/1."""
    where = lambda ids: next((i for i, hit in enumerate(ranked) if hit & ids), None)  # noqa: E731
    new, old = where(evidence), where(stale)
    first = new is not None and new < 5 and (old is None or new < old)
    return float(first), float(old == 0)


def measure(
    data: Path,
    caps: list[int],
    min_score: float = 0.0,
    *,
    search: bool = True,
    limit_convs: int = 0,
    report: bool = True,
    conversation: bool = False,
    embedder: object | None = None,
) -> dict[str, dict]:
    """Run the protocol once per cap; return ``{cap: {measure: value}}`` (module docstring)."""
    memories = load(data / "memories.jsonl")
    queries = [
        q
        for q in load(data / "queries.jsonl")
        if q.get("evidence") and q["category"] in (1, 2, 3, 4)
    ]
    by_conv: dict[str, list[dict]] = defaultdict(list)
    for m in memories:
        by_conv[m["conv"]].append(m)
    q_by_conv: dict[str, list[dict]] = defaultdict(list)
    for q in queries:
        q_by_conv[q["conv"]].append(q)
    convs = sorted(by_conv)
    if limit_convs:
        convs = convs[:limit_convs]
    rng = random.Random(7)
    out: dict[str, dict] = {}
    for cap in caps:
        rows = defaultdict(list)
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{Path(tmp) / 'surv.db'}"
            for conv in convs:
                turns, qs = by_conv[conv], q_by_conv[conv]
                if not qs:
                    continue
                ns = "".join(ch for ch in conv if ch.isalnum())
                with aimem.MemoryStore(
                    url,
                    judge=aimem.HeuristicJudge(),
                    namespace=ns,
                    max_memories=cap,
                    min_priority_score=min_score,
                    **({"embedder": embedder} if embedder is not None else {}),
                ) as store:
                    id_map = _saved(store, turns, conversation)
                    active = set().union(
                        *(id_map.get(m.id, ()) for m in store.list(limit=min(1000, 2 * cap)))
                    )
                    rows["aimem"].append(survival(active, qs))
                    if search:
                        rec = []
                        for q in qs:
                            ranked = [
                                id_map.get(h.memory.id, set())
                                for h in store.search(q["question"], limit=10)
                            ]
                            got = set().union(*ranked)
                            ev = set(q["evidence"])
                            rec.append(len(ev & got) / len(ev))
                            stale = q.get("stale") or []
                            if stale:  # a changed fact: is the current value first?
                                stale = {stale} if isinstance(stale, str) else set(stale)
                                first, top1 = _current_first(ranked, ev, stale)
                                rows["current_first"].append(first)
                                rows["stale_top1"].append(top1)
                        rows["aimem_recall@10"].append(statistics.mean(rec))
                ids = [t["id"] for t in turns]
                rows["fifo"].append(survival(set(ids[-cap:]), qs))
                rows["random"].append(
                    statistics.mean(
                        survival(set(rng.sample(ids, min(cap, len(ids)))), qs) for _ in range(20)
                    )
                )
                evidence = []
                for q in qs:
                    evidence.extend(e for e in q["evidence"] if e not in evidence)
                rows["oracle"].append(survival(set(evidence[:cap]), qs))
                rows["kept_share"].append(min(cap, len(ids)) / len(ids))
        out[str(cap)] = {k: round(statistics.mean(v), 4) for k, v in rows.items()}
        r = out[str(cap)]
        if report:
            print(
                f"cap {cap:4d}: kept {r['kept_share']:.1%} of turns | evidence kept: "
                f"aimem {r['aimem']:.3f}  "
                f"fifo {r['fifo']:.3f}  random {r['random']:.3f}  oracle {r['oracle']:.3f}"
                + ("" if not search else f" | aimem recall@10 on active {r['aimem_recall@10']:.3f}")
                + (
                    f" | changed facts: current first {r['current_first']:.3f}, "
                    f"stale top-1 {r['stale_top1']:.3f}"
                    if "current_first" in r
                    else ""
                ),
                file=sys.stderr,
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data_dir", nargs="?", default=str(DEFAULT_DATA))
    ap.add_argument("--caps", default="50,100,200")
    ap.add_argument("--min-score", type=float, default=0.0)
    ap.add_argument("--limit-convs", type=int, default=0)
    ap.add_argument("--no-search", action="store_true")
    ap.add_argument(
        "--conversation", action="store_true", help="one save_conversation call per session"
    )
    ap.add_argument("--embedder", default="none", help="none, local, or another embedder spec")
    args = ap.parse_args()
    from aimem.embedder_spec import embedder_from_spec

    embedder = embedder_from_spec(args.embedder)
    data = Path(args.data_dir)
    caps = [int(c) for c in args.caps.split(",")]
    t0 = time.perf_counter()
    out = measure(
        data,
        caps,
        args.min_score,
        search=not args.no_search,
        limit_convs=args.limit_convs,
        conversation=args.conversation,
        embedder=embedder,
    )
    convs = len({m["conv"] for m in load(data / "memories.jsonl")})
    if args.limit_convs:
        convs = min(convs, args.limit_convs)
    print(
        json.dumps(
            {
                "convs": convs,
                "min_score": args.min_score,
                "conversation": args.conversation,
                "caps": out,
                "seconds": round(time.perf_counter() - t0, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
