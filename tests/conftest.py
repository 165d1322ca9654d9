"""Shared fixtures: every test gets its own real database and no ambient config.

``db_url`` is the one place a test's store location comes from, and ``db_url_factory``
gives a test more stores (by name). Both build SQLite files in the test's tmp_path, or,
with ``AIMEM_TEST_DATABASE_URL`` naming a PostgreSQL server, a fresh database per store
on it (``_stores.py``). Tests that inspect the SQLite file itself (its bytes, journal
mode, FTS tables) are marked ``sqlite_only`` and skipped on PostgreSQL.

Also shared: ``chat`` and ``waits`` for tests of the OpenAI-compatible transport
(``_llm.py`` has the plain helpers), and ``local_embedder``, one MiniLM for the session.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import respx
from _llm import mocked, recorded_waits
from _stores import drop_databases, on_postgres, store_url

from aimem.embeddings import LocalEmbedder


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On PostgreSQL, skip the tests that inspect a SQLite file."""
    if not on_postgres():
        return
    skip = pytest.mark.skip(reason="inspects the SQLite file itself; the suite runs on PostgreSQL")
    for item in items:
        if item.get_closest_marker("sqlite_only") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _drop_test_databases() -> Iterator[None]:
    """The databases PostgreSQL runs created for their stores go at the session's end."""
    yield
    if on_postgres():
        drop_databases()


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's real config, data dir or OpenAI settings."""
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        *(n for n in os.environ if n.startswith("AIMEM_")),
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


@pytest.fixture
def db_url_factory(tmp_path: Path) -> Callable[[str], str]:
    """``url(name)``: a fresh store's URL for each name (one test, several stores)."""

    def url(name: str = "memories") -> str:
        return store_url(tmp_path / f"{name.removesuffix('.db')}.db")

    return url


@pytest.fixture
def db_url(db_url_factory: Callable[[str], str]) -> Iterator[str]:
    """The test's store."""
    yield db_url_factory("memories")


@pytest.fixture
def chat() -> Iterator[respx.Route]:
    """The one place OpenAI is mocked: POST /chat/completions on ``_llm.BASE_URL``."""
    with mocked("/chat/completions") as route:
        yield route


@pytest.fixture
def waits() -> Iterator[list[float]]:
    """The transport's retry waits, recorded instead of slept through."""
    with recorded_waits() as recorded:
        yield recorded


@pytest.fixture(scope="session")
def local_embedder() -> Iterator[LocalEmbedder]:
    """The local MiniLM, loaded once for the whole session (skipped without the extra).

    A loaded :class:`aimem.LocalEmbedder` holds only its settings and the model, and a
    store never closes an embedder it was given, so tests can share it.
    """
    pytest.importorskip("sentence_transformers", reason="the local extra is not installed")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")  # the bundled model: nothing to fetch
        embedder = LocalEmbedder("all-MiniLM-L6-v2")
        assert embedder.dim is None  # built, not loaded...
        embedder.load()  # ...until now
    yield embedder
