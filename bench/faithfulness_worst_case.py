"""How long the faithfulness checks take on adversarial texts of 10, 50 and 100 KB.

``unfaithful_reason`` (content vs its interpretation) and ``invented_reason`` (an
extracted statement vs its source) run on every judged save. The content limit
(``settings.max_content_chars``) keeps texts short by default, but it can be raised, so
neither check may grow quadratically. Each shape below is a text built to hit one kind
of work: many distinct names, numbers, kin words or negated clauses, long runs of one
script without spaces, numbers far past Python's 4,300-digit int limit. Each is checked
against two interpretations, neither verbatim: ``dropped``, a reworded copy without the
shape's first item (the checks find what is missing), and ``reversed``, its items in
reverse order (everything is kept, so every check runs to the end, and each look-up of
an item finds it late).

Each (shape, size) runs in its own subprocess with a time limit; a run that raises
prints its error, one that overruns prints ``"timeout"``. Prints one JSON line per
shape and size (seconds for each check), then a summary line with the slowest.

    .venv/bin/python bench/faithfulness_worst_case.py [--sizes 10,50,100] [--limit 60]
    .venv/bin/python bench/faithfulness_worst_case.py --profile names --sizes 100
"""

from __future__ import annotations

import argparse
import cProfile
import json
import multiprocessing
import pstats
import random
import time
from collections.abc import Callable

KB = 1000
_SYLLABLES = "ka ri mo ten sa lu vor el an dis pe tro mi nau gel ost bri fa yo zen".split()
_KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねの"
_KATAKANA = "アイウエオカキクケコサシスセソタチツテトナニヌネノ"


def _words(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(n)]


def _fill(unit: Callable[[int], str], size: int) -> str:
    parts, total, i = [], 0, 0
    while total < size:
        parts.append(piece := unit(i))
        total, i = total + len(piece), i + 1
    return "".join(parts)[:size]


def _shapes(size: int) -> dict[str, str]:
    """Shape name -> content of about ``size`` characters."""
    rng = random.Random(24)
    names = [w.capitalize() for w in _words(rng, 4000)]
    kin = "mother father sister brother son daughter wife husband cousin dog cat".split()
    shapes = {
        "names": _fill(lambda i: f"I met {names[i % len(names)]}{i} today. ", size),
        "same_name": _fill(lambda i: "and Alice ", size),
        "numbers": _fill(lambda i: f"I paid {i * 7919 % 100003} yen. ", size),
        "same_number": _fill(lambda i: "42 ", size),
        "kin": _fill(lambda i: f"my {kin[i % len(kin)]} and ", size),
        "negations": _fill(lambda i: f"I don't like {_words(rng, 1)[0]}, ", size),
        "letters_no_spaces": "a" * size,
        "capitals_no_spaces": "Ab" * (size // 2),
        "digits_no_spaces": "7" * size,
        "digit_groups": _fill(lambda i: "1,000", size),
        "kanji_digits": "三" * size,
        "kanji_units": "三万" * (size // 2),
        "hiragana_run": "".join(rng.choice(_KANA) for _ in range(size)),
        "katakana_run": "".join(rng.choice(_KATAKANA) for _ in range(size)),
        "kana_names": _fill(lambda i: f"{_KATAKANA[i % 25]}{_KATAKANA[i // 25 % 25]}さんと", size),
        "hiragana_names": _fill(lambda i: f"{_KANA[i % 25]}{_KANA[i // 25 % 25]}ちゃん", size),
        "kin_as_names": _fill(lambda i: "おかあさん", size),
        "particles_then_name": "は" * (size - 2) + "さん",
        "spaced_capitals": _fill(lambda i: " " * 50 + "\n" * (i % 2) + names[i % len(names)], size),
        "japanese_mixed": _fill(lambda i: f"私の母は{i}歳で、ミケという名前の猫がいない。", size),
    }
    return shapes


def _interpretations(text: str) -> dict[str, str]:
    """The two interpretations each shape is checked against (see the module docstring)."""
    cut = max(1, min(len(text) // 20, 200))
    words = text.split(" ")
    backwards = " ".join(reversed(words)) if len(words) > 1 else text[::-1]
    return {
        "dropped": "The user says that " + text[cut:].replace(" and ", " & "),
        "reversed": "The user says that " + backwards,
    }


def _time(shape: str, size: int, queue: multiprocessing.Queue[dict[str, object]]) -> None:
    from aimem.judges.faithfulness import invented_reason, unfaithful_reason

    content = _shapes(size)[shape]
    row: dict[str, object] = {"shape": shape, "kb": size // KB}
    for variant, interpretation in _interpretations(content).items():
        for name, check in (("unfaithful", unfaithful_reason), ("invented", invented_reason)):
            start = time.perf_counter()
            try:
                check(content, interpretation)
            except Exception as exc:  # the point is to see it: any error is a finding
                row[f"{name}_{variant}_s"] = f"raised {type(exc).__name__}: {str(exc)[:60]}"
                continue
            row[f"{name}_{variant}_s"] = round(time.perf_counter() - start, 3)
    queue.put(row)


def _run(shape: str, size: int, limit: float) -> dict[str, object]:
    queue: multiprocessing.Queue[dict[str, object]] = multiprocessing.Queue()
    worker = multiprocessing.Process(target=_time, args=(shape, size, queue))
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        worker.kill()
        worker.join()
        return {"shape": shape, "kb": size // KB, "timeout": limit}
    return queue.get() if not queue.empty() else {"shape": shape, "kb": size // KB, "died": True}


def _profile(shape: str, size: int) -> None:
    from aimem.judges.faithfulness import invented_reason, unfaithful_reason

    content = _shapes(size)[shape]
    profiler = cProfile.Profile()
    for interpretation in _interpretations(content).values():
        profiler.runcall(unfaithful_reason, content, interpretation)
        profiler.runcall(invented_reason, content, interpretation)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,50,100", help="sizes in KB, comma-separated")
    parser.add_argument("--shapes", default="", help="only these shapes, comma-separated")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per shape and size")
    parser.add_argument("--profile", metavar="SHAPE", help="cProfile one shape instead")
    args = parser.parse_args()
    sizes = [int(s) * KB for s in args.sizes.split(",")]
    if args.profile:
        for size in sizes:
            _profile(args.profile, size)
        return
    shapes = args.shapes.split(",") if args.shapes else list(_shapes(100))
    slowest: tuple[float, str] = (0.0, "")
    failed: list[str] = []
    for size in sizes:
        for shape in shapes:
            row = _run(shape, size, args.limit)
            print(json.dumps(row, ensure_ascii=False), flush=True)
            times = [v for k, v in row.items() if k.endswith("_s") and isinstance(v, float)]
            worst = args.limit if "timeout" in row else max(times, default=0.0)
            slowest = max(slowest, (worst, f"{shape}@{size // KB}KB"))
            if len(times) < 4:
                failed.append(f"{shape}@{size // KB}KB")
    summary = {"summary": True, "slowest_s": slowest[0], "slowest": slowest[1], "failed": failed}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
