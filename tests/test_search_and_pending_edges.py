"""Two edges of reading and mending: exact filtered semantic search, resilient reinterpret."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _stores import store_url

import aimem
from aimem.testing import FixedJudge, HashEmbedder


def test_a_filtered_semantic_search_finds_a_match_ranked_beyond_the_first_candidates(
    tmp_path: Path,
) -> None:
    url = store_url(tmp_path / "s.db")
    with aimem.MemoryStore(
        url, judge=FixedJudge(), embedder=HashEmbedder(), max_memories=1000
    ) as store:
        store.save_many([f"green tea in the garden {i}" for i in range(300)], user_context="crowd")
        wanted = store.save("black coffee downtown", user_context="syui")
        query = "green tea in the garden"
        assert wanted.id not in {
            h.memory.id for h in store.search(query, mode="semantic", limit=200)
        }
        # nothing it says is like the query: only a floor of 0 lets the filter's reach show
        hits = store.search(query, mode="semantic", user_context="syui", limit=5, min_relevance=0)
        assert [h.memory.id for h in hits] == [wanted.id]
        keyword = store.search("coffee", mode="keyword", user_context="syui")
        assert [h.memory.id for h in keyword] == [wanted.id]
        high = store.search(query, mode="semantic", min_score=0.95, limit=5)
        assert high == []  # FixedJudge scores 0.4: the whole index was searched, none passed


class DeletingJudge:
    """Judges normally, but deletes another pending memory while judging the first."""

    def __init__(self, url: str, victim: str) -> None:
        self.url, self.victim, self.done = url, victim, False

    async def interpret(
        self, content: str, *, user_context: str | None = None, related: Sequence[Any] = ()
    ) -> aimem.Interpretation:
        if not self.done:
            self.done = True
            async with aimem.AsyncMemoryStore(self.url, judge=FixedJudge()) as other:
                await other.delete(self.victim)
        return await FixedJudge().interpret(content)


class Down:
    async def interpret(self, content: str, **_: object) -> aimem.Interpretation:
        raise aimem.JudgeError("the judge is down")


def test_reinterpret_pending_skips_a_memory_deleted_meanwhile(tmp_path: Path) -> None:
    url = store_url(tmp_path / "p.db")
    with aimem.MemoryStore(url, judge=Down()) as down:
        first, second, third = (down.save(f"pending {i}") for i in range(3))
    assert {first.score_source, second.score_source, third.score_source} == {"pending"}
    with aimem.MemoryStore(url, judge=DeletingJudge(url, second.id)) as store:
        judged = store.reinterpret_pending()
        assert [m.id for m in judged] == [first.id, third.id]
        assert all(m.score_source == "custom" for m in judged)
        assert store.stats().pending == 0
