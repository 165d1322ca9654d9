"""Docstring examples are run, so the examples people copy keep working."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import aimem

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(aimem.__path__, "aimem.")
    if name not in {"aimem.cli.main", "aimem.__main__"}
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str, tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(str(tmp_path))
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
