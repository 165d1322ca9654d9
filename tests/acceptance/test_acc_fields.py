"""Every field of `aimem.Memory` is present, typed and in bounds (DESIGN.md, "Record")."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

import aimem

STUB_MODEL = "stub-model"
COMPONENTS = ("emotional_impact", "user_relevance", "novelty", "utility")

FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "id": (str,),
    "namespace": (str,),
    "content": (str,),
    "interpreted_content": (str,),
    "emotional_impact": (float,),
    "user_relevance": (float,),
    "novelty": (float,),
    "utility": (float,),
    "priority_score": (float,),
    "rationale": (str,),
    "user_context": (str, type(None)),
    "score_source": (str,),
    "model": (str, type(None)),
    "prompt_version": (str, type(None)),
    "created_at": (datetime,),
    "updated_at": (datetime,),
    "last_accessed_at": (datetime,),
    "access_count": (int,),
    "pinned": (bool,),
    "version": (int,),
    "archived_at": (datetime, type(None)),
    "archive_reason": (str, type(None)),
}


def _assert_utc(value: datetime) -> None:
    assert value.tzinfo is not None, "timestamps must be timezone-aware"
    assert value.utcoffset() == timedelta(0), "timestamps must be UTC"


def _assert_judged(m: aimem.Memory) -> None:
    for name, types in FIELD_TYPES.items():
        assert hasattr(m, name), f"Memory lacks field {name}"
        value = getattr(m, name)
        assert isinstance(value, types), f"{name}={value!r} is not {types}"
    assert not isinstance(m.access_count, bool)
    assert not isinstance(m.version, bool)
    for name in COMPONENTS:
        assert 0.0 <= getattr(m, name) <= 0.25
    assert m.priority_score is not None
    assert 0.0 <= m.priority_score <= 1.0
    assert m.priority_score == pytest.approx(sum(getattr(m, c) for c in COMPONENTS), abs=1e-9)
    for name in ("created_at", "updated_at", "last_accessed_at"):
        _assert_utc(getattr(m, name))
    assert m.created_at <= m.updated_at


def test_memory_is_the_public_type(store: aimem.MemoryStore) -> None:
    m = store.save("Public type check")
    assert isinstance(m, aimem.Memory)
    assert isinstance(store.get(m.id), aimem.Memory)


def test_fields_of_an_llm_judged_memory(
    store: aimem.MemoryStore, tag: Callable[[str, float], str]
) -> None:
    content = tag("User said they prefer Rust for systems work", 0.8)
    m = store.save(content, user_context="syui")

    _assert_judged(m)
    assert m.namespace == "alice"
    assert m.content == content
    assert m.interpreted_content == "Interpreted: " + content
    assert m.user_context == "syui"
    assert m.score_source == "llm"
    assert m.model == STUB_MODEL
    assert isinstance(m.prompt_version, str)
    assert m.prompt_version
    for name in COMPONENTS:
        assert getattr(m, name) == pytest.approx(0.20)
    assert m.priority_score == pytest.approx(0.8)
    assert m.version == 1
    assert m.pinned is False
    assert m.archived_at is None
    assert m.archive_reason is None
    assert m.access_count >= 0

    stored = store.get(m.id)
    _assert_judged(stored)
    assert stored.content == content
    assert stored.interpreted_content == m.interpreted_content
    assert stored.priority_score == pytest.approx(m.priority_score)
    assert stored.model == STUB_MODEL
    assert stored.prompt_version == m.prompt_version


def test_default_stub_scores(store: aimem.MemoryStore) -> None:
    m = store.save("An ordinary remark without a score tag")
    for name in COMPONENTS:
        assert getattr(m, name) == pytest.approx(0.1)
    assert m.priority_score == pytest.approx(0.4)


def test_user_context_defaults_to_none(store: aimem.MemoryStore) -> None:
    assert store.save("No context given").user_context is None


def test_default_namespace(make_store: Callable[..., aimem.MemoryStore]) -> None:
    store = make_store()
    assert store.save("In the default namespace").namespace == "default"


@pytest.mark.parametrize(
    "content",
    [
        "  leading and trailing spaces  ",
        "line one\nline two\n\ttabbed",
        "unicode: 記憶 — naïve café ✓ 🧠",
        "quotes \"double\" and 'single' and back\\slash",
    ],
)
def test_raw_content_kept_verbatim(store: aimem.MemoryStore, content: str) -> None:
    m = store.save(content)
    assert m.content == content
    assert store.get(m.id).content == content
    assert m.interpreted_content
    assert store.get(m.id).interpreted_content == m.interpreted_content


def test_heuristic_judge_fields(make_store: Callable[..., aimem.MemoryStore]) -> None:
    store = make_store(judge=aimem.HeuristicJudge())
    m = store.save("I finally finished my marathon today and I am so happy!")
    _assert_judged(m)
    assert m.score_source == "heuristic"
    assert m.interpreted_content


def test_heuristic_judge_is_deterministic(make_store: Callable[..., aimem.MemoryStore]) -> None:
    content = "Remember that the deploy key rotates every 90 days"
    a = make_store("one.db", judge=aimem.HeuristicJudge()).save(content)
    b = make_store("two.db", judge=aimem.HeuristicJudge()).save(content)
    for name in (*COMPONENTS, "priority_score", "interpreted_content"):
        assert getattr(a, name) == getattr(b, name)


def test_custom_judge_source(make_store: Callable[..., aimem.MemoryStore]) -> None:
    from aimem.testing import FixedJudge

    judge = FixedJudge(scorer=lambda _content: 0.6)
    store = make_store(judge=judge)
    m = store.save("judged in process")
    _assert_judged(m)
    assert m.score_source == "custom"
    assert m.priority_score == pytest.approx(0.6)
    assert judge.calls == ["judged in process"]


def test_version_rises_on_every_change(
    make_store: Callable[..., aimem.MemoryStore], tag: Callable[[str, float], str]
) -> None:
    store = make_store(max_memories=1, min_priority_score=0.0)
    m = store.save(tag("versioned memory", 0.4))
    assert m.version == 1

    store.pin(m.id)
    pinned = store.get(m.id)
    assert pinned.pinned is True
    assert pinned.version == 2

    store.unpin(m.id)
    unpinned = store.get(m.id)
    assert unpinned.pinned is False
    assert unpinned.version == 3

    updated = store.update(m.id, tag("versioned memory, updated", 0.4))
    assert updated.version == 4
    assert store.get(m.id).version == 4

    # A higher-priority save with max_memories=1 archives it: one more change.
    store.save(tag("a more important memory", 0.8))
    archived = store.get(m.id)
    assert archived.archived_at is not None
    assert archived.version == 5

    restored = store.restore(m.id)
    assert restored.archived_at is None
    assert restored.version == 6


def test_updated_at_moves_on_change(store: aimem.MemoryStore) -> None:
    m = store.save("timestamps move")
    store.pin(m.id)
    pinned = store.get(m.id)
    _assert_utc(pinned.updated_at)
    assert pinned.updated_at >= m.updated_at
    assert pinned.created_at == m.created_at


def test_search_bumps_access_count(store: aimem.MemoryStore) -> None:
    m = store.save("The user plays the cello on weekends")
    before = store.get(m.id).access_count
    hits = store.search("cello")
    assert [h.memory.id for h in hits] == [m.id]
    after = store.get(m.id)
    assert after.access_count == before + 1
    _assert_utc(after.last_accessed_at)
    assert after.last_accessed_at >= m.last_accessed_at


def test_search_hit_shape(store: aimem.MemoryStore) -> None:
    store.save("The user prefers Rust for systems programming")
    store.save("The user's favourite colour is green")
    hits = store.search("Rust", explain=True)
    assert hits
    hit: Any = hits[0]
    assert isinstance(hit, aimem.SearchHit)
    assert isinstance(hit.memory, aimem.Memory)
    assert "Rust" in hit.memory.content
    assert isinstance(hit.score, float)
    assert hit.explanation is not None
