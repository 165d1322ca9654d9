"""``aimem mcp`` driven by the official SDK's client over real stdio and HTTP transports.

Each test starts the server as a subprocess (the installed ``aimem`` console script)
against a SQLite file in tmp_path; judged saves go to an OpenAI-compatible stub on
127.0.0.1, so the test can count the LLM calls the server made.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from _stores import store_url
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import aimem
from aimem.mcp.http import MAX_ERROR_CHARS, http_token, is_loopback, one_line
from aimem.testing import OpenAIStub

AIMEM = str(Path(sys.executable).with_name("aimem"))
TOOLS = {
    "memory_history",
    "save_memory",
    "save_memories",
    "save_conversation",
    "search_memories",
    "list_memories",
    "get_memory",
    "update_memory",
    "delete_memory",
    "pin_memory",
    "unpin_memory",
    "restore_memory",
    "prune_memories",
    "memory_stats",
    "set_core",
    "read_core",
    "read_memory",
    "compress",
}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    return env | extra


@asynccontextmanager
async def stdio_session(db: Path, *args: str, **env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=AIMEM,
        args=["--database-url", store_url(db), "mcp", *args],
        env=_env(**env),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        yield session


def _result(call: Any) -> dict[str, Any]:
    assert not call.is_error, call.content[0].text
    structured = call.structured_content
    assert structured is not None
    # The text block carries the same JSON (compact) for clients that ignore structured content.
    [block] = call.content
    assert json.loads(block.text) == structured
    assert len(block.text) == len(json.dumps(structured, ensure_ascii=False, separators=(",", ":")))
    return dict(structured)


def _error(call: Any) -> str:
    assert call.is_error
    [block] = call.content
    text: str = block.text
    assert "\n" not in text and len(text) <= MAX_ERROR_CHARS
    for leak in ("Traceback", "sqlite", "SELECT", "/tmp", str(Path.home()), "sk-"):
        assert leak not in text
    return text


def test_tools_are_listed_with_schemas_and_annotations(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with stdio_session(tmp_path / "m.db") as session:
            init = await session.initialize()
            assert init.server_info.name == "aimem"
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == TOOLS
            for tool in tools.values():
                assert tool.description and len(tool.description) > 30
                assert tool.input_schema["additionalProperties"] is False
                assert tool.annotations is not None
            for name in ("search_memories", "list_memories", "read_core", "read_memory"):
                assert tools[name].annotations.read_only_hint is True
            for name in ("delete_memory", "compress", "prune_memories", "update_memory"):
                assert tools[name].annotations.destructive_hint is True
            save = tools["save_memory"].input_schema
            assert save["required"] == ["content"]
            assert save["properties"]["content"]["maxLength"] == 16000
            assert {"interpreted_content", "emotional_impact", "novelty"} <= set(save["properties"])
            assert tools["compress"].input_schema["required"] == ["items"]

    asyncio.run(scenario())


def test_tools_list_is_lean_and_its_size_in_the_readme_is_true(tmp_path: Path) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    [stated] = re.findall(r"about ([\d,]+) characters in `tools/list`", readme)

    async def scenario() -> None:
        async with stdio_session(tmp_path / "m.db") as session:
            await session.initialize()
            listed = await session.list_tools()
        for tool in listed.tools:
            lines = (tool.description or "").splitlines()
            assert lines and lines[0].strip(), tool.name
            indented = [line for line in lines if line[:1].isspace()]
            assert not indented, (tool.name, indented)
            assert '"title"' not in json.dumps(tool.output_schema), tool.name
        wire = listed.model_dump(mode="json", by_alias=True, exclude_none=True)
        size = len(json.dumps(wire, ensure_ascii=False, separators=(",", ":")))
        assert abs(size - int(stated.replace(",", ""))) <= 0.1 * size, (size, stated)

    asyncio.run(scenario())


def test_judged_and_client_scored_saves_search_and_read(tmp_path: Path) -> None:
    async def scenario(stub: OpenAIStub) -> None:
        async with stdio_session(
            tmp_path / "m.db", OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="sk-test"
        ) as session:
            await session.initialize()
            judged = _result(
                await session.call_tool(
                    "save_memory",
                    {
                        "content": "I'm allergic to penicillin [score=0.80]",
                        "user_context": "syui",
                        "detail": True,
                    },
                )
            )
            assert judged["archived"] == []
            memory = judged["memory"]
            assert memory["score_source"] == "llm" and memory["user_context"] == "syui"
            assert memory["priority_score"] == pytest.approx(0.8)
            assert stub.chat_calls == 1 and judged["duplicate"] is False
            again = _result(
                await session.call_tool(
                    "save_memory", {"content": "I'm allergic to penicillin [score=0.80]"}
                )
            )
            assert again["duplicate"] is True and again["memory"]["id"] == memory["id"]
            assert again["memory"]["priority"] == 0.8 and again["memory"]["state"] == "active"
            assert "score_source" not in again["memory"], "the compact view by default"
            assert stub.chat_calls == 1, "an exact duplicate makes no LLM call"

            client = _result(
                await session.call_tool(
                    "save_memory",
                    {
                        "detail": True,
                        "content": "Prefers Rust for systems work",
                        "interpreted_content": "The user prefers Rust for systems programming.",
                        "emotional_impact": 0.05,
                        "user_relevance": 0.2,
                        "novelty": 0.1,
                        "utility": 0.2,
                        "rationale": "stable preference",
                    },
                )
            )["memory"]
            assert client["score_source"] == "client"
            assert client["priority_score"] == pytest.approx(0.55)
            assert client["interpreted_content"].startswith("The user prefers Rust")
            assert stub.chat_calls == 1, "client scoring must not call the LLM"

            hits = _result(await session.call_tool("search_memories", {"query": "penicillin"}))
            assert [h["memory"]["id"] for h in hits["hits"]] == [memory["id"]]
            assert hits["hits"][0]["score"] > 0

            read = _result(await session.call_tool("read_memory", {}))["memories"]
            assert [m["id"] for m in read] == [memory["id"], client["id"]]
            stats = _result(await session.call_tool("memory_stats", {}))
            assert stats["count"] == 2

    with OpenAIStub() as stub:
        asyncio.run(scenario(stub))


def test_instructions_carry_core_and_memories_saved_before_initialize(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with aimem.MemoryStore(store_url(db), judge=aimem.HeuristicJudge()) as store:
        store.set_core("You are Ai, a cheerful assistant.")
        store.save("I'm allergic to penicillin.")

    async def scenario() -> None:
        async with stdio_session(db) as session:
            init = await session.initialize()
            assert init.instructions is not None
            assert init.instructions.startswith("## Core\nYou are Ai")
            assert "penicillin" in init.instructions
            core = _result(await session.call_tool("read_core", {}))
            assert core == {"core": "You are Ai, a cheerful assistant."}
            [resource] = (await session.read_resource("memory://core")).contents
            assert resource.text == "You are Ai, a cheerful assistant."
            [listing] = (await session.read_resource("memory://memories")).contents
            [saved] = json.loads(listing.text)
            [one] = (await session.read_resource(f"memory://memories/{saved['id']}")).contents
            assert json.loads(one.text)["content"] == "I'm allergic to penicillin."
            with pytest.raises(MCPError, match="No memory with id 'nope'"):
                await session.read_resource("memory://memories/nope")

    asyncio.run(scenario())


def test_instructions_are_rebuilt_for_each_new_session(tmp_path: Path) -> None:
    async def scenario() -> None:
        db = tmp_path / "m.db"
        async with stdio_session(db) as session:
            init = await session.initialize()
            assert "penicillin" not in (init.instructions or "")
            _result(await session.call_tool("save_memory", {"content": "Allergic to penicillin"}))
        async with stdio_session(db) as session:
            init = await session.initialize()
            assert "penicillin" in (init.instructions or "")

    asyncio.run(scenario())


def test_compress_archives_what_it_replaces_and_refuses_an_empty_list(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with stdio_session(tmp_path / "m.db", AIMEM_MIN_PRIORITY_SCORE="0") as session:
            await session.initialize()
            old = [
                _result(await session.call_tool("save_memory", {"content": text}))["memory"]
                for text in ("Likes green tea", "Likes black tea", "Lives in Tokyo")
            ]
            pinned = _result(await session.call_tool("pin_memory", {"memory_id": old[2]["id"]}))
            assert pinned["memory"]["pinned"] is True

            refused = _error(await session.call_tool("compress", {"items": []}))
            assert "allow_empty" in refused
            missing = _error(await session.call_tool("compress", {}))
            assert "missing required argument 'items'" in missing
            assert len(_result(await session.call_tool("read_memory", {}))["memories"]) == 3

            done = _result(await session.call_tool("compress", {"items": ["Likes tea"]}))
            assert [m["content"] for m in done["memories"]] == ["Likes tea"]
            assert sorted(done["archived"]) == sorted([old[0]["id"], old[1]["id"]])
            for memory_id in done["archived"]:
                kept = _result(await session.call_tool("get_memory", {"memory_id": memory_id}))
                assert kept["memory"]["archive_reason"] == "compressed"
            active = _result(await session.call_tool("read_memory", {}))["memories"]
            assert {m["content"] for m in active} == {"Likes tea", "Lives in Tokyo"}

            emptied = _result(
                await session.call_tool("compress", {"items": [], "allow_empty": True})
            )
            assert emptied["memories"] == [] and len(emptied["archived"]) == 1
            active = _result(await session.call_tool("read_memory", {}))["memories"]
            assert [m["content"] for m in active] == ["Lives in Tokyo"]

    asyncio.run(scenario())


def test_compress_keeps_every_item_or_refuses_with_nothing_written(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with stdio_session(tmp_path / "m.db") as session:  # the offline judge, defaults
            await session.initialize()
            await session.call_tool("save_memory", {"content": "I like coffee in the morning."})
            items = ["Kenji likes tea.", "Kenji's wife is Yumi."]
            done = _result(await session.call_tool("compress", {"items": items}))
            assert [m["content"] for m in done["memories"]] == items
            assert {m["state"] for m in done["memories"]} == {"active"}
            active = _result(await session.call_tool("read_memory", {}))["memories"]
            assert sorted(m["content"] for m in active) == sorted(items)

        async with stdio_session(tmp_path / "m2.db", AIMEM_MAX_MEMORIES="2") as session:
            await session.initialize()
            for text in ("Likes green tea", "Lives in Tokyo", "Plays the cello"):
                await session.call_tool("save_memory", {"content": text})
            every = {"include_archived": True, "detail": True}
            before = _result(await session.call_tool("list_memories", every))["memories"]
            refused = _error(await session.call_tool("compress", {"items": ["a", "b", "c"]}))
            assert refused.startswith("compress: compress got 3 items but only 2 fit"), refused
            assert "AIMEM_MAX_MEMORIES" in refused and "()" not in refused
            after = _result(await session.call_tool("list_memories", every))["memories"]
            assert after == before, "a refused compress writes nothing"

    asyncio.run(scenario())


def test_every_other_tool_round_trips(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with stdio_session(tmp_path / "m.db", "--namespace", "alice") as session:
            await session.initialize()
            saved = _result(
                await session.call_tool("save_memory", {"content": "Likes tea", "detail": True})
            )
            memory_id = saved["memory"]["id"]
            assert saved["memory"]["namespace"] == "alice"
            listed = _result(await session.call_tool("list_memories", {"order": "recent"}))
            assert [m["id"] for m in listed["memories"]] == [memory_id]
            updated = _result(
                await session.call_tool(
                    "update_memory",
                    {"memory_id": memory_id, "content": "Likes coffee now", "detail": True},
                )
            )
            assert updated["memory"]["content"] == "Likes coffee now"
            assert updated["memory"]["version"] > saved["memory"]["version"]
            stale = _error(
                await session.call_tool(
                    "update_memory",
                    {"memory_id": memory_id, "content": "x", "expected_version": 1},
                )
            )
            assert "not the expected 1" in stale
            keyed = _result(
                await session.call_tool(
                    "save_memory", {"content": "Likes jazz", "idempotency_key": "req-7"}
                )
            )
            retried = _result(
                await session.call_tool(
                    "save_memory", {"content": "Likes jazz", "idempotency_key": "req-7"}
                )
            )
            assert retried["memory"]["id"] == keyed["memory"]["id"]
            reused = _error(
                await session.call_tool(
                    "save_memory", {"content": "Likes rock", "idempotency_key": "req-7"}
                )
            )
            assert "already used for different content" in reused
            preview = _result(await session.call_tool("prune_memories", {"dry_run": True}))
            assert preview["dry_run"] is True
            unpinned = _result(await session.call_tool("unpin_memory", {"memory_id": memory_id}))
            assert unpinned["memory"]["pinned"] is False
            deleted = _result(await session.call_tool("delete_memory", {"memory_id": memory_id}))
            _result(await session.call_tool("delete_memory", {"memory_id": keyed["memory"]["id"]}))
            assert deleted == {"ok": True, "deleted": memory_id}
            gone = _error(await session.call_tool("get_memory", {"memory_id": memory_id}))
            assert "No memory with id" in gone

    asyncio.run(scenario())


def test_restore_brings_back_a_forgotten_memory(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with stdio_session(
            tmp_path / "m.db", AIMEM_MAX_MEMORIES="1", AIMEM_MIN_PRIORITY_SCORE="0"
        ) as session:
            await session.initialize()
            first = _result(
                await session.call_tool("save_memory", {"content": "It is raining today."})
            )
            second = _result(
                await session.call_tool(
                    "save_memory", {"content": "I'm allergic to penicillin, never prescribe it."}
                )
            )
            assert second["archived"] == [first["memory"]["id"]]
            back = _result(
                await session.call_tool("restore_memory", {"memory_id": first["memory"]["id"]})
            )
            assert back["memory"]["state"] == "active"

    asyncio.run(scenario())


BAD_CALLS = [
    ("save_memory", {"content": "x", "color": "red"}, "unknown argument 'color'"),
    ("save_memory", {"content": 42}, "content: Input should be a valid string"),
    ("save_memory", {}, "missing required argument 'content'"),
    ("save_memory", {"content": ""}, "content: String should have at least 1 character"),
    ("save_memory", {"content": "x" * 16001}, "content: String should have at most 16000"),
    ("save_memory", {"content": "x", "user_context": "u" * 1001}, "user_context"),
    (
        "save_memory",
        {"content": "x", "interpreted_content": "y", "novelty": 0.1},
        "missing: emotional_impact, user_relevance, utility",
    ),
    (
        "save_memory",
        {
            "content": "x",
            "interpreted_content": "y",
            "emotional_impact": 0.5,
            "user_relevance": 0.1,
            "novelty": 0.1,
            "utility": 0.1,
        },
        "emotional_impact: Input should be less than or equal to 0.25",
    ),
    ("search_memories", {"query": "tea", "limit": "5"}, "limit: Input should be a valid integer"),
    ("search_memories", {"query": "tea", "limit": 5000}, "limit: Input should be less than"),
    ("list_memories", {"order": "random"}, "order: Input should be 'priority' or 'recent'"),
    ("compress", {"items": "not a list"}, "items: Input should be a valid list"),
    ("get_memory", {"memory_id": "missing"}, "No memory with id 'missing'"),
    ("pin_memory", {"memory_id": "missing"}, "No memory with id 'missing'"),
    ("no_such_tool", {}, "no_such_tool"),
]


def test_bad_requests_are_one_line_tool_errors_and_the_session_survives(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with stdio_session(tmp_path / "m.db") as session:
            await session.initialize()
            for tool, arguments, expected in BAD_CALLS:
                message = _error(await session.call_tool(tool, arguments))
                assert expected in message, (tool, arguments, message)
            stats = _result(await session.call_tool("memory_stats", {}))
            assert stats["count"] == 0, "a rejected call must write nothing"
            saved = _result(await session.call_tool("save_memory", {"content": "Still works"}))
            assert saved["memory"]["content"] == "Still works"

    asyncio.run(scenario())


def test_client_scores_need_interpretation_and_all_four_components(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with stdio_session(tmp_path / "m.db") as session:
            await session.initialize()
            message = _error(
                await session.call_tool(
                    "save_memory",
                    {
                        "content": "x",
                        "emotional_impact": 0.1,
                        "user_relevance": 0.1,
                        "novelty": 0.1,
                        "utility": 0.1,
                    },
                )
            )
            assert "missing: interpreted_content" in message
            nan = _error(
                await session.call_tool(
                    "save_memory",
                    {
                        "content": "x",
                        "interpreted_content": "y",
                        "emotional_impact": float("nan"),
                        "user_relevance": 0.1,
                        "novelty": 0.1,
                        "utility": 0.1,
                    },
                )
            )
            assert "emotional_impact" in nan
            assert _result(await session.call_tool("memory_stats", {}))["count"] == 0

    asyncio.run(scenario())


def test_error_lines_are_short_and_single() -> None:
    assert one_line("a\n  b\tc") == "a b c"
    long = one_line("x" * 1000)
    assert len(long) == MAX_ERROR_CHARS and long.endswith("…")


# -- HTTP transport -----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _serve_http(db: Path) -> list[str]:
    return [AIMEM, "--database-url", store_url(db), "mcp", "--transport", "http"]


@contextmanager
def http_server(db: Path, **env: str) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [*_serve_http(db), "--port", str(port)],
        env=_env(**env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(process.stderr.read() if process.stderr else b"") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


async def _http_round_trip(url: str, headers: dict[str, str]) -> str:
    async with (
        httpx2.AsyncClient(headers=headers) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        saved = _result(await session.call_tool("save_memory", {"content": "Likes tea"}))
        hits = _result(await session.call_tool("search_memories", {"query": "tea"}))
        assert [h["memory"]["id"] for h in hits["hits"]] == [saved["memory"]["id"]]
        memory_id: str = saved["memory"]["id"]
        return memory_id


def _initialize_request() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }


def test_http_transport_on_loopback_without_a_token(tmp_path: Path) -> None:
    with http_server(tmp_path / "m.db") as url:
        assert asyncio.run(_http_round_trip(url, {}))


def test_http_transport_requires_the_bearer_token_when_one_is_set(tmp_path: Path) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    with http_server(tmp_path / "m.db", AIMEM_MCP_TOKEN="s3cret") as url:
        missing = httpx.post(url, json=_initialize_request(), headers=headers)
        assert missing.status_code == 401
        wrong = httpx.post(
            url, json=_initialize_request(), headers=headers | {"Authorization": "Bearer nope"}
        )
        assert wrong.status_code == 403
        assert "s3cret" not in wrong.text
        assert asyncio.run(_http_round_trip(url, {"Authorization": "Bearer s3cret"}))


def test_non_loopback_bind_without_a_token_is_refused(tmp_path: Path) -> None:
    result = subprocess.run(
        [*_serve_http(tmp_path / "m.db"), "--host", "0.0.0.0", "--port", str(_free_port())],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "AIMEM_MCP_TOKEN" in result.stderr
    assert not (tmp_path / "m.db").exists(), "refused before opening anything"


def test_loopback_detection_and_token_rule() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert http_token("127.0.0.1", {}) is None
    assert http_token("0.0.0.0", {"AIMEM_MCP_TOKEN": "t"}) == "t"
    with pytest.raises(aimem.ValidationError, match="AIMEM_MCP_TOKEN"):
        http_token("0.0.0.0", {})


def test_a_superseded_memory_is_reported_and_its_history_readable(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with stdio_session(tmp_path / "m.db") as session:  # the offline judge
            await session.initialize()
            first = _result(
                await session.call_tool("save_memory", {"content": "I live in Sendai."})
            )
            old = first["memory"]["id"]
            moved = _result(
                await session.call_tool(
                    "save_memory", {"content": "We moved to Sapporo last month."}
                )
            )
            assert moved["superseded"] == [old] and moved["archived"] == [old]
            events = _result(await session.call_tool("memory_history", {"memory_id": old}))[
                "events"
            ]
            assert [e["event"] for e in events] == ["save", "archive"]
            assert events[-1]["reason"] == "superseded"
            assert events[-1]["superseded_by"] == moved["memory"]["id"]
            listed = _result(await session.call_tool("list_memories", {}))["memories"]
            assert [m["id"] for m in listed] == [moved["memory"]["id"]]
            back = _result(await session.call_tool("restore_memory", {"memory_id": old}))
            assert back["memory"]["state"] == "active" and back["archived"] == []

    asyncio.run(scenario())
