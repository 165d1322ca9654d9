"""Fenced ```python examples in aimem's docstrings run as written, offline.

Doctests (``>>>``) run in test_doctests.py; these are the longer examples people copy.
Each block runs on its own, in a fresh namespace (so it must import what it uses);
top-level ``await`` is allowed, as in a notebook.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import pkgutil
import re
import textwrap
import types
from pathlib import Path

import pytest

import aimem

_FENCE = re.compile(r"```python\n(.*?)```", re.S)
_SKIPPED_MODULES = {"aimem.__main__", "aimem.mcp.server"}


def _docstrings(module: types.ModuleType) -> list[tuple[str, str]]:
    found = [(module.__name__, inspect.getdoc(module) or "")]
    for name, obj in vars(module).items():
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            found.append((f"{module.__name__}.{name}", inspect.getdoc(obj) or ""))
        if inspect.isclass(obj):
            found += [
                (f"{module.__name__}.{name}.{attr}", inspect.getdoc(member) or "")
                for attr, member in vars(obj).items()
                if inspect.isfunction(member) and member.__doc__
            ]
    return found


def _examples() -> list[tuple[str, str]]:
    examples = []
    for info in pkgutil.walk_packages(aimem.__path__, "aimem."):
        if info.name in _SKIPPED_MODULES:
            continue
        module = importlib.import_module(info.name)
        for where, doc in _docstrings(module):
            examples += [(where, textwrap.dedent(block)) for block in _FENCE.findall(doc)]
    return examples


EXAMPLES = _examples()


def test_there_are_fenced_examples() -> None:
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize(("where", "block"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_fenced_docstring_example_runs(
    where: str, block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code = compile(block, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    namespace: dict[str, object] = {"__name__": "docstring_example"}
    result = eval(code, namespace)
    if inspect.iscoroutine(result):
        asyncio.run(result)
