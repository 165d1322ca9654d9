"""HeuristicJudge's conversation signals: what a turn tells outranks how it reacts (EN and JA).

Every sentence here is written for this test. The signals are syntax-level: a first-person
event, a dated anchor, a plan or decision, a change of state, named and counted details
(kept) against praise, thanks, greetings and questions back to the other speaker (chatter).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from _memories import make_memory

from aimem.judges.heuristic import HeuristicJudge


@pytest.fixture(scope="module")
def judge() -> HeuristicJudge:
    return HeuristicJudge()


def priority(judge: HeuristicJudge, text: str) -> float:
    return judge.score(text).priority_score


@pytest.mark.parametrize(
    ("tells", "reacts"),
    [
        # a dated personal event vs praise
        (
            "Ben: I ran my first half marathon in Lisbon last Sunday.",
            "Ben: Wow, that's amazing! Congrats!",
        ),
        # news after a greeting vs a greeting with a question back
        (
            "Hi Sam! Guess what, I got the apartment on Elm Street yesterday.",
            "Hi Sam! How are you doing?",
        ),
        # a counted, named, dated event vs a question back
        (
            "I watched three films at the festival in Toronto last week.",
            "What did you think of the film?",
        ),
        # a decision vs good wishes
        ("I decided to apply for the nursing program in March.", "Sounds like a plan, good luck!"),
        # a change of state vs agreement
        ("I quit my job at the bank and started freelancing.", "Totally agree, that's so true."),
        # Japanese: a dated first-time event vs an exclamation of praise
        ("先週、友達と京都で初めて陶芸教室に行きました。", "すごいですね！"),
        # Japanese: a decision about next month vs a reaction
        ("来月から新しい仕事を始めることにしました。", "そうなんですね、楽しそう！"),
        # Japanese: a change of state vs a question back
        ("去年、東京から大阪に引っ越しました。", "それはどうでしたか？"),
    ],
)
def test_telling_outranks_reacting(judge: HeuristicJudge, tells: str, reacts: str) -> None:
    assert priority(judge, tells) > priority(judge, reacts) + 0.3


@pytest.mark.parametrize(
    "chatter",
    [
        "Mia: That's so cool! You must be really proud.",
        "Thanks, Priya! That's so kind.",
        "Haha, love that! What inspired you?",
        "Good luck tomorrow, you've got this!",
        "すごい！それで、どうだったの？",
    ],
)
def test_reactions_stay_below_the_default_threshold(judge: HeuristicJudge, chatter: str) -> None:
    assert priority(judge, chatter) < 0.3


def test_specific_details_raise_an_event(judge: HeuristicJudge) -> None:
    vague = priority(judge, "I went out for a bit.")
    particular = priority(judge, "I went hiking with Priya on Mount Tam last Saturday.")
    assert particular > vague + 0.1


def test_news_in_a_turn_survives_the_reactions_around_it(judge: HeuristicJudge) -> None:
    news = "I finally passed my driving test on Tuesday."
    alone = priority(judge, news)
    wrapped = priority(judge, f"Omg, hi Lee! That's great to hear. {news} How was your week?")
    assert wrapped > 0.5
    assert alone - wrapped < 0.2


def test_a_speaker_label_is_not_content(judge: HeuristicJudge) -> None:
    # "Adeline" ends like a drug stem (-line); a transcript's label must not read as medication.
    labelled = judge.score("Adeline: I bought a new bike.")
    assert "medication" not in labelled.rationale
    assert "medication" in judge.score("I take sertraline daily.").rationale
    plain = judge.score("I bought a new bike.")
    assert abs(labelled.priority_score - plain.priority_score) < 0.05


def test_shared_speaker_label_does_not_count_as_repetition(judge: HeuristicJudge) -> None:
    other = make_memory(
        "m1",
        "Ana: My sister lives in Oslo.",
        score_source="heuristic",
        model="aimem-heuristic",
        prompt_version="heuristic-v1",
        now=datetime(2025, 1, 1, tzinfo=UTC),
    )
    text = "Ana: I bought a red kayak."
    assert judge.score(text, related=[other]).novelty == judge.score(text).novelty
    repeat = judge.score("Ana: My sister lives in Oslo.", related=[other])
    assert repeat.novelty == 0.0


def test_everyday_trivia_stays_below_telling(judge: HeuristicJudge) -> None:
    # a past-tense breakfast is still a meal: dampers outweigh the event form
    assert priority(judge, "I had toast this morning.") < priority(
        judge, "I started a pottery course at the community centre in January."
    )
