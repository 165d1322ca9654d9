"""The offline doubles in aimem.testing: the loopback OpenAI stub and FixedJudge."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from _memories import make_memory

from aimem.judges.base import Judge, judge_source
from aimem.judges.openai import build_messages
from aimem.judges.prompts import load_prompt
from aimem.models import Interpretation, Memory
from aimem.testing import FixedJudge, OpenAIStub, StubReply, marker_score, marker_scores


def chat_body(content: str) -> dict[str, Any]:
    return {"model": "any", "messages": build_messages(load_prompt(), content)}


# One client for the module: building one per request (SSL setup) costs more than the stub.
_http = httpx.Client(timeout=5.0)


@pytest.fixture(scope="module", autouse=True)
def _close_http() -> Iterator[None]:
    yield
    _http.close()


def post(stub: OpenAIStub, body: Any, timeout: float = 5.0) -> httpx.Response:
    return _http.post(f"{stub.base_url}/chat/completions", json=body, timeout=timeout)


def judged(response: httpx.Response) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(response.json()["choices"][0]["message"]["content"])
    return payload


# --- the marker rule ------------------------------------------------------------------------


def test_marker_rule() -> None:
    assert marker_score("Got the job [score=0.80]!") == 0.8
    assert marker_score("no marker") is None
    assert marker_scores("x [score=0.8]") == dict.fromkeys(
        ["emotional_impact", "user_relevance", "novelty", "utility"], 0.2
    )
    assert set(marker_scores("plain").values()) == {0.1}


# --- OpenAIStub ----------------------------------------------------------------------------


def test_stub_answers_a_valid_completion_for_the_data_block() -> None:
    with OpenAIStub(model="stub-x") as stub:
        response = post(stub, chat_body("Prefers Rust [score=0.80]"))

    assert response.status_code == 200
    completion = response.json()
    assert completion["object"] == "chat.completion" and completion["model"] == "stub-x"
    assert completion["choices"][0]["finish_reason"] == "stop"
    assert (
        completion["usage"]["prompt_tokens"] > 100 and completion["usage"]["completion_tokens"] > 0
    )
    assert judged(response) == {
        "interpreted_content": "Interpreted: Prefers Rust [score=0.80]",
        "emotional_impact": 0.2, "user_relevance": 0.2, "novelty": 0.2, "utility": 0.2,
        "rationale": "stub", "supersedes": [], "supersede_reason": "",
    }  # fmt: skip
    assert stub.chat_calls == 1 and stub.chat_requests[0]["model"] == "any"


def test_base_url_is_loopback_and_only_while_running() -> None:
    stub = OpenAIStub().start()
    try:
        assert stub.base_url.startswith("http://127.0.0.1:") and stub.base_url.endswith("/v1")
    finally:
        stub.stop()
    stub.stop()  # idempotent
    with pytest.raises(RuntimeError, match="start"):
        stub.base_url  # noqa: B018


def test_custom_scorer_and_plain_user_message() -> None:
    def scorer(content: str) -> dict[str, float]:
        return dict.fromkeys(["emotional_impact", "user_relevance", "novelty", "utility"], 0.9)

    with OpenAIStub(scorer=scorer) as stub:
        response = post(stub, {"messages": ["junk", {"role": "user", "content": "no block"}]})

    payload = judged(response)
    assert payload["interpreted_content"] == "Interpreted: no block"
    assert payload["utility"] == 0.9  # not range-checked: lets tests provoke re-asks


def test_scripted_replies_come_first_and_in_order() -> None:
    with OpenAIStub() as stub:
        stub.enqueue(
            StubReply(
                status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "3"}
            ),
            StubReply(body='{"choices": ['),
            StubReply(body="plain text", headers={"Content-Type": "text/plain"}),
        )
        replies = [post(stub, chat_body("x")) for _ in range(4)]

    assert replies[0].status_code == 429 and replies[0].headers["retry-after"] == "3"
    assert (
        replies[1].text == '{"choices": ['
        and replies[1].headers["content-type"] == "application/json"
    )
    assert replies[2].headers["content-type"] == "text/plain"
    assert judged(replies[3])["rationale"] == "stub"
    assert stub.chat_calls == 4


def test_delayed_reply_times_out_the_client_and_stop_does_not_hang() -> None:
    stub = OpenAIStub().start()
    stub.enqueue(StubReply(delay=30.0))
    with pytest.raises(httpx.TimeoutException):
        post(stub, chat_body("x"), timeout=0.2)
    started = time.perf_counter()
    stub.stop()
    assert time.perf_counter() - started < 5


def test_latency_applies_to_unscripted_replies() -> None:
    with OpenAIStub(latency=0.2) as stub:
        started = time.perf_counter()
        post(stub, chat_body("x"))
        assert time.perf_counter() - started >= 0.2


def test_unknown_paths_and_bad_bodies_get_json_errors() -> None:
    with OpenAIStub() as stub:
        missing = _http.post(f"{stub.base_url}/audio/speech", json={})
        bad = _http.post(f"{stub.base_url}/chat/completions", content=b"not json")
        models = _http.get(f"{stub.base_url}/models")

    assert missing.status_code == 404 and "error" in missing.json()
    assert bad.status_code == 400 and "error" in bad.json()
    assert models.json()["data"][0]["id"] == "stub-model"
    assert stub.chat_calls == 0


def test_a_failing_scorer_is_a_500_not_a_hang_up() -> None:
    def broken(content: str) -> dict[str, float]:
        raise RuntimeError("scorer bug")

    with OpenAIStub(scorer=broken) as stub:
        response = post(stub, chat_body("x"))
    assert response.status_code == 500 and "scorer bug" in response.text


def test_concurrent_requests_are_all_recorded() -> None:
    with OpenAIStub() as stub:
        threads = [
            threading.Thread(target=post, args=(stub, chat_body(f"c{i}"))) for i in range(12)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    assert stub.chat_calls == 12
    contents = sorted(r["messages"][1]["content"].split("\n")[-2] for r in stub.chat_requests)
    assert contents == sorted(f"c{i}" for i in range(12))


# --- FixedJudge ----------------------------------------------------------------------------


def memory(id: str) -> Memory:
    return make_memory(id)


def run(judge: FixedJudge, content: str, **kwargs: Any) -> Interpretation:
    return asyncio.run(judge.interpret(content, **kwargs))


def test_fixed_judge_defaults_to_the_marker_rule_and_records_calls() -> None:
    judge = FixedJudge()
    assert isinstance(judge, Judge) and judge_source(judge) == "custom"

    plain = run(judge, "plain", related=[memory("a"), memory("b")])
    marked = run(judge, "big news [score=0.80]")

    assert plain.priority_score == 0.4 and marked.priority_score == 0.8
    assert plain.interpreted_content == "Interpreted: plain" and plain.model == "fixed-judge"
    assert judge.calls == ["plain", "big news [score=0.80]"]
    assert judge.related_seen == [["a", "b"], []]


def test_fixed_judge_scorer_float_or_tuple_and_source() -> None:
    assert run(FixedJudge(scorer=lambda c: 0.6), "x").utility == pytest.approx(0.15)
    scored = run(FixedJudge(scorer=lambda c: (0.25, 0.0, 0.1, 0.05)), "x")
    assert (scored.emotional_impact, scored.user_relevance, scored.novelty, scored.utility) == (
        0.25, 0.0, 0.1, 0.05,
    )  # fmt: skip
    assert judge_source(FixedJudge(source="llm")) == "llm"
