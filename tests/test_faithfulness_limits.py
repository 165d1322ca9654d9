"""The faithfulness checks on extreme input: numbers past Python's int-string limit, and
adversarial texts that once took quadratic time (bench/faithfulness_worst_case.py times them).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from _stores import store_url

import aimem
from aimem.judges import faithfulness as f
from aimem.judges.faithfulness import invented_reason, unfaithful_reason
from aimem.judges.openai import OpenAIJudge
from aimem.testing import OpenAIStub, StubReply, chat_completion

#: Past sys.get_int_max_str_digits() (4,300): int() of these raises ValueError.
DIGITS = "7" * 5000
KANJI = "三" * 5000
KANJI_UNITS = "三万" * 2500
LONG_NUMBERS = [
    (f"I have {DIGITS} apples.", f"The user has {DIGITS} apples."),
    (f"私は{KANJI}個のりんごを持っています", f"ユーザーは{KANJI}個のりんごを持っている。"),
    (f"My code is {DIGITS}万 and {KANJI_UNITS}.", f"The user's code is {DIGITS}0000 and {KANJI}."),
    (f"The lottery number is {DIGITS}.", f"The user's lottery number is {KANJI}."),
    (f"I waited {DIGITS}.5 hours, to 3 p.m.", f"The user waited 0{DIGITS}.50 hours to 15:00."),
]


@pytest.mark.parametrize(("content", "interpretation"), LONG_NUMBERS)
def test_long_numbers_never_raise(content: str, interpretation: str) -> None:
    for check in (unfaithful_reason, invented_reason):
        check(content, interpretation)
        check(interpretation, content)


def test_a_long_number_is_compared_exactly_as_digits() -> None:
    """Kept when only padding differs, flagged when one digit does; the reason stays short."""
    assert unfaithful_reason(f"My ID is {DIGITS}.", f"The user's ID is 000{DIGITS}.") is None
    assert unfaithful_reason(f"My ID is {'3' * 5000}.", f"The user's ID is {KANJI}.") is None
    assert unfaithful_reason(f"My ID is {'3' * 5000}.", f"The ID is {KANJI[1:]}.") is not None
    other = DIGITS[:-1] + "8"
    reason = unfaithful_reason(f"My ID is {DIGITS}.", f"The user's ID is {other}.")
    assert reason is not None and reason.startswith("the content says 777")
    assert len(reason) < 120
    # Past 28 digits, Decimal's precision once made these two numbers equal.
    said, told = "1234567890123456789012345678901", "1234567890123456789012345678902"
    assert unfaithful_reason(f"My ID is {said}.", f"The user's ID is {told}.") is not None


def test_numbers_keep_their_usual_readings() -> None:
    """The text-based reading gives what the Decimal/int one gave on ordinary numbers."""
    assert f._canonical("05") == "5" and f._canonical("3.50") == "3.5"
    assert f._canonical("0.0") == "0" and f._canonical("1.5", "万") == "15000"
    assert f._canonical("1.25", "k") == "1250" and f._canonical("٣") == "3"
    assert [f._kanji_value(k) for k in ("二十三", "三万", "二〇二四", "一億二千万")] == [
        "23",
        "30000",
        "2024",
        "120000000",
    ]
    assert f._kanji_value(KANJI) == "3" * 5000
    assert f._kanji_value("三万" * 600) is None  # units beyond any numeral: not read
    assert {"15", "3"} <= f._kept_numbers("the meeting is at 3 p.m.")


def _store(tmp_path: Path, judge: aimem.Judge) -> aimem.MemoryStore:
    return aimem.MemoryStore(store_url(tmp_path / "m.db"), judge=judge)


def test_the_offline_judge_saves_long_numbers(tmp_path: Path) -> None:
    with _store(tmp_path, aimem.HeuristicJudge()) as store:
        for content, _ in LONG_NUMBERS:
            assert store.save(content).score_source != "pending"
        saved = store.save_conversation([{"role": "user", "content": c} for c, _ in LONG_NUMBERS])
        assert all(m.score_source != "pending" for m in saved)


def _reply(interpretation: str) -> StubReply:
    fields = {
        "interpreted_content": interpretation,
        "emotional_impact": 1,
        "user_relevance": 3,
        "novelty": 3,
        "utility": 3,
        "rationale": "A number the user gave.",
        "supersedes": [],
        "supersede_reason": "",
    }
    return StubReply(body=chat_completion(json.dumps(fields, ensure_ascii=False)))


@pytest.mark.parametrize(("content", "interpretation"), LONG_NUMBERS[:2])
def test_the_llm_judge_saves_long_numbers(
    tmp_path: Path, content: str, interpretation: str
) -> None:
    """The model's restatement keeps the number: judged on the first answer, not pending."""
    with OpenAIStub() as stub:
        judge = OpenAIJudge(base_url=stub.base_url, api_key="sk-test", model="gpt-4o-mini")
        with _store(tmp_path, judge) as store:
            stub.enqueue(_reply(interpretation))
            memory = store.save(content)
        assert stub.chat_calls == 1
    assert memory.score_source != "pending"
    assert memory.interpreted_content == interpretation


def test_the_llm_judge_reasks_when_a_long_number_is_dropped(tmp_path: Path) -> None:
    content = LONG_NUMBERS[0][0]
    with OpenAIStub() as stub:
        judge = OpenAIJudge(base_url=stub.base_url, api_key="sk-test", model="gpt-4o-mini")
        with _store(tmp_path, judge) as store:
            stub.enqueue(_reply("The user has many apples."), _reply(LONG_NUMBERS[0][1]))
            memory = store.save(content)
        assert stub.chat_calls == 2
        corrective = stub.chat_requests[1]["messages"][-1]["content"]
    assert memory.score_source != "pending" and memory.interpreted_content == LONG_NUMBERS[0][1]
    assert "the content says 777" in corrective and DIGITS not in corrective


# -- adversarial shapes: correct answers (the bench times them) -----------------------------


def test_long_kana_runs_are_read_as_before() -> None:
    run = "あいうえお" * 20_000
    assert f._kana_names(run) == [] and f._kana_names("ア" * 100_000) == []
    assert f._kana_names(run + "ミケちゃん") == ["ミケ"]
    assert f._kana_names("ア" * 100_000 + "さん") == ["ア" * 100_000]
    reason = unfaithful_reason(run + "ミケちゃんと遊んだ", "The user played.")
    assert reason == 'the content names "ミケ", the interpretation leaves it out'
    long_name = unfaithful_reason("ミケ" * 50_000 + "さんと遊んだ", "The user played.")
    assert long_name is not None and len(long_name) < 120


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("ミケちゃんはなこさん", ["ミケ", "なこ"]),  # a match ends inside a hiragana run
        ("名前はさくらとはなこちゃん", ["さくら", "なこ"]),
        ("ポチという名前で、たろうくんの犬", ["ポチ", "たろう"]),
        ("わたしはさくらちゃんです", ["わたしはさくら"]),
        ("ママちゃんとさくらちゃん", ["さくら"]),  # a kin word is no name
    ],
)
def test_kana_names_where_matches_meet(text: str, names: list[str]) -> None:
    assert f._kana_names(text) == names


#: The naming pattern as it was, unrestricted (quadratic on a long run): the oracle.
_UNRESTRICTED = re.compile(
    r"名前は(?P<a>[ァ-ヴー]{2,}|[ぁ-ゖ]{2,}?)(?=です|でした|だ|って|ちゃん|くん|さん|と|[。、！!？?\s]|$)|"
    r"(?P<b>[ァ-ヴー]{2,}|[ぁ-ゖ]{2,})(?:さん|くん|ちゃん|さま|様|氏)|"
    r"(?P<c>[ァ-ヴー]{2,})(?:という名|って名|と名付け|と呼|と言います|と申します)"
)
_PIECES = [*"あいさくらはなこのとがをにもんまちゃアイミケポチタロー", "名前は", "さん", "くん"]
_PIECES += ["ちゃん", "さま", "様", "氏", "という名", "と呼", "と言います", "です", "。", " ", "母"]


def test_the_linear_scan_finds_what_the_unrestricted_pattern_finds() -> None:
    rng = random.Random(24)
    for _ in range(3000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 30)))
        expected = [
            (*m.span(g), m.group(g))
            for m in _UNRESTRICTED.finditer(text)
            for g in ("a", "b", "c")
            if m.group(g)
        ]
        assert list(f._ja_name_spans(text)) == expected, text


def test_many_names_numbers_and_kin_give_the_first_problem() -> None:
    rng = random.Random(15)
    names = [
        "".join(rng.choice("bdgkmnprst") + rng.choice("aeiou") for _ in range(3)).capitalize()
        for _ in range(5_000)
    ]
    met = " and ".join(names)
    content = f"I met Zebulon and {met} and my sister, 42 yen. I met {met} again."
    assert unfaithful_reason(content, "The user says: " + content.replace(" and ", " & ")) is None
    assert unfaithful_reason(content, content.replace("Zebulon", "someone")) == (
        'the content names "Zebulon", the interpretation leaves it out'
    )
    assert unfaithful_reason(content, content.replace("42", "some")) == (
        "the content says 42, the interpretation leaves it out"
    )
    assert unfaithful_reason(content, content.replace("sister", "friend")) == (
        'the content is about the user\'s sister, but the interpretation says "friend"'
    )
