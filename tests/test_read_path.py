"""What an agent reads back (issue 25): the current truth first, clean interpretations,
"nothing relevant" when nothing is, the user's own facts first, and an honest context.

Offline judge, real stores on both backends, the CLI in a subprocess at 80 columns and
``aimem mcp`` over stdio with the SDK's client.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _db import execute, is_postgres, scalar
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import aimem
from aimem.context import BY_PRIORITY, BY_RELEVANCE, NO_MATCH
from aimem.testing import FixedJudge

AIMEM = str(Path(sys.executable).with_name("aimem"))

FACTS = [
    "I hate cilantro.",
    "My cat is called Mochi.",
    "I am allergic to penicillin.",
    "My sister lives in Sendai.",
    "We moved to Sapporo last month.",
    "My wife's name is Yumi.",
    "I take 50mg of sertraline every morning.",
    "I work as a nurse at the city hospital.",
]
UNRELATED = [
    "quantum chromodynamics",
    "What is the capital of France?",
    "How do I reverse a linked list in Python?",
    "stock price of Apple",
]


@pytest.fixture
def facts_store(db_url: str) -> Any:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        for text in FACTS:
            store.save(text)
        yield store


def _contents(hits: list[aimem.SearchHit]) -> list[str]:
    return [h.memory.content for h in hits]


# -- nothing relevant ---------------------------------------------------------------------


@pytest.mark.parametrize("query", UNRELATED)
def test_a_query_sharing_no_word_or_meaning_finds_nothing(facts_store: Any, query: str) -> None:
    assert facts_store.search(query) == []


def test_nothing_by_meaning_either(db_url: str, local_embedder: aimem.LocalEmbedder) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), embedder=local_embedder) as s:
        for text in FACTS:
            s.save(text)
        for query in UNRELATED:
            assert s.search(query) == [], query
        assert s.search(UNRELATED[0], min_relevance=0.0)  # the floor is what keeps them out
        found = s.search("Which pet does the user keep?")
        assert found and found[0].memory.content == "My cat is called Mochi."


def test_relevance_is_absolute_and_the_floor_is_a_parameter(facts_store: Any) -> None:
    [hit] = facts_store.search("Is the user allergic to anything?")
    assert hit.memory.content == "I am allergic to penicillin." and hit.relevance == 1.0
    partial = facts_store.search("penicillin dosage schedule for the weekend trip")
    assert partial and all(0.0 < h.relevance < 1.0 for h in partial)
    assert (
        facts_store.search("penicillin dosage schedule for the weekend trip", min_relevance=0.9)
        == []
    )
    with pytest.raises(aimem.ValidationError, match="min_relevance"):
        facts_store.search("penicillin", min_relevance=2)


def test_min_score_filters_priority_not_relevance(facts_store: Any) -> None:
    hits = facts_store.search("cilantro", min_score=0.0)
    assert _contents(hits) == ["I hate cilantro."]
    low = hits[0].memory.priority_score
    assert facts_store.search("cilantro", min_score=min(1.0, low + 0.01)) == []


# -- the store's framing is no search term ------------------------------------------------


@pytest.mark.parametrize(
    ("framed", "plain"),
    [
        ("Where does the user live?", "Where do I live?"),
        ("What is the user's job?", "What is my job?"),
        ("Does the user have a cat?", "Do I have a cat?"),
    ],
)
def test_the_user_phrasing_finds_what_i_phrasing_finds(
    facts_store: Any, framed: str, plain: str
) -> None:
    assert _contents(facts_store.search(framed)) == _contents(facts_store.search(plain))
    assert facts_store.search(framed)


def test_user_in_a_question_matches_no_memory_by_itself(facts_store: Any) -> None:
    hits = facts_store.search("Where does the user live?")
    assert "I hate cilantro." not in _contents(hits)
    assert "My cat is called Mochi." not in _contents(hits)


def test_japanese_framing_is_no_search_term(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        store.save("札幌に住んでいます。")
        store.save("猫を飼っています。")
        framed = _contents(store.search("ユーザーはどこに住んでいますか"))
        assert framed == ["札幌に住んでいます。"]


def test_the_user_context_name_is_framing_too(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.save("Kenji lives in Osaka", user_context="kenji")
        store.save("Tea is nice", user_context="kenji")
        hits = store.search("kenji tea", user_context="kenji")
        assert _contents(hits)[0] == "Tea is nice"


# -- whose fact --------------------------------------------------------------------------


@pytest.mark.parametrize("sister_first", [True, False])
def test_the_users_own_fact_ranks_over_a_relatives(db_url: str, sister_first: bool) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        texts = ["My sister lives in Sendai.", "We moved to Sapporo last month."]
        for text in texts if sister_first else texts[::-1]:
            store.save(text)
        assert _contents(store.search("Where does the user live?"))[0] == texts[1]
        assert _contents(store.search("Where does my sister live?"))[0] == texts[0]


# -- the current truth first -------------------------------------------------------------


def test_the_newer_sibling_ranks_first_and_the_older_is_marked(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:  # FixedJudge retires nothing
        old = store.save("I live in Sendai.")
        new = store.save("I live in Sapporo.")
        assert store.get(old.id).archived_at is None
        assert store.get(old.id).contested_by == new.id  # the save's looser reading
        hits = store.search("Where does the user live?", explain=True)
        assert [h.memory.id for h in hits] == [new.id, old.id]
        assert hits[1].conflicts_with == new.id and hits[0].conflicts_with is None
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        context = store.context()
        assert context.index("Sapporo") < context.index("Sendai")


def test_siblings_are_ordered_even_when_no_save_linked_them(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        old = store.save("The team offsite is on 7 March in Leeds.")
        new = store.save("The team offsite is on 14 March in Leeds.")
        execute(db_url, "UPDATE memories SET contested_by = NULL")
        hits = store.search("When is the team offsite?")
        assert [h.memory.id for h in hits] == [new.id, old.id]
        assert hits[1].conflicts_with == new.id


def test_a_question_narrows_siblings_to_what_it_asks_about(db_url: str) -> None:
    # the two share few words ("pottery course"), but the question asks about exactly
    # those, and the newer says it moved on: it answers first
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        old = store.save("I'm taking the evening pottery course on Tuesdays.")
        new = store.save("I deferred the pottery course until spring.")
        hits = store.search("Is the user taking a pottery course on Tuesdays?")
        assert [h.memory.id for h in hits][:2] == [new.id, old.id]


def test_giving_it_another_go_is_no_added_fact(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        old = store.save("Ana and I split up in March, after the wedding plans fell apart.")
        new = store.save("Ana and I are back together, giving it another go.")
        hits = store.search("Did the user and Ana split up after the wedding plans?")
        assert [h.memory.id for h in hits][:2] == [new.id, old.id]


def test_a_transcripts_turns_are_not_narrowed_by_the_question(db_url: str) -> None:
    # a conversation comes back to a topic in passing; and every turn of one speaker names
    # her, so neither the question naming her nor the two turns sharing her name make them
    # one fact
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        old = store.save("Caroline: I went to a pottery workshop with my kids.")
        new = store.save("Caroline: I started a new pottery class at the library.")
        hits = store.search("What did Caroline make at the pottery workshop?")
        assert [h.memory.id for h in hits][:2] == [old.id, new.id]


def test_an_added_fact_is_no_conflict(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.save("I have a dog named Max.")
        store.save("I also have a cat named Luna.")
        assert all(h.conflicts_with is None for h in store.search("pets dog cat"))


def test_an_edit_clears_what_a_save_contested(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        old = store.save("I live in Sendai.")
        new = store.save("I live in Sapporo.")
        assert store.get(old.id).contested_by == new.id
        assert store.update(old.id, "I live in Sendai again, since May.").contested_by is None


def test_deleting_the_newer_clears_the_link(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        old = store.save("I live in Sendai.")
        new = store.save("I live in Sapporo.")
        store.delete(new.id)
        assert store.get(old.id).contested_by is None


# -- interpretations people can read -----------------------------------------------------


def test_offline_interpretations_have_no_boilerplate(facts_store: Any) -> None:
    for memory in facts_store.list():
        text = memory.interpreted_content
        assert "(" not in text and not text.startswith("User:"), text
        assert "where they live" not in text and "prescription" not in text
    moved = next(m for m in facts_store.list() if "Sapporo" in m.content)
    assert moved.interpreted_content.startswith("The user")
    assert "residence" in moved.recall_terms and "live" in moved.recall_terms.split()
    assert "recall_terms" not in repr(moved)


def test_the_cli_shows_content_at_80_columns(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        store.save("I take 20 mg of atorvastatin every night.")
        store.save("I take 50mg of sertraline every morning.")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    env |= {"AIMEM_DATABASE_URL": db_url, "COLUMNS": "80", "TERM": "xterm"}
    out = subprocess.run(
        [AIMEM, "search", "What medication does the user take?"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "atorvastatin" in out.stdout and "sertraline" in out.stdout
    assert "medication (takes" not in out.stdout and "match" in out.stdout
    assert all(len(line.rstrip()) <= 80 for line in out.stdout.splitlines())


# -- context(query=...) is honest --------------------------------------------------------


def test_context_with_a_query_says_so_and_pads_nothing(facts_store: Any) -> None:
    block = facts_store.context(query="Is the user allergic to anything?")
    assert BY_RELEVANCE in block and "penicillin" in block
    assert "cilantro" not in block and "Mochi" not in block
    none = facts_store.context(query="quantum chromodynamics")
    assert NO_MATCH in none and "cilantro" not in none
    assert BY_PRIORITY in facts_store.context()


# -- upgrading a schema-4 store ------------------------------------------------------------

_FRAMED = {
    "We moved to Sapporo last month.": (
        "The user's residence (where they live, home, based; moved): \"We moved to Sapporo "
        'last month."'
    ),
    "I hate cilantro.": "User: I hate cilantro.",
}


def test_a_schema_4_store_is_upgraded_to_readable_interpretations(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        for text in _FRAMED:
            store.save(text)
    # Make it as aimem 0.1 with schema 4 left it: framed texts, "user" in the index.
    execute(db_url, "DROP INDEX ix_memories_contested")
    execute(db_url, "ALTER TABLE memories DROP COLUMN recall_terms")
    execute(db_url, "ALTER TABLE memories DROP COLUMN contested_by")
    for content, framed in _FRAMED.items():
        execute(
            db_url,
            "UPDATE memories SET interpreted_content = ?, terms = terms || ' user' "
            "WHERE content = ?",
            (framed, content),
        )
    execute(db_url, "UPDATE aimem_meta SET value = '4' WHERE key = 'schema_version'")
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        by_content = {m.content: m for m in store.list()}
        moved = by_content["We moved to Sapporo last month."]
        assert moved.interpreted_content == "The user and others moved to Sapporo last month."
        assert "residence" in moved.recall_terms.split()
        assert by_content["I hate cilantro."].interpreted_content == "The user hates cilantro."
        assert _contents(store.search("Where does the user live?")) == [moved.content]
        assert store.search("user") == []
    version = scalar(db_url, "SELECT value FROM aimem_meta WHERE key = 'schema_version'")
    assert version == "5"
    if not is_postgres(db_url):
        assert (
            scalar(db_url, "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'user'") == 0
        )


# -- MCP ---------------------------------------------------------------------------------


def test_mcp_search_says_when_nothing_matches_and_shows_relevance(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.save("I live in Sendai.")
        store.save("I live in Sapporo.")

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
        params = StdioServerParameters(
            command=AIMEM, args=["--database-url", db_url, "mcp"], env=env
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            none = await session.call_tool("search_memories", {"query": "quantum physics"})
            some = await session.call_tool(
                "search_memories", {"query": "Where does the user live?"}
            )
            return dict(none.structured_content or {}), dict(some.structured_content or {})

    none, some = asyncio.run(go())
    assert none["hits"] == [] and none["note"] == "No memory matches the query."
    first, second = some["hits"]
    assert "Sapporo" in first["memory"]["content"] and 0 < first["relevance"] <= 1
    assert second["conflicts_with"] == first["memory"]["id"]
    assert json.dumps(some).count("conflicts_with") == 1


def test_recall_terms_and_contested_links_survive_export_and_import(
    db_url_factory: Any, tmp_path: Path
) -> None:
    path = tmp_path / "export.jsonl"
    with aimem.MemoryStore(db_url_factory("a"), judge=FixedJudge()) as store:
        old = store.save("I live in Sendai.")
        new = store.save("I live in Sapporo.")
        store.export_to(path)
    with aimem.MemoryStore(db_url_factory("b"), judge=FixedJudge()) as other:
        assert other.import_from(path).ok
        assert other.get(old.id).contested_by == new.id
        assert "residence" in other.get(new.id).recall_terms.split()
        hits = other.search("What is the user's address?")  # only the recall terms say so
        assert [h.memory.id for h in hits] == [new.id, old.id]


def test_a_way_of_eating_answers_a_question_about_diet(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        store.save("I'm vegetarian.")
        store.save("My husband has gone vegan for January.")
        hits = store.search("What diet does the user follow?")
        assert _contents(hits)[0] == "I'm vegetarian."
