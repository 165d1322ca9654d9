"""Persistence across store instances, clean closing, and settings given by keyword or env."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import aimem

MakeJudge = Callable[..., aimem.OpenAIJudge]
MakeStore = Callable[..., aimem.MemoryStore]
DbUrl = Callable[[str], str]


def test_second_store_sees_the_memories(db_url: DbUrl, make_judge: MakeJudge) -> None:
    with aimem.MemoryStore(db_url("a.db"), judge=make_judge(), namespace="alice") as first:
        m = first.save("Persisted across stores", user_context="syui")
        first.pin(m.id)
        first.set_core("I am Ai, a curious assistant.")
        saved = first.get(m.id)

    with aimem.MemoryStore(db_url("a.db"), judge=make_judge(), namespace="alice") as second:
        again = second.get(m.id)
        assert again.content == saved.content
        assert again.interpreted_content == saved.interpreted_content
        assert again.priority_score == pytest.approx(saved.priority_score)
        assert again.pinned is True
        assert again.version == saved.version
        assert again.user_context == "syui"
        assert again.created_at == saved.created_at
        assert again.score_source == "llm"
        assert [x.id for x in second.list()] == [m.id]
        assert second.get_core() == "I am Ai, a curious assistant."


def test_two_open_stores_share_one_file(db_url: DbUrl, make_judge: MakeJudge) -> None:
    with (
        aimem.MemoryStore(db_url("a.db"), judge=make_judge()) as one,
        aimem.MemoryStore(db_url("a.db"), judge=make_judge()) as two,
    ):
        a = one.save("written by the first handle")
        b = two.save("written by the second handle")
        assert {m.id for m in one.list()} == {a.id, b.id}
        assert {m.id for m in two.list()} == {a.id, b.id}


def test_duplicate_detected_across_instances(
    db_url: DbUrl, make_judge: MakeJudge, stub: Any
) -> None:
    with aimem.MemoryStore(db_url("a.db"), judge=make_judge()) as first:
        m = first.save("the same words twice")
    with aimem.MemoryStore(db_url("a.db"), judge=make_judge()) as second:
        assert second.save("the same words twice").id == m.id
        assert second.stats().total == 1
    assert stub.chat_calls == 1


def test_archived_state_persists(db_url: DbUrl, make_judge: MakeJudge) -> None:
    with aimem.MemoryStore(db_url("a.db"), judge=make_judge(), max_memories=1) as first:
        old = first.save("older note")
        new = first.save("newer note")
    with aimem.MemoryStore(db_url("a.db"), judge=make_judge(), max_memories=1) as second:
        assert second.get(old.id).archived_at is not None
        assert second.get(old.id).archive_reason
        assert [m.id for m in second.list()] == [new.id]


def test_context_manager_and_close(db_url: DbUrl, make_judge: MakeJudge) -> None:
    with aimem.MemoryStore(db_url("a.db"), judge=make_judge()) as store:
        assert isinstance(store, aimem.MemoryStore)
        store.save("inside a with block")
    plain = aimem.MemoryStore(db_url("a.db"), judge=make_judge())
    try:
        assert plain.stats().total == 1
    finally:
        plain.close()


def test_store_without_explicit_database_url_uses_data_dir() -> None:
    # The autouse fixture points HOME and XDG_DATA_HOME at a temp dir.
    with aimem.MemoryStore(judge=aimem.HeuristicJudge()) as store:
        m = store.save("saved at the default path")
        assert store.get(m.id).content == "saved at the default path"


def test_max_memories_override(make_store: MakeStore) -> None:
    store = make_store(max_memories=2)
    for i in range(4):
        store.save(f"note {i}")
    assert store.stats().count == 2


def test_min_priority_score_override(
    make_store: MakeStore, tag: Callable[[str, float], str]
) -> None:
    strict = make_store("strict.db", min_priority_score=0.5)
    lenient = make_store("lenient.db", min_priority_score=0.1)
    s = strict.save(tag("middling", 0.4))
    le = lenient.save(tag("middling", 0.4))
    assert strict.get(s.id).archived_at is not None
    assert lenient.get(le.id).archived_at is None


def test_default_min_priority_score_is_0_3(
    make_store: MakeStore, tag: Callable[[str, float], str]
) -> None:
    store = make_store()
    low = store.save(tag("below default", 0.25))
    ok = store.save(tag("at default", 0.3))
    assert store.get(low.id).archived_at is not None
    assert store.get(ok.id).archived_at is None


def test_auto_prune_override(make_store: MakeStore) -> None:
    store = make_store(max_memories=1, auto_prune=False)
    for i in range(3):
        store.save(f"kept for now {i}")
    assert store.stats().count == 3
    store.prune()
    assert store.stats().count == 1


def test_interpretation_disabled(make_store: MakeStore, stub: Any) -> None:
    store = make_store(interpretation_enabled=False)
    m = store.save("Stored without interpretation")
    assert stub.chat_calls == 0
    assert m.score_source == "heuristic"
    assert m.interpreted_content == m.content == "Stored without interpretation"
    for name in ("emotional_impact", "user_relevance", "novelty", "utility"):
        value = getattr(m, name)
        assert value is not None
        assert 0.0 <= value <= 0.25
    assert m.priority_score is not None


def test_env_setting_applies_and_keyword_beats_it(
    make_store: MakeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIMEM_MAX_MEMORIES", "1")
    from_env = make_store("env.db")
    for i in range(3):
        from_env.save(f"env note {i}")
    assert from_env.stats().count == 1

    explicit = make_store("explicit.db", max_memories=3)
    for i in range(4):
        explicit.save(f"explicit note {i}")
    assert explicit.stats().count == 3
