"""LLM calls, tokens, library overhead, search latency, peak RSS and file size per stored size.

For each size N (``--sizes``), in a fresh subprocess (so peak RSS is that size's):

1. Fill a fresh SQLite file to N memories through the public API: ``save_many`` in
   batches of ``--fill-batch`` with an instant in-process judge
   (``aimem.testing.FixedJudge``, priorities 0.3-1.0) and ``related_limit=0`` (no
   related lookup while filling), embedder ``HashEmbedder(dim=384)``. Not measured.
2. Reopen it as a user would: ``OpenAIJudge`` against ``harness.CountingStub`` (an
   OpenAI-compatible server on 127.0.0.1, latency 0), the same 384-dim embedder, default
   settings except ``max_memories`` (= N: everything active, the worst case for search
   and related lookups). A few warm-up saves (the vector index is built on the first)
   are not counted. Then, unless ``--no-cap100``, the largest size once more with
   ``max_memories=100``: its all-active file is reused, pruned to 100 by
   ``store.prune()`` in a separate process (no second fill), and measured afresh.
3. Measure (a) ``--saves`` single ``save`` calls (sync API): LLM calls, prompt /
   response-schema / completion tokens and overhead per save; (b) ``--dups`` exact
   duplicates of active memories: LLM calls (must be 0) and overhead; (c) ``save_many``
   batches of 8 with ``judge_batch_size`` 1 and 8 (``"batch": "unsupported"`` when the
   installed aimem has no such setting); (d) ``--queries`` searches per mode (keyword,
   hybrid), limit 10; (e) peak RSS of the process; (f) the file size after a WAL
   checkpoint, per stored memory (archived rows included).

Overhead = wall time minus the stub's own time on each request (read, latency, reply;
timed in its server threads) minus the in-process embedder's time: what aimem, the
openai SDK and httpx cost. ``sdk_floor_ms_p50`` is the same figure for a bare SDK
``chat.completions.create`` to the same stub, for scale. Tokens: see ``"tokens"``
(tiktoken when it loads offline, else characters / 4, as the stub's own ``usage``).

Each size also reports the p50 of each phase of a save (``single_breakdown_ms_p50``,
from extra saves with aimem's internals wrapped) and peak RSS after each phase. A size
that does not finish within ``--budget`` (all sizes together) gets a ``"status":
"timeout"`` line, and the summary names the largest size reached.

Prints one JSON line per size, then a summary line with the issue's checks:

    python bench/perf.py --sizes 1000,10000,100000
    python bench/perf.py --one-size 100000 --max-memories 100   # one size, in-process

A/B against another checkout of aimem (e.g. ``git worktree add --detach /tmp/base
b676d43``): ``--baseline DIR`` runs only the single-save measurement (a) of one size
(``--size``, default 1000) for this checkout and the baseline alternately, ``--rounds``
times, each run a fresh process of this script with ``PYTHONPATH`` set to its checkout
(so both sides are measured by the same bench code; ``--current DIR`` measures another
checkout than this script's in its place). Prints one JSON line per run, then
the medians per side and their ratio (this checkout / baseline); a run that fails, e.g.
an old checkout without a setting, gets a ``"status": "failed"`` line and is left out:

    python bench/perf.py --baseline /tmp/base --saves 300 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import (
    CountingStub,
    StubCounts,
    emit,
    peak_rss_mb,
    percentile,
    query_source,
    text_source,
)

import aimem
from aimem.testing import FixedJudge, HashEmbedder

DIM = 384
WARMUP_SAVES = 5
WARMUP_SEARCHES = 5
BATCH = 8


class TimedEmbedder:
    """``HashEmbedder`` that adds up the seconds spent embedding (not library overhead)."""

    def __init__(self, inner: HashEmbedder) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.calls = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        began = time.perf_counter()
        try:
            return await self.inner.embed(texts)
        finally:
            self.inner.calls.clear()  # it records every call: keep RSS honest
            self.calls += 1
            self.seconds += time.perf_counter() - began


@dataclass
class Sample:
    wall_s: float
    stub: StubCounts
    embed_s: float
    embed_calls: int

    @property
    def overhead_ms(self) -> float:
        return (self.wall_s - self.stub.server_s - self.embed_s) * 1000


class Meter:
    """Times calls and takes the stub's and the embedder's share out of them."""

    def __init__(self, stub: CountingStub, embedder: TimedEmbedder) -> None:
        self.stub = stub
        self.embedder = embedder

    def __call__(self, call: Callable[[], Any]) -> Sample:
        counts, embed_s, embed_calls = (
            self.stub.counts(),
            self.embedder.seconds,
            self.embedder.calls,
        )
        began = time.perf_counter()
        call()
        wall = time.perf_counter() - began
        return Sample(
            wall,
            self.stub.counts() - counts,
            self.embedder.seconds - embed_s,
            self.embedder.calls - embed_calls,
        )


def saving(store: aimem.MemoryStore, content: str) -> Callable[[], Any]:
    return lambda: store.save(content)


def per_item(samples: Sequence[Sample], items: int = 1) -> dict[str, Any]:
    """LLM calls, tokens and overhead per saved item over ``samples`` of ``items`` each."""
    n = len(samples) * items
    overhead = [s.overhead_ms / items for s in samples]
    return {
        "n": n,
        "llm_calls_per_save": round(sum(s.stub.chat for s in samples) / n, 3),
        "llm_calls_max_per_call": max(s.stub.chat for s in samples),
        "embed_calls_per_save": round(sum(s.embed_calls for s in samples) / n, 3),
        "stub_embedding_requests": sum(s.stub.embeddings for s in samples),
        "prompt_tokens_per_save": round(sum(s.stub.prompt_tokens for s in samples) / n, 1),
        "schema_tokens_per_save": round(sum(s.stub.schema_tokens for s in samples) / n, 1),
        "completion_tokens_per_save": round(sum(s.stub.completion_tokens for s in samples) / n, 1),
        "overhead_ms_p50": percentile(overhead, 0.5),
        "overhead_ms_p95": percentile(overhead, 0.95),
        "wall_ms_p50": percentile([s.wall_s * 1000 / items for s in samples], 0.5),
    }


def sdk_floor(stub: CountingStub, calls: int = 40) -> float | None:
    """Overhead of a bare openai SDK chat call to the stub (p50 ms), for scale."""
    import openai

    async def run() -> list[float]:
        client = openai.AsyncOpenAI(base_url=stub.base_url, api_key="sk-bench", max_retries=0)
        messages = [
            {"role": "system", "content": "Judge one item. " * 100},
            {"role": "user", "content": '<memory-data id="0123456789abcdef">tea</memory-data>'},
        ]
        out = []
        try:
            for _ in range(calls):
                counts, began = stub.counts(), time.perf_counter()
                await client.chat.completions.create(
                    model="bench",
                    messages=messages,  # type: ignore[arg-type]
                    response_format={"type": "json_object"},
                )
                wall = time.perf_counter() - began
                out.append((wall - (stub.counts() - counts).server_s) * 1000)
        finally:
            await client.close()
        return out[5:]

    return percentile(asyncio.run(run()), 0.5)


def fill(url: str, size: int, cap: int, text: Callable[[int], str], batch: int) -> float:
    """Fill to ``size`` memories (instant judge, no related lookups); seconds taken."""
    rng = random.Random(3)
    judge = FixedJudge(scorer=lambda _content: round(rng.uniform(0.3, 1.0), 2))
    embedder = HashEmbedder(dim=DIM)
    began = time.perf_counter()
    with aimem.MemoryStore(
        url, judge=judge, embedder=embedder, max_memories=cap, related_limit=0
    ) as store:
        for start in range(0, size, batch):
            store.save_many([text(i) for i in range(start, min(size, start + batch))])
            judge.calls.clear()
            judge.related_seen.clear()
            embedder.calls.clear()
    return time.perf_counter() - began


#: "none" measures aimem's default configuration (keyword search only, no vectors).
EMBEDDER = "hash"


def open_store(
    url: str, stub: CountingStub, embedder: TimedEmbedder, cap: int, **settings: Any
) -> aimem.MemoryStore:
    judge = aimem.OpenAIJudge(base_url=stub.base_url, api_key="sk-bench", model="bench")
    chosen = embedder if EMBEDDER == "hash" else None
    return aimem.MemoryStore(url, judge=judge, embedder=chosen, max_memories=cap, **settings)


def batches(
    url: str,
    stub: CountingStub,
    embedder: TimedEmbedder,
    cap: int,
    texts: Callable[[int], str],
    first: int,
    count: int,
    batch_size: int,
) -> dict[str, Any]:
    """``count`` save_many calls of 8 new texts with ``judge_batch_size=batch_size``."""
    try:
        store = open_store(url, stub, embedder, cap, judge_batch_size=batch_size)
    except aimem.ValidationError as exc:
        return {"batch": "unsupported", "reason": str(exc)[:200]}
    meter = Meter(stub, embedder)
    samples = []
    try:
        with store:
            for b in range(count):
                contents = [texts(first + b * BATCH + i) for i in range(BATCH)]
                samples.append(meter(lambda contents=contents: store.save_many(contents)))
    except Exception as exc:
        return {"batch": "error", "error": f"{type(exc).__name__}: {exc}"[:300]}
    return {"judge_batch_size": batch_size, "items_per_call": BATCH, **per_item(samples, BATCH)}


def searches(
    store: aimem.MemoryStore, meter: Meter, queries: Sequence[str], mode: str
) -> dict[str, Any]:
    def one(query: str) -> Callable[[], Any]:
        return lambda: store.search(query, limit=10, mode=mode)  # type: ignore[arg-type]

    for query in queries[:WARMUP_SEARCHES]:
        one(query)()
    timings = [meter(one(q)).overhead_ms for q in queries]
    return {
        "search_ms_p50": percentile(timings, 0.5),
        "search_ms_p95": percentile(timings, 0.95),
    }


PHASES = (
    ("duplicate_check", "_db", "find_active_duplicate"),
    ("related_lookup", "_retriever", "related"),
    ("judge_client", "judge", "interpret"),
    ("insert_and_capacity", "_db", "insert"),
)


def breakdown(store: aimem.MemoryStore, stub: CountingStub, texts: Sequence[str]) -> dict[str, Any]:
    """p50 ms of each phase of a save, timed by wrapping aimem internals (bench-only).

    Separate saves from the headline ones, so the wrappers cost those nothing. The
    judge phase excludes the stub's time, so it is the prompt, the SDK and parsing.
    """
    inner = getattr(store, "_async", None)
    spent: dict[str, list[float]] = {name: [] for name, _, _ in PHASES}
    patched: list[tuple[Any, str]] = []

    def wrap(owner: Any, attr: str, name: str) -> None:
        original = getattr(owner, attr)

        async def timed(*args: Any, **kwargs: Any) -> Any:
            counts, began = stub.counts(), time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                taken = time.perf_counter() - began - (stub.counts() - counts).server_s
                spent[name].append(taken * 1000)

        def timed_sync(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[name].append((time.perf_counter() - began) * 1000)

        chosen = timed if asyncio.iscoroutinefunction(original) else timed_sync
        setattr(owner, attr, chosen)
        patched.append((owner, attr))

    try:
        for _, owner_attr, method in PHASES:
            owner = getattr(inner, owner_attr)
            getattr(owner, method)  # all present, or none patched
        for name, owner_attr, method in PHASES:
            wrap(getattr(inner, owner_attr), method, name)
    except AttributeError as exc:
        return {"status": "unavailable", "reason": f"aimem internals moved: {exc}"[:200]}
    try:
        for content in texts:
            store.save(content)
    finally:
        for owner, attr in patched:
            delattr(owner, attr)  # back to the class's method
    return {name: percentile(values, 0.5) for name, values in spent.items()} | {"saves": len(texts)}


def db_size(path: Path) -> int:
    """Bytes of the file after folding the WAL back in."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    wal = Path(f"{path}-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def run_one(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    size: int = args.one_size
    cap: int = args.max_memories or size
    source, text = text_source(path=args.texts)
    _, queries = query_source(args.queries + WARMUP_SEARCHES)
    db = workdir / f"perf-{size}-{cap}.db"
    url = f"sqlite:///{db}"
    record: dict[str, Any] = {
        "bench": "perf",
        "size": size,
        "max_memories": cap,
        "texts": source,
        "loadavg_1m_at_start": round(os.getloadavg()[0], 2),
    }
    first_text = size
    if args.from_db is not None and args.from_db.is_file():
        # The all-active file of this size, pruned to the cap by another process.
        db, url = args.from_db, f"sqlite:///{args.from_db}"
        record["fill"] = (
            f"reused the max_memories={size} file of this size (after its measurements), "
            f"pruned to {cap} by store.prune() in a separate process"
        )
        first_text = 10 * size  # counters the reused file has never seen
    else:
        fill_s = fill(url, size, cap, text, args.fill_batch)
        record["fill_seconds"] = round(fill_s, 1)
        record["fill"] = f"save_many x{args.fill_batch}, FixedJudge, related_limit=0"
    rss = record["peak_rss_mb_by_phase"] = {"fill": peak_rss_mb()}
    with CountingStub(latency=0.0, embedding_dim=DIM) as stub:
        record["tokens"] = stub.tokens
        record["stub_connections"] = stub.connections
        embedder = TimedEmbedder(HashEmbedder(dim=DIM))
        meter = Meter(stub, embedder)
        nxt = first_text
        measured_began = time.perf_counter()
        with open_store(url, stub, embedder, cap) as store:
            for i in range(WARMUP_SAVES):
                store.save(text(nxt + i))
            nxt += WARMUP_SAVES
            rss["warmup (index built)"] = peak_rss_mb()
            singles = [meter(saving(store, text(nxt + i))) for i in range(args.saves)]
            nxt += args.saves
            record["single"] = per_item(singles)
            if args.single_only:
                record["aimem"] = str(Path(aimem.__file__).resolve().parents[1])
                return record
            record["single_breakdown_ms_p50"] = breakdown(
                store, stub, [text(nxt + i) for i in range(args.breakdown_saves)]
            )
            nxt += args.breakdown_saves
            active = [m.content for m in store.list(limit=args.dups)]
            dups = [meter(saving(store, c)) for c in active]
            record["duplicate"] = per_item(dups)
            rss["single saves"] = peak_rss_mb()
            record["search"] = {
                mode: searches(store, meter, queries, mode) for mode in ("keyword", "hybrid")
            }
            rss["searches"] = peak_rss_mb()
        # One store at a time, as a user holds it: let this one's vector index go first.
        del store
        gc.collect()
        for batch_size in (1, BATCH):
            record[f"save_many_8_bs{batch_size}"] = batches(
                url, stub, embedder, cap, text, nxt, args.batches, batch_size
            )
            nxt += args.batches * BATCH
            gc.collect()
            rss[f"save_many bs{batch_size} (new store)"] = peak_rss_mb()
        record["measure_seconds"] = round(time.perf_counter() - measured_began, 1)
        record["sdk_floor_ms_p50"] = sdk_floor(stub)
        with aimem.MemoryStore(url, judge=FixedJudge(), max_memories=cap) as store:
            stats = store.stats()
    size_bytes = db_size(db)
    record.update(
        {
            "active_after": stats.count,
            "archived_after": stats.archived,
            "memories_stored": stats.total,
            "db_bytes": size_bytes,
            "db_bytes_per_memory": round(size_bytes / max(stats.total, 1)),
            "peak_rss_mb": peak_rss_mb(),
            "embedder": f"HashEmbedder(dim={DIM}) in-process; its time is not counted"
            if EMBEDDER == "hash"
            else "none (aimem's default: keyword search only)",
            "judge": "OpenAIJudge -> CountingStub 127.0.0.1, latency 0",
            "warmup": {"saves": WARMUP_SAVES, "searches_per_mode": WARMUP_SEARCHES},
        }
    )
    return record


def prune_to(db: Path, cap: int) -> dict[str, Any]:
    """Lower an existing file's cap (``--prune-db``): archive down to ``cap`` active."""
    began = time.perf_counter()
    with aimem.MemoryStore(f"sqlite:///{db}", judge=FixedJudge(), max_memories=cap) as store:
        report = store.prune()
    return {
        "archived": len(report.archived),
        "prune_seconds": round(time.perf_counter() - began, 1),
    }


def child(args: argparse.Namespace, size: int, cap: int | None, workdir: Path) -> list[str]:
    command = [
        sys.executable,
        __file__,
        "--one-size",
        str(size),
        "--workdir",
        str(workdir),
        "--saves",
        str(args.saves),
        "--dups",
        str(args.dups),
        "--breakdown-saves",
        str(args.breakdown_saves),
        "--batches",
        str(args.batches),
        "--queries",
        str(args.queries),
        "--fill-batch",
        str(args.fill_batch),
    ]
    if cap is not None:
        command += ["--max-memories", str(cap)]
    command += ["--embedder", args.embedder]
    if args.texts is not None:
        command += ["--texts", str(args.texts)]
    return command


def run_child(command: list[str], deadline: float) -> subprocess.CompletedProcess[str] | None:
    """Run one child until the overall deadline; None if it ran out of time."""
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=max(deadline - time.monotonic(), 1.0),
        )
    except subprocess.TimeoutExpired:
        return None


def revision(checkout: Path) -> str:
    """The checkout's short commit ('+dirty' when it has uncommitted changes), or '?'."""
    git = ["git", "-C", str(checkout)]
    try:
        sha = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return sha + ("+dirty" if dirty else "")


def ab(args: argparse.Namespace) -> int:
    """``--baseline``: the single-save section of one size, this checkout and the baseline
    alternately, each run in a fresh process importing aimem from its own checkout."""
    here = (args.current or Path(__file__).resolve().parents[1]).resolve()
    sides = {"current": here, "baseline": args.baseline.resolve()}
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    failed = False
    for round_ in range(1, args.rounds + 1):
        for side, checkout in sides.items():
            command = [sys.executable, __file__, "--one-size", str(args.size), "--single-only"]
            command += ["--saves", str(args.saves), "--fill-batch", str(args.fill_batch)]
            command += ["--embedder", args.embedder]
            if args.texts is not None:
                command += ["--texts", str(args.texts.resolve())]
            done = subprocess.run(
                command,
                env={**os.environ, "PYTHONPATH": str(checkout)},
                cwd=checkout,
                capture_output=True,
                text=True,
            )
            lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
            head = {"bench": "perf-ab", "round": round_, "side": side}
            head |= {"checkout": str(checkout), "commit": revision(checkout)}
            record = json.loads(lines[-1]) if done.returncode == 0 and lines else None
            if record is None or Path(record.get("aimem", "")) != checkout:
                emit(
                    head
                    | {"status": "failed", "returncode": done.returncode}
                    | {"aimem": record and record.get("aimem"), "stderr": done.stderr[-1500:]}
                )
                failed = True
                continue
            single = record["single"]
            runs[side].append(single)
            emit(head | {"size": args.size, "single": single})
            print(
                f"round {round_} {side:8} {head['commit']:>13}: overhead p50 "
                f"{single['overhead_ms_p50']:.2f} ms/save, "
                f"{single['prompt_tokens_per_save']:.1f} prompt tokens/save",
                file=sys.stderr,
            )
    medians: dict[str, dict[str, Any]] = {}
    for side, singles in runs.items():
        medians[side] = {
            key: statistics.median(s[key] for s in singles) if singles else None
            for key in ("overhead_ms_p50", "overhead_ms_p95", "prompt_tokens_per_save")
        } | {"runs": len(singles), "commit": revision(sides[side])}
    ratio = {
        key: round(medians["current"][key] / medians["baseline"][key], 3)
        if medians["current"][key] and medians["baseline"][key]
        else None
        for key in ("overhead_ms_p50", "prompt_tokens_per_save")
    }
    emit(
        {"bench": "perf-ab", "summary": True, "size": args.size, "saves": args.saves}
        | {"median": medians, "ratio_current_vs_baseline": ratio}
    )
    for side, m in medians.items():
        print(
            f"median   {side:8} {m['commit']:>13}: overhead p50 {m['overhead_ms_p50']} "
            f"ms/save, {m['prompt_tokens_per_save']} prompt tokens/save ({m['runs']} runs)",
            file=sys.stderr,
        )
    print(f"ratio current/baseline: {ratio}", file=sys.stderr)
    return 1 if failed else 0


def get(record: dict[str, Any], *path: str) -> Any:
    for key in path:
        if not isinstance(record, dict):
            return None
        record = record.get(key)  # type: ignore[assignment]
    return record


def summary(results: list[dict[str, Any]], wanted: Sequence[int]) -> dict[str, Any]:
    """The issue's must-show figures as booleans (None when not measured)."""
    full = {r["size"]: r for r in results if r.get("max_memories") == r.get("size")}
    done = [s for s in wanted if s in full]
    largest = max(done) if done else None
    small = min(done) if done else None

    def all_of(values: list[Any], test: Callable[[Any], bool]) -> bool | None:
        values = [v for v in values if v is not None]
        return all(test(v) for v in values) if values else None

    def batch_ok(key: str, limit: float) -> bool | str | None:
        entries = [r.get(f"save_many_8_bs{BATCH}", {}) for r in results]
        if any(e.get("batch") == "unsupported" for e in entries):
            return "unsupported"
        return all_of([e.get(key) for e in entries], lambda v: v <= limit)

    p50 = {s: get(full[s], "single", "overhead_ms_p50") for s in done}
    ratio = (
        round(p50[largest] / p50[small], 2)
        if largest and small and largest != small and p50[small]
        else None
    )
    checks = {
        "llm_calls_per_save_le_1": all_of(
            [get(r, "single", "llm_calls_max_per_call") for r in results], lambda v: v <= 1
        ),
        "duplicate_llm_calls_0": all_of(
            [get(r, "duplicate", "llm_calls_per_save") for r in results], lambda v: v == 0
        ),
        "batch8_llm_calls_per_save_le_0_2": batch_ok("llm_calls_per_save", 0.2),
        "prompt_tokens_per_save_le_1000": all_of(
            [get(r, "single", "prompt_tokens_per_save") for r in results], lambda v: v <= 1000
        ),
        "batch8_prompt_tokens_per_save_le_500": batch_ok("prompt_tokens_per_save", 500),
        f"overhead_p50_{largest}_le_3ms": (p50.get(largest) or 99) <= 3.0 if largest else None,
        f"overhead_p50_ratio_{largest}_vs_{small}": ratio,
        "overhead_ratio_le_1_5": ratio <= 1.5 if ratio is not None else None,
        f"peak_rss_{largest}_le_500mb": (
            get(full[largest], "peak_rss_mb") <= 500 if largest else None
        ),
    }
    capped = [r for r in results if r.get("max_memories") == 100 and r.get("size") == largest]
    if capped and small:
        c50 = get(capped[0], "single", "overhead_ms_p50")
        checks[f"overhead_p50_{largest}_cap100_le_3ms"] = c50 <= 3.0 if c50 else None
        checks[f"overhead_p50_ratio_{largest}_cap100_vs_{small}"] = (
            round(c50 / p50[small], 2) if c50 and p50[small] else None
        )
        checks[f"peak_rss_{largest}_cap100_le_500mb"] = get(capped[0], "peak_rss_mb") <= 500
    return {
        "bench": "perf",
        "summary": True,
        "sizes_done": done,
        "largest_size_reached": largest,
        "not_reached": [s for s in wanted if s not in full],  # see their "status" lines
        "overhead_ms_p50_by_size": p50,
        "checks": checks,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated")
    parser.add_argument("--saves", type=int, default=300, help="single saves measured")
    parser.add_argument("--dups", type=int, default=100, help="exact-duplicate saves measured")
    parser.add_argument(
        "--breakdown-saves", type=int, default=100, help="extra saves timed phase by phase"
    )
    parser.add_argument("--batches", type=int, default=25, help="save_many calls of 8 each")
    parser.add_argument("--queries", type=int, default=200, help="searches per mode")
    parser.add_argument("--fill-batch", type=int, default=2000, help="save_many batch to fill")
    parser.add_argument("--texts", type=Path, default=None, help="JSONL with a text field")
    parser.add_argument(
        "--no-cap100", action="store_true", help="skip the max_memories=100 run at the largest"
    )
    parser.add_argument(
        "--budget", type=float, default=540.0, help="seconds for all sizes together"
    )
    parser.add_argument(
        "--embedder",
        choices=("hash", "none"),
        default="hash",
        help="hash: 384-dim HashEmbedder (vectors, semantic related lookups); none: the "
        "default configuration, keyword only (default: %(default)s)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another aimem checkout: A/B of the single saves of one size against it",
    )
    parser.add_argument(
        "--current",
        type=Path,
        help="with --baseline: the checkout measured against it (default: this script's)",
    )
    parser.add_argument("--size", type=int, default=1000, help="with --baseline: the size")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline: runs per side")
    parser.add_argument("--single-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--one-size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--max-memories", type=int, help="with --one-size (default: the size)")
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--from-db", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--prune-db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    global EMBEDDER
    EMBEDDER = args.embedder

    if args.baseline is not None:
        return ab(args)
    if args.prune_db is not None:
        emit(prune_to(args.prune_db, args.max_memories or 100))
        return 0
    if args.one_size is not None:
        if args.workdir is not None:
            emit(run_one(args, args.workdir))
        else:
            with tempfile.TemporaryDirectory(prefix="aimem-perf-") as tmp:
                emit(run_one(args, Path(tmp)))
        return 0

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    runs: list[tuple[int, int | None]] = [(s, None) for s in sizes]
    if not args.no_cap100 and sizes and max(sizes) > 100:
        runs.append((max(sizes), 100))
    deadline = time.monotonic() + args.budget
    results: list[dict[str, Any]] = []
    failed = False
    with tempfile.TemporaryDirectory(prefix="aimem-perf-") as tmp:
        workdir = Path(tmp)
        for size, cap in runs:
            command = child(args, size, cap, workdir)
            extra: dict[str, Any] = {}
            if cap is not None:
                full = workdir / f"perf-{size}-{size}.db"
                if full.is_file():  # reuse the all-active file instead of filling again
                    done = run_child(
                        [
                            sys.executable,
                            __file__,
                            "--prune-db",
                            str(full),
                            "--max-memories",
                            str(cap),
                        ],
                        deadline,
                    )
                    if isinstance(done, subprocess.CompletedProcess) and done.returncode == 0:
                        extra = json.loads(done.stdout.strip().splitlines()[-1])
                        command += ["--from-db", str(full)]
            done = run_child(command, deadline)
            if not isinstance(done, subprocess.CompletedProcess):
                emit(
                    {
                        "bench": "perf",
                        "size": size,
                        "max_memories": cap or size,
                        "status": "timeout",
                        "reason": f"past the --budget of {args.budget:.0f} s for all sizes",
                    }
                )
                failed = True
                break
            lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
            if done.returncode != 0 or not lines:
                emit(
                    {
                        "bench": "perf",
                        "size": size,
                        "max_memories": cap or size,
                        "status": "failed",
                        "returncode": done.returncode,
                        "stderr": done.stderr[-1500:],
                    }
                )
                failed = True
                continue
            record = json.loads(lines[-1])
            if extra:
                record["prune"] = extra
            results.append(record)
            emit(record)
            keep = f"perf-{max(sizes)}-{max(sizes)}.db"  # reused by the max_memories=100 run
            for db in workdir.glob("perf-*"):
                if not db.name.startswith(keep):
                    db.unlink()
    emit(summary(results, sizes))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
