"""Batch interpretation: several items per LLM call, validated item by item, never worse off.

End to end against ``OpenAIStub`` on loopback: ``save_many`` with ``judge_batch_size``
sends numbered items in one request; items the answer gets wrong are asked again alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _stores import store_url

import aimem
from aimem.judges.prompts import extract_data_block
from aimem.testing import OpenAIStub, StubReply, chat_completion, marker_scores


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub() as server:
        yield server


def _store(tmp_path: Path, stub: OpenAIStub, **kwargs: Any) -> aimem.MemoryStore:
    judge = aimem.OpenAIJudge(base_url=stub.base_url, api_key="sk-test", model="stub-model")
    options = {"max_memories": 1000, "min_priority_score": 0.0} | kwargs
    return aimem.MemoryStore(store_url(tmp_path / "m.db"), judge=judge, **options)


def _contents(n: int, prefix: str = "fact") -> list[str]:
    return [f"{prefix} {i}: the user likes item {i} [score=0.{40 + i}]" for i in range(n)]


def _user_text(request: dict[str, Any]) -> str:
    [user] = [m for m in request["messages"] if m["role"] == "user"]
    text: str = user["content"]
    return text


def _answer(items: list[dict[str, Any]]) -> StubReply:
    return StubReply(body=chat_completion(json.dumps({"items": items})))


def _item(index: int, content: str, **changes: Any) -> dict[str, Any]:
    return {
        "index": index,
        "interpreted_content": "Interpreted: " + content,
        **marker_scores(content),
        "rationale": "scripted",
    } | changes


def test_eight_items_share_one_call_and_keep_their_own_scores(
    tmp_path: Path, stub: OpenAIStub
) -> None:
    contents = _contents(8)
    with _store(tmp_path, stub) as store:
        saved = store.save_many(contents)
    assert stub.chat_calls == 1
    assert [m.content for m in saved] == contents
    for m in saved:
        assert m.priority_score == pytest.approx(float(re.findall(r"score=([\d.]+)", m.content)[0]))
        assert m.interpreted_content == "Interpreted: " + m.content
        assert (m.score_source, m.prompt_version) == ("llm", "interpret_batch.v4")
    request = stub.chat_requests[0]
    assert request["response_format"]["json_schema"]["name"] == "memory_interpretations"
    user = _user_text(request)
    nonce = re.search(r'<user-context id="([0-9a-f]{16})">', user)
    assert nonce is not None
    for number, content in enumerate(contents, start=1):
        assert extract_data_block(user, nonce=f"{nonce.group(1)}-{number}") == content


def test_batches_are_cut_at_the_batch_size(tmp_path: Path, stub: OpenAIStub) -> None:
    with _store(tmp_path, stub, judge_batch_size=8) as store:
        store.save_many(_contents(20))
    assert stub.chat_calls == 3
    sizes = [
        len(re.findall(r'<memory-data id="[0-9a-f]{16}-\d+">', _user_text(r)))
        for r in stub.chat_requests
    ]
    assert sorted(sizes) == [4, 8, 8]


def test_batch_size_one_is_one_call_per_item(tmp_path: Path, stub: OpenAIStub) -> None:
    with _store(tmp_path, stub, judge_batch_size=1) as store:
        saved = store.save_many(_contents(3))
    assert stub.chat_calls == 3
    assert {m.prompt_version for m in saved} == {"interpret.v4"}


def test_each_item_gets_its_own_related_memories(tmp_path: Path, stub: OpenAIStub) -> None:
    with _store(tmp_path, stub) as store:
        store.save("The user's cat is called Miso [score=0.6]")
        store.save_many(["Miso the cat is ill [score=0.7]", "Chess on Sundays [score=0.3]"])
    user = _user_text(stub.chat_requests[-1])
    nonce = re.search(r'<user-context id="([0-9a-f]{16})">', user)
    assert nonce is not None
    first = extract_data_block(user, "related-memories", f"{nonce.group(1)}-1")
    second = extract_data_block(user, "related-memories", f"{nonce.group(1)}-2")
    assert first is not None and "cat is called Miso" in first
    assert second is not None
    # an earlier item of the call may be shown to a later one (it may retire it), never
    # a later one to an earlier
    assert "Chess" not in first, "a later item is never an earlier one's related memory"


def test_items_the_answer_gets_wrong_are_asked_alone(tmp_path: Path, stub: OpenAIStub) -> None:
    contents = _contents(5)
    stub.enqueue(
        _answer(
            [
                _item(1, contents[0]),
                # item 2 missing
                _item(3, contents[2]),
                _item(3, contents[2]),  # answered twice: ambiguous
                _item(4, contents[3], utility=0.9),  # out of range
                _item(5, contents[4]),
                _item(9, "no such item"),
            ]
        )
    )
    with _store(tmp_path, stub) as store:
        saved = store.save_many(contents)
    assert stub.chat_calls == 1 + 3, "items 2, 3 and 4 were asked again, one call each"
    assert [m.content for m in saved] == contents
    assert [m.prompt_version for m in saved] == [
        "interpret_batch.v4",
        "interpret.v4",
        "interpret.v4",
        "interpret.v4",
        "interpret_batch.v4",
    ]
    assert all(m.score_source == "llm" and m.utility is not None for m in saved)
    assert all(m.utility is not None and m.utility <= 0.25 for m in saved)


def test_an_unusable_answer_falls_back_to_single_calls(tmp_path: Path, stub: OpenAIStub) -> None:
    stub.enqueue(StubReply(body=chat_completion("Sure! Here are the scores you asked for.")))
    with _store(tmp_path, stub) as store:
        saved = store.save_many(_contents(3))
    assert stub.chat_calls == 1 + 3
    assert {m.prompt_version for m in saved} == {"interpret.v4"}


def test_a_failing_endpoint_does_not_multiply_requests(
    tmp_path: Path, stub: OpenAIStub, waits: list[float]
) -> None:
    # waits: the retries' backoff is recorded, not slept through (about 4 s saved)
    down = StubReply(status=500, body={"error": {"message": "down", "type": "server"}})
    stub.enqueue(*[down] * 3)
    with _store(tmp_path, stub) as store:
        saved = store.save_many(_contents(4))
        assert stub.chat_calls == 3, "one batch request, retried; no per-item storm"
        assert {m.score_source for m in saved} == {"pending"}
    stub.enqueue(*[down] * 3)
    with _store(tmp_path, stub, on_judge_error="raise") as store:
        before = store.stats().total
        with pytest.raises(aimem.JudgeError):
            store.save_many(_contents(4, prefix="other"))
        assert store.stats().total == before


def test_batch_tokens_per_save_are_at_most_half_the_single_path(
    tmp_path: Path, stub: OpenAIStub
) -> None:
    contents = _contents(16)
    with _store(tmp_path, stub, judge_batch_size=1) as store:
        single = store.save_many(contents[:8])
    with _store(tmp_path, stub, judge_batch_size=8) as store:
        batched = store.save_many(contents[8:])
    per_single = sum(m.prompt_tokens for m in single) / 8
    per_batched = sum(m.prompt_tokens for m in batched) / 8
    assert per_batched <= 0.5 * per_single, (per_single, per_batched)
    assert {m.completion_tokens > 0 for m in batched} == {True}


def test_single_saves_never_batch(tmp_path: Path, stub: OpenAIStub) -> None:
    with _store(tmp_path, stub) as store:
        memory = store.save("one thing [score=0.5]")
    assert stub.chat_calls == 1 and memory.prompt_version == "interpret.v4"
