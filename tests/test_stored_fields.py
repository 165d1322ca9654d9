"""One set of bounds and one text rule for everything stored, from every source.

Whatever ``save`` accepts must round-trip through export and import; whatever import
refuses, save refuses first with ``ValidationError`` and writes nothing. Sources: the
caller's client scores, a custom judge, the LLM's reply (over the loopback stub).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from _stores import store_url

import aimem
from aimem.testing import FixedJudge, OpenAIStub, StubReply, chat_completion
from aimem.validation import (
    MAX_INTERPRETATION_CHARS,
    MAX_LABEL_CHARS,
    MAX_RATIONALE_CHARS,
    MAX_SOURCE_CHARS,
)

HOSTILE = {"nul": "\x00", "esc": "\x1b[31m", "bel": "\x07", "rlo": "\u202e", "lri": "\u2066"}


def _interp(**changes: Any) -> aimem.Interpretation:
    values: dict[str, Any] = {
        "interpreted_content": "The user likes tea.",
        "emotional_impact": 0.1,
        "user_relevance": 0.2,
        "novelty": 0.1,
        "utility": 0.2,
        "rationale": "a preference",
    }
    values.update(changes)
    return aimem.Interpretation(**values)


class ScriptedJudge:
    """A custom judge returning whatever interpretation it is given."""

    def __init__(self, interpretation: aimem.Interpretation, source: str = "custom") -> None:
        self.interpretation = interpretation
        self.source = source

    async def interpret(
        self, content: str, *, user_context: str | None = None, related: Sequence[Any] = ()
    ) -> aimem.Interpretation:
        return self.interpretation


def _round_trips(store: aimem.MemoryStore, tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    store.export_to(first)
    with aimem.MemoryStore(
        store_url(tmp_path / "copy.db"), judge=FixedJudge(), namespace=store.namespace
    ) as copy:
        report = copy.import_from(first)
        assert report.ok, report.errors
        copy.export_to(second)
    assert first.read_bytes() == second.read_bytes()


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with aimem.MemoryStore(store_url(tmp_path / "m.db"), judge=FixedJudge()) as s:
        yield s


# -- the longest accepted values round-trip --------------------------------------------


def test_the_largest_accepted_client_values_round_trip(store: Any, tmp_path: Path) -> None:
    usage = aimem.Usage(
        model="m" * MAX_LABEL_CHARS, prompt_tokens=10**9, completion_tokens=0, latency_ms=1.5
    )
    store.save(
        "I like tea",
        interpretation=_interp(
            interpreted_content="t" * MAX_INTERPRETATION_CHARS,
            rationale="r\tx\n" * (MAX_RATIONALE_CHARS // 4),
            model="m" * MAX_LABEL_CHARS,
            prompt_version="p" * MAX_LABEL_CHARS,
            usage=usage,
        ),
    )
    long_source = ScriptedJudge(_interp(), source="s" * MAX_SOURCE_CHARS)
    with aimem.MemoryStore(store.database_url, judge=long_source) as other:
        other.save("judged by a judge with the longest source name")
    _round_trips(store, tmp_path)


def test_line_breaks_in_client_texts_are_normalised_like_content(store: Any) -> None:
    memory = store.save(
        "x", interpretation=_interp(interpreted_content="a\r\nb\rc", rationale="d\r\ne")
    )
    assert (memory.interpreted_content, memory.rationale) == ("a\nb\nc", "d\ne")


# -- over the bounds: refused by save, nothing written ----------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"interpreted_content": "x" * 70_000},
        {"interpreted_content": "   "},
        {"rationale": "x" * 100_000},
        {"model": "m" * (MAX_LABEL_CHARS + 1)},
        {"prompt_version": "p" * (MAX_LABEL_CHARS + 1)},
        {"model": "two\nlines"},
        {"usage": aimem.Usage(prompt_tokens=-1)},
        {"usage": aimem.Usage(completion_tokens=-5)},
        {"usage": aimem.Usage(retries=-1)},
        {"usage": aimem.Usage(latency_ms=math.nan)},
        {"usage": aimem.Usage(latency_ms=math.inf)},
        {"usage": aimem.Usage(prompt_tokens=2**70)},
        {"usage": aimem.Usage(model="u" * 500)},
    ],
    ids=lambda c: next(iter(c)),
)
def test_client_values_import_would_refuse_are_refused_by_save(
    store: Any, changes: dict[str, Any]
) -> None:
    with pytest.raises(aimem.ValidationError):
        store.save("I like tea", interpretation=_interp(**changes))
    assert store.stats().total == 0


@pytest.mark.parametrize(
    ("source", "changes"),
    [
        ("s" * (MAX_SOURCE_CHARS + 1), {}),
        ("pending", {}),  # reserved for memories without scores
        ("custom", {"model": "m" * 201}),
        ("custom", {"rationale": "r" * 100_000}),
        ("custom", {"usage": aimem.Usage(latency_ms=math.nan)}),
    ],
)
def test_a_custom_judges_bad_answer_is_refused_and_nothing_written(
    tmp_path: Path, source: str, changes: dict[str, Any]
) -> None:
    judge = ScriptedJudge(_interp(**changes), source=source)
    with aimem.MemoryStore(store_url(tmp_path / "j.db"), judge=judge) as store:
        with pytest.raises(aimem.ValidationError, match="judge"):
            store.save("I like tea")
        with pytest.raises(aimem.ValidationError):
            store.save_many(["one", "two"])
        assert store.stats().total == 0


# -- control characters from every source ------------------------------------------------


@pytest.mark.parametrize("char", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("field", ["interpreted_content", "rationale"])
def test_client_interpretations_take_no_control_characters(
    store: Any, char: str, field: str
) -> None:
    with pytest.raises(aimem.ValidationError, match="U\\+"):
        store.save("I like tea", interpretation=_interp(**{field: f"tea {char} time"}))
    assert store.stats().total == 0


@pytest.mark.parametrize("char", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_custom_judges_control_characters_are_refused(tmp_path: Path, char: str) -> None:
    judge = ScriptedJudge(_interp(interpreted_content=f"Syui{char} likes tea"))
    with aimem.MemoryStore(store_url(tmp_path / "j.db"), judge=judge) as store:
        with pytest.raises(aimem.ValidationError):
            store.save("I like tea")
        assert store.stats().total == 0


@pytest.mark.parametrize("char", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("where", ["content", "user_context", "core"])
def test_callers_texts_take_no_control_characters(store: Any, char: str, where: str) -> None:
    with pytest.raises(aimem.ValidationError):
        if where == "content":
            store.save(f"tea {char}")
        elif where == "user_context":
            store.save("tea", user_context=f"syui{char}")
        else:
            store.set_core(f"I am {char} an agent")
    assert store.stats().total == 0 and store.get_core() == ""


def _reply(interpreted: str, rationale: str = "fine", model: str = "stub-model") -> StubReply:
    body = json.dumps(
        {
            "interpreted_content": interpreted,
            "emotional_impact": 0.1,
            "user_relevance": 0.1,
            "novelty": 0.1,
            "utility": 0.1,
            "rationale": rationale,
        }
    )
    return StubReply(body=chat_completion(body, model=model))


@pytest.mark.parametrize("char", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_llms_control_characters_are_re_asked_never_stored(tmp_path: Path, char: str) -> None:
    with OpenAIStub() as stub:
        stub.enqueue(_reply(f"The user {char}likes tea."), _reply("The user likes tea."))
        judge = aimem.OpenAIJudge(base_url=stub.base_url, api_key="test")
        with aimem.MemoryStore(store_url(tmp_path / "l.db"), judge=judge) as store:
            memory = store.save("I like tea")
        assert memory.score_source == "llm"
        assert memory.interpreted_content == "The user likes tea."
        assert len(stub.chat_requests) == 2  # one corrective re-ask
        assert "U+" in json.dumps(stub.chat_requests[1]["messages"][-1])


def test_an_unstorable_model_name_in_the_reply_falls_back_to_the_judges(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        stub.enqueue(_reply("The user likes tea.", model="x" * 500))
        judge = aimem.OpenAIJudge(base_url=stub.base_url, api_key="test", model="my-model")
        with aimem.MemoryStore(store_url(tmp_path / "l.db"), judge=judge) as store:
            memory = store.save("I like tea")
            assert memory.model == "my-model"
            _round_trips(store, tmp_path)


# -- context and instructions only ever see clean text -------------------------------


def test_context_output_carries_no_control_characters(store: Any) -> None:
    store.set_core("I am the agent.\tTabs are fine.")
    store.save("I like tea\nand biscuits", interpretation=_interp(rationale="ok\tfine"))
    text = store.context()
    assert not any(ord(c) < 32 and c not in "\t\n" for c in text)


@pytest.mark.sqlite_only
def test_context_masks_control_characters_written_before_the_rule(store: Any) -> None:
    import sqlite3

    memory = store.save("I like tea")
    path = store.database_url.removeprefix("sqlite:///")
    con = sqlite3.connect(path)
    con.execute(
        "UPDATE memories SET interpreted_content = ? WHERE id = ?",
        ("The user \x1b[2Jlikes \u202etea", memory.id),
    )
    con.commit()
    con.close()
    text = store.context()
    assert "\x1b" not in text and "\u202e" not in text and "likes" in text


def test_the_largest_count_is_stored_and_one_more_is_refused(db_url: str) -> None:
    """Counts stop at 2**31 - 1, what PostgreSQL's integer columns hold (SQLite holds more)."""
    interpretation = aimem.Interpretation(
        interpreted_content="a note",
        emotional_impact=0.1,
        user_relevance=0.1,
        novelty=0.1,
        utility=0.1,
        usage=aimem.Usage(prompt_tokens=2**31 - 1, retries=2**31 - 1),
    )
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        saved = store.save("a note with the largest counts", interpretation=interpretation)
        assert (saved.prompt_tokens, saved.judge_retries) == (2**31 - 1, 2**31 - 1)
        over = interpretation.model_copy(update={"usage": aimem.Usage(retries=2**31)})
        with pytest.raises(aimem.ValidationError, match="2147483647"):
            store.save("a note with one retry too many", interpretation=over)
        assert store.stats().total == 1
