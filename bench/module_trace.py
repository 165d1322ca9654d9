"""How the code is layered, measured: the longest import chain, and the modules one save enters.

1. The import graph of ``aimem/`` read from the source (every import that runs, function-local
   ones included; ``--type-checking`` adds ``if TYPE_CHECKING:`` imports): its longest chain
   of modules ("floors"), printed in full, and whether it has a cycle.
2. One offline save traced with ``sys.setprofile`` (the event loop on this thread, the store's
   database threads too): after a warm-up store, a store (SQLite file, ``HeuristicJudge``, no
   embedder) holding one memory takes a second save, which is traced. Counted:
   the distinct aimem modules whose functions run, and the calls that cross from one aimem
   module into another ("hops"), with the busiest pairs.

Run it against any checkout (``PYTHONPATH=/path/to/checkout``) to compare layouts:

    python bench/module_trace.py
    PYTHONPATH=/tmp/old python bench/module_trace.py --root /tmp/old
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import sys
import tempfile
from collections import Counter
from functools import cache
from pathlib import Path


def _modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in sorted((root / "aimem").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def import_graph(root: Path, type_checking: bool) -> dict[str, set[str]]:
    """Module -> the aimem modules it imports."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = set() if type_checking else _type_checking_lines(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    origin = ".".join([*base, node.module] if node.module else base)
                else:
                    origin = node.module or ""
                for a in node.names:
                    sub = f"{origin}.{a.name}"
                    targets.append(sub if sub in modules else origin)
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def longest_chain(graph: dict[str, set[str]]) -> tuple[list[str], bool]:
    """The longest import chain (a cycle's edges are cut where found), and whether one was."""
    state: dict[str, int] = {}
    cyclic = False

    @cache
    def chain(node: str) -> tuple[str, ...]:
        nonlocal cyclic
        state[node] = 1
        best: tuple[str, ...] = ()
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cyclic = True
                continue
            candidate = chain(nxt)
            if len(candidate) > len(best):
                best = candidate
        state[node] = 2
        return (node, *best)

    sys.setrecursionlimit(10_000)
    longest = max((chain(n) for n in sorted(graph)), key=len)
    return list(longest), cyclic


def trace_one_save() -> dict[str, object]:
    """Modules and cross-module calls of one offline save into a SQLite store."""
    import threading

    import aimem

    entered: Counter[str] = Counter()
    hops: Counter[tuple[str, str]] = Counter()

    def profile(frame, event, arg):  # type: ignore[no-untyped-def]
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        if not callee.startswith("aimem"):
            return
        entered[callee] += 1
        caller = frame.f_back
        while caller is not None and not caller.f_globals.get("__name__", "").startswith("aimem"):
            caller = caller.f_back  # through asyncio, threads' runners and libraries
        if caller is not None:
            origin = caller.f_globals["__name__"]
            if origin != callee:
                hops[(origin, callee)] += 1

    async def save(path: str, content: str, traced: bool) -> None:
        store = aimem.AsyncMemoryStore(f"sqlite:///{path}", judge=aimem.HeuristicJudge())
        if traced:  # the store's database threads start now, so they are traced too
            threading.setprofile(profile)
            sys.setprofile(profile)
        try:
            await store.save(content)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
            await store.aclose()

    with tempfile.TemporaryDirectory() as folder:
        # A first store warms imports and caches; the traced save goes into a second one
        # holding a memory already (so related lookups find something).
        asyncio.run(save(f"{folder}/warm.db", "I started learning the cello last spring.", False))
        asyncio.run(save(f"{folder}/trace.db", "I live in Sendai with my wife.", False))
        asyncio.run(
            save(f"{folder}/trace.db", "We moved to Sapporo in April for my wife's job.", True)
        )
    return {
        "modules_entered": len(entered),
        "module_hops": sum(hops.values()),
        "modules": sorted(entered),
        "busiest_hops": [f"{a} -> {b}: {n}" for (a, b), n in hops.most_common(8)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    result: dict[str, object] = {"root": str(args.root)}
    for label, with_tc in (("runs", False), ("with_type_checking", True)):
        graph = import_graph(args.root, with_tc)
        chain, cyclic = longest_chain(graph)
        result[f"longest_chain_{label}"] = len(chain)
        result[f"chain_{label}"] = " -> ".join(chain)
        result[f"cycle_{label}"] = cyclic
    result["top_level_modules"] = len(
        [p for p in (args.root / "aimem").glob("*.py") if p.name != "__init__.py"]
    )
    result.update(trace_one_save())
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
