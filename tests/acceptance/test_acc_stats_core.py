"""stats(), core text, context(), compress() and save_many()."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import aimem

MakeStore = Callable[..., aimem.MemoryStore]
Tag = Callable[[str, float], str]


def test_stats_of_an_empty_store(store: aimem.MemoryStore) -> None:
    stats = store.stats()
    assert isinstance(stats, aimem.Stats)
    counts = (stats.count, stats.archived, stats.pending, stats.pinned, stats.total)
    assert counts == (0, 0, 0, 0, 0)


def test_stats_counts(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=2, min_priority_score=0.3)
    a = store.save(tag("a", 0.5))
    b = store.save(tag("b", 0.6))
    c = store.save(tag("c", 0.7))
    store.pin(c.id)
    d = store.save(tag("d", 0.2))

    active = store.list()
    assert {m.id for m in active} == {b.id, c.id}
    assert store.get(a.id).archived_at is not None
    assert store.get(d.id).archived_at is not None

    stats = store.stats()
    assert stats.count == len(active) == 2
    assert stats.archived == 2
    assert stats.pinned == 1
    assert stats.pending == 0
    assert stats.total == 4
    assert stats.total == stats.count + stats.archived + stats.pending


def test_core_get_and_set(store: aimem.MemoryStore) -> None:
    store.set_core("I am Ai, a curious and gentle assistant.")
    assert store.get_core() == "I am Ai, a curious and gentle assistant."
    assert store.core == "I am Ai, a curious and gentle assistant."
    store.set_core("I am Ai, version two.")
    assert store.get_core() == "I am Ai, version two."
    assert store.core == "I am Ai, version two."


def test_core_is_not_a_memory_and_is_never_pruned(make_store: MakeStore) -> None:
    store = make_store(max_memories=1)
    store.set_core("Core identity text")
    for i in range(3):
        store.save(f"filler {i}")
    store.prune()
    assert store.get_core() == "Core identity text"
    assert store.stats().total == 3


def test_context_contains_core_and_top_memory(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=10, min_priority_score=0.0)
    store.set_core("I am Ai.")
    store.save(tag("The user likes quiet mornings", 0.3))
    store.save(tag("The user's daughter is named Hana", 0.95))

    context = store.context(max_chars=4000)
    assert isinstance(context, str)
    assert len(context) <= 4000
    assert "I am Ai." in context
    assert "The user's daughter is named Hana" in context
    assert "Hana" in store.context()


@pytest.mark.parametrize("budget", [60, 150, 400, 1000])
def test_context_respects_the_budget(make_store: MakeStore, tag: Tag, budget: int) -> None:
    store = make_store(max_memories=20, min_priority_score=0.0)
    store.set_core("Core.")
    for i in range(12):
        store.save(tag(f"memory number {i} with a fairly long sentence to fill the budget", 0.5))
    context = store.context(max_chars=budget)
    assert isinstance(context, str)
    assert len(context) <= budget


def test_context_prefers_higher_priority(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=20, min_priority_score=0.0)
    for i in range(10):
        store.save(tag(f"unremarkable remark {i} padded out with some extra words", 0.3))
    store.save(tag("CRUCIAL: the user is allergic to peanuts", 0.95))
    context = store.context(max_chars=300)
    assert "allergic to peanuts" in context
    assert len(context) <= 300


def test_compress_replaces_unpinned_memories(make_store: MakeStore, stub: Any, tag: Tag) -> None:
    store = make_store(max_memories=10, min_priority_score=0.0)
    a = store.save(tag("detail a", 0.5))
    b = store.save(tag("detail b", 0.6))
    c = store.save(tag("detail c", 0.7))
    store.pin(b.id)
    calls = stub.chat_calls

    store.compress([tag("summary one", 0.8), tag("summary two", 0.7)])

    assert stub.chat_calls == calls + 1  # both items in one batch call
    active = store.list()
    assert {m.content for m in active} == {
        tag("summary one", 0.8),
        tag("summary two", 0.7),
        tag("detail b", 0.6),
    }
    for old in (a, c):
        archived = store.get(old.id)
        assert archived.archived_at is not None
        assert archived.archive_reason == "compressed"
    kept = store.get(b.id)
    assert kept.pinned is True
    assert kept.archived_at is None
    for m in active:
        if m.id != b.id:
            assert m.score_source == "llm"
            assert m.archived_at is None
    stats = store.stats()
    assert stats.count == 3
    assert stats.archived == 2


def test_compress_failure_changes_nothing(make_store: MakeStore, stub: Any) -> None:
    from aimem.testing import StubReply

    store = make_store(max_memories=10, on_judge_error="raise")
    a = store.save("before compress")
    for _ in range(30):
        stub.enqueue(StubReply(status=500, body={"error": {"message": "down", "type": "server"}}))
    with pytest.raises(aimem.JudgeError):
        store.compress(["summary that cannot be judged"])
    assert [m.id for m in store.list(include_archived=True)] == [a.id]
    assert store.get(a.id).archived_at is None


def test_save_many_returns_memories_in_input_order(
    make_store: MakeStore, stub: Any, tag: Tag
) -> None:
    store = make_store(max_memories=10, min_priority_score=0.0)
    inputs = [tag("low", 0.2), tag("top", 0.9), tag("mid", 0.5), tag("high", 0.7), "plain"]
    saved = store.save_many(inputs)

    assert isinstance(saved, list)
    assert all(isinstance(m, aimem.Memory) for m in saved)
    assert [m.content for m in saved] == inputs
    assert [m.priority_score for m in saved] == pytest.approx([0.2, 0.9, 0.5, 0.7, 0.4])
    assert len({m.id for m in saved}) == len(inputs)
    assert stub.chat_calls == 1  # one batch call (judge_batch_size 8)
    assert {m.id for m in store.list()} == {m.id for m in saved}


def test_save_many_applies_the_cap(make_store: MakeStore) -> None:
    store = make_store(max_memories=2)
    saved = store.save_many([f"batch note {i}" for i in range(5)])
    assert len(saved) == 5
    stats = store.stats()
    assert stats.count == 2
    assert stats.total == 5
