"""The offline judge in long, chatty conversations (issue 25, item 5).

Facts wrapped in requests keep their weight, requests and reactions carrying none score
low, an answer that means nothing on its own is not kept, and when a changed fact competes
with the one it changes, the newer is not the one capacity forgets.
"""

from __future__ import annotations

from typing import Any

import pytest

import aimem
from aimem.judges.heuristic import HeuristicJudge

THRESHOLD = 0.3  # the default min_priority_score


@pytest.fixture(scope="module")
def judge() -> HeuristicJudge:
    return HeuristicJudge()


def priority(judge: HeuristicJudge, text: str, **kwargs: Any) -> float:
    return judge.score(text, **kwargs).priority_score


@pytest.mark.parametrize(
    "answer",
    [
        "No.",
        "Yes, a lot.",
        "ok",
        "sure",
        "lol",
        "Never.",
        "Not yet.",
        "The second one.",
        "はい",
        "いいえ",
        "まあまあです",
    ],
)
def test_a_contentless_answer_scores_below_the_threshold(
    judge: HeuristicJudge, answer: str
) -> None:
    assert priority(judge, answer) < THRESHOLD, answer


def test_save_conversation_drops_bare_answers_and_keeps_the_fact(db_url: str) -> None:
    chat = [
        {"role": "assistant", "content": "Do you have any pets?"},
        {"role": "user", "content": "No."},
        {"role": "assistant", "content": "Do you travel for work?"},
        {"role": "user", "content": "Yes, a lot."},
        {
            "role": "user",
            "content": "Can you suggest a packing list? I fly to Oslo every month for my job.",
        },
        {"role": "user", "content": "ok"},
    ]
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        kept = [m.content for m in store.save_conversation(chat)]
    assert kept == [chat[4]["content"]]


@pytest.mark.parametrize(
    ("with_fact", "without"),
    [
        (
            "Draft a note to my landlord, Ms. Okoye, about the leaking tap in flat 3C.",
            "Draft a note to a landlord about a leaking tap.",
        ),
        (
            "I take 40 mg of propranolol before flights; can I have coffee with it?",
            "Can people have coffee with propranolol?",
        ),
        (
            "What should I bring to my colonoscopy? It's on October 2.",
            "What should people bring to a colonoscopy?",
        ),
        (
            "How do I clean the sensor on my Nikon Z6?",
            "How do I clean a camera sensor?",
        ),
        (
            "I live in Tampere, so which lakes are nice for a swim in June?",
            "Which Finnish lakes are nice for a swim in June?",
        ),
        (
            "Suggest a birthday cake for my son Felipe, he's turning 9.",
            "Suggest a birthday cake for a nine-year-old.",
        ),
        (
            "母の手術が来週なので、入院の持ち物リストを作ってください。",
            "入院の持ち物リストを作ってください。",
        ),
    ],
)
def test_a_fact_wrapped_in_a_request_keeps_its_weight(
    judge: HeuristicJudge, with_fact: str, without: str
) -> None:
    assert priority(judge, with_fact) >= THRESHOLD, with_fact
    assert priority(judge, without) < THRESHOLD, without
    assert priority(judge, with_fact) > priority(judge, without) + 0.2


@pytest.mark.parametrize(
    "request_text",
    [
        "Write a 500-word essay on the causes of World War II.",
        "Explain how chemotherapy attacks cancer cells, in simple terms.",
        "I need a catchy title for a blog post about divorce statistics.",
        "I've always wondered how earthquakes are measured.",
        'Summarize this: "The clinic opened in 1998 and now treats 4,000 patients a year."',
        "What are the pros and cons of antidepressants? Keep it under 200 words.",
        "Can you check my code? It throws a KeyError on line 12.",
        "がん治療の歴史について小学生向けにまとめてください。",
        "離婚率の推移をグラフにする方法を教えて。",
    ],
)
def test_a_request_about_the_world_scores_low_however_weighty_its_topic(
    judge: HeuristicJudge, request_text: str
) -> None:
    assert priority(judge, request_text) < THRESHOLD, request_text


def test_a_fact_glued_to_an_unrelated_request_is_not_damped(judge: HeuristicJudge) -> None:
    plain = priority(judge, "I'm allergic to shellfish.")
    glued = priority(
        judge, "Write a haiku about autumn leaves. By the way, I'm allergic to shellfish."
    )
    assert glued >= plain - 0.05


@pytest.mark.parametrize(
    "instruction",
    [
        "Always reply in British English.",
        "Never schedule meetings before 10am.",
        "Please don't mention calories or weight.",
        "朝9時前には絶対に電話しないでください。",
        "敬語ではなく、タメ口で話してください。",
    ],
)
def test_standing_instructions_are_not_mistaken_for_requests(
    judge: HeuristicJudge, instruction: str
) -> None:
    assert priority(judge, instruction) >= 0.35, instruction


def test_a_changed_fact_scores_at_least_what_it_changes(judge: HeuristicJudge, db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        old = store.save("My knee MRI is on the 12th of July; what should I wear?")
        new = store.save("Update: the MRI is now on June 3, not the 12th of July.")
        assert (new.priority_score or 0) >= (old.priority_score or 0)
    fresh = priority(judge, "Update: the MRI is now on June 3, not the 12th of July.")
    assert (new.priority_score or 0) >= fresh  # it inherited, never lost


def test_the_newer_of_two_conflicting_facts_survives_the_cap(db_url: str) -> None:
    chatter = [f"Can you explain topic number {n} in simple terms?" for n in range(30)]
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), max_memories=3) as store:
        store.save("Our rent is $1,450 a month.")
        store.save("I'm allergic to shellfish.")
        for text in chatter:
            store.save(text)
        store.save("The landlord is changing our rent from $1,450 to $1,600 next month.")
        store.save("My brother Ilya lives in Riga.")
        active = {m.content for m in store.list()}
    assert "The landlord is changing our rent from $1,450 to $1,600 next month." in active
