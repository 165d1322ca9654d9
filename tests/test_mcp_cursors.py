"""``aimem mcp`` cursors: small, bounded, and never a way back to a deleted memory.

A listing keeps its memories' ids (16 bytes each), a search's scores and a digest of
the query, never a text; each later page reads its memories from the store. Driven by
the SDK's client over stdio against a SQLite file, and the pager on its own for the
bounds.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from _memories import make_memory
from _stores import store_url
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import aimem
from aimem.mcp.http import MAX_ERROR_CHARS
from aimem.mcp.pages import KEEP_LISTINGS, Pager
from aimem.mcp.views import memory_view
from aimem.testing import FixedJudge

AIMEM = str(Path(sys.executable).with_name("aimem"))
BUDGET = "2000"  # a few memories a page: a listing of 30 takes many


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    return env | extra


def _fill(db: Path, count: int) -> list[aimem.Memory]:
    """``count`` memories with distinct priorities, in the order list_memories gives."""
    judge = FixedJudge(scorer=lambda text: 0.3 + int(text.split()[2].rstrip(":")) / 100)
    with aimem.MemoryStore(
        store_url(db), judge=judge, min_priority_score=0.0, max_memories=1000
    ) as store:
        store.save_many(
            [f"Cursor note {n}: the user keeps spare key {n} in drawer {n}" for n in range(count)]
        )
        return store.list()


@asynccontextmanager
async def session(db: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=AIMEM,
        args=["--database-url", store_url(db), "mcp"],
        env=_env(
            AIMEM_MCP_MAX_CHARS=BUDGET, AIMEM_MAX_MEMORIES="1000", AIMEM_MIN_PRIORITY_SCORE="0"
        ),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


async def _call(client: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    call = await client.call_tool(tool, arguments)
    assert not call.is_error, call.content[0].text
    return dict(call.structured_content or {})


async def _fail(client: ClientSession, tool: str, **arguments: Any) -> str:
    call = await client.call_tool(tool, arguments)
    assert call.is_error, (tool, arguments)
    text: str = call.content[0].text
    assert "\n" not in text and len(text) <= MAX_ERROR_CHARS, text
    return text


async def _rest(
    client: ClientSession, tool: str, key: str, cursor: str | None, **arguments: Any
) -> list[dict[str, Any]]:
    """Every page from ``cursor`` on, whole (as the client received them)."""
    pages = []
    while cursor is not None:
        page = await _call(client, tool, cursor=cursor, **arguments)
        pages.append(page)
        cursor = page["next_cursor"]
    return pages


def _ids(pages: list[dict[str, Any]], key: str) -> list[str]:
    items = [item for page in pages for item in page[key]]
    return [item["memory"]["id"] if "memory" in item else item["id"] for item in items]


def _absent(pages: list[dict[str, Any]], memory: aimem.Memory) -> None:
    text = json.dumps(pages, ensure_ascii=False)
    assert memory.id not in text and memory.content not in text
    assert memory.interpreted_content not in text


def test_a_cursor_taken_before_a_delete_never_serves_the_deleted_memory(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    memories = _fill(db, 30)
    ids = [m.id for m in memories]

    async def scenario() -> None:
        async with session(db) as client:
            first = await _call(client, "list_memories")
            second = await _call(client, "list_memories", cursor=first["next_cursor"])
            shown = _ids([first, second], "memories")
            assert shown == ids[: len(shown)] and second["next_cursor"] is not None
            read = await _call(client, "read_memory")
            hits = await _call(client, "search_memories", query="spare key drawer", limit=30)
            assert hits["next_cursor"] is not None
            # The next memory a cursor would serve, one further on, and the last.
            victims = [memories[len(shown)], memories[len(shown) + 4], memories[-1]]
            for victim in victims:
                await _call(client, "delete_memory", memory_id=victim.id)
            gone = {v.id for v in victims}
            expected = [i for i in ids[len(shown) :] if i not in gone]

            later = await _rest(client, "list_memories", "memories", second["next_cursor"])
            assert _ids(later, "memories") == expected, "none skipped or repeated, none deleted"
            replay = await _rest(client, "list_memories", "memories", first["next_cursor"])
            again = [i for i in ids[len(first["memories"]) :] if i not in gone]
            assert _ids(replay, "memories") == again, "a cursor replays, less the deleted"
            read_rest = await _rest(client, "read_memory", "memories", read["next_cursor"])
            hit_rest = await _rest(
                client, "search_memories", "hits", hits["next_cursor"], query="spare key drawer"
            )
            assert set(_ids(hit_rest, "hits")) <= set(ids) - gone
            for victim in victims:
                for pages in (later, replay, read_rest, hit_rest):
                    _absent(pages, victim)

    asyncio.run(scenario())


def test_batch_and_history_cursors_never_serve_a_deleted_memory(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    _fill(db, 2)
    teas = [f"Tea note {n}: the user brews sencha at {60 + n} degrees" for n in range(12)]

    async def scenario() -> None:
        async with session(db) as client:
            saved = await _call(client, "save_memories", contents=teas)
            assert saved["next_cursor"] is not None
            listed = await _rest(client, "list_memories", "memories", saved["next_cursor"])
            later = [m for page in listed for m in page["memories"]]
            victim = await _call(client, "get_memory", memory_id=later[-1]["id"], detail=True)
            await _call(client, "delete_memory", memory_id=victim["memory"]["id"])
            rest = await _rest(client, "list_memories", "memories", saved["next_cursor"])
            assert [m["id"] for p in rest for m in p["memories"]] == [m["id"] for m in later[:-1]]
            text = json.dumps(rest, ensure_ascii=False)
            assert victim["memory"]["id"] not in text and victim["memory"]["content"] not in text

            kept = later[0]["id"]
            for n in range(6):
                await _call(
                    client,
                    "update_memory",
                    memory_id=kept,
                    content=f"Tea note: the user now brews gyokuro at {50 + n} degrees",
                )
            history = await _call(client, "memory_history", memory_id=kept)
            assert history["next_cursor"] is not None
            await _call(client, "delete_memory", memory_id=kept)
            error = await _fail(
                client, "memory_history", memory_id=kept, cursor=history["next_cursor"]
            )
            assert "gyokuro" not in error and "sencha" not in error and "No memory" in error

    asyncio.run(scenario())


# -- the pager on its own: what a listing keeps, and how much ----------------------------


def _memory(n: int) -> aimem.Memory:
    return make_memory(
        f"01a23069-0000-7000-8000-{n:012d}",
        f"SECRET content {n} " * 20,
        interpreted_content=f"SECRET interpretation {n}",
        rationale="cues",
        score_source="heuristic",
        now=datetime(2025, 6, 1, tzinfo=UTC),
    )


def _list(pager: Pager, memories: list[aimem.Memory], query: str | None = None) -> str:
    page = pager.page(
        {},
        "memories",
        memories,
        memory_view,
        continue_with="list_memories",
        query=query,
        id_of=lambda m: m.id,
    )
    cursor = (page.structured_content or {})["next_cursor"]
    assert cursor is not None
    return str(cursor)


def test_a_listing_keeps_ids_and_a_query_digest_never_a_text() -> None:
    memories = [_memory(n) for n in range(50)]
    pager = Pager(2000)
    _list(pager, memories, query="SECRET query")
    [listing] = pager.listings()
    assert listing.ids == b"".join(bytes.fromhex(m.id.replace("-", "")) for m in memories)
    assert listing.size == 50 and pager.kept_bytes == 16 * 50 == listing.kept
    assert listing.query is not None and len(listing.query) == 32  # SHA-256
    for field in fields(listing):
        value = getattr(listing, field.name)
        assert isinstance(value, str | int | bytes | None), (field.name, type(value))
        assert "SECRET" not in repr(value)


def test_kept_listings_are_bounded_by_count_and_bytes() -> None:
    memories = [_memory(n) for n in range(30)]  # 480 bytes of ids a listing
    pager = Pager(2000, keep_bytes=1500)
    cursors = [_list(pager, memories) for _ in range(10)]
    assert len(pager.listings()) == 3 and pager.kept_bytes == 3 * 480 <= 1500
    with pytest.raises(aimem.ValidationError, match="cursor expired"):
        pager.resume("list_memories", cursors[0])
    pager.resume("list_memories", cursors[-1])

    pager = Pager(2000)
    for _ in range(KEEP_LISTINGS + 6):
        _list(pager, memories[:3])
    assert len(pager.listings()) == KEEP_LISTINGS

    alone = Pager(2000, keep_bytes=100)
    _list(alone, memories)
    assert len(alone.listings()) == 1, "the newest listing is kept even over the bytes"


def test_a_page_read_by_id_skips_deleted_memories_and_refuses_forged_cursors() -> None:
    memories = [_memory(n) for n in range(40)]
    store = {m.id: m for m in memories}
    pager = Pager(2000)
    cursor = _list(pager, memories)
    served = int(cursor.split(".")[1])  # the first page's memories
    for m in memories[served : served + 3] + memories[-2:]:
        del store[m.id]

    async def get(memory_id: str) -> aimem.Memory | None:
        return store.get(memory_id)

    async def walk(at: str | None) -> list[str]:
        seen: list[str] = []
        while at is not None:
            resumed = pager.resume("list_memories", at)
            page = await pager.more({}, "memories", resumed, get, lambda m, _s, _r: memory_view(m))
            structured = page.structured_content or {}
            seen += [view["id"] for view in structured["memories"]]
            at = structured["next_cursor"]
        return seen

    assert asyncio.run(walk(cursor)) == [m.id for m in memories[served:] if m.id in store]
    listing_id = cursor.split(".")[0]
    for forged, message in [
        ("A" * 16 + ".1", "cursor expired"),
        (listing_id + ".x", "not one this server gave"),
        (listing_id + ".40", "points past the end"),
    ]:
        with pytest.raises(aimem.ValidationError, match=message):
            pager.resume("list_memories", forged)
    with pytest.raises(aimem.ValidationError, match="continues list_memories"):
        pager.resume("read_memory", cursor)
