"""OpenAIJudge with a small local model, at the wire (respx): interpret.v4's integer scale,
the request's bounds, capability step-downs, timeouts, pace, blending, faithfulness, settings.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from _llm import BASE_URL, make_judge, sent, status
from _stores import store_url

import aimem
from aimem.exceptions import JudgeError, ValidationError
from aimem.judges.openai import OpenAIJudge
from aimem.judges.requests import JudgeItem, Pace, is_small_model
from aimem.models import Interpretation
from aimem.saving.contents import default_judge
from aimem.testing import chat_completion

COMPONENTS = ("emotional_impact", "user_relevance", "novelty", "utility")
BIG = "gpt-4o-mini-2024-07-18"
SMALL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
CONTENT = "I'm allergic to penicillin."
INTERPRETED = "User is allergic to penicillin."
#: What ``output()``'s default integers mean as fractions.
REPLIED = {"emotional_impact": 0.1, "user_relevance": 0.25, "novelty": 0.25, "utility": 0.25}
#: llama-cpp-python's server answers a json_schema response_format with this (HTTP 500).
LLAMA_CPP_REFUSAL = (
    "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
    "  Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema']"
)
DATA_BLOCK = re.compile(r'<memory-data id="[0-9a-f]{16}(?:-\d+)?">\n(.*?)\n</memory-data id=', re.S)
KIN_CONTENT = "私の娘の名前はさくらです"
KIN_SWAPPED = "The user's mother's name is Sakura."
KIN_FAITHFUL = "The user's daughter is named Sakura."


def output(**overrides: Any) -> str:
    """An interpret.v4 answer: components as integers 0-5 (2 -> 0.1, 5 -> 0.25)."""
    fields = {
        "interpreted_content": INTERPRETED,
        "emotional_impact": 2,
        "user_relevance": 5,
        "novelty": 5,
        "utility": 5,
        "rationale": "Safety-critical health fact.",
        "supersedes": [],
        "supersede_reason": "",
        **overrides,
    }
    return json.dumps(fields, ensure_ascii=False)


def batch_output(contents: list[str], **overrides: Any) -> str:
    """A batch answer restating each content verbatim (always faithful)."""
    return json.dumps(
        {
            "items": [
                {"index": n, **json.loads(output(interpreted_content=c, **overrides))}
                for n, c in enumerate(contents, start=1)
            ]
        },
        ensure_ascii=False,
    )


def ok(content: str | None = None, **kwargs: Any) -> httpx.Response:
    kwargs.setdefault("model", BIG)
    kwargs.setdefault("prompt_tokens", 400)
    kwargs.setdefault("completion_tokens", 60)
    return httpx.Response(
        200, json=chat_completion(output() if content is None else content, **kwargs)
    )


def interpret(judge: OpenAIJudge, content: str = CONTENT, **kw: Any) -> Interpretation:
    async def go() -> Interpretation:
        async with judge:
            return await judge.interpret(content, **kw)

    return asyncio.run(go())


def interpret_many(judge: OpenAIJudge, contents: list[str]) -> list[Interpretation | JudgeError]:
    async def go() -> list[Interpretation | JudgeError]:
        async with judge:
            return await judge.interpret_many([JudgeItem(c) for c in contents])

    return asyncio.run(go())


def fails(judge: OpenAIJudge, content: str = CONTENT) -> JudgeError:
    with pytest.raises(JudgeError) as info:
        interpret(judge, content)
    return info.value


def contents_in(body: dict[str, Any]) -> list[str]:
    """The contents a request asks about, in order (one for the single prompt)."""
    [user] = [m["content"] for m in body["messages"] if m["role"] == "user"][:1]
    return DATA_BLOCK.findall(user)


def is_batch(body: dict[str, Any]) -> bool:
    return re.search(r"^Item 1$", body["messages"][1]["content"], re.M) is not None


def server(*, model: str = BIG, first: Any = None) -> Callable[[httpx.Request], httpx.Response]:
    """Answers any single or batch request faithfully; ``first`` replaces the first answer."""
    calls = 0

    def answer(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1 and first is not None:
            if isinstance(first, Exception):
                raise first
            return first  # type: ignore[no-any-return]
        body = json.loads(request.content)
        contents = contents_in(body)
        if is_batch(body):
            return ok(batch_output(contents), model=model)
        return ok(output(interpreted_content=contents[0]), model=model)

    return answer


def in_flight_recorder(
    model: str,
) -> tuple[Callable[[httpx.Request], Awaitable[httpx.Response]], list[int]]:
    """An async side effect that records how many requests the server holds at once."""
    peak = [0]
    current = 0

    async def answer(request: httpx.Request) -> httpx.Response:
        nonlocal current
        current += 1
        peak[0] = max(peak[0], current)
        await asyncio.sleep(0.05)
        current -= 1
        content = contents_in(json.loads(request.content))[0]
        return ok(output(interpreted_content=content), model=model)

    return answer, peak


def expected_blend(
    content: str, model_values: dict[str, float], weight: float = 0.5
) -> dict[str, float]:
    offline = aimem.HeuristicJudge().score(content)
    return {
        name: round(weight * getattr(offline, name) + (1 - weight) * model_values[name], 6)
        for name in COMPONENTS
    }


def components(result: Interpretation) -> dict[str, float]:
    return {name: getattr(result, name) for name in COMPONENTS}


# --- 1. interpret.v4's schema ------------------------------------------------------------


def test_v3_is_the_default_and_bounds_each_component_to_integers_0_to_5(chat: respx.Route) -> None:
    """Grammar engines enforce integer bounds, so a small model cannot answer off the scale."""
    chat.mock(return_value=ok())
    result = interpret(make_judge())

    schema = sent(chat)["response_format"]["json_schema"]["schema"]
    for name in COMPONENTS:
        assert schema["properties"][name] == {"type": "integer", "minimum": 0, "maximum": 5}
    assert schema["properties"]["supersedes"] == {
        "type": "array",
        "items": {"type": "integer", "minimum": 1, "maximum": 5},
    }
    assert result.prompt_version == "interpret.v4"


def test_v3_batch_schema_fixes_the_number_of_answers_and_their_indexes(chat: respx.Route) -> None:
    """A grammar engine then cannot drop, add or misnumber an answer."""
    chat.mock(side_effect=server())
    contents = ["I like tea.", "I like green tea.", "I like black coffee."]
    results = interpret_many(make_judge(), contents)

    assert chat.call_count == 1 and all(isinstance(r, Interpretation) for r in results)
    answers = sent(chat)["response_format"]["json_schema"]["schema"]["properties"]["items"]
    assert answers["minItems"] == answers["maxItems"] == 3
    item = answers["items"]
    assert item["properties"]["index"] == {"type": "integer", "minimum": 1, "maximum": 3}
    for name in COMPONENTS:
        assert item["properties"][name] == {"type": "integer", "minimum": 0, "maximum": 5}


# --- 2. replies on the integer scale -------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "fraction"),
    [(5, 0.25), (4, 0.2), (3, 0.15), (2, 0.1), (1, 0.05), (0, 0.0)],
)
def test_integer_n_means_n_fifths_of_a_quarter(
    chat: respx.Route, value: int, fraction: float
) -> None:
    """interpret.v4's 0-5 reads as DESIGN's 0-0.25 per component."""
    chat.mock(return_value=ok(output(emotional_impact=value, utility=value)))
    result = interpret(make_judge())

    assert chat.call_count == 1
    assert result.emotional_impact == pytest.approx(fraction)
    assert result.utility == pytest.approx(fraction)
    assert result.user_relevance == 0.25


@pytest.mark.parametrize("value", [0.0, 0.05, 0.125, 0.25])
def test_a_float_within_a_quarter_is_read_as_a_fraction(chat: respx.Route, value: float) -> None:
    """A model answering in DESIGN's own units means the same thing: no re-ask."""
    chat.mock(return_value=ok(output(novelty=value)))
    result = interpret(make_judge())

    assert chat.call_count == 1 and result.novelty == pytest.approx(value)


@pytest.mark.parametrize("bad", [7, 6, -1, 1.0, 0.5, 2.5])
def test_off_scale_is_reasked_once_naming_the_integer_scale(
    chat: respx.Route, waits: list[float], bad: float
) -> None:
    """Off the scale is never clamped: the model is told the scale and answers again."""
    chat.mock(side_effect=[ok(output(user_relevance=bad)), ok(output(user_relevance=3))])
    result = interpret(make_judge())

    assert chat.call_count == 2 and waits == []
    corrective = sent(chat, 1)["messages"][-1]["content"]
    assert corrective.startswith("Your reply was invalid: ")
    assert "user_relevance" in corrective and "an integer from 0 to 5" in corrective
    assert f"got {bad}" in corrective
    assert result.user_relevance == pytest.approx(0.15)


def test_off_scale_twice_is_a_judge_error(chat: respx.Route) -> None:
    chat.mock(side_effect=[ok(output(novelty=7)), ok(output(novelty=1.0))])
    error = fails(make_judge())

    assert chat.call_count == 2 and error.attempts == 2
    assert "invalid output twice" in str(error)
    assert error.errors[-1].startswith("request 2: invalid output: novelty")


def test_off_scale_twice_through_a_store_is_saved_pending(
    chat: respx.Route, tmp_path: Path
) -> None:
    """A store never loses a content its judge could not score: it stores it pending."""
    chat.mock(side_effect=[ok(output(novelty=7)), ok(output(novelty=9))])
    judge = make_judge()
    with aimem.MemoryStore(store_url(tmp_path / "m.db"), judge=judge) as store:
        memory = store.save(CONTENT)

    assert chat.call_count == 2
    assert memory.score_source == "pending" and memory.content == CONTENT


# --- 3. what every request carries --------------------------------------------------------


def test_every_request_sends_temperature_zero_seed_zero_and_a_reply_bound(
    chat: respx.Route,
) -> None:
    """Repeatable sampling; a runaway reply ends instead of eating the timeout (the re-ask too)."""
    chat.mock(side_effect=[ok("not json"), ok()])
    interpret(make_judge())

    for index in range(2):
        body = sent(chat, index)
        assert body["temperature"] == 0.0 and body["seed"] == 0
        assert body["max_tokens"] == 64 + 512
        assert "max_completion_tokens" not in body


def test_the_reply_bound_does_not_depend_on_the_content(chat: respx.Route) -> None:
    """A request's shape must not depend on what is judged."""
    chat.mock(side_effect=server())
    long = "I like tea. " * 400

    async def go() -> None:
        async with make_judge() as judge:
            await judge.interpret("I like tea.")
            await judge.interpret(long)

    asyncio.run(go())
    assert sent(chat, 0)["max_tokens"] == sent(chat, 1)["max_tokens"] == 576


def test_a_batch_bound_grows_with_its_items(chat: respx.Route) -> None:
    chat.mock(side_effect=server())
    interpret_many(make_judge(), [f"I like tea kind {c}." for c in "ABCD"])

    assert chat.call_count == 1 and sent(chat)["max_tokens"] == 64 + 512 * 4


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"max_tokens": 300}, {"max_tokens": 300, "temperature": 0.0, "seed": 0}),
        ({"temperature": None}, {"max_tokens": 576, "seed": 0}),
        ({"seed": None}, {"max_tokens": 576, "temperature": 0.0}),
        ({"temperature": 0.7, "seed": 42}, {"max_tokens": 576, "temperature": 0.7, "seed": 42}),
        ({"temperature": None, "seed": None, "max_tokens": 64}, {"max_tokens": 64}),
    ],
)
def test_explicit_sampling_options_are_honoured_and_none_is_not_sent(
    chat: respx.Route, options: dict[str, Any], expected: dict[str, Any]
) -> None:
    chat.mock(return_value=ok())
    interpret(make_judge(**options))

    body = sent(chat)
    assert {k: body[k] for k in ("max_tokens", "temperature", "seed") if k in body} == expected


# --- 4. capability step-downs --------------------------------------------------------------


@pytest.mark.parametrize(
    "refusal",
    [
        status(500, message=LLAMA_CPP_REFUSAL),
        status(400, message="response_format json_schema is not supported by this server"),
        status(400, message="Unknown structured output mode"),
    ],
    ids=["llama-cpp-python-500", "400-json_schema", "400-structured"],
)
def test_a_refused_json_schema_steps_down_to_json_object_with_the_schema_in_the_prompt(
    chat: respx.Route,
    waits: list[float],
    caplog: pytest.LogCaptureFixture,
    refusal: httpx.Response,
) -> None:
    """A refusal is not transient: one more request, changed, not three identical ones."""
    chat.mock(side_effect=[refusal, ok()])
    with caplog.at_level(logging.INFO, logger="aimem"):
        result = interpret(make_judge())

    assert chat.call_count == 2 and waits == []
    assert result.priority_score == 0.85
    first, second = sent(chat, 0), sent(chat, 1)
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object"}
    schema = first["response_format"]["json_schema"]["schema"]
    system = second["messages"][0]["content"]
    assert system.startswith(first["messages"][0]["content"])
    assert json.dumps(schema, ensure_ascii=False, separators=(",", ":")) in system
    assert second["messages"][1:] == first["messages"][1:]
    refused = [r for r in caplog.records if r.name == "aimem" and "refused" in r.getMessage()]
    assert len(refused) == 1 and refused[0].levelno == logging.INFO


def test_the_step_down_is_remembered_by_the_judge(chat: respx.Route) -> None:
    chat.mock(side_effect=[status(500, message=LLAMA_CPP_REFUSAL), ok(), ok()])

    async def go() -> None:
        async with make_judge() as judge:
            await judge.interpret(CONTENT)
            await judge.interpret(CONTENT)

    asyncio.run(go())
    assert chat.call_count == 3
    assert sent(chat, 2)["response_format"] == {"type": "json_object"}


def test_json_object_refused_too_is_a_judge_error_after_two_requests(
    chat: respx.Route, waits: list[float]
) -> None:
    chat.mock(return_value=status(500, message=LLAMA_CPP_REFUSAL))
    error = fails(make_judge())

    assert chat.call_count == 2 and error.attempts == 2 and waits == []
    assert "HTTP 500" in str(error)


def test_a_refused_max_tokens_becomes_max_completion_tokens_then_goes(chat: respx.Route) -> None:
    """Reasoning models want max_completion_tokens; an endpoint refusing both gets neither."""
    message = "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead."
    refusal = status(400, message=message)
    chat.mock(
        side_effect=[refusal, status(400, message="max_completion_tokens: unknown field"), ok()]
    )
    interpret(make_judge())

    assert chat.call_count == 3
    first, second, third = (sent(chat, i) for i in range(3))
    assert first["max_tokens"] == 576 and "max_completion_tokens" not in first
    assert second["max_completion_tokens"] == 576 and "max_tokens" not in second
    assert "max_tokens" not in third and "max_completion_tokens" not in third
    assert third["temperature"] == 0.0 and third["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize(
    ("parameter", "message"),
    [
        ("temperature", "Unsupported value: 'temperature' does not support 0.0 with this model."),
        ("seed", "Unrecognized request argument supplied: seed"),
    ],
)
def test_a_refused_sampling_option_is_dropped_and_the_rest_kept(
    chat: respx.Route, parameter: str, message: str
) -> None:
    chat.mock(side_effect=[status(400, message=message), ok(), ok()])

    async def go() -> None:
        async with make_judge() as judge:
            await judge.interpret(CONTENT)
            await judge.interpret(CONTENT)

    asyncio.run(go())
    assert chat.call_count == 3
    assert parameter in sent(chat, 0)
    for index in (1, 2):
        body = sent(chat, index)
        assert parameter not in body
        assert body["max_tokens"] == 576 and body["response_format"]["type"] == "json_schema"
    kept = {"temperature", "seed"} - {parameter}
    assert all(k in sent(chat, 1) for k in kept)


def test_an_unrelated_500_is_still_retried_as_transient(
    chat: respx.Route, waits: list[float]
) -> None:
    chat.mock(return_value=status(500, message="CUDA error: out of memory"))
    error = fails(make_judge())

    assert chat.call_count == 3 and error.attempts == 3 and len(waits) == 2
    assert all(sent(chat, i)["response_format"]["type"] == "json_schema" for i in range(3))
    assert "kept failing after 3 attempts" in str(error)


def test_concurrent_interprets_all_survive_a_json_schema_refusal(
    chat: respx.Route, waits: list[float]
) -> None:
    """judge_all runs interprets concurrently: a first-contact refusal must not fail them."""

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if body["response_format"]["type"] == "json_schema":
            return status(500, message=LLAMA_CPP_REFUSAL)
        return ok(output(interpreted_content=contents_in(body)[0]), model="llama3.2:3b")

    chat.mock(side_effect=answer)

    async def go() -> list[Interpretation | BaseException]:
        async with make_judge(model="llama3.2:3b") as judge:
            contents = ["I like tea.", "I like coffee.", "I like cocoa."]
            return await asyncio.gather(
                *(judge.interpret(c) for c in contents), return_exceptions=True
            )

    results = asyncio.run(go())
    assert all(isinstance(r, Interpretation) for r in results), results


def test_concurrent_max_tokens_refusals_step_down_only_once(chat: respx.Route) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if "max_tokens" in body:
            return status(
                400, message="Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens'."
            )
        return ok(output(interpreted_content=contents_in(body)[0]))

    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.01)
        return answer(request)

    chat.mock(side_effect=slow)

    async def go() -> None:
        async with make_judge() as judge:
            await asyncio.gather(judge.interpret("I like tea."), judge.interpret("I like coffee."))
            await judge.interpret("I like cocoa.")

    asyncio.run(go())
    assert sent(chat, chat.call_count - 1).get("max_completion_tokens") == 576


# --- 5. timeouts ----------------------------------------------------------------------------


def read_timeouts(route: respx.Route) -> list[float]:
    return [call.request.extensions["timeout"]["read"] for call in route.calls]


def test_a_timed_out_request_is_sent_again_with_twice_the_timeout(
    chat: respx.Route, waits: list[float]
) -> None:
    """A slow local model should get to finish its answer."""
    chat.mock(side_effect=[httpx.ReadTimeout("timed out"), ok()])
    result = interpret(make_judge())

    assert chat.call_count == 2 and result.priority_score == 0.85
    assert read_timeouts(chat) == [30.0, 60.0]
    assert result.usage is not None and result.usage.retries == 1


def test_the_timeout_grows_to_at_most_four_times(chat: respx.Route, waits: list[float]) -> None:
    """A dead endpoint must not hang the caller ever longer."""
    chat.mock(side_effect=httpx.ReadTimeout("timed out"))
    error = fails(make_judge(timeout=10.0, max_attempts=5))

    assert chat.call_count == 5 and read_timeouts(chat) == [10.0, 20.0, 40.0, 40.0, 40.0]
    assert error.errors == [
        "request 1: timed out after 10 s",
        "request 2: timed out after 20 s",
        "request 3: timed out after 40 s",
        "request 4: timed out after 40 s",
        "request 5: timed out after 40 s",
    ]


def test_a_timed_out_batch_is_split_and_every_item_judged(
    chat: respx.Route, waits: list[float]
) -> None:
    """A batch too slow for the timeout is asked again in smaller requests, not given up."""
    contents = [f"I like tea kind {c}." for c in "ABCD"]
    chat.mock(side_effect=server(first=httpx.ReadTimeout("timed out")))
    results = interpret_many(make_judge(), contents)

    assert all(isinstance(r, Interpretation) for r in results)
    assert [r.interpreted_content for r in results] == contents  # type: ignore[union-attr]
    assert contents_in(sent(chat, 0)) == contents
    later = [contents_in(sent(chat, i)) for i in range(1, chat.call_count)]
    assert len(later) >= 2 and all(len(asked) < 4 for asked in later)
    assert sorted(c for asked in later for c in asked) == sorted(contents)


def test_a_batch_that_waited_behind_a_timeout_is_regrouped_before_it_is_sent(
    chat: respx.Route, waits: list[float]
) -> None:
    """save_many runs batches concurrently: once one times out, the queued ones must not
    spend their own timeouts finding out the same thing."""
    chat.mock(side_effect=server(first=httpx.ReadTimeout("timed out")))
    first, second = [f"I like tea kind {c}." for c in "ABCD"], [f"I like jam {c}." for c in "EFGH"]
    judge = make_judge(model="llama3.2:3b")  # small: one request at a time from the start

    async def go() -> list[list[Interpretation | JudgeError]]:
        async with judge:
            return list(
                await asyncio.gather(
                    judge.interpret_many([JudgeItem(c) for c in first]),
                    judge.interpret_many([JudgeItem(c) for c in second]),
                )
            )

    results = asyncio.run(go())
    assert all(isinstance(r, Interpretation) for batch in results for r in batch)
    asked = [contents_in(sent(chat, i)) for i in range(chat.call_count)]
    assert asked[0] == first  # the batch that timed out
    assert second not in asked  # the one queued behind it was never sent whole
    assert all(len(a) < 4 for a in asked[1:])
    assert sorted(c for a in asked[1:] for c in a) == sorted(first + second)


# --- 6. pace ---------------------------------------------------------------------------------


def test_with_no_pace_known_all_items_are_one_group() -> None:
    assert Pace().groups([(100, 100)] * 20, 1000, 30.0) == [range(20)]


def test_a_known_pace_groups_items_to_fit_half_the_timeout() -> None:
    """1 s per reply token, 10 tokens per item, 40 s timeout: two items per request."""
    pace = Pace(seconds_per_unit=1.0)
    assert pace.groups([(0, 10)] * 5, 0, 40.0) == [range(0, 2), range(2, 4), range(4, 5)]
    assert Pace(seconds_per_unit=0.1).groups([(0, 10)] * 5, 0, 40.0) == [range(5)]


def test_an_item_too_big_for_the_budget_still_gets_a_request_of_its_own() -> None:
    pace = Pace(seconds_per_unit=1.0)
    assert pace.groups([(0, 100), (0, 5), (0, 100)], 0, 40.0) == [
        range(0, 1),
        range(1, 2),
        range(2, 3),
    ]


def test_pace_counts_prompt_tokens_at_a_quarter_and_the_slower_pace_dominates() -> None:
    pace = Pace()
    pace.observe(0, 0, 5.0)  # no tokens: nothing learnt
    assert pace.seconds_per_unit is None
    pace.observe(400, 100, 20.0)  # 400 / 4 + 100 = 200 units
    assert pace.seconds_per_unit == pytest.approx(0.1)
    pace.observe(0, 100, 1.0)  # faster: only halfway there
    assert pace.seconds_per_unit == pytest.approx(0.055)
    pace.observe(0, 100, 50.0)  # slower: taken at once
    assert pace.seconds_per_unit == pytest.approx(0.5)


def test_a_timeout_sets_a_floor_on_the_pace() -> None:
    pace = Pace(seconds_per_unit=0.001)
    pace.timed_out(400, 200, 30.0)  # 300 units took more than 30 s
    assert pace.seconds_per_unit == pytest.approx(0.1)
    assert pace.seconds(400, 200) == pytest.approx(30.0)


def test_no_pace_known_sends_every_item_in_one_request(chat: respx.Route) -> None:
    chat.mock(side_effect=server())
    contents = [f"I like tea kind {c}." for c in "ABCD"]
    results = interpret_many(make_judge(), contents)

    assert chat.call_count == 1 and contents_in(sent(chat)) == contents
    assert all(isinstance(r, Interpretation) for r in results)


def test_a_slow_pace_splits_a_batch_into_requests_that_fit_half_the_timeout(
    chat: respx.Route,
) -> None:
    """A slow endpoint gets requests it can answer in time, not one that times out."""
    chat.mock(side_effect=server())
    contents = [f"I like tea kind {c}." for c in "ABCD"]
    judge = make_judge()
    sizes, fixed = judge._sizes([JudgeItem(c) for c in contents]), judge._fixed_prompt()

    def units(k: int) -> float:
        return (fixed + sum(p for p, _ in sizes[:k])) * 0.25 + sum(r for _, r in sizes[:k])

    # A pace at which two items fit in 15 s (half the timeout) and three do not.
    per_unit = 15.0 / ((units(2) + units(3)) / 2)
    judge._pace.observe(0, 1000, per_unit * 1000)
    results = interpret_many(judge, contents)

    assert chat.call_count == 2
    assert [contents_in(sent(chat, i)) for i in range(2)] == [contents[:2], contents[2:]]
    assert all(isinstance(r, Interpretation) for r in results)


# --- 7. small models --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "small"),
    [
        ("qwen2.5-coder-1.5b-instruct-q4_k_m", True),
        ("llama3.2:3b", True),
        ("Llama-3.1-8B-Instruct", True),
        ("phi3:3.8b", True),
        ("qwen2.5:0.5b", True),
        ("gpt-4o-mini", False),
        ("gpt-4o-mini-2024-07-18", False),
        ("stub-model", False),
        ("llama3.1:70b", False),
        ("gemma2:9b", False),
        ("qwen3-30b-a3b", False),
        (None, False),
        ("", False),
        # experts x size: Mixtral 8x7B has ~47B parameters (cf78b0e read it as 7B)
        ("mixtral-8x7b", False),
        ("Mixtral-8x22B-Instruct-v0.1", False),
    ],
)
def test_small_model_names(name: str | None, small: bool) -> None:
    """At most 8B parameters by the name; a name without a size is not small."""
    assert is_small_model(name) is small


def test_a_small_models_components_are_blended_half_with_the_heuristic(chat: respx.Route) -> None:
    """The blend ranks better than either alone; the model's name in the reply decides."""
    chat.mock(return_value=ok(model=SMALL))
    result = interpret(make_judge(model="local"))

    expected = expected_blend(CONTENT, REPLIED)
    assert expected != pytest.approx(REPLIED)  # the heuristic disagrees: the blend shows
    assert components(result) == expected
    assert result.priority_score == pytest.approx(sum(expected.values()), abs=1e-6)
    assert result.model == SMALL and result.interpreted_content == INTERPRETED


@pytest.mark.parametrize(
    ("model", "weight"),
    [(SMALL, 0.0), (BIG, None), ("llama3.1:70b", None)],
    ids=["weight-0", "gpt-4o-mini", "70b"],
)
def test_no_blend_when_turned_off_or_for_a_large_model(
    chat: respx.Route, model: str, weight: float | None
) -> None:
    chat.mock(return_value=ok(model=model))
    result = interpret(make_judge(model="local", heuristic_weight=weight))

    assert components(result) == pytest.approx(REPLIED)


def test_an_explicit_weight_blends_any_model(chat: respx.Route) -> None:
    chat.mock(return_value=ok(model=BIG))
    result = interpret(make_judge(heuristic_weight=0.25))

    assert components(result) == expected_blend(CONTENT, REPLIED, 0.25)


def test_a_small_model_gets_one_request_at_a_time(chat: respx.Route) -> None:
    """A local server answers in turn: a queued request would spend its timeout waiting."""
    answer, peak = in_flight_recorder(SMALL)
    chat.mock(side_effect=answer)

    async def go() -> None:
        async with make_judge(model="local") as judge:
            assert not judge.small_model
            await judge.interpret("I like tea.")  # the server says which model it is
            assert judge.small_model
            peak[0] = 0
            await asyncio.gather(*(judge.interpret(f"I like tea kind {c}.") for c in "ABC"))

    asyncio.run(go())
    assert chat.call_count == 4 and peak[0] == 1


def test_a_small_model_named_by_the_caller_is_gated_from_the_first_request(
    chat: respx.Route,
) -> None:
    answer, peak = in_flight_recorder("llama3.2:3b")
    chat.mock(side_effect=answer)

    async def go() -> None:
        async with make_judge(model="llama3.2:3b") as judge:
            await asyncio.gather(*(judge.interpret(f"I like tea kind {c}.") for c in "ABC"))

    asyncio.run(go())
    assert chat.call_count == 3 and peak[0] == 1


def test_a_large_model_gets_concurrent_requests(chat: respx.Route) -> None:
    """The gate is for small or slow endpoints only: a hosted model is asked in parallel."""
    answer, peak = in_flight_recorder(BIG)
    chat.mock(side_effect=answer)

    async def go() -> None:
        async with make_judge() as judge:
            await judge.interpret("I like tea.")
            await asyncio.gather(*(judge.interpret(f"I like tea kind {c}.") for c in "ABC"))

    asyncio.run(go())
    assert peak[0] == 3


def test_after_a_timeout_even_a_large_model_gets_one_request_at_a_time(
    chat: respx.Route, waits: list[float]
) -> None:
    answer, peak = in_flight_recorder(BIG)
    calls = 0

    async def first_times_out(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise httpx.ReadTimeout("timed out")
        return await answer(request)

    chat.mock(side_effect=first_times_out)

    async def go() -> None:
        async with make_judge() as judge:
            await judge.interpret("I like tea.")
            peak[0] = 0
            await asyncio.gather(*(judge.interpret(f"I like tea kind {c}.") for c in "ABC"))

    asyncio.run(go())
    assert chat.call_count == 5 and peak[0] == 1


# --- 8. faithfulness --------------------------------------------------------------------------


def test_an_unfaithful_interpretation_is_reasked_with_the_reason(chat: respx.Route) -> None:
    """A swapped relative is a distorted fact: the model is told which and answers again."""
    chat.mock(
        side_effect=[
            ok(output(interpreted_content=KIN_SWAPPED)),
            ok(output(interpreted_content=KIN_FAITHFUL, novelty=4)),
        ]
    )
    result = interpret(make_judge(), KIN_CONTENT)

    assert chat.call_count == 2
    corrective = sent(chat, 1)["messages"][-1]["content"]
    assert "not faithful" in corrective and '"mother"' in corrective and "娘" in corrective
    assert sent(chat, 1)["messages"][-2]["content"] == output(interpreted_content=KIN_SWAPPED)
    assert result.interpreted_content == KIN_FAITHFUL
    assert result.novelty == pytest.approx(0.2)
    assert not result.rationale.startswith("[interpretation kept")


@pytest.mark.parametrize("model", [BIG, SMALL])
def test_unfaithful_twice_keeps_the_content_itself_flagged(chat: respx.Route, model: str) -> None:
    """Nothing lost, nothing distorted; the scores are still the model's (blended if small)."""
    chat.mock(
        side_effect=[
            ok(output(interpreted_content=KIN_SWAPPED), model=model),
            ok(output(interpreted_content=KIN_SWAPPED, novelty=3), model=model),
        ]
    )
    result = interpret(make_judge(model="local"), KIN_CONTENT)

    assert chat.call_count == 2
    assert result.interpreted_content == KIN_CONTENT
    assert result.rationale.startswith("[interpretation kept as the content: ")
    assert result.rationale.endswith("Safety-critical health fact.")
    values = {**REPLIED, "novelty": 0.15}
    if model == SMALL:
        values = expected_blend(KIN_CONTENT, values)
    assert components(result) == pytest.approx(values)


def test_unfaithful_then_invalid_keeps_the_content_with_the_first_scores(
    chat: respx.Route,
) -> None:
    chat.mock(side_effect=[ok(output(interpreted_content=KIN_SWAPPED, novelty=1)), ok("nope")])
    result = interpret(make_judge(), KIN_CONTENT)

    assert chat.call_count == 2 and result.interpreted_content == KIN_CONTENT
    assert result.rationale.startswith("[interpretation kept as the content: ")
    assert result.novelty == pytest.approx(0.05)


def test_faithfulness_check_off_takes_the_reply_as_it_is(chat: respx.Route) -> None:
    chat.mock(return_value=ok(output(interpreted_content=KIN_SWAPPED)))
    result = interpret(make_judge(check_faithfulness=False), KIN_CONTENT)

    assert chat.call_count == 1 and result.interpreted_content == KIN_SWAPPED


def test_an_unfaithful_batch_item_is_asked_again_alone(chat: respx.Route) -> None:
    contents = ["I like green tea.", KIN_CONTENT, "I like black coffee."]
    answer = json.loads(batch_output(contents))
    answer["items"][1]["interpreted_content"] = KIN_SWAPPED
    chat.mock(
        side_effect=[
            ok(json.dumps(answer, ensure_ascii=False)),
            ok(output(interpreted_content=KIN_FAITHFUL)),
        ]
    )
    results = interpret_many(make_judge(), contents)

    assert chat.call_count == 2
    assert not is_batch(sent(chat, 1)) and contents_in(sent(chat, 1)) == [KIN_CONTENT]
    assert [r.interpreted_content for r in results] == [  # type: ignore[union-attr]
        contents[0],
        KIN_FAITHFUL,
        contents[2],
    ]


# --- 9. settings -------------------------------------------------------------------------------


def judge_settings(tmp_path: Path, **environ: str) -> aimem.Settings:
    return aimem.Settings.load(environ=environ, config_file=tmp_path / "absent.json")


def test_judge_settings_parse_from_the_environment(tmp_path: Path) -> None:
    settings = judge_settings(
        tmp_path,
        AIMEM_JUDGE_TEMPERATURE="none",
        AIMEM_JUDGE_SEED="7",
        AIMEM_JUDGE_MAX_TOKENS="300",
        AIMEM_JUDGE_HEURISTIC_WEIGHT="0.25",
        AIMEM_JUDGE_CHECK_FAITHFULNESS="false",
    )
    assert settings.judge_temperature is None
    assert settings.judge_seed == 7
    assert settings.judge_max_tokens == 300
    assert settings.judge_heuristic_weight == 0.25
    assert settings.judge_check_faithfulness is False


def test_judge_settings_defaults(tmp_path: Path) -> None:
    settings = judge_settings(tmp_path)
    assert (settings.judge_temperature, settings.judge_seed, settings.judge_max_tokens) == (
        0.0,
        0,
        None,
    )
    assert settings.judge_heuristic_weight is None and settings.judge_check_faithfulness is True


def test_none_in_the_config_file_means_none(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"judge_seed": "none", "judge_heuristic_weight": "null"}))
    settings = aimem.Settings.load(environ={}, config_file=config)
    assert settings.judge_seed is None and settings.judge_heuristic_weight is None


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AIMEM_JUDGE_TEMPERATURE", "3"),
        ("AIMEM_JUDGE_TEMPERATURE", "-0.1"),
        ("AIMEM_JUDGE_TEMPERATURE", "warm"),
        ("AIMEM_JUDGE_SEED", "seven"),
        ("AIMEM_JUDGE_MAX_TOKENS", "0"),
        ("AIMEM_JUDGE_HEURISTIC_WEIGHT", "2"),
        ("AIMEM_JUDGE_CHECK_FAITHFULNESS", "maybe"),
        ("AIMEM_JUDGE_CHECK_FAITHFULNESS", "none"),
    ],
)
def test_bad_judge_settings_are_rejected(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(ValidationError):
        judge_settings(tmp_path, **{name: value})


def test_default_judge_passes_the_settings_to_the_openai_judge(tmp_path: Path) -> None:
    settings = judge_settings(
        tmp_path,
        OPENAI_BASE_URL=BASE_URL,
        AIMEM_JUDGE_TEMPERATURE="none",
        AIMEM_JUDGE_SEED="7",
        AIMEM_JUDGE_MAX_TOKENS="300",
        AIMEM_JUDGE_HEURISTIC_WEIGHT="0.25",
        AIMEM_JUDGE_CHECK_FAITHFULNESS="false",
    )
    judge = default_judge(settings)

    assert isinstance(judge, OpenAIJudge)
    assert (judge.temperature, judge.seed, judge.max_tokens) == (None, 7, 300)
    assert (judge.heuristic_weight, judge.check_faithfulness) == (0.25, False)
    asyncio.run(judge.aclose())


def test_configured_options_reach_the_wire(chat: respx.Route, tmp_path: Path) -> None:
    environ = {
        "AIMEM_JUDGE_TEMPERATURE": "none",
        "AIMEM_JUDGE_SEED": "7",
        "AIMEM_JUDGE_MAX_TOKENS": "300",
    }
    settings = judge_settings(tmp_path, OPENAI_BASE_URL=BASE_URL, **environ)
    judge = default_judge(settings)
    assert isinstance(judge, OpenAIJudge)
    chat.mock(return_value=ok())
    interpret(judge)

    body = sent(chat)
    assert "temperature" not in body and body["seed"] == 7 and body["max_tokens"] == 300


@pytest.mark.parametrize(
    "options",
    [
        {"temperature": 3},
        {"temperature": -0.5},
        {"max_tokens": 0},
        {"heuristic_weight": 2},
        {"heuristic_weight": -0.1},
    ],
)
def test_bad_judge_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        OpenAIJudge(api_key="k", **options)


@pytest.mark.parametrize(("model", "archived"), [(SMALL, True), (BIG, False)])
def test_a_small_models_missed_supersession_is_added_from_the_heuristic(
    chat: respx.Route, db_url: str, model: str, archived: bool
) -> None:
    """A 1.5B model rarely names the memory an update replaces; the heuristic's guarded
    rules add it for small models only (a large model's own judgement stands)."""
    old, new = "I live in Sendai.", "I moved to Sapporo; I no longer live in Sendai."
    chat.mock(
        side_effect=[
            ok(output(interpreted_content="The user lives in Sendai."), model=model),
            ok(output(interpreted_content="The user moved to Sapporo from Sendai."), model=model),
        ]
    )
    with aimem.MemoryStore(db_url, judge=make_judge()) as store:
        first = store.save(old)
        report = store.save_with_report(new)
        reread = store.get(first.id)
    assert chat.call_count == 2
    assert (reread.archive_reason == "superseded") is archived
    assert [m.id for m in report.archived] == ([first.id] if archived else [])


@pytest.mark.parametrize(
    ("old", "new", "archived"),
    [
        # precise: an explicit end of the very thing, a move against the residence
        ("I drive a VW Golf.", "I sold the Golf last week.", True),
        ("I live in Sendai.", "Now that I live in Sapporo, can you find me a dentist?", True),
        # loose (the same frame with no change word): the offline judge's own, not added
        ("I cycle to work through the park.", "I cycle to work along the canal.", False),
        # never: a move and a birthplace, two diagnoses, a game and a car
        ("I was born in Sendai.", "We moved to Sapporo last month.", False),
        ("I have asthma.", "I was diagnosed with type 2 diabetes.", False),
        ("I play golf on Sundays.", "I sold my Golf and bought a Polo.", False),
    ],
)
def test_only_the_heuristics_precise_rules_amend_a_small_models_supersedes(
    chat: respx.Route, db_url: str, old: str, new: str, archived: bool
) -> None:
    chat.mock(
        side_effect=[
            ok(output(interpreted_content=f"The user: {old}"), model=SMALL),
            ok(output(interpreted_content=f"The user: {new}"), model=SMALL),
        ]
    )
    with aimem.MemoryStore(db_url, judge=make_judge()) as store:
        first = store.save(old)
        report = store.save_with_report(new)
        reread = store.get(first.id)
    assert (reread.archive_reason == "superseded") is archived
    assert [m.id for m in report.archived] == ([first.id] if archived else [])
