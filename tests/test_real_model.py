"""aimem's public API against a real local model (llama.cpp's llama-server on loopback).

Run with a server started by ``bench/real_model.sh start``::

    AIMEM_TEST_MODEL_URL=$(bench/real_model.sh url) .venv/bin/python -m pytest -m realmodel

Without ``AIMEM_TEST_MODEL_URL`` every test here is skipped. They assert the wire path
and invariants (calls per save, judged or pending, components in range, valid
supersession), never the model's opinion. Requests are counted at the wire by an
httpx event hook on the client the judge uses.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import openai
import pytest

import aimem
from aimem.loop import run_sync
from aimem.scoring import COMPONENT_MAX, COMPONENTS

URL = os.environ.get("AIMEM_TEST_MODEL_URL", "")
MODEL = os.environ.get("AIMEM_TEST_MODEL", "qwen2.5-coder-1.5b-instruct-q4_k_m")

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(
        not URL,
        reason="no model server configured: run bench/real_model.sh start and set "
        "AIMEM_TEST_MODEL_URL=$(bench/real_model.sh url)",
    ),
    # httpx reports a socket the SDK abandons when a slow local model times a request
    # out (the judge then sends it again); that is the SDK's connection, not a leak here.
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]


class Wire:
    """Counts the chat requests a judge sends, at the HTTP layer."""

    def __init__(self) -> None:
        self.requests = 0

    async def hook(self, request: httpx.Request) -> None:
        if request.url.path.endswith("/chat/completions"):
            self.requests += 1

    def judge(self) -> aimem.OpenAIJudge:
        """A judge with aimem's defaults, on a client whose requests are counted."""
        self.client = openai.AsyncOpenAI(
            base_url=URL,
            api_key="not-needed",
            http_client=httpx.AsyncClient(event_hooks={"request": [self.hook]}),
        )
        return aimem.OpenAIJudge(model=MODEL, client=self.client)


@pytest.fixture
def wire() -> Wire:
    return Wire()


@pytest.fixture
def store(db_url: str, wire: Wire) -> Iterator[aimem.MemoryStore]:
    with aimem.MemoryStore(db_url, judge=wire.judge()) as opened:
        yield opened
    # The client is ours, not the store's: close it on the loop that used it.
    run_sync(wire.client.close())


def assert_judged(memory: aimem.Memory) -> None:
    assert not memory.pending, memory.rationale
    assert memory.score_source == "llm"
    assert memory.prompt_version == "interpret.v4"
    assert memory.model
    for name in COMPONENTS:
        value = getattr(memory, name)
        assert value is not None and 0.0 <= value <= COMPONENT_MAX, (name, value)
    assert memory.priority_score is not None and 0.0 <= memory.priority_score <= 1.0
    assert memory.interpreted_content.strip()


def test_the_default_settings_judge_through_the_server(db_url: str) -> None:
    """What a user gets from OPENAI_BASE_URL alone: the judge built from settings."""
    with aimem.MemoryStore(db_url, openai_base_url=URL, model=MODEL) as store:
        assert isinstance(store.judge, aimem.OpenAIJudge)
        memory = store.save("I'm allergic to penicillin.")
    assert_judged(memory)


def test_single_saves_are_judged_in_one_call_each_or_one_reask(
    store: aimem.MemoryStore, wire: Wire
) -> None:
    contents = [
        "My daughter's name is Sakura and she is 7.",
        "私は毎朝コーヒーを飲みます。",
        "I don't eat meat.",
    ]
    for content in contents:
        before = wire.requests
        memory = store.save(content)
        assert_judged(memory)
        sent = wire.requests - before
        assert 1 <= sent <= 1 + 1 + memory.judge_retries, sent
    assert store.stats().pending == 0


def test_a_batch_is_judged_and_lines_up_with_its_items(
    store: aimem.MemoryStore, wire: Wire
) -> None:
    contents = [
        "I work as a nurse in Osaka.",
        "My favourite editor is Vim.",
        "I have a meeting with my boss on Friday at 3pm.",
        "I started learning the piano last month.",
    ]
    memories = store.save_many(contents)
    assert [m.content for m in memories] == contents
    for memory in memories:
        assert_judged(memory)
    # One batch call, plus at most one single ask (and its re-ask) per item.
    assert 1 <= wire.requests <= 1 + 2 * len(contents) + sum(m.judge_retries for m in memories)


def test_supersession_names_only_memories_that_exist(store: aimem.MemoryStore) -> None:
    old = store.save("I live in Sendai.")
    new = store.save("I moved to Sapporo last week; I no longer live in Sendai.")
    assert_judged(new)
    ids = {m.id for m in store.list(include_archived=True)}
    for memory in store.list(include_archived=True):
        if memory.superseded_by is not None:
            assert memory.superseded_by in ids
            assert memory.id == old.id and memory.superseded_by == new.id
