"""One save = one chat call with the configured model and a JSON-schema response format."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import aimem

STUB_MODEL = "stub-model"


def _request_text(request: dict[str, Any]) -> str:
    return json.dumps(request.get("messages", []), ensure_ascii=False)


def test_one_chat_call_per_save(store: aimem.MemoryStore, stub: Any) -> None:
    for i in range(3):
        store.save(f"distinct memory number {i}")
        assert stub.chat_calls == i + 1
    assert len(stub.chat_requests) == 3


def test_request_carries_model_schema_and_content(store: aimem.MemoryStore, stub: Any) -> None:
    content = "User said they prefer Rust for systems work"
    store.save(content, user_context="syui")

    assert stub.chat_calls == 1
    request = stub.chat_requests[0]
    assert request["model"] == STUB_MODEL
    response_format = request.get("response_format")
    assert isinstance(response_format, dict)
    assert response_format.get("type") == "json_schema"
    assert isinstance(response_format.get("json_schema"), dict)
    assert response_format["json_schema"].get("schema")
    assert content in _request_text(request)


def test_exact_duplicate_of_active_memory_makes_no_call_and_no_row(
    store: aimem.MemoryStore, stub: Any
) -> None:
    first = store.save("The user's cat is called Miso")
    calls = stub.chat_calls
    again = store.save("The user's cat is called Miso")

    assert stub.chat_calls == calls
    assert again.id == first.id
    assert [m.id for m in store.list(include_archived=True)] == [first.id]
    stats = store.stats()
    assert stats.total == 1
    assert stats.count == 1


def test_duplicate_in_another_namespace_is_a_new_memory(
    make_store: Callable[..., aimem.MemoryStore], stub: Any
) -> None:
    alice = make_store(namespace="alice")
    bob = make_store(namespace="bob")
    a = alice.save("Shared sentence in two namespaces")
    b = bob.save("Shared sentence in two namespaces")

    assert a.id != b.id
    assert b.namespace == "bob"
    assert stub.chat_calls == 2


def test_save_many_one_call_each(make_store: Callable[..., aimem.MemoryStore], stub: Any) -> None:
    store = make_store(judge_batch_size=1)
    store.save_many(["first of many", "second of many", "third of many"])
    assert stub.chat_calls == 3


def test_save_many_batches_at_most_one_call_per_item(store: aimem.MemoryStore, stub: Any) -> None:
    store.save_many(["first of many", "second of many", "third of many"])
    assert stub.chat_calls == 1  # judge_batch_size 8 by default: one call for all three


def test_update_reinterprets_with_one_call(
    store: aimem.MemoryStore, stub: Any, tag: Callable[[str, float], str]
) -> None:
    m = store.save(tag("likes tea", 0.4))
    calls = stub.chat_calls
    updated = store.update(m.id, tag("likes coffee now", 0.8))

    assert stub.chat_calls == calls + 1
    assert updated.id == m.id
    assert updated.content == tag("likes coffee now", 0.8)
    assert updated.interpreted_content != m.interpreted_content
    assert updated.priority_score == pytest.approx(0.8)
    assert store.get(m.id).content == tag("likes coffee now", 0.8)


def test_interpretation_disabled_makes_no_call(
    make_store: Callable[..., aimem.MemoryStore], stub: Any
) -> None:
    store = make_store(interpretation_enabled=False)
    m = store.save("Plain note kept without an LLM")

    assert stub.chat_calls == 0
    assert m.score_source == "heuristic"
    assert m.interpreted_content == m.content
    assert m.priority_score is not None
    assert 0.0 <= m.priority_score <= 1.0


def test_heuristic_judge_makes_no_call(
    make_store: Callable[..., aimem.MemoryStore], stub: Any
) -> None:
    store = make_store(judge=aimem.HeuristicJudge())
    m = store.save("Offline judged note about gardening")

    assert stub.chat_calls == 0
    assert m.score_source == "heuristic"


def test_transient_429_is_retried(store: aimem.MemoryStore, stub: Any) -> None:
    from aimem.testing import StubReply

    stub.enqueue(
        StubReply(
            status=429,
            body={"error": {"message": "slow down", "type": "rate_limit_error"}},
            headers={"Retry-After": "0"},
        )
    )
    m = store.save("Saved after one rate limit")

    assert stub.chat_calls == 2
    assert store.get(m.id).content == "Saved after one rate limit"


def test_transient_500_is_retried(store: aimem.MemoryStore, stub: Any) -> None:
    from aimem.testing import StubReply

    stub.enqueue(StubReply(status=500, body={"error": {"message": "boom", "type": "server"}}))
    m = store.save("Saved after one server error")

    assert stub.chat_calls == 2
    assert store.get(m.id).score_source == "llm"


def test_timeout_is_retried(
    make_store: Callable[..., aimem.MemoryStore],
    make_judge: Callable[..., aimem.OpenAIJudge],
    stub: Any,
) -> None:
    from aimem.testing import StubReply

    store = make_store(judge=make_judge(timeout=0.5))
    stub.enqueue(StubReply(delay=2.0))
    m = store.save("Saved after one timeout")

    assert stub.chat_calls >= 2
    assert store.get(m.id).score_source == "llm"
