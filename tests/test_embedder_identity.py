"""An embedder's identity is its name and its dimension; ``reembed`` is the way out.

Reopening a store with an embedder of the same name but another dimension must never
end in a bare ValueError: it is said at open, every use of the vectors refuses with a
typed error that names the fix, and ``reembed()`` re-computes the vectors.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from _stores import store_url

import aimem
from aimem.cli import main
from aimem.testing import FixedJudge, HashEmbedder


def _url(tmp_path: Path) -> str:
    return store_url(tmp_path / "vectors.db")


def _dims(tmp_path: Path) -> set[int]:
    con = sqlite3.connect(tmp_path / "vectors.db")
    try:
        return {row[0] for row in con.execute("SELECT DISTINCT dim FROM memory_vectors")}
    finally:
        con.close()


def _filled(tmp_path: Path) -> list[str]:
    with aimem.MemoryStore(
        _url(tmp_path), judge=FixedJudge(), embedder=HashEmbedder(dim=8), max_memories=2
    ) as store:
        saved = [store.save(f"tea note {i} [score=0.{i + 4}]").id for i in range(4)]
    return saved  # two archived, two active


def test_another_dimension_is_said_at_open_and_refused_typed_at_use(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _filled(tmp_path)
    with caplog.at_level(logging.WARNING, logger="aimem"):
        store = aimem.MemoryStore(_url(tmp_path), judge=FixedJudge(), embedder=HashEmbedder(16))
    assert "reembed" in caplog.text
    with store:
        for call in (
            lambda: store.save("coffee now"),
            lambda: store.save_many(["a", "b"]),
            lambda: store.search("tea", mode="semantic"),
            lambda: store.search("tea"),
        ):
            with pytest.raises(aimem.EmbedderMismatchError, match="reembed") as caught:
                call()
            assert isinstance(caught.value, aimem.ValidationError | aimem.EmbeddingError)
        assert store.stats().total == 4  # nothing was written
        assert len(store.search("tea", mode="keyword")) == 2  # keyword search needs no vector
        assert len(store.list()) == 2


@pytest.mark.sqlite_only
def test_reembed_recomputes_every_vector_and_search_works_again(tmp_path: Path) -> None:
    saved = _filled(tmp_path)
    seen: list[tuple[int, int]] = []
    with aimem.MemoryStore(_url(tmp_path), judge=FixedJudge(), embedder=HashEmbedder(16)) as store:
        assert store.reembed(batch_size=3, progress=lambda d, t: seen.append((d, t))) == 4
        assert seen == [(3, 4), (4, 4)]
        assert _dims(tmp_path) == {16}
        hits = store.search("tea note", mode="semantic", include_archived=True, limit=10)
        assert {h.memory.id for h in hits} == set(saved)
        store.save("coffee now")
    with aimem.MemoryStore(_url(tmp_path), judge=FixedJudge(), embedder=HashEmbedder(16)) as again:
        assert len(again.search("coffee", mode="semantic")) >= 1


@pytest.mark.sqlite_only
def test_reembed_also_switches_to_another_embedder(tmp_path: Path) -> None:
    _filled(tmp_path)

    class Other(HashEmbedder):
        name = "other-embedder"

    with aimem.MemoryStore(_url(tmp_path), judge=FixedJudge(), embedder=Other(4)) as store:
        assert store.reembed() == 4
    con = sqlite3.connect(tmp_path / "vectors.db")
    try:
        assert con.execute("SELECT DISTINCT model, dim FROM memory_vectors").fetchall() == [
            ("other-embedder", 4)
        ]
    finally:
        con.close()


def test_reembed_without_an_embedder_says_what_to_do(tmp_path: Path) -> None:
    _filled(tmp_path)
    with (
        aimem.MemoryStore(_url(tmp_path), judge=FixedJudge()) as store,
        pytest.raises(aimem.ValidationError, match="embedder"),
    ):
        store.reembed()


@pytest.mark.sqlite_only
def test_a_failing_embedder_leaves_the_stored_vectors_unchanged(tmp_path: Path) -> None:
    _filled(tmp_path)

    class Broken(HashEmbedder):
        async def embed(self, texts: object) -> list[list[float]]:  # type: ignore[override]
            raise aimem.EmbeddingError("down")

    with (
        aimem.MemoryStore(_url(tmp_path), judge=FixedJudge(), embedder=Broken(16)) as store,
        pytest.raises(aimem.EmbeddingError),
    ):
        store.reembed()
    assert _dims(tmp_path) == {8}


def test_a_lazy_dimension_is_checked_on_first_use(tmp_path: Path) -> None:
    _filled(tmp_path)

    class Lazy(HashEmbedder):
        def __init__(self) -> None:
            super().__init__(dim=32)
            self.dim = None  # type: ignore[assignment]  # known only after the first embed

        def vector(self, text: str) -> list[float]:
            self.dim = 32  # type: ignore[assignment]
            return HashEmbedder(32).vector(text)

    with aimem.MemoryStore(_url(tmp_path), judge=FixedJudge(), embedder=Lazy()) as store:
        with pytest.raises(aimem.EmbedderMismatchError):
            store.save("coffee")
        assert store.stats().total == 4


@pytest.mark.sqlite_only
def test_cli_reembed_with_a_progress_bar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with aimem.MemoryStore(_url(tmp_path), judge=FixedJudge()) as store:
        store.save("tea without a vector")
    code = main(["--database-url", _url(tmp_path), "reembed", "--embedder", "local"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "Re-embedded 1 memory" in out.out
    assert _dims(tmp_path) == {384}


def test_cli_reembed_needs_an_embedder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--database-url", _url(tmp_path), "reembed"])
    err = capsys.readouterr().err
    assert code == 1 and "embedder" in err and err.count("\n") == 1
