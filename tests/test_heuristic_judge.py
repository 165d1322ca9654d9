"""HeuristicJudge: ordering quality on the labelled data, bounds, determinism and novelty."""

from __future__ import annotations

import asyncio
import itertools
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import _memories
import pytest

from aimem.judges.base import Judge, judge_source
from aimem.judges.evaluation import dev_set
from aimem.judges.heuristic import HeuristicJudge
from aimem.models import Interpretation, Memory
from aimem.scoring import COMPONENT_MAX, COMPONENTS

DATA = Path(__file__).parents[1] / "bench" / "data"
RANK = {"low": 0, "medium": 1, "high": 2}


def load(name: str) -> list[dict[str, Any]]:
    if name == "judge-dev.jsonl":  # ships with aimem
        return dev_set()
    with open(DATA / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def pairwise_accuracy(rows: list[dict[str, Any]], priority: dict[str, float]) -> float:
    """README-judge.md's headline metric: cross-band pairs ordered right, ties count half."""
    hits = pairs = 0.0
    for a, b in itertools.combinations(rows, 2):
        if a["band"] == b["band"]:
            continue
        hi, lo = (a, b) if RANK[a["band"]] > RANK[b["band"]] else (b, a)
        p_hi, p_lo = priority[hi["id"]], priority[lo["id"]]
        hits += 1.0 if p_hi > p_lo else 0.5 if p_hi == p_lo else 0.0
        pairs += 1
    return hits / pairs


def band_means(rows: list[dict[str, Any]], priority: dict[str, float]) -> dict[str, float]:
    means = {}
    for band in RANK:
        values = [priority[r["id"]] for r in rows if r["band"] == band]
        means[band] = sum(values) / len(values)
    return means


@pytest.fixture(scope="module")
def judge() -> HeuristicJudge:
    return HeuristicJudge()


@pytest.fixture(scope="module", params=["judge-dev.jsonl", "judge-extra.jsonl"])
def scored(request: pytest.FixtureRequest, judge: HeuristicJudge) -> Any:
    rows = load(request.param)
    return rows, {r["id"]: judge.score(r["text"]).priority_score for r in rows}


def make_memory(content: str, **overrides: Any) -> Memory:
    fields: dict[str, Any] = {
        "score_source": "heuristic",
        "model": "aimem-heuristic",
        "prompt_version": "heuristic-v6",
        "now": datetime(2025, 1, 1, tzinfo=UTC),
    }
    return _memories.make_memory("m1", content, **(fields | overrides))


def in_bounds(i: Interpretation) -> bool:
    return all(0.0 <= getattr(i, name) <= COMPONENT_MAX for name in COMPONENTS)


# --- ordering quality -------------------------------------------------------------------


def test_pairwise_accuracy_on_labelled_sets(scored: Any) -> None:
    rows, priority = scored
    assert pairwise_accuracy(rows, priority) >= 0.85


def test_band_means_are_ordered_with_clear_gaps(scored: Any) -> None:
    rows, priority = scored
    means = band_means(rows, priority)
    assert means["high"] - means["medium"] >= 0.1
    assert means["medium"] - means["low"] >= 0.1


def test_japanese_items_are_scored_not_ignored(judge: HeuristicJudge) -> None:
    rows = [r for r in load("judge-dev.jsonl") if r["lang"] == "ja"]
    priority = {r["id"]: judge.score(r["text"]).priority_score for r in rows}
    assert pairwise_accuracy(rows, priority) >= 0.85
    grief = judge.score("母が先月亡くなりました。")
    assert grief.priority_score >= 0.6
    assert grief.emotional_impact >= 0.2
    hobby = judge.score("週末はよく近所の温泉に行きます。")
    greeting = judge.score("おはようございます。")
    assert grief.priority_score > hobby.priority_score > greeting.priority_score
    assert hobby.user_relevance > 0.1


@pytest.mark.parametrize(
    ("higher", "lower"),
    [
        ("I'm allergic to penicillin.", "ok thanks"),
        ("Never schedule meetings before 10am.", "I prefer tabs over spaces."),
        ("I prefer tabs over spaces.", "It's raining today."),
        ("User's daughter Mira turns six in July.", "User asked what 2+2 is."),
        ("I take lisinopril every morning.", "The Eiffel Tower is in Paris."),
    ],
)
def test_obvious_orderings(judge: HeuristicJudge, higher: str, lower: str) -> None:
    assert judge.score(higher).priority_score > judge.score(lower).priority_score


# --- contract and robustness ------------------------------------------------------------


def test_satisfies_the_judge_protocol(judge: HeuristicJudge) -> None:
    assert isinstance(judge, Judge)
    assert judge_source(judge) == "heuristic"
    result = asyncio.run(judge.interpret("I'm on warfarin.", user_context="syui"))
    assert isinstance(result, Interpretation)
    assert result == judge.score("I'm on warfarin.", user_context="syui")
    assert result.model == "aimem-heuristic"
    assert result.prompt_version == "heuristic-v6"
    assert result.usage is None
    assert result.rationale and result.interpreted_content


def test_deterministic(judge: HeuristicJudge) -> None:
    text = "My husband is Daniel; we've been married 22 years."
    first = judge.score(text).model_dump()
    assert all(HeuristicJudge().score(text).model_dump() == first for _ in range(3))


@pytest.mark.parametrize(
    "content",
    [
        "",
        "   \n\t ",
        "\x00\x01\x02\x1b[31m",
        "\u200b\u200b",
        "🎉🔥💀 lol 🎉",
        "私はPythonが好き and I use Neovim every day, 毎朝コーヒーを飲む",
        "I'm allergic to nuts. " * 800,
        "x" * 16_000,
        "\ud800 lone surrogate",
        "ＵＳＥＲ　ＩＳ　ＤＥＡＦ",
    ],
)
def test_components_in_bounds_for_tricky_input(judge: HeuristicJudge, content: str) -> None:
    result = judge.score(content)
    assert in_bounds(result)
    assert 0.0 <= result.priority_score <= 1.0
    assert result.interpreted_content.strip()
    assert len(result.interpreted_content) <= 500
    assert result.rationale


def test_interpreted_content_is_a_normalised_restatement(judge: HeuristicJudge) -> None:
    assert judge.score("  I   use\tArch,\n btw. ").interpreted_content == "The user uses Arch, btw."
    assert judge.score("User prefers metric units.").interpreted_content == (
        "User prefers metric units."
    )


def test_rationale_names_the_strongest_cue(judge: HeuristicJudge) -> None:
    rationale = judge.score("I'm allergic to penicillin.").rationale
    assert "allergy" in rationale
    assert rationale.endswith(".")


def test_user_context_raises_relevance(judge: HeuristicJudge) -> None:
    text = "Prefers window seats on long flights."
    plain = judge.score(text)
    with_context = judge.score(text, user_context="syui")
    assert with_context.user_relevance > plain.user_relevance


# --- novelty against related memories ---------------------------------------------------


def test_identical_related_memory_removes_novelty(judge: HeuristicJudge) -> None:
    text = "I'm allergic to penicillin."
    fresh = judge.score(text)
    repeat = judge.score(text, related=[make_memory(text)])
    assert fresh.novelty > 0.1
    assert repeat.novelty == 0.0
    assert repeat.priority_score < fresh.priority_score


def test_near_identical_related_memory_lowers_novelty(judge: HeuristicJudge) -> None:
    text = "My sister lives in Melbourne."
    fresh = judge.score(text)
    near = judge.score(text, related=[make_memory("my sister lives in Melbourne now")])
    unrelated = judge.score(text, related=[make_memory("Uses Neovim with a minimal config.")])
    assert near.novelty < 0.5 * fresh.novelty
    assert unrelated.novelty == fresh.novelty


def test_related_memory_matches_on_interpreted_content_and_japanese(
    judge: HeuristicJudge,
) -> None:
    text = "私はそばアレルギーです。"
    fresh = judge.score(text)
    memory = make_memory("something else entirely", interpreted_content="私はそばアレルギーです")
    assert judge.score(text, related=[memory]).novelty < 0.2 * fresh.novelty


@pytest.mark.parametrize(
    "content",
    [
        "Optician on Thursday at 4.",  # a terse appointment note is the user's own
        "Hair appointment next Tuesday at 11am.",
        "金曜の15時に歯医者。",
        "I only drink decaf.",  # a standing diet
        "私の部署の部長は小林さんです。",  # work: the user's boss, hours, major, project
        "私の退勤は18時です。",
        "大学で心理学を専攻しています。",
        "自転車はブリヂストンのクロスバイクです。",  # a thing owned, its "my" dropped
        "User's maiden name is Carvalho.",  # the user's own name
        "I'm on the Billing team.",  # work: a team, a project led, an occupation
        "User is leading the Orion rollout project.",
        "im a warehouse picker at Dunmore Logistics",
        "I'm on the family Spotify plan.",  # a membership or plan paid for
        "ユーザーはコストコの会員。",
        "スペイン語を独学中です。",
        "Choir meets on the second Monday of the month.",  # an arrangement, no one named
        "The loft conversion budget is $9,500.",
        "ive switched to night shifts",  # first person, apostrophe dropped
    ],
)
def test_a_terse_standing_fact_clears_the_default_threshold(
    judge: HeuristicJudge, content: str
) -> None:
    # the default min_priority_score is 0.3: these would be archived the moment they are saved
    assert judge.score(content).priority_score >= 0.3, content


@pytest.mark.parametrize(
    "content",
    [
        "I drank a coffee.",
        "We eat out a lot.",
        "Walked past a dental clinic on the way.",
        "Water boils at 100 degrees.",  # the world's, however terse
        "The library opens at 9 on weekdays.",
    ],
)
def test_a_passing_remark_about_food_or_a_clinic_stays_low(
    judge: HeuristicJudge, content: str
) -> None:
    assert judge.score(content).priority_score < 0.3, content


@pytest.mark.parametrize(
    "content",
    [
        "Kenji likes tea.",  # an agent's consolidated note: someone named, their taste
        "Mira prefers window seats.",
        "Ana Ruiz works as a nurse.",
        "Tomás lives in Porto.",
        "Kenji goes climbing every Sunday.",
        "Kenji hates cilantro.",
        "I like tea.",  # a taste, not this moment's drink
        "User prefers tea to coffee in the afternoons.",
    ],
)
def test_a_named_persons_taste_home_or_work_clears_the_default_threshold(
    judge: HeuristicJudge, content: str
) -> None:
    # issue 26: compress wrote "Kenji likes tea." at 0.212 and the next save archived it
    assert judge.score(content).priority_score >= 0.3, content


@pytest.mark.parametrize(
    "content",
    [
        "Everyone likes tea.",  # capitalised, but no one in particular
        "Tokyo is in Japan.",
        "Python lists are zero-indexed.",
        "I hate the weather today.",  # today's mood, not a taste
        "I drank a coffee.",
    ],
)
def test_no_one_named_or_a_passing_mood_stays_low(judge: HeuristicJudge, content: str) -> None:
    assert judge.score(content).priority_score < 0.3, content


def test_a_named_person_is_not_worth_more_than_the_user_saying_it(judge: HeuristicJudge) -> None:
    named, own = judge.score("Kenji likes tea."), judge.score("I like tea.")
    assert 0.3 <= named.priority_score <= own.priority_score
