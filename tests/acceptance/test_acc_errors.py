"""Typed errors, and nothing written when a save is refused or the judge fails."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import aimem

MakeStore = Callable[..., aimem.MemoryStore]


def _assert_nothing_written(store: aimem.MemoryStore) -> None:
    stats = store.stats()
    assert stats.total == 0
    assert stats.count == 0
    assert stats.archived == 0
    assert stats.pending == 0
    assert store.list(include_archived=True) == []


def _assert_fresh_store_sees_nothing(
    db_url: Callable[[str], str], namespace: str = "default"
) -> None:
    with aimem.MemoryStore(
        db_url("a.db"), judge=aimem.HeuristicJudge(), namespace=namespace
    ) as fresh:
        _assert_nothing_written(fresh)


def test_error_tree() -> None:
    assert issubclass(aimem.ValidationError, aimem.AimemError)
    assert issubclass(aimem.ValidationError, ValueError)
    assert issubclass(aimem.NotFoundError, aimem.AimemError)
    assert issubclass(aimem.NotFoundError, KeyError)
    assert issubclass(aimem.JudgeError, aimem.AimemError)
    assert issubclass(aimem.StorageError, aimem.AimemError)
    assert issubclass(aimem.ConflictError, aimem.AimemError)


@pytest.mark.parametrize(
    "content",
    ["", " ", "   \n\t  ", "\n"],
    ids=["empty", "space", "mixed-whitespace", "newline"],
)
def test_empty_or_blank_content_is_refused(
    make_store: MakeStore, stub: Any, db_url: Callable[[str], str], content: str
) -> None:
    store = make_store()
    with pytest.raises(aimem.ValidationError) as excinfo:
        store.save(content)
    assert isinstance(excinfo.value, ValueError)
    assert str(excinfo.value)
    assert stub.chat_calls == 0
    _assert_nothing_written(store)
    _assert_fresh_store_sees_nothing(db_url)


@pytest.mark.parametrize("content", [None, 123, b"bytes are not text", 1.5, ["a list"]], ids=repr)
def test_non_string_content_is_refused(
    make_store: MakeStore, stub: Any, db_url: Callable[[str], str], content: Any
) -> None:
    store = make_store()
    with pytest.raises(aimem.ValidationError):
        store.save(content)
    assert stub.chat_calls == 0
    _assert_nothing_written(store)
    _assert_fresh_store_sees_nothing(db_url)


def test_content_over_default_limit_is_refused(
    make_store: MakeStore, stub: Any, db_url: Callable[[str], str]
) -> None:
    store = make_store()
    with pytest.raises(aimem.ValidationError):
        store.save("x" * 16001)
    assert stub.chat_calls == 0
    _assert_nothing_written(store)
    _assert_fresh_store_sees_nothing(db_url)


def test_content_at_default_limit_is_accepted(make_store: MakeStore) -> None:
    store = make_store()
    content = "y" * 16000
    assert store.save(content).content == content


def test_max_content_chars_override(
    make_store: MakeStore, stub: Any, db_url: Callable[[str], str]
) -> None:
    store = make_store(max_content_chars=20)
    with pytest.raises(aimem.ValidationError):
        store.save("z" * 21)
    _assert_nothing_written(store)
    assert stub.chat_calls == 0
    assert store.save("z" * 20).content == "z" * 20
    assert store.stats().total == 1


def test_save_many_with_one_bad_item_writes_nothing(
    make_store: MakeStore, db_url: Callable[[str], str]
) -> None:
    store = make_store()
    with pytest.raises(aimem.ValidationError):
        store.save_many(["a good item", "   ", "another good item"])
    _assert_nothing_written(store)
    _assert_fresh_store_sees_nothing(db_url)


def test_update_with_bad_content_changes_nothing(make_store: MakeStore, stub: Any) -> None:
    store = make_store()
    m = store.save("original content")
    calls = stub.chat_calls
    for bad in ("", "   ", None, "w" * 16001):
        with pytest.raises(aimem.ValidationError):
            store.update(m.id, bad)
    assert stub.chat_calls == calls
    after = store.get(m.id)
    assert after.content == "original content"
    assert after.version == m.version


@pytest.mark.parametrize(
    "namespace",
    [
        "",
        "a" * 65,
        "has space",
        "slash/ns",
        "back\\slash",
        "colon:ns",
        "semi;colon",
        "new\nline",
        "ünicode",
        "star*",
        "quote'ns",
    ],
    ids=repr,
)
def test_bad_namespace_is_refused(
    db_url: Callable[[str], str],
    make_judge: Callable[..., aimem.OpenAIJudge],
    stub: Any,
    namespace: str,
) -> None:
    store: aimem.MemoryStore | None = None
    try:
        with pytest.raises(aimem.ValidationError) as excinfo:
            store = aimem.MemoryStore(db_url("a.db"), judge=make_judge(), namespace=namespace)
            store.save("content in a bad namespace")
        assert isinstance(excinfo.value, ValueError)
    finally:
        if store is not None:
            store.close()
    assert stub.chat_calls == 0


@pytest.mark.parametrize("namespace", ["a", "a" * 64, "Alice_01", "agent-7.v2", "UPPER.lower_9-x"])
def test_good_namespaces_are_accepted(make_store: MakeStore, namespace: str) -> None:
    store = make_store(namespace=namespace)
    m = store.save("content in a good namespace")
    assert m.namespace == namespace
    assert store.get(m.id).namespace == namespace


@pytest.mark.parametrize("operation", ["get", "delete", "pin", "unpin", "restore", "update"])
def test_unknown_id_is_not_found(store: aimem.MemoryStore, operation: str) -> None:
    store.save("something that exists")
    method = getattr(store, operation)
    with pytest.raises(aimem.NotFoundError) as excinfo:
        if operation == "update":
            method("no-such-id", "new content")
        else:
            method("no-such-id")
    assert isinstance(excinfo.value, KeyError)
    assert isinstance(excinfo.value, aimem.AimemError)
    assert store.stats().total == 1


def test_judge_always_500_raises_and_writes_nothing(
    make_store: MakeStore, stub: Any, db_url: Callable[[str], str]
) -> None:
    from aimem.testing import StubReply

    for _ in range(30):
        stub.enqueue(StubReply(status=500, body={"error": {"message": "down", "type": "server"}}))
    store = make_store(namespace="alice", on_judge_error="raise")
    with pytest.raises(aimem.JudgeError) as excinfo:
        store.save("this will not be judged")
    assert str(excinfo.value)
    assert stub.chat_calls == 3  # max_attempts=3, not multiplied by a second retry layer
    _assert_nothing_written(store)
    _assert_fresh_store_sees_nothing(db_url, namespace="alice")


def test_judge_always_429_raises_and_writes_nothing(
    make_store: MakeStore, stub: Any, db_url: Callable[[str], str]
) -> None:
    from aimem.testing import StubReply

    for _ in range(30):
        stub.enqueue(
            StubReply(
                status=429,
                body={"error": {"message": "rate limited", "type": "rate_limit_error"}},
                headers={"Retry-After": "0"},
            )
        )
    store = make_store(on_judge_error="raise")
    with pytest.raises(aimem.JudgeError):
        store.save("rate limited forever")
    assert stub.chat_calls == 3
    _assert_nothing_written(store)
    _assert_fresh_store_sees_nothing(db_url)


def _completion(content: str, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "stub-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def test_judge_always_garbage_raises_and_writes_nothing(
    make_store: MakeStore, stub: Any, db_url: Callable[[str], str]
) -> None:
    from aimem.testing import StubReply

    for _ in range(30):
        stub.enqueue(StubReply(status=200, body=_completion("this is not JSON at all")))
    store = make_store(on_judge_error="raise")
    with pytest.raises(aimem.JudgeError):
        store.save("the judge only talks nonsense")
    assert stub.chat_calls == 2  # the first answer and one corrective re-ask
    _assert_nothing_written(store)
    _assert_fresh_store_sees_nothing(db_url)


def test_judge_failure_leaves_existing_memories_alone(make_store: MakeStore, stub: Any) -> None:
    from aimem.testing import StubReply

    store = make_store(max_memories=1, on_judge_error="raise")
    kept = store.save("kept before the outage")
    for _ in range(30):
        stub.enqueue(StubReply(status=500, body={"error": {"message": "down", "type": "server"}}))
    with pytest.raises(aimem.JudgeError):
        store.save("not saved during the outage")
    assert [m.id for m in store.list(include_archived=True)] == [kept.id]
    assert store.get(kept.id).archived_at is None
    assert store.get(kept.id).version == kept.version


def _valid_json(**overrides: Any) -> str:
    import json

    body: dict[str, Any] = {
        "interpreted_content": "Interpreted: out of range",
        "emotional_impact": 0.1,
        "user_relevance": 0.1,
        "novelty": 0.1,
        "utility": 0.1,
        "rationale": "test",
    }
    body.update(overrides)
    return json.dumps(body)


def test_out_of_range_component_is_reasked_never_clamped(make_store: MakeStore, stub: Any) -> None:
    from aimem.testing import StubReply

    stub.enqueue(StubReply(status=200, body=_completion(_valid_json(utility=0.9))))
    store = make_store()
    m = store.save("A component out of range first")
    assert stub.chat_calls == 2
    assert m.utility == pytest.approx(0.1)  # the re-ask's answer, not 0.9 clamped to 0.25
    assert m.priority_score == pytest.approx(0.4)


def test_truncated_reply_is_reasked(make_store: MakeStore, stub: Any) -> None:
    from aimem.testing import StubReply

    stub.enqueue(
        StubReply(status=200, body=_completion('{"interpreted_content": "Interp', "length"))
    )
    store = make_store()
    m = store.save("A truncated answer first")
    assert stub.chat_calls == 2
    assert m.priority_score == pytest.approx(0.4)
