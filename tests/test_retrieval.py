"""Search on a real SQLite file: keyword, semantic, hybrid, filters, Japanese, explanations."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

import aimem
from aimem.models import RelatedMemory
from aimem.testing import FixedJudge, HashEmbedder


def store(db_url: str, **kwargs: object) -> aimem.MemoryStore:
    options: dict[str, object] = {"judge": FixedJudge(), **kwargs}
    return aimem.MemoryStore(db_url, **options)  # type: ignore[arg-type]


def test_japanese_is_findable_by_words_inside_a_sentence(db_url: str) -> None:
    with store(db_url) as s:
        cat = s.save("私の猫は毎朝六時に起こしてくる。")
        tokyo = s.save("来月、東京タワーに行く予定です。")
        s.save("I like green tea.")
        assert [h.memory.id for h in s.search("猫")] == [cat.id]
        assert [h.memory.id for h in s.search("東京タワー")] == [tokyo.id]
        assert s.search("猫は何時に起こす？")[0].memory.id == cat.id


def test_explanations_add_up_to_the_score(db_url: str) -> None:
    with store(db_url, embedder=HashEmbedder()) as s:
        s.save("I drink green tea every morning [score=0.6]")
        s.save("Green smoothies after running [score=0.9]")
        s.save("Tea ceremony lessons on Sundays [score=0.4]")
        hits = s.search("green tea", explain=True)
    assert hits
    for hit in hits:
        e = hit.explanation
        assert e is not None
        parts = ("relevance", "priority", "recency", "others_fact", "current_first")
        assert sum(e.get(k, 0.0) for k in parts) == pytest.approx(hit.score)
        assert e["score"] == pytest.approx(hit.score)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_relevance_leads_and_priority_breaks_ties(db_url: str) -> None:
    with store(db_url) as s:
        match = s.save("My passport number is in the blue folder [score=0.35]")
        s.save("My wife's birthday is in May and passport renewals bore me [score=0.95]")
        hits = s.search("passport number blue folder")
    assert hits[0].memory.id == match.id


def test_modes(db_url: str) -> None:
    with store(db_url, embedder=HashEmbedder()) as s:
        tea = s.save("green tea with breakfast")
        s.save("coffee after lunch")
        semantic = s.search("green tea", mode="semantic", explain=True)
        assert semantic[0].memory.id == tea.id
        assert semantic[0].explanation is not None and "cosine" in semantic[0].explanation
        keyword = s.search("green tea", mode="keyword", explain=True)
        assert keyword[0].explanation is not None and "cosine" not in keyword[0].explanation
        with pytest.raises(aimem.ValidationError, match="mode"):
            s.search("tea", mode="fuzzy")  # type: ignore[arg-type]
    with store(db_url) as plain:
        assert plain.search("green tea")[0].memory.id == tea.id  # hybrid falls back to keyword
        with pytest.raises(aimem.ValidationError, match="embedder"):
            plain.search("green tea", mode="semantic")


def test_filters(db_url: str) -> None:
    with store(db_url) as s:
        a = s.save("alice likes tea [score=0.5]", user_context="alice")
        b = s.save("bob likes tea [score=0.9]", user_context="bob")
        assert [h.memory.id for h in s.search("tea", user_context="alice")] == [a.id]
        assert [h.memory.id for h in s.search("tea", min_score=0.8)] == [b.id]
        later = datetime.now(UTC) + timedelta(hours=1)
        assert s.search("tea", created_after=later) == []
        assert len(s.search("tea", created_before=later)) == 2
        with pytest.raises(aimem.ValidationError, match="timezone"):
            s.search("tea", created_after=datetime(2026, 1, 1))


def test_semantic_index_follows_other_stores_on_the_same_file(db_url: str) -> None:
    with store(db_url, embedder=HashEmbedder()) as reader:
        assert reader.search("violin lessons", mode="semantic") == []
        with store(db_url, embedder=HashEmbedder(), max_memories=1) as writer:
            first = writer.save("violin lessons on Tuesday [score=0.5]")
            assert [h.memory.id for h in reader.search("violin lessons", mode="semantic")] == [
                first.id
            ]
            second = writer.save("violin exam in June [score=0.9]")  # archives the first
            found = [h.memory.id for h in reader.search("violin lessons", mode="semantic")]
            assert found == [second.id]
            writer.restore(first.id)  # archives the second again (cap 1)
            writer.update(first.id, "cello lessons on Tuesday [score=0.7]")
        found = [h.memory.id for h in reader.search("cello lessons", mode="semantic")]
        assert found == [first.id]
        everything = reader.search("violin", mode="semantic", include_archived=True)
        assert second.id in {h.memory.id for h in everything}


def test_near_duplicates_are_flagged_to_the_judge(db_url: str) -> None:
    seen: list[Sequence[aimem.Memory]] = []

    class Recording:
        async def interpret(
            self,
            content: str,
            *,
            user_context: str | None = None,
            related: Sequence[aimem.Memory] = (),
        ) -> aimem.Interpretation:
            seen.append(related)
            return aimem.Interpretation(
                interpreted_content=content,
                emotional_impact=0.1,
                user_relevance=0.1,
                novelty=0.1,
                utility=0.1,
            )

    with aimem.MemoryStore(db_url, judge=Recording(), embedder=HashEmbedder()) as s:
        original = s.save("I moved to Berlin in March")
        s.save("I moved to Berlin in March!")  # not exact: judged, with the original related
        s.save("Paris has nice bakeries")
    flagged = seen[1]
    assert flagged and flagged[0].id == original.id
    assert isinstance(flagged[0], RelatedMemory) and flagged[0].near_duplicate
    assert flagged[0].similarity is not None and flagged[0].similarity >= 0.95
    assert not any(getattr(m, "near_duplicate", False) for m in seen[2])


def test_vectors_are_stored_once_per_save_and_batched_in_save_many(db_url: str) -> None:
    embedder = HashEmbedder()
    with store(db_url, embedder=embedder) as s:
        s.save("one")
        s.save("one")  # exact duplicate: no embedding either
        s.save_many(["two", "three", "two"])
    assert embedder.calls == [["one"], ["two", "three"]]


def test_context_by_query_puts_relevant_memories_first(db_url: str) -> None:
    with store(db_url) as s:
        s.save("Prefers window seats on flights [score=0.4]")
        s.save("Allergic to peanuts [score=0.9]")
        by_query = s.context(max_chars=200, query="flight seat")
        by_priority = s.context(max_chars=200)
    first_line = by_query.split("\n")[1]  # the line after the memories header
    assert first_line.endswith("Prefers window seats on flights [score=0.4]")
    assert by_priority.split("\n")[1].endswith("Allergic to peanuts [score=0.9]")


def test_search_never_crosses_namespaces(db_url: str) -> None:
    with (
        store(db_url, namespace="a", embedder=HashEmbedder()) as a,
        store(db_url, namespace="b", embedder=HashEmbedder()) as b,
    ):
        a.save("shared words about gardening")
        b.save("shared words about gardening too")
        for mode in ("hybrid", "keyword", "semantic"):
            for hit in a.search("shared gardening", mode=mode, include_archived=True):
                assert hit.memory.namespace == "a"
