"""How much of an agent's context window ``aimem mcp`` spends: read_memory at 100 memories.

Saves 100 varied memories (the dev set's texts, the heuristic judge, nothing archived),
starts the installed ``aimem mcp`` over stdio and calls ``read_memory`` through the SDK
client, following ``next_cursor`` when the server pages. Uses only what the oldest server
had, so the same script measures an older checkout.

Prints one JSON line: characters of the text content and of the structured content
(compact JSON, as the client holds it) of the first page and of all pages together,
the pages and memories read, and the ``instructions`` sent at initialize.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import aimem

DEV_SET = Path(aimem.__file__).with_name("data") / "judge-dev.jsonl"
AIMEM = str(Path(sys.executable).with_name("aimem"))
MEMORIES = 100


def _texts() -> list[str]:
    rows = [json.loads(line) for line in DEV_SET.read_text(encoding="utf-8").splitlines()]
    return [row.get("content") or row["text"] for row in rows]


def _fill(url: str) -> int:
    """Save dev-set texts until MEMORIES are active (a supersession may retire one)."""
    with aimem.MemoryStore(
        url, judge=aimem.HeuristicJudge(), min_priority_score=0.0, max_memories=10 * MEMORIES
    ) as store:
        for text in _texts():
            if store.stats().count >= MEMORIES:
                break
            store.save(text)
        return store.stats().count


def _chars(call: Any) -> tuple[int, int]:
    text = sum(len(block.text) for block in call.content if block.type == "text")
    structured = call.structured_content
    compact = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    return text, 0 if structured is None else len(compact)


async def _measure(url: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    params = StdioServerParameters(command=AIMEM, args=["--database-url", url, "mcp"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        pages: list[tuple[int, int]] = []
        memories = 0
        arguments: dict[str, Any] = {}
        while True:
            call = await session.call_tool("read_memory", arguments)
            assert not call.is_error, call.content
            pages.append(_chars(call))
            result = call.structured_content or {}
            memories += len(result.get("memories", []))
            cursor = result.get("next_cursor")
            if not cursor:
                break
            arguments = {"cursor": cursor}
    return {
        "first_page_text_chars": pages[0][0],
        "first_page_structured_chars": pages[0][1],
        "first_page_total_chars": sum(pages[0]),
        "all_pages_text_chars": sum(p[0] for p in pages),
        "all_pages_structured_chars": sum(p[1] for p in pages),
        "pages": len(pages),
        "memories_read": memories,
        "instructions_chars": len(init.instructions or ""),
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'sizes.db'}"
        active = _fill(url)
        record = {"bench": "mcp_sizes", "active_memories": active, **asyncio.run(_measure(url))}
    print(json.dumps(record))


if __name__ == "__main__":
    main()
