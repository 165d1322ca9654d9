"""The store keeps the invariants import checks, so every state it reaches round-trips.

Found by tests/test_transfer_fuzz.py: an update or a restore could leave two active
memories with one content; a restored memory below min_priority_score was archived by
the import's capacity run; an embedder's zero vector was stored and then refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from _stores import store_url

import aimem
from aimem.testing import FixedJudge


def _store(tmp_path: Path, name: str = "a.db", **settings: object) -> aimem.MemoryStore:
    return aimem.MemoryStore(store_url(tmp_path / name), judge=FixedJudge(), **settings)


def _round_trips(store: aimem.MemoryStore, tmp_path: Path, **settings: object) -> None:
    store.export_to(tmp_path / "one.jsonl")
    with _store(tmp_path, "copy.db", **settings) as copy:
        report = copy.import_from(tmp_path / "one.jsonl")
        assert report.ok and report.archived == [], report
        copy.export_to(tmp_path / "two.jsonl")
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()


def test_update_to_another_active_memorys_content_is_a_conflict(tmp_path: Path) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(store_url(tmp_path / "a.db"), judge=judge) as store:
        alpha, beta = store.save("alpha"), store.save("beta")
        calls = len(judge.calls)
        with pytest.raises(aimem.ConflictError, match=alpha.id):
            store.update(beta.id, "alpha")
        assert len(judge.calls) == calls  # refused before paying for a judgement
        assert store.get(beta.id).content == "beta"
        assert store.update(beta.id, "beta").version == beta.version + 1  # its own: fine
        _round_trips(store, tmp_path)


def test_restore_beside_an_active_twin_is_a_conflict(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        old = store.save("alpha [score=0.5]")
        store.compress(["gamma [score=0.6]"])
        new = store.save("alpha [score=0.5]")
        assert new.id != old.id
        with pytest.raises(aimem.ConflictError, match=new.id):
            store.restore(old.id)
        assert store.get(old.id).archived
        _round_trips(store, tmp_path)


def test_a_restored_memory_below_the_minimum_survives_import(tmp_path: Path) -> None:
    with _store(tmp_path, min_priority_score=0.3) as store:
        low = store.save("a low one [score=0.2]")
        assert store.get(low.id).archive_reason == "below_min_priority"
        assert not store.restore(low.id).archived
        _round_trips(store, tmp_path, min_priority_score=0.3)


class ZeroEmbedder:
    """An embedder whose vectors for some texts are all zeros (words that cancel out)."""

    name = "zero-embedder"
    dim = 4

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[0.0] * 4 if "nothing" in t else [1.0, 0.0, 0.0, 0.0] for t in texts]


def test_a_zero_vector_is_not_stored_and_the_store_round_trips(tmp_path: Path) -> None:
    with _store(tmp_path, embedder=ZeroEmbedder()) as store:
        blank = store.save("nothing to see")
        full = store.save("something to see")
        assert [h.memory.id for h in store.search("x", mode="semantic")] == [full.id]
        assert store.search("nothing", mode="keyword")[0].memory.id == blank.id
        assert store.reembed() == 2
        _round_trips(store, tmp_path, embedder=ZeroEmbedder())
