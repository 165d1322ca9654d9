"""A batch is one write transaction, so it has a bound: ``max_batch_items`` (10,000).

Over it, ``save_many``, ``compress``, the MCP ``save_memories`` and ``compress`` tools and
``aimem ingest --batch`` refuse with one line naming the limit and how to split, before
anything is judged or written. ``import_from`` is left unbounded on purpose: an export
is restored whole or not at all (README, "Capacity manager"). The figures at the bound
come from ``bench/batch_bounds.py``; no test here is timed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from _stores import store_url
from hypothesis import given
from hypothesis import strategies as st
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import aimem
from aimem.cli.main import main
from aimem.saving.conversations import _EARLIER, _recent_sharing
from aimem.testing import FixedJudge

AIMEM = str(Path(sys.executable).with_name("aimem"))


def _texts(n: int) -> list[str]:
    return [f"Note {i} about the garden [score=0.80]" for i in range(n)]


def test_the_bound_defaults_to_10000_and_reads_its_environment_variable() -> None:
    assert aimem.Settings.load(environ={}).max_batch_items == 10_000
    assert aimem.Settings.load(environ={"AIMEM_MAX_BATCH_ITEMS": "7"}).max_batch_items == 7
    with pytest.raises(aimem.ValidationError, match="max_batch_items"):
        aimem.Settings.load(environ={"AIMEM_MAX_BATCH_ITEMS": "0"})


def test_save_many_over_the_bound_is_refused_before_anything_is_judged(db_url: str) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge, max_batch_items=3) as store:
        with pytest.raises(aimem.ValidationError) as refused:
            store.save_many(_texts(4))
        message = str(refused.value)
        assert "\n" not in message
        assert "4 items" in message and "limit of 3 (max_batch_items)" in message
        assert "split them into calls of at most 3" in message
        assert judge.calls == []
        assert store.stats().total == 0
        # Counted before the items are read: a bad item past the bound is not what is reported.
        with pytest.raises(aimem.ValidationError, match="limit of 3"):
            store.save_many([*_texts(3), ""])


def test_save_many_at_the_bound_lands_in_one_transaction(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_batch_items=3) as store:
        saved = store.save_many(_texts(3))
        assert [m.content for m in saved] == _texts(3)
        assert store.stats().count == 3


def test_compress_over_the_bound_archives_nothing(db_url: str) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge, max_batch_items=2) as store:
        kept = store.save_many(_texts(2))
        calls = len(judge.calls)
        with pytest.raises(aimem.ValidationError, match="limit of 2 \\(max_batch_items\\)"):
            store.compress(["One", "Two", "Three"])
        assert len(judge.calls) == calls
        assert {m.id for m in store.list()} == {m.id for m in kept}


def test_ingest_with_a_batch_over_the_bound_saves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIMEM_MAX_BATCH_ITEMS", "2")
    url = store_url(tmp_path / "m.db")
    notes = tmp_path / "notes.txt"
    notes.write_text("\n".join(_texts(3)) + "\n", encoding="utf-8")
    assert main(["--database-url", url, "ingest", str(notes), "--batch", "3"]) == 1
    err = capsys.readouterr().err
    assert "--batch 3 is over max_batch_items (2)" in err and "nothing was saved" in err
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        assert store.stats().total == 0
    # Batches within the bound ingest the whole file, a transaction per batch.
    assert main(["--database-url", url, "ingest", str(notes), "--batch", "2"]) == 0
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        assert store.stats().total == 3


def test_mcp_batch_tools_take_at_most_max_batch_items(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    params = StdioServerParameters(
        command=AIMEM,
        args=["--database-url", store_url(tmp_path / "m.db"), "mcp"],
        env=env | {"AIMEM_MAX_BATCH_ITEMS": "3", "AIMEM_INTERPRETATION_ENABLED": "false"},
    )

    async def scenario() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t.input_schema for t in (await session.list_tools()).tools}
            batch = tools["save_memories"]["properties"]
            lists = (batch["items"], batch["contents"], tools["compress"]["properties"]["items"])
            for schema in lists:  # a nullable list: the bound sits on its array branch
                assert '"maxItems": 3' in json.dumps(schema), schema
            refused = await session.call_tool("save_memories", {"contents": _texts(4)})
            assert refused.is_error and "\n" not in refused.content[0].text
            assert not (await session.call_tool("save_memories", {"contents": _texts(3)})).is_error
            stats = await session.call_tool("memory_stats", {})
            assert stats.structured_content is not None
            assert stats.structured_content["total"] == 3

    asyncio.run(scenario())


@given(st.lists(st.frozensets(st.sampled_from("abcdefgh"), max_size=3), max_size=40))
def test_each_item_is_shown_the_latest_earlier_ones_sharing_a_topic(
    topics: list[frozenset[str]],
) -> None:
    """The linear pick ``save_many`` uses is the pairwise one it replaced (quadratic at 20,000)."""
    pairwise = [
        [j for j in reversed(range(i)) if topics[i] & topics[j]][:_EARLIER]
        for i in range(len(topics))
    ]
    assert _recent_sharing(topics) == pairwise
