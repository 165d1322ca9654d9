"""Another namespace must not change what a namespace finds, nor what finding it costs.

The keyword index holds each namespace's own terms (prefixed), so document counts, the
term budget and the ranked candidates all come from the namespace's own data. The
budgets are lowered here so a small flood crosses them, as 10,000 rows would at the
defaults; ``bench/namespace_isolation.py`` measures the cost at full size.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _stores import store_url

import aimem
import aimem.storage.sqlite_search as q
from aimem.testing import FixedJudge

OWN = [
    "We sailed out of the harbor at dawn",
    "The harbor master knows my boat",
    "I keep spare sails in the harbor shed",
]


def _snapshot(store: aimem.MemoryStore, judge: FixedJudge) -> tuple[list[str], list[str]]:
    hits = [h.memory.id for h in store.search("harbor sails boat", mode="keyword")]
    judge.related_seen.clear()
    store.save("Repainted the boat in the harbor today")
    related = judge.related_seen[-1]
    # Forget that save so the next snapshot starts from the same state.
    store.delete(store.list(order="recent", limit=1)[0].id)
    return hits, related


def test_a_flood_in_another_namespace_changes_nothing_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(q, "RELATED_POSTINGS", 20)
    monkeypatch.setattr(q, "SEARCH_POSTINGS", 40)
    url = store_url(tmp_path / "shared.db")
    judge = FixedJudge(scorer=lambda _: 0.6)
    with aimem.MemoryStore(url, judge=judge, namespace="alice", max_memories=1000) as alice:
        saved = [alice.save(text).id for text in OWN]
        before = _snapshot(alice, judge)
        assert set(before[0]) == set(saved) and before[1], before
        with aimem.MemoryStore(url, judge=FixedJudge(), namespace="bob", max_memories=1000) as bob:
            bob.save_many([f"harbor boat sails note {i}" for i in range(120)])
            assert len(bob.search("harbor", limit=200, mode="keyword")) == 120
        after = _snapshot(alice, judge)
    assert after == before


def test_prefix_isolation_holds_for_namespaces_sharing_a_prefix(tmp_path: Path) -> None:
    url = store_url(tmp_path / "shared.db")
    with (
        aimem.MemoryStore(url, judge=FixedJudge(), namespace="team") as team,
        aimem.MemoryStore(url, judge=FixedJudge(), namespace="team.a") as sub,
    ):
        mine = team.save("quarterly roadmap review")
        sub.save("quarterly roadmap review for the sub team")
        assert [h.memory.id for h in team.search("roadmap")] == [mine.id]
        assert all(h.memory.namespace == "team.a" for h in sub.search("roadmap"))
