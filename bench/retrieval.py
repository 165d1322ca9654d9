"""Retrieval quality on LoCoMo dev (part A) and search latency at scale (part B).

Part A saves every dialog turn of the LoCoMo dev split (``memories.jsonl``) as one
memory in its conversation's namespace (a SQLite file in a temp dir, or with ``--backend``
a PostgreSQL database; no LLM: the heuristic judge scores, ``interpretation_enabled=False``),
then searches every question
of ``queries.jsonl`` within its own conversation. For each configuration (mode
keyword / semantic / hybrid, each with the default priority/recency weights and with
both set to 0) it prints one JSON line per question subset, categories 1-4
("answerable") and category 5 ("adversarial"), with, in percent:

- ``recall@5`` / ``recall@10``: share of a question's evidence turns among the top k,
  averaged over questions;
- ``all_evidence@10``: share of questions with all their evidence in the top 10;
- ``mrr@10``: mean reciprocal rank of the first evidence hit (0 when none in the top 10);

and the mean and p50 wall time of one ``store.search`` call in ms. Every configuration
searches a fresh copy of the same filled database, so the access counts that one
configuration's searches bump never reach another. ``min_priority_score`` is 0 and
``max_memories`` 100k, so nothing is archived: every turn stays findable.

Part B fills one namespace with N synthetic memories per ``--scale`` value (LoCoMo
turns suffixed with a counter when the data is there, else Zipf sentences from
``save_overhead.TextMaker``) through ``save_many`` (with the embedder, so vectors are
computed in batches by aimem itself), then times 200 searches per mode (LoCoMo
questions, or word samples of the synthetic sentences) and prints fill time and search
p50/p95 per mode and size. When the first batches project an embedding fill beyond
``--max-fill-minutes`` (8), the size is filled without the embedder and only keyword
search is timed there; a JSON line says so. Targets: p50 at 100k <= 20 ms keyword,
<= 60 ms hybrid.

Anything not available in the installed aimem (the embedder, a search mode, the weight
settings) gets a JSON line with ``"status": "unavailable"`` and the run goes on.
The LoCoMo data (CC BY-NC 4.0) is read in place, never copied.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/retrieval.py                  # part A
    HF_HUB_OFFLINE=1 .venv/bin/python bench/retrieval.py --backend both   # A on SQLite and PG
    HF_HUB_OFFLINE=1 .venv/bin/python bench/retrieval.py --part B --scale 10000 100000
    # embedding 100k turns takes ~13 min on 2 cores: past the 8-minute default budget
    HF_HUB_OFFLINE=1 .venv/bin/python bench/retrieval.py --part B --max-fill-minutes 0
    .venv/bin/python bench/retrieval.py --modes keyword --misses 5        # failing examples
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The local model ships inside a package: never reach for a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import aimem

sys.path.insert(0, str(Path(__file__).resolve().parent))
from save_overhead import TextMaker

DATA = Path(__file__).resolve().parents[2] / "shared/data/locomo-dev"
ALL_MODES = ("keyword", "semantic", "hybrid")
WEIGHTS: dict[str, dict[str, float]] = {
    "default": {},
    "zero": {"search_priority_weight": 0.0, "search_recency_weight": 0.0},
}
BASE_SETTINGS: dict[str, Any] = {
    "interpretation_enabled": False,
    "max_memories": 100_000,
    "min_priority_score": 0.0,
}


def emit(record: dict[str, Any]) -> None:
    print(json.dumps({"bench": "retrieval", **record}), flush=True)


def pct(value: float) -> float:
    return round(100 * value, 1)


def ms_p(timings: Sequence[float], q: float) -> float:
    ordered = sorted(timings)
    return round(ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))], 2)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def copy_db(src: Path, dst: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{src}{suffix}").exists():
            shutil.copyfile(f"{src}{suffix}", f"{dst}{suffix}")


class Places:
    """Where part A's stores live: SQLite files in a temp dir, or databases on a server.

    ``url(name)`` is a fresh store; ``copy(src, dst)`` copies a filled one (a file copy,
    or ``CREATE DATABASE ... TEMPLATE`` on PostgreSQL); ``close()`` removes them all.
    """

    def __init__(self, backend: str, tmp: Path, admin_url: str) -> None:
        self.backend, self.tmp, self.admin = backend, tmp, admin_url.replace("+psycopg", "")
        self._made: list[str] = []
        self._tag = f"aimem_bench_r{os.getpid()}"

    def url(self, name: str) -> str:
        if self.backend == "sqlite":
            return sqlite_url(self.tmp / f"{name}.db")
        self._admin(f'CREATE DATABASE "{self._tag}_{name}"')
        return self._url_of(name)

    def copy(self, src: str, dst: str) -> str:
        if self.backend == "sqlite":
            copy_db(self.tmp / f"{src}.db", self.tmp / f"{dst}.db")
            return sqlite_url(self.tmp / f"{dst}.db")
        self._admin(f'CREATE DATABASE "{self._tag}_{dst}" TEMPLATE "{self._tag}_{src}"')
        return self._url_of(dst)

    def close(self) -> None:
        while self._made:
            self._admin(f'DROP DATABASE IF EXISTS "{self._made.pop()}" WITH (FORCE)', track=False)

    def _url_of(self, name: str) -> str:
        return f"{self.admin.rpartition('/')[0]}/{self._tag}_{name}"

    def _admin(self, statement: str, *, track: bool = True) -> None:
        import psycopg

        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(statement)  # type: ignore[arg-type]
        if track:
            self._made.append(statement.split('"')[1])


# -- what the installed aimem offers ---------------------------------------------------


def make_embedder(name: str | None) -> tuple[Any, str | None]:
    """(embedder, None) or (None, why not)."""
    if name is None:
        return None, "disabled by --no-embedder"
    try:
        return aimem.LocalEmbedder(name), None
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"[:300]


def open_store(url: str, namespace: str, embedder: Any, **settings: Any) -> aimem.MemoryStore:
    return aimem.MemoryStore(
        url,
        namespace=namespace,
        judge=aimem.HeuristicJudge(),
        embedder=embedder,
        **{**BASE_SETTINGS, **settings},
    )


def search_call(
    mode: str, limit: int, explain: bool = True
) -> Callable[[aimem.MemoryStore, str], list[Any]]:
    """A search function for ``mode``; keyword falls back to the mode-less call of old APIs."""

    def with_mode(store: aimem.MemoryStore, query: str) -> list[Any]:
        return store.search(query, limit=limit, mode=mode, explain=explain)  # type: ignore[call-arg]

    def without_mode(store: aimem.MemoryStore, query: str) -> list[Any]:
        return store.search(query, limit=limit, explain=explain)

    def chosen(store: aimem.MemoryStore, query: str) -> list[Any]:
        try:
            return with_mode(store, query)
        except TypeError:
            if mode != "keyword":
                raise
            return without_mode(store, query)

    return chosen


def probe(
    store: aimem.MemoryStore, mode: str, query: str, limit: int, explain: bool = True
) -> tuple[Any, str | None]:
    """(search function, None) when ``mode`` works on ``store``, else (None, why not)."""
    try:
        store.search(query, limit=limit, mode=mode)  # type: ignore[call-arg]
        return search_call(mode, limit, explain), None
    except TypeError as exc:
        if mode == "keyword":
            return search_call(mode, limit, explain), None
        return None, f"search() takes no mode: {exc}"[:300]
    except aimem.AimemError as exc:
        return None, f"{type(exc).__name__}: {exc}"[:300]


# -- part A: LoCoMo dev ----------------------------------------------------------------


@dataclass
class Question:
    conv: str
    qid: str
    text: str
    evidence: frozenset[str]
    category: int


@dataclass
class Outcome:
    question: Question
    ranked: list[frozenset[str]]  # turn ids of each hit, best first
    ms: float
    hits: list[Any] = field(default_factory=list)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_locomo(data: Path) -> tuple[dict[str, list[dict[str, Any]]], list[Question]]:
    turns: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in read_jsonl(data / "memories.jsonl"):
        turns[row["conv"]].append(row)
    questions = [
        Question(
            row["conv"],
            row["qid"],
            row["question"],
            frozenset(row["evidence"]),
            int(row["category"]),
        )
        for row in read_jsonl(data / "queries.jsonl")
    ]
    return dict(turns), questions


def fill_locomo(
    url: str, turns: dict[str, list[dict[str, Any]]], embedder: Any
) -> tuple[dict[str, dict[str, frozenset[str]]], dict[str, Any]]:
    """Save every turn; return per conversation memory id -> turn ids, and fill figures."""
    by_id: dict[str, dict[str, frozenset[str]]] = {}
    archived = 0
    began = time.perf_counter()
    for conv, rows in turns.items():
        with open_store(url, conv, embedder) as store:
            memories = store.save_many([row["text"] for row in rows])
            ids: dict[str, set[str]] = defaultdict(set)
            for memory, row in zip(memories, rows, strict=True):
                ids[memory.id].add(row["id"])  # identical texts share one memory: any id counts
            by_id[conv] = {k: frozenset(v) for k, v in ids.items()}
            archived += store.stats().archived
    figures = {
        "memories": sum(len(v) for v in by_id.values()),
        "turns": sum(len(v) for v in turns.values()),
        "archived": archived,
        "fill_seconds": round(time.perf_counter() - began, 1),
    }
    return by_id, figures


def score(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    def recall(o: Outcome, k: int) -> float:
        found = frozenset().union(*o.ranked[:k]) if o.ranked[:k] else frozenset()
        return len(o.question.evidence & found) / len(o.question.evidence)

    def reciprocal_rank(o: Outcome) -> float:
        for rank, ids in enumerate(o.ranked[:10], start=1):
            if ids & o.question.evidence:
                return 1.0 / rank
        return 0.0

    n = len(outcomes)
    ms = [o.ms for o in outcomes]
    return {
        "questions": n,
        "recall@5": pct(sum(recall(o, 5) for o in outcomes) / n),
        "recall@10": pct(sum(recall(o, 10) for o in outcomes) / n),
        "all_evidence@10": pct(sum(recall(o, 10) == 1.0 for o in outcomes) / n),
        "mrr@10": pct(sum(reciprocal_rank(o) for o in outcomes) / n),
        "query_ms_mean": round(statistics.fmean(ms), 2),
        "query_ms_p50": round(statistics.median(ms), 2),
    }


def show_misses(
    label: str,
    outcomes: Sequence[Outcome],
    turns: dict[str, list[dict[str, Any]]],
    count: int,
    rng: random.Random,
) -> None:
    """A few questions with no evidence in the top 10, to stderr, for reading."""
    text = {(conv, row["id"]): row["text"] for conv, rows in turns.items() for row in rows}
    misses = [o for o in outcomes if not any(ids & o.question.evidence for ids in o.ranked)]
    for o in rng.sample(misses, min(count, len(misses))):
        q = o.question
        print(f"\n[{label}] MISS {q.qid} cat {q.category}: {q.text}", file=sys.stderr)
        for e in sorted(q.evidence):
            print(f"   evidence {e}: {text.get((q.conv, e), '?')[:160]}", file=sys.stderr)
        for hit, ids in list(zip(o.hits, o.ranked, strict=True))[:3]:
            print(
                f"   hit {sorted(ids)} {hit.score:.3f}: {hit.memory.content[:120]}",
                file=sys.stderr,
            )


def part_a(args: argparse.Namespace, embedder: Any, embedder_why: str | None) -> None:
    data: Path = args.data
    if not (data / "memories.jsonl").is_file():
        emit({"part": "A", "status": "unavailable", "reason": f"no LoCoMo data in {data}"})
        return
    turns, questions = load_locomo(data)
    modes = args.modes or list(ALL_MODES)
    if embedder is None and any(m != "keyword" for m in modes):
        emit({"part": "A", "what": "embedder", "status": "unavailable", "reason": embedder_why})
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    recall: dict[str, dict[str, float]] = {}
    for backend in backends:
        with tempfile.TemporaryDirectory() as tmp:
            places = Places(backend, Path(tmp), args.pg_url)
            try:
                recall[backend] = part_a_on(args, places, turns, questions, modes, embedder)
            except Exception as exc:  # a server that is not there: say so, keep the rest
                if backend == "sqlite":
                    raise
                emit({"part": "A", "backend": backend, "status": "unavailable", "reason": str(exc)})
            finally:
                places.close()
    if len(recall) == 2:
        lite, pg = recall["sqlite"], recall["postgresql"]
        gaps = {c: round(pg[c] - lite[c], 1) for c in lite if c in pg}
        emit({"part": "A", "what": "backends", "recall@10_postgresql_minus_sqlite": gaps})


def part_a_on(
    args: argparse.Namespace,
    places: Places,
    turns: dict[str, list[dict[str, Any]]],
    questions: Sequence[Question],
    modes: Sequence[str],
    embedder: Any,
) -> dict[str, float]:
    """Part A on one backend; returns answerable recall@10 per configuration."""
    rng = random.Random(11)
    backend = places.backend
    base_url = places.url("base")
    try:
        memory_turns, fill = fill_locomo(base_url, turns, embedder)
    except aimem.ValidationError as exc:
        # An aimem that refuses embedders: fall back to a keyword-only fill.
        emit({"part": "A", "what": "embedder", "status": "unavailable", "reason": str(exc)})
        embedder = None
        places.close()
        base_url = places.url("base")
        memory_turns, fill = fill_locomo(base_url, turns, embedder)
    embedder_name = args.embedder if embedder is not None else None
    emit({"part": "A", "backend": backend, "what": "fill", "embedder": embedder_name, **fill})
    recall: dict[str, float] = {}
    for mode in modes:
        for weights, overrides in WEIGHTS.items():
            label = f"{mode}/{weights}"
            record = {
                "part": "A", "backend": backend, "config": label, "mode": mode, "weights": weights
            }  # fmt: skip
            if mode != "keyword" and embedder is None:
                emit({**record, "status": "unavailable", "reason": "no embedder"})
                continue
            url = places.copy("base", f"{mode}_{weights}")
            outcomes, why = run_questions(
                url, questions, memory_turns, embedder, mode, overrides, args.limit
            )
            if why is not None:
                emit({**record, "status": "unavailable", "reason": why})
                continue
            record["embedder"] = embedder_name
            subsets = {
                "answerable (cat 1-4)": [o for o in outcomes if o.question.category != 5],
                "adversarial (cat 5)": [o for o in outcomes if o.question.category == 5],
            }
            for subset, chosen in subsets.items():
                line = {**record, "subset": subset, **score(chosen)}
                if subset.startswith("answerable"):
                    recall[label] = line["recall@10"]
                    line["recall@10_by_category"] = {
                        str(c): score([o for o in chosen if o.question.category == c])["recall@10"]
                        for c in (1, 2, 3, 4)
                    }
                emit(line)
            if args.misses:
                answerable = [o for o in outcomes if o.question.category != 5]
                show_misses(label, answerable, turns, args.misses, rng)
    return recall


def run_questions(
    url: str,
    questions: Sequence[Question],
    memory_turns: dict[str, dict[str, frozenset[str]]],
    embedder: Any,
    mode: str,
    overrides: dict[str, float],
    limit: int,
) -> tuple[list[Outcome], str | None]:
    by_conv: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_conv[q.conv].append(q)
    outcomes: list[Outcome] = []
    for conv, qs in by_conv.items():
        try:
            store = open_store(url, conv, embedder, **overrides)
        except aimem.AimemError as exc:
            return [], f"{type(exc).__name__}: {exc}"[:300]
        with store:
            search, why = probe(store, mode, qs[0].text, limit)
            if search is None:
                return [], why
            for q in qs:
                began = time.perf_counter()
                hits = search(store, q.text)
                ms = (time.perf_counter() - began) * 1000
                ranked = [memory_turns[conv].get(h.memory.id, frozenset()) for h in hits]
                outcomes.append(Outcome(q, ranked, ms, hits))
    return outcomes, None


# -- part B: latency at scale ------------------------------------------------------------


def corpus(args: argparse.Namespace) -> tuple[str, Callable[[int], str], list[str]]:
    """(description, i -> memory text, queries)."""
    rng = random.Random(7)
    memories = args.data / "memories.jsonl"
    if memories.is_file() and not args.synthetic:
        turns = [row["text"] for row in read_jsonl(memories)]
        questions = [row["question"] for row in read_jsonl(args.data / "queries.jsonl")]
        queries = [rng.choice(questions) for _ in range(args.queries)]
        return "LoCoMo dev turns + counter", lambda i: f"{turns[i % len(turns)]} #{i}", queries
    maker = TextMaker(rng)
    queries = []
    for i in range(args.queries):
        words = maker(-1 - i).split()[1:]
        queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(3, 6)))))
    return "synthetic Zipf sentences", maker, queries


def fill_scale(
    url: str,
    size: int,
    text: Callable[[int], str],
    embedder: Any,
    batch: int,
    budget_s: float | None,
) -> tuple[float, float | None]:
    """Fill ``size`` memories; (seconds, None), or (elapsed, projected seconds) when over budget."""
    began = time.perf_counter()
    first = 0.0  # the first batch also loads the model: project from the later ones
    with open_store(url, "bench", embedder, max_memories=max(size, 1)) as store:
        for start in range(0, size, batch):
            store.save_many([text(i) for i in range(start, min(size, start + batch))])
            done = min(size, start + batch)
            elapsed = time.perf_counter() - began
            if start == 0:
                first = elapsed
            elif budget_s and embedder is not None and done < size and done >= 3 * batch:
                projected = first + (elapsed - first) * (size - batch) / (done - batch)
                if projected > budget_s:
                    return elapsed, projected
    return time.perf_counter() - began, None


def part_b(args: argparse.Namespace, embedder: Any, embedder_why: str | None) -> None:
    modes = args.modes or ["keyword", "hybrid"]
    source, text, queries = corpus(args)
    needs_embedder = any(m != "keyword" for m in modes)
    if needs_embedder and embedder is None:
        emit({"part": "B", "what": "embedder", "status": "unavailable", "reason": embedder_why})
    budget = args.max_fill_minutes * 60 if args.max_fill_minutes > 0 else None
    for size in args.scale:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "scale.db"
            use = embedder if needs_embedder else None
            try:
                fill_s, projected = fill_scale(sqlite_url(db), size, text, use, args.batch, budget)
            except aimem.ValidationError as exc:
                emit({"part": "B", "what": "embedder", "status": "unavailable", "reason": str(exc)})
                embedder = use = None
                db.unlink(missing_ok=True)
                fill_s, projected = fill_scale(sqlite_url(db), size, text, None, args.batch, None)
            if projected is not None:
                emit(
                    {
                        "part": "B",
                        "size": size,
                        "what": "embedding fill skipped",
                        "projected_fill_seconds": round(projected),
                        "budget_seconds": budget,
                        "reason": "over --max-fill-minutes; filled keyword-only instead "
                        "(raise it, or 0 for no limit)",
                    }
                )
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{db}{suffix}").unlink(missing_ok=True)
                use = None
                fill_s, _ = fill_scale(sqlite_url(db), size, text, None, args.batch, None)
            emit(
                {
                    "part": "B",
                    "size": size,
                    "what": "fill",
                    "texts": source,
                    "embedder": args.embedder if use is not None else None,
                    "fill_seconds": round(fill_s, 1),
                    "memories_per_second": round(size / fill_s) if fill_s else None,
                }
            )
            for mode in modes:
                record = {"part": "B", "size": size, "mode": mode}
                if mode != "keyword" and use is None:
                    emit({**record, "status": "unavailable", "reason": "no embeddings stored"})
                    continue
                with open_store(sqlite_url(db), "bench", use, max_memories=max(size, 1)) as store:
                    search, why = probe(store, mode, queries[0], args.limit, explain=False)
                    if search is None:
                        emit({**record, "status": "unavailable", "reason": why})
                        continue
                    for q in queries[:5]:  # warm caches (and the query embedder)
                        search(store, q)
                    timings, sizes = time_searches(store, search, queries)
                emit(
                    {
                        **record,
                        "searches": len(timings),
                        "limit": args.limit,
                        "search_ms_p50": ms_p(timings, 0.5),
                        "search_ms_p95": ms_p(timings, 0.95),
                        "search_ms_mean": round(statistics.fmean(timings), 2),
                        "hits_mean": round(statistics.fmean(sizes), 1),
                    }
                )


def time_searches(
    store: aimem.MemoryStore, search: Callable[..., list[Any]], queries: Iterable[str]
) -> tuple[list[float], list[int]]:
    timings, sizes = [], []
    for q in queries:
        began = time.perf_counter()
        hits = search(store, q)
        timings.append((time.perf_counter() - began) * 1000)
        sizes.append(len(hits))
    return timings, sizes


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA, help="LoCoMo dev folder")
    parser.add_argument("--part", choices=["A", "B", "all"], default="A")
    parser.add_argument("--scale", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--modes",
        nargs="+",
        choices=ALL_MODES,
        default=None,
        help="default: all three for A, keyword hybrid for B",
    )
    parser.add_argument("--limit", type=int, default=10, help="hits per search")
    parser.add_argument(
        "--backend",
        choices=["sqlite", "postgresql", "both"],
        default="sqlite",
        help="part A: where the stores live (both: SQLite, then PostgreSQL, and the gaps)",
    )
    parser.add_argument(
        "--pg-url",
        default=os.environ.get("AIMEM_BENCH_PG_URL", "postgresql://root@127.0.0.1:5432/postgres"),
        help="part A on PostgreSQL: an admin URL of the server (databases are made and dropped)",
    )
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2", help="LocalEmbedder model")
    parser.add_argument("--no-embedder", action="store_true", help="keyword only")
    parser.add_argument("--queries", type=int, default=200, help="part B searches per mode")
    parser.add_argument("--batch", type=int, default=1_000, help="part B save_many batch")
    parser.add_argument(
        "--max-fill-minutes",
        type=float,
        default=8.0,
        help="part B: skip embedding a size projected to take longer (0: no limit)",
    )
    parser.add_argument(
        "--synthetic", action="store_true", help="part B: Zipf sentences even when LoCoMo is there"
    )
    parser.add_argument(
        "--misses",
        type=int,
        default=0,
        help="part A: print this many failing questions per config to stderr",
    )
    args = parser.parse_args()
    needs_embedder = args.modes is None or any(m != "keyword" for m in args.modes)
    if args.no_embedder or not needs_embedder:
        embedder, why = None, "disabled by --no-embedder" if args.no_embedder else "not needed"
    else:
        embedder, why = make_embedder(args.embedder)
    if args.part in ("A", "all"):
        part_a(args, embedder, why)
    if args.part in ("B", "all"):
        part_b(args, embedder, why)


if __name__ == "__main__":
    main()
