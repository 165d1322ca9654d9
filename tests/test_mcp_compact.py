"""``aimem mcp`` for an agent's context window, driven by the SDK's client over stdio.

Compact views by default and the whole record on request, every result within the
character budget (text and structured content together, as the client receives them),
pages that lose nothing, the new tools, id prefixes, a real ``outputSchema`` per tool
that every result validates against, and errors worded as MCP arguments.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _memories import make_memory
from _stores import store_url
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import aimem
from aimem.judges.transport import new_client
from aimem.mcp.errors import SEMANTIC_NEEDS_EMBEDDER, mcp_wording
from aimem.mcp.http import MAX_ERROR_CHARS
from aimem.mcp.pages import Pager, result_chars
from aimem.mcp.server import MORE_MEMORIES
from aimem.mcp.views import memory_view
from aimem.retrieval.retriever import mismatch_message, other_embedder_message
from aimem.testing import OpenAIStub

AIMEM = str(Path(sys.executable).with_name("aimem"))
DEFAULT_BUDGET = aimem.Settings.model_fields["mcp_max_chars"].default
COMPACT = {"id", "content", "interpretation", "priority", "pinned", "state"}
#: What an MCP error must never say: Python calls and literals.
PYTHON_ADVICE = ("store.", "()", "Pass ", "=True", "=False", "aimem.", "embedder=")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    return env | extra


def _dev_texts() -> list[str]:
    path = Path(aimem.__file__).with_name("data") / "judge-dev.jsonl"
    return [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]


def _fill(db: Path, count: int) -> list[str]:
    """Save dev-set texts until ``count`` are active; their ids, most important first."""
    with aimem.MemoryStore(
        store_url(db), judge=aimem.HeuristicJudge(), min_priority_score=0.0, max_memories=1000
    ) as store:
        for text in _dev_texts():
            if store.stats().count >= count:
                break
            store.save(text)
        return [m.id for m in store.list()]


def _chars(call: Any) -> int:
    """Characters the client holds for one result: text blocks plus the structured JSON."""
    text = sum(len(block.text) for block in call.content)
    structured = json.dumps(call.structured_content, ensure_ascii=False, separators=(",", ":"))
    return text + len(structured)


@dataclass
class Agent:
    """A client session that checks every result: bounded, schema-valid, text == JSON."""

    session: ClientSession
    budget: int
    instructions: str = ""
    schemas: dict[str, Any] = field(default_factory=dict)

    async def start(self) -> Agent:
        init = await self.session.initialize()
        self.instructions = init.instructions or ""
        self.schemas = {t.name: t.output_schema for t in (await self.session.list_tools()).tools}
        return self

    async def __call__(self, tool: str, **arguments: Any) -> dict[str, Any]:
        call = await self.session.call_tool(tool, arguments)
        assert not call.is_error, call.content[0].text
        assert _chars(call) <= self.budget, (tool, _chars(call))
        [block] = call.content
        structured = dict(call.structured_content or {})
        assert json.loads(block.text) == structured
        jsonschema.validate(structured, self.schemas[tool])
        return structured

    async def fail(self, tool: str, **arguments: Any) -> str:
        call = await self.session.call_tool(tool, arguments)
        assert call.is_error, (tool, arguments)
        [block] = call.content
        text: str = block.text
        assert "\n" not in text and len(text) <= MAX_ERROR_CHARS, text
        return text

    async def all_pages(
        self, tool: str, key: str, *, first: dict[str, Any] | None = None, **arguments: Any
    ) -> tuple[list[Any], int]:
        """Every item over every page, and how many pages it took."""
        page = first if first is not None else await self(tool, **arguments)
        items, pages = list(page[key]), 1
        while page["next_cursor"] is not None:
            page = await self(tool, cursor=page["next_cursor"], **arguments)
            items += page[key]
            pages += 1
        return items, pages


@asynccontextmanager
async def agent(db: Path, *args: str, **env: str) -> AsyncIterator[Agent]:
    params = StdioServerParameters(
        command=AIMEM, args=["--database-url", store_url(db), "mcp", *args], env=_env(**env)
    )
    budget = int(env.get("AIMEM_MCP_MAX_CHARS", DEFAULT_BUDGET))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        yield await Agent(session, budget).start()


# -- compact views, detail, resources, schemas --------------------------------------------


def test_memories_are_compact_by_default_and_whole_on_request(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with agent(tmp_path / "m.db") as a:
            old = (await a("save_memory", content="I live in Sendai."))["memory"]
            assert set(old) == COMPACT
            assert old["state"] == "active" and old["pinned"] is False
            assert old["priority"] == round(old["priority"], 3) and len(old["id"]) == 36
            moved = await a("save_memory", content="We moved to Sapporo last month.")
            assert moved["superseded"] == [old["id"]]
            gone = (await a("get_memory", memory_id=old["id"]))["memory"]
            assert gone["state"] == "superseded" and gone["archive_reason"] == "superseded"
            assert gone["superseded_by"] == moved["memory"]["id"]
            full = (await a("get_memory", memory_id=old["id"], detail=True))["memory"]
            assert set(aimem.Memory.model_fields) <= set(full)
            assert full["namespace"] == "default" and full["score_source"] == "heuristic"
            [resource] = (await a.session.read_resource(f"memory://memories/{old['id']}")).contents
            assert json.loads(resource.text) == full
            listed = (await a("list_memories", include_archived=True))["memories"]
            assert {m["state"] for m in listed} == {"active", "superseded"}
            assert all(set(m) <= COMPACT | {"archive_reason", "superseded_by"} for m in listed)
            hits = (await a("search_memories", query="Sapporo"))["hits"]
            assert set(hits[0]["memory"]) == COMPACT
            detailed = await a("search_memories", query="Sapporo", detail=True)
            assert "score_source" in detailed["hits"][0]["memory"]
            events = (await a("memory_history", memory_id=old["id"]))["events"]
            assert [e["event"] for e in events] == ["save", "archive"]
            assert set(events[0]) == {"event", "version", "at"}, "no empty fields"

    asyncio.run(scenario())


def test_every_tool_has_a_real_output_schema_and_its_results_validate(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with agent(tmp_path / "m.db") as a:
            for name, schema in a.schemas.items():
                assert schema is not None and schema["type"] == "object", name
                assert schema["properties"] and schema["required"], name
            assert a.schemas["read_memory"]["required"] == ["memories", "next_cursor"]
            view = a.schemas["read_memory"]["$defs"]["MemoryView"]
            assert set(view["required"]) == COMPACT and view["additionalProperties"] is False
            assert set(a.schemas["save_memory"]["required"]) >= {"memory", "duplicate", "archived"}
            assert a.schemas["search_memories"]["properties"]["hits"]["type"] == "array"
            # Agent.__call__ validates every result against the schema the client received.
            saved = await a("save_memory", content="Likes green tea", detail=True)
            memory_id = saved["memory"]["id"]
            await a("save_memories", contents=["Plays the cello", "Runs on Sundays"])
            await a("search_memories", query="tea", mode="keyword", detail=True)
            await a("list_memories", include_archived=True, detail=True)
            await a("get_memory", memory_id=memory_id)
            await a("update_memory", memory_id=memory_id, content="Likes green tea a lot")
            await a("pin_memory", memory_id=memory_id, detail=True)
            await a("unpin_memory", memory_id=memory_id)
            await a("memory_history", memory_id=memory_id, detail=True)
            await a("memory_history", memory_id=memory_id)
            await a("prune_memories", dry_run=True)
            await a("memory_stats")
            await a("set_core", text="You are Ai.")
            await a("read_core")
            await a("read_memory", detail=True)
            await a("compress", items=["Likes tea; plays the cello; runs"])
            archived = (await a("list_memories", include_archived=True))["memories"]
            back = next(m for m in archived if m["state"] == "archived")
            await a("restore_memory", memory_id=back["id"])
            await a("delete_memory", memory_id=back["id"])

    asyncio.run(scenario())


# -- budgets and pages ------------------------------------------------------------------


def test_read_memory_and_instructions_stay_within_the_budget_and_pages_lose_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    ids = _fill(db, 100)
    assert len(ids) == 100

    async def scenario() -> None:
        async with agent(db) as a:
            assert 0 < len(a.instructions) <= DEFAULT_BUDGET
            first = await a("read_memory")
            assert first["next_cursor"] is not None, "100 memories do not fit one page"
            shown, pages = await a.all_pages("read_memory", "memories", first=first)
            assert [m["id"] for m in shown] == ids and pages >= 2
            detailed, detail_pages = await a.all_pages("read_memory", "memories", detail=True)
            assert [m["id"] for m in detailed] == ids and detail_pages > pages
            again = await a("read_memory", cursor=first["next_cursor"])
            assert again["memories"][0]["id"] == ids[len(first["memories"])], "a cursor replays"
            wrong_tool = await a.fail("list_memories", cursor=first["next_cursor"])
            assert "this cursor continues read_memory: call read_memory with it" in wrong_tool
            assert "not one this server gave" in await a.fail("read_memory", cursor="nonsense")
            assert "cursor expired" in await a.fail("read_memory", cursor="A" * 16 + ".3")

    asyncio.run(scenario())


def test_small_budget_pages_lists_searches_and_batch_saves(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    ids = _fill(db, 60)
    tea = [f"Tea note {n}: the user brews sencha at {60 + n} degrees" for n in range(12)]

    async def scenario() -> None:
        async with agent(
            db, AIMEM_MCP_MAX_CHARS="2000", AIMEM_MAX_MEMORIES="500", AIMEM_MIN_PRIORITY_SCORE="0"
        ) as a:
            assert len(a.instructions) <= 2000
            listed, pages = await a.all_pages("list_memories", "memories", limit=40)
            assert [m["id"] for m in listed] == ids[:40] and pages > 3
            recent, _ = await a.all_pages("list_memories", "memories", order="recent", limit=60)
            assert sorted(m["id"] for m in recent) == sorted(ids)
            saved = await a("save_memories", contents=tea)
            assert 0 < len(saved["memories"]) < len(tea) and saved["next_cursor"]
            rest, _ = await a.all_pages("list_memories", "memories", first=saved)
            assert [m["content"] for m in rest] == tea, "the batch continues on list_memories"
            hits, pages = await a.all_pages("search_memories", "hits", query="sencha", limit=12)
            assert sorted(h["memory"]["content"] for h in hits) == sorted(tea) and pages > 1
            first = await a("search_memories", query="sencha", limit=12)
            other = await a.fail("search_memories", query="coffee", cursor=first["next_cursor"])
            assert "another query" in other
            read, _ = await a.all_pages("read_memory", "memories")
            assert len(read) == len(ids) + len(tea)
            done = await a("compress", items=["The user drinks sencha; other notes summarised"])
            assert done["truncated"] is True and 0 < len(done["archived"]) < len(read)
            archived, _ = await a.all_pages(
                "list_memories", "memories", include_archived=True, order="recent", limit=1000
            )
            assert sum(m.get("archive_reason") == "compressed" for m in archived) == len(read)

    asyncio.run(scenario())


def test_the_memories_resource_keeps_to_the_budget_and_says_how_to_read_on(
    tmp_path: Path,
) -> None:
    ids = _fill(tmp_path / "m.db", 30)
    few = _fill(tmp_path / "few.db", 3)

    async def scenario() -> None:
        async with agent(tmp_path / "m.db", AIMEM_MCP_MAX_CHARS="3000") as a:
            [first] = (await a.session.read_resource("memory://memories")).contents
            assert len(first.text) <= 3000, len(first.text)
            page = json.loads(first.text)
            assert page["note"] == MORE_MEMORIES and page["next_cursor"]
            assert "read_memory" in page["note"] and "cursor=next_cursor" in page["note"]
            assert set(aimem.Memory.model_fields) <= set(page["memories"][0])
            rest, pages = await a.all_pages(
                "read_memory", "memories", first={**page, "memories": []}, detail=True
            )
            listed = [m["id"] for m in page["memories"] + rest]
            assert listed == ids and pages > 5, "every memory once, most important first"
        async with agent(tmp_path / "few.db") as a:  # all fit: the plain list, as before
            [whole] = (await a.session.read_resource("memory://memories")).contents
            assert [m["id"] for m in json.loads(whole.text)] == few

    asyncio.run(scenario())


def test_a_text_too_long_for_the_budget_is_cut_and_marked_never_lost(tmp_path: Path) -> None:
    long = " ".join(f"word{n}" for n in range(900))
    core = "You are Ai. " * 500

    async def scenario() -> None:
        async with agent(
            tmp_path / "m.db", AIMEM_MCP_MAX_CHARS="2000", AIMEM_MIN_PRIORITY_SCORE="0"
        ) as a:
            saved = (await a("save_memory", content=long))["memory"]
            assert saved["truncated"] is True and saved["content"].endswith("…")
            assert long.startswith(saved["content"][:-1])
            got = (await a("get_memory", memory_id=saved["id"], detail=True))["memory"]
            assert got["truncated"] is True and got["namespace"] == "default"
            [whole] = (await a.session.read_resource(f"memory://memories/{saved['id']}")).contents
            assert json.loads(whole.text)["content"] == long
            listed = (await a("read_memory"))["memories"]
            assert [m["id"] for m in listed] == [saved["id"]] and listed[0]["truncated"]
            await a("set_core", text=core)
            read = await a("read_core")
            assert read["truncated"] is True and core.startswith(read["core"][:-1])
            [resource] = (await a.session.read_resource("memory://core")).contents
            assert resource.text == core
            history = await a("memory_history", memory_id=saved["id"])
            assert history["memory_id"] == saved["id"]

    asyncio.run(scenario())


# -- new tools ----------------------------------------------------------------------------


def test_set_core_and_save_memories_in_one_judge_call_per_batch(tmp_path: Path) -> None:
    async def scenario(stub: OpenAIStub) -> None:
        async with agent(
            tmp_path / "m.db", OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="sk-test"
        ) as a:
            assert await a("set_core", text="You are Ai, a calm assistant.") == {
                "ok": True,
                "chars": 29,
            }
            assert (await a("read_core"))["core"] == "You are Ai, a calm assistant."
            saved = await a(
                "save_memories",
                contents=["Allergic to penicillin [score=0.9]", "Likes jazz [score=0.4]"],
                user_context="syui",
            )
            assert stub.chat_calls == 1, "one judge call for the batch"
            assert [m["priority"] for m in saved["memories"]] == [0.9, 0.4]
            assert saved["duplicates"] == [] and saved["next_cursor"] is None
            items = await a(
                "save_memories",
                items=[
                    {"content": "Likes jazz [score=0.4]", "user_context": "syui"},
                    {"content": "Has a cat named Miso [score=0.5]"},
                    {"content": "Bob is vegetarian [score=0.6]", "user_context": "bob"},
                ],
                user_context="syui",
                detail=True,
            )
            assert stub.chat_calls == 3, "one call per user_context group; the duplicate none"
            jazz, cat, bob = items["memories"]
            assert items["duplicates"] == [jazz["id"]] == [saved["memories"][1]["id"]]
            assert cat["user_context"] == "syui" and bob["user_context"] == "bob"
            both = await a.fail("save_memories", items=[{"content": "x"}], contents=["y"])
            assert "items or contents" in both
            assert "items or contents" in await a.fail("save_memories")
            assert "unknown argument" in await a.fail(
                "save_memories", items=[{"content": "x", "score": 1}]
            )
            assert (await a("memory_stats"))["count"] == 4

    with OpenAIStub() as stub:
        asyncio.run(scenario(stub))


def test_search_filters_by_mode_archive_user_and_time(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with agent(tmp_path / "m.db") as a:
            old = await a("save_memory", content="I live in Sendai.", user_context="syui")
            await a("save_memory", content="We moved to Sapporo last month.", user_context="syui")
            await a("save_memory", content="Bob lives in Sendai too.", user_context="bob")
            keyword = await a("search_memories", query="Sendai", mode="keyword")
            assert old["memory"]["id"] not in [h["memory"]["id"] for h in keyword["hits"]]
            archived = await a("search_memories", query="Sendai", include_archived=True)
            states = {h["memory"]["id"]: h["memory"]["state"] for h in archived["hits"]}
            assert states[old["memory"]["id"]] == "superseded"
            bob = await a("search_memories", query="Sendai", user_context="bob")
            assert [h["memory"]["content"] for h in bob["hits"]] == ["Bob lives in Sendai too."]
            future = await a("search_memories", query="Sendai", created_after="2999-01-01T00:00Z")
            assert future["hits"] == []
            past = await a(
                "search_memories", query="Sapporo", created_before="2999-01-01T00:00:00+09:00"
            )
            assert len(past["hits"]) == 1
            for when in ("yesterday", "2025-01-01T00:00:00", "2025-13-01T00:00Z"):
                message = await a.fail("search_memories", query="x", created_after=when)
                assert "created_after must be an ISO 8601 time with a timezone" in message
            semantic = await a.fail("search_memories", query="allergy", mode="semantic")
            assert semantic == f"search_memories: {SEMANTIC_NEEDS_EMBEDDER}"
            assert "mode: Input should be" in await a.fail("search_memories", query="x", mode="x")

    asyncio.run(scenario())


def test_every_id_argument_takes_a_unique_prefix(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with agent(tmp_path / "m.db", AIMEM_MIN_PRIORITY_SCORE="0") as a:
            first = (await a("save_memory", content="Likes green tea"))["memory"]["id"]
            second = (await a("save_memory", content="Plays the cello"))["memory"]["id"]
            differ = next(i for i, (x, y) in enumerate(zip(first, second, strict=True)) if x != y)
            common = first[:differ]
            assert len(common) >= 8, "ids saved the same minute share their first 8 characters"
            ambiguous = await a.fail("get_memory", memory_id=common)
            assert "matches 2 memories" in ambiguous and "give more characters" in ambiguous
            prefix = first[: len(common) + 1]
            assert (await a("get_memory", memory_id=prefix))["memory"]["id"] == first
            assert (await a("pin_memory", memory_id=prefix.upper()))["memory"]["pinned"] is True
            assert (await a("unpin_memory", memory_id=prefix))["memory"]["pinned"] is False
            assert (await a("memory_history", memory_id=prefix))["memory_id"] == first
            updated = await a("update_memory", memory_id=prefix, content="Likes sencha")
            assert updated["memory"]["id"] == first
            short = await a.fail("get_memory", memory_id=first[:3])
            assert "at least 4 characters" in short
            assert await a("delete_memory", memory_id=prefix) == {"ok": True, "deleted": first}
            assert "No memory with id or id prefix" in await a.fail("get_memory", memory_id=prefix)

    asyncio.run(scenario())


# -- errors in MCP words --------------------------------------------------------------------


def test_tool_errors_name_mcp_arguments_never_python_calls(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with agent(tmp_path / "m.db", AIMEM_MIN_PRIORITY_SCORE="0") as a:
            tea = (await a("save_memory", content="Likes tea", idempotency_key="k1"))["memory"]
            await a("save_memory", content="Likes coffee")
            unknown = "01234567-89ab-7cde-8f01-23456789abcd"
            calls: list[tuple[str, dict[str, Any], str]] = [
                ("compress", {"items": []}, "set allow_empty=true"),
                ("get_memory", {"memory_id": unknown}, "list_memories (include_archived=true)"),
                ("memory_history", {"memory_id": unknown}, "No memory"),
                ("restore_memory", {"memory_id": unknown}, "No memory"),
                ("search_memories", {"query": "x", "mode": "semantic"}, "AIMEM_EMBEDDER=local"),
                ("search_memories", {"query": "x", "created_after": "now"}, "ISO 8601"),
                ("read_memory", {"cursor": "x"}, "pass next_cursor exactly as received"),
                ("update_memory", {"memory_id": tea["id"], "content": "Likes coffee"}, "delete"),
                (
                    "update_memory",
                    {"memory_id": tea["id"], "content": "y", "expected_version": 9},
                    "not the expected 9",
                ),
                ("save_memory", {"content": "Other", "idempotency_key": "k1"}, "new key"),
                ("save_memory", {"content": "bell\x07"}, "control character"),
                ("save_memories", {"contents": ["ok", "bell\x07"]}, "contents[1]"),
                ("save_memories", {}, "items or contents"),
                ("save_memory", {"content": "x", "novelty": 0.1}, "missing: interpreted_content"),
                ("save_memory", {"content": "x", "colour": "red"}, "unknown argument 'colour'"),
                ("list_memories", {"limit": 0}, "limit: Input should be greater than"),
                ("get_memory", {"memory_id": "abc"}, "at least 4 characters"),
                ("set_core", {"text": "x" * 16001}, "text: String should have at most 16000"),
            ]
            if hasattr(aimem.AsyncMemoryStore, "save_conversation_with_report"):
                calls += [
                    (
                        "save_conversation",
                        {"messages": [{"role": "assistant", "content": "Hi"}]},
                        "no user turn",
                    ),
                    (
                        "save_conversation",
                        {"messages": [{"role": "robot", "content": "Hi"}]},
                        "messages[0].role must be one of",
                    ),
                ]
            for tool, arguments, expected in calls:
                message = await a.fail(tool, **arguments)
                assert message.startswith(f"{tool}: ") and expected in message, message
                for advice in PYTHON_ADVICE:
                    assert advice not in message, (advice, message)
            assert (await a("memory_stats"))["count"] == 2, "a refused call writes nothing"

    asyncio.run(scenario())


#: Bad conversations, each refused by the store's one check with its own message.
BAD_CONVERSATIONS: list[Any] = [
    [],
    "I'm allergic to penicillin.",
    [{"content": "I'm allergic to penicillin."}],
    [{"role": "robot", "content": "I'm allergic to penicillin."}],
    [{"role": "user", "content": ""}],
    [{"role": "assistant", "content": "Anything else?"}, {"role": "user", "content": "   "}],
    ["I'm allergic to penicillin."],
    [{"role": "user", "content": [{"type": "text", "text": "Hi"}, "penicillin"]}],
    [{"role": "user", "content": 42}],
]


def test_a_bad_conversation_gets_the_same_message_from_python_and_mcp(tmp_path: Path) -> None:
    expected = []
    with aimem.MemoryStore(store_url(tmp_path / "api.db"), judge=aimem.HeuristicJudge()) as store:
        for messages in BAD_CONVERSATIONS:
            with pytest.raises(aimem.ValidationError) as refused:
                store.save_conversation(messages)
            expected.append(str(refused.value))
    assert len(set(expected)) >= 7, expected  # the cases really differ

    async def scenario() -> None:
        async with agent(tmp_path / "m.db") as a:
            for messages, message in zip(BAD_CONVERSATIONS, expected, strict=True):
                got = await a.fail("save_conversation", messages=messages)
                assert got == f"save_conversation: {message}", (messages, got)
            assert (await a("memory_stats"))["total"] == 0

    asyncio.run(scenario())


def test_the_stores_python_advice_is_reworded_for_mcp(tmp_path: Path) -> None:
    messages = [
        mismatch_message("local", 384, 64),
        other_embedder_message("local", {"openai:x": 3}),
        str(new_client.__kwdefaults__["missing"]),
    ]
    with aimem.MemoryStore(store_url(tmp_path / "m.db"), judge=aimem.HeuristicJudge()) as store:
        for attempt in (
            lambda: store.compress([]),
            lambda: store.get("01234567-89ab-7cde-8f01-23456789abcd"),
            lambda: store.search("x", mode="semantic"),
        ):
            with pytest.raises(aimem.AimemError) as failed:
                attempt()
            messages.append(str(failed.value))
    for message in messages:
        assert any(advice in message for advice in PYTHON_ADVICE), "still Python advice?"
        worded = mcp_wording(message)
        for advice in PYTHON_ADVICE:
            assert advice not in worded, (advice, worded)


# -- conversations and meaning ----------------------------------------------------------------


@pytest.mark.skipif(
    not hasattr(aimem.AsyncMemoryStore, "save_conversation_with_report"),
    reason="store.save_conversation_with_report is not built yet",
)
def test_save_conversation_keeps_what_the_user_said(tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "assistant", "content": "Anything I should know before I suggest a doctor?"},
        {"role": "user", "content": [{"type": "text", "text": "I'm allergic to penicillin."}]},
        {"role": "assistant", "content": "Noted.", "name": "ai"},
    ]

    async def scenario() -> None:
        async with agent(tmp_path / "m.db") as a:
            saved = await a("save_conversation", messages=messages, user_context="syui")
            assert [m["content"] for m in saved["memories"]] == ["I'm allergic to penicillin."]
            assert set(saved["memories"][0]) == COMPACT
            again = await a("save_conversation", messages=messages)
            assert again["duplicates"] == [saved["memories"][0]["id"]]
            assert (await a("memory_stats"))["count"] == 1

    asyncio.run(scenario())


def _local_model_loads() -> bool:
    return importlib.util.find_spec("sentence_transformers") is not None


@pytest.mark.skipif(not _local_model_loads(), reason="sentence-transformers is not installed")
def test_semantic_search_through_mcp_with_the_local_embedder(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with agent(tmp_path / "m.db", AIMEM_EMBEDDER="local", HF_HUB_OFFLINE="1") as a:
            first = await a.session.call_tool(
                "save_memory", {"content": "I'm allergic to penicillin"}
            )
            if first.is_error and "could not load" in first.content[0].text:
                pytest.skip(f"the local model does not load offline: {first.content[0].text}")
            assert not first.is_error, first.content[0].text
            await a("save_memory", content="My car is a red hatchback")
            await a("save_memory", content="I play the cello on weekends")
            hits = await a("search_memories", query="allergy medication", mode="semantic")
            assert hits["hits"][0]["memory"]["content"] == "I'm allergic to penicillin"
            stats = await a("memory_stats")
            assert stats["embedder"] and stats["embedded"] == 3

    asyncio.run(scenario())


# -- the budget itself, for any sizes ---------------------------------------------------------


def _memory(n: int, content: str, interpretation: str) -> aimem.Memory:
    return make_memory(
        f"01a23069-0000-7000-8000-{n:012d}",
        content,
        interpreted_content=interpretation,
        rationale="cues",
        score_source="heuristic",
        now=datetime(2025, 6, 1, tzinfo=UTC),
    )


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(1, 6000), st.integers(1, 3000)), max_size=40),
    budget=st.integers(1000, 30000),
    detail=st.booleans(),
    text=st.sampled_from(["a", "é", '"', "\n", "語"]),
)
def test_pages_hold_every_item_in_order_within_any_budget(
    sizes: list[tuple[int, int]], budget: int, detail: bool, text: str
) -> None:
    memories = [_memory(n, text * c, "i" * i) for n, (c, i) in enumerate(sizes)]
    pager = Pager(budget)
    seen: list[str] = []
    cursor: str | None = None
    listing_id, offset = None, 0
    while True:
        if cursor is not None:
            listing_id, listing, offset = pager.resume("read_memory", cursor)
            assert listing.size == len(memories) and listing.ids == b"", "re-read by position"
        try:
            call = pager.page(
                {},
                "memories",
                memories,
                lambda m: memory_view(m, detail),
                continue_with="read_memory",
                offset=offset,
                listing_id=listing_id,
            )
        except aimem.ValidationError as exc:
            assert detail and budget < 2000, "only a whole record can be too big to show"
            assert "call without detail" in str(exc)
            return
        page = call.structured_content
        assert page is not None and result_chars(page) <= budget
        assert _chars(call) <= budget
        for view in page["memories"]:
            original = memories[len(seen)]
            assert view["id"] == original.id, "in order, none skipped or repeated"
            if view.get("truncated"):
                assert len(page["memories"]) == 1, "only an item too big for a page alone"
            else:
                assert view["content"] == original.content
            seen.append(view["id"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [m.id for m in memories]
