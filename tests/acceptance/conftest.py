"""Fixtures for the acceptance suite.

The suite drives only the public API of DESIGN.md: a real `aimem.MemoryStore` on a SQLite file in
`tmp_path`, judging through `aimem.OpenAIJudge` against the OpenAI-compatible stub server of
`aimem.testing` over real HTTP on 127.0.0.1.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import aimem

STUB_MODEL = "stub-model"


@pytest.fixture(autouse=True)
def _isolated_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Keep the developer's env vars and config file out of every test."""
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith(("AIMEM_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))


@pytest.fixture
def stub() -> Iterator[Any]:
    """A fresh OpenAI-compatible stub server on a free loopback port."""
    from aimem.testing import OpenAIStub

    with OpenAIStub() as server:
        yield server


@pytest.fixture
def make_judge(stub: Any) -> Callable[..., aimem.OpenAIJudge]:
    """Build an OpenAIJudge pointed at the stub, with short timeouts to keep failures fast."""

    def factory(**kwargs: Any) -> aimem.OpenAIJudge:
        options: dict[str, Any] = {
            "model": STUB_MODEL,
            "base_url": stub.base_url,
            "api_key": "test",
            "timeout": 5.0,
            "max_attempts": 3,
        }
        options.update(kwargs)
        return aimem.OpenAIJudge(**options)

    return factory


@pytest.fixture
def db_url(db_url_factory: Callable[[str], str]) -> Callable[[str], str]:
    """A store's URL by name (the suite's own ``db_url_factory``)."""

    def url(name: str = "a.db") -> str:
        return db_url_factory(name)

    return url


@pytest.fixture
def make_store(
    db_url: Callable[[str], str], make_judge: Callable[..., aimem.OpenAIJudge]
) -> Iterator[Callable[..., aimem.MemoryStore]]:
    """Open MemoryStores on tmp_path files (judged by the stub unless given); closed after."""
    opened: list[aimem.MemoryStore] = []

    def factory(db: str = "a.db", *, judge: Any = None, **kwargs: Any) -> aimem.MemoryStore:
        store = aimem.MemoryStore(
            db_url(db), judge=make_judge() if judge is None else judge, **kwargs
        )
        opened.append(store)
        return store

    yield factory
    for store in reversed(opened):
        store.close()


@pytest.fixture
def store(make_store: Callable[..., aimem.MemoryStore]) -> aimem.MemoryStore:
    """A store in namespace "alice" with max_memories=5, judged by the stub."""
    return make_store(max_memories=5, namespace="alice")


def scored(text: str, score: float) -> str:
    """Content the stub judges with each component score/4 (so priority == score)."""
    return f"{text} [score={score:.2f}]"


@pytest.fixture
def tag() -> Callable[[str, float], str]:
    """`tag(text, 0.6)` -> content the stub scores at priority 0.6."""
    return scored
