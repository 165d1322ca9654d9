"""Supersession inside the one interpretation call: the v2 schema over respx and the stub.

The related memories are numbered in the prompt; the reply names the ones the content
makes out of date by number, and a number the prompt did not show is re-asked once,
never guessed at. Still exactly one LLM call per save when the reply is valid.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import respx
from _llm import BASE_URL, sent

import aimem
from aimem.judges.openai import OpenAIJudge
from aimem.judges.prompts import extract_data_block
from aimem.testing import OpenAIStub, chat_completion


def reply(**overrides: Any) -> httpx.Response:
    fields = {
        "interpreted_content": "The user now lives in Sapporo (moved from Sendai).",
        "emotional_impact": 0.05,
        "user_relevance": 0.2,
        "novelty": 0.15,
        "utility": 0.2,
        "rationale": "A change of residence.",
        "supersedes": [],
        "supersede_reason": "",
        **overrides,
    }
    return httpx.Response(200, json=chat_completion(json.dumps(fields)))


def judge(**kw: Any) -> OpenAIJudge:
    return OpenAIJudge(base_url=BASE_URL, api_key="sk-test", **kw)


def body(route: respx.Route, index: int = -1) -> dict[str, Any]:
    return sent(route, index)


def user_text(route: respx.Route, index: int = -1) -> str:
    return str(body(route, index)["messages"][1]["content"])


def test_the_v2_schema_asks_for_supersession_and_the_related_lines_are_numbered(
    chat: respx.Route, db_url: str
) -> None:
    chat.mock(side_effect=[reply(), reply(supersedes=[1], supersede_reason="moved")])
    with aimem.MemoryStore(db_url, judge=judge()) as store:
        old = store.save("I live in Sendai.")
        report = store.save_with_report("We moved to Sapporo from Sendai last month.")

    assert chat.call_count == 2  # one call per save
    schema = body(chat)["response_format"]["json_schema"]["schema"]
    assert {"supersedes", "supersede_reason"} <= set(schema["required"])
    # interpret.v4: the numbers are bounded by how many related memories a prompt shows.
    assert schema["properties"]["supersedes"] == {
        "type": "array",
        "items": {"type": "integer", "minimum": 1, "maximum": 5},
    }
    related = extract_data_block(user_text(chat), "related-memories")
    assert related is not None and related.splitlines()[0].startswith('1. "')
    assert [m.id for m in report.archived] == [old.id]
    assert report.archived[0].archive_reason == "superseded"
    assert report.memories[0].prompt_version == "interpret.v4"


def test_a_number_the_prompt_did_not_show_is_reasked_once_with_the_reason(
    chat: respx.Route, db_url: str
) -> None:
    chat.mock(side_effect=[reply(), reply(supersedes=[3]), reply(supersedes=[1])])
    with aimem.MemoryStore(db_url, judge=judge()) as store:
        old = store.save("I live in Sendai.")
        new = store.save("We moved to Sapporo from Sendai.")
        assert chat.call_count == 3
        reask = body(chat)["messages"][-1]["content"]
        assert "supersedes: [3] are not related memories shown (numbers 1 to 1)" in reask
        assert new.judge_retries == 1
        assert store.get(old.id).superseded_by == new.id


def test_invented_numbers_twice_leave_the_memory_pending_and_nothing_superseded(
    chat: respx.Route, db_url: str
) -> None:
    chat.mock(side_effect=[reply(), reply(supersedes=[2]), reply(supersedes=[0])])
    with aimem.MemoryStore(db_url, judge=judge()) as store:
        old = store.save("I live in Sendai.")
        new = store.save("We moved to Sapporo from Sendai.")
        assert new.score_source == "pending"
        assert store.get(old.id).archived_at is None


def test_with_no_related_memories_any_number_is_invented(chat: respx.Route) -> None:
    chat.mock(side_effect=[reply(supersedes=[1]), reply()])

    async def go() -> aimem.Interpretation:
        async with judge() as j:
            return await j.interpret("We moved to Sapporo.")

    result = asyncio.run(go())
    assert chat.call_count == 2 and result.supersedes == ()
    assert "none were shown" in body(chat)["messages"][-1]["content"]


def test_a_reply_without_the_new_fields_still_counts_as_no_supersession(
    chat: respx.Route, db_url: str
) -> None:
    fields = json.loads(reply().content)["choices"][0]["message"]["content"]
    plain = {
        k: v for k, v in json.loads(fields).items() if k not in ("supersedes", "supersede_reason")
    }
    chat.mock(return_value=httpx.Response(200, json=chat_completion(json.dumps(plain))))
    with aimem.MemoryStore(db_url, judge=judge()) as store:
        store.save("I live in Sendai.")
        store.save("We moved to Sapporo from Sendai.")
        assert len(store.list()) == 2 and chat.call_count == 2


def test_prompt_v1_keeps_its_schema_and_unnumbered_lines(chat: respx.Route, db_url: str) -> None:
    chat.mock(return_value=reply())
    with aimem.MemoryStore(db_url, judge=judge(prompt_version="v1")) as store:
        store.save("I live in Sendai.")
        memory = store.save("We moved to Sapporo from Sendai.")
    schema = body(chat)["response_format"]["json_schema"]["schema"]
    assert "supersedes" not in schema["properties"]
    related = extract_data_block(user_text(chat), "related-memories")
    assert related is not None and related.startswith('"')
    assert memory.prompt_version == "interpret.v1"


def test_a_batch_names_supersessions_per_item_and_reasks_only_the_bad_one(
    chat: respx.Route, db_url: str
) -> None:
    def batch(items: list[dict[str, Any]]) -> httpx.Response:
        return httpx.Response(200, json=chat_completion(json.dumps({"items": items})))

    base = json.loads(json.loads(reply().content)["choices"][0]["message"]["content"])
    chat.mock(
        side_effect=[
            reply(),
            reply(),
            batch(
                [
                    {"index": 1, **base, "supersedes": [1], "supersede_reason": "moved"},
                    {"index": 2, **base, "supersedes": [4]},
                ]
            ),
            reply(supersedes=[]),
        ]
    )
    with aimem.MemoryStore(db_url, judge=judge(), judge_batch_size=8) as store:
        home = store.save("I live in Sendai.")
        job = store.save("I work as a nurse at St. Luke's.")
        report = store.save_many_with_report(
            ["We moved from Sendai to Sapporo.", "I stopped working as a nurse."]
        )
        assert chat.call_count == 4  # the batch, then item 2 alone
        assert [m.id for m in report.archived] == [home.id]
        assert store.get(job.id).archived_at is None


def test_the_loopback_stub_supersedes_on_its_marker_in_one_call(db_url: str) -> None:
    with OpenAIStub() as stub:
        j = aimem.OpenAIJudge(base_url=stub.base_url, api_key="x")
        with aimem.MemoryStore(db_url, judge=j) as store:
            old = store.save("I live in Sendai.")
            before = stub.chat_calls
            report = store.save_with_report("Moved from Sendai to Sapporo [supersedes=1]")
            assert stub.chat_calls == before + 1
            assert [m.id for m in report.archived] == [old.id]
            assert store.history(old.id)[-1].explanation is None  # free text stays out of history
