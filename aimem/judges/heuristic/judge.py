"""An offline judge: scores the four rubric components from cue vocabularies.

``HeuristicJudge`` is the fallback when no LLM is configured, so it must be free, fast
(well under a millisecond per item), deterministic and usable in English and Japanese.
It reads a memory the way the rubric asks a person to: what in it would hurt to lose
(emotional impact), whose life it is about (user relevance), whether it tells us
something new about the user (novelty) and whether it will change future help
(utility). Low-value chatter (greetings, thanks, weather, meals, trivia, passing
moods) is damped. Length, capitals and "!!!" are ignored on purpose: they appear in
every band of the evaluation data.

Each vocabulary is a broad list for one category of meaning (illnesses, drugs,
relations, life events...), not the words of particular examples, so the judge
generalises beyond the data it was tuned on.

Example:
    >>> judge = HeuristicJudge()
    >>> judge.score("I'm allergic to penicillin.").priority_score > judge.score(
    ...     "ok thanks").priority_score
    True
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from aimem.judges.heuristic import cues as cue_words
from aimem.judges.heuristic import cues_events
from aimem.judges.heuristic.statement import fills_slot, read, restate
from aimem.judges.heuristic.supersession import find_superseded
from aimem.models import Interpretation, Memory
from aimem.scoring import COMPONENT_MAX
from aimem.validation import MAX_SUPERSEDE_REASON_CHARS

__all__ = ["HeuristicJudge"]


# --- weights: what each cue is worth, per component ---------------------------------------

#: Every cue category by label; the weight tables below say what each is worth.
_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bereavement", cue_words.BEREAVEMENT),
    ("serious health", cue_words.SERIOUS_HEALTH),
    ("upheaval", cue_words.UPHEAVAL),
    ("milestone", cue_words.MILESTONE),
    ("strong feeling", cue_words.STRONG_FEELING),
    ("feeling", cue_words.MILD_FEELING),
    ("identity", cue_words.IDENTITY),
    ("allergy", cue_words.ALLERGY),
    ("medication", cue_words.MEDICATION),
    ("instruction", cue_words.INSTRUCTION_STRONG),
    ("soft instruction", cue_words.INSTRUCTION_SOFT),
    ("constraint", cue_words.CONSTRAINT),
    ("goal", cue_words.GOAL_STAKES),
    ("name", cue_words.NAME),
    ("preference", cue_words.PREFERENCE),
    ("routine", cue_words.ROUTINE_HOBBY),
    ("tools", cue_words.TOOLS),
    ("work/place", cue_words.WORK_PLACE),
    ("plan", cue_words.PLAN),
    ("family", cue_words.FAMILY),
    ("pet", cue_words.PETS),
    ("decision", cues_events.DECISION),
    ("change", cues_events.CHANGE),
)
#: What each cue is worth per component, as a fraction of COMPONENT_MAX: emotional impact,
#: utility, and a bonus to user relevance. The strongest cue counts in full (see _combine).
# fmt: off
_WEIGHTS: dict[str, tuple[float, float, float]] = {
    #                    emotion  utility  relevance
    "bereavement":       (1.0,    0.45,    0.1),
    "upheaval":          (0.85,   0.55,    0.1),
    "serious health":    (0.8,    0.8,     0.12),
    "milestone":         (0.7,    0.6,     0.08),
    "strong feeling":    (0.5,    0.0,     0.0),
    "identity":          (0.45,   0.6,     0.2),
    "family name":       (0.45,   0.85,    0.15),
    "allergy":           (0.35,   1.0,     0.12),
    "goal":              (0.35,   0.7,     0.0),
    "medication":        (0.3,    1.0,     0.12),
    "family":            (0.2,    0.35,    0.12),
    "instruction":       (0.15,   0.95,    0.0),
    "feeling":           (0.15,   0.0,     0.0),
    "pet":               (0.12,   0.35,    0.05),
    "constraint":        (0.0,    0.65,    0.0),
    "preference":        (0.0,    0.55,    0.06),
    "name":              (0.0,    0.5,     0.0),
    "tools":             (0.0,    0.5,     0.0),
    "routine":           (0.0,    0.45,    0.05),
    "work/place":        (0.0,    0.45,    0.05),
    "plan":              (0.0,    0.45,    0.0),
    "soft instruction":  (0.0,    0.4,     0.0),
    # what a turn of conversation tells about the speaker (cues_events)
    "dated event":       (0.3,    0.55,    0.1),
    "event":             (0.15,   0.35,    0.05),
    "disclosure":        (0.4,    0.1,     0.05),
    "change":            (0.25,   0.45,    0.05),
    "decision":          (0.1,    0.5,     0.05),
    "possession":        (0.0,    0.3,     0.05),
}
# fmt: on
#: Weighty cues, worth 60% of a component or more: they resist the chatter dampers and
#: add novelty (a diagnosis is the most important thing in any memory it appears in).
_WEIGHTY = frozenset(
    k for k, (emotion, utility, _) in _WEIGHTS.items() if max(emotion, utility) >= 0.6
)
#: Cues only ever noted about a person, so they imply the user without an "I"
#: ("Latex allergy, a bad one."); "can't fly" or "prefers shade" may be about anything.
_ABOUT_SOMEONE = _WEIGHTY - {"constraint"}
#: Cues of one's own arrangements: with no one named, the user's, as a dated note is.
_OWN_ARRANGEMENTS = frozenset({"routine", "plan"})

_MAX_ANALYSED = 2000


@dataclass(frozen=True, slots=True)
class _Reading:
    """Everything the component functions need, found in one pass over the text."""

    text: str  # normalised, original case
    cues: dict[str, float]  # label -> weight in (0, 1]
    personal: float  # 0 generic .. 1 plainly about the user
    damp: float  # 0 keep .. 1 worthless chatter
    specifics: int  # dates, numbers and proper names that make a memory particular


#: What each date, number or proper name adds to novelty and, in news, to utility (up to 3).
_SPECIFIC_NOVELTY = 0.1
_SPECIFIC_UTILITY = 0.15
#: How much a turn's reacting sentences (praise, questions back, thanks) damp what it tells.
_REACTING_DAMP = 0.5


def _read(content: str, user_context: str | None) -> _Reading:
    """Normalise the content once and find everything the four components need.

    A transcript's speaker label ("Caroline: ...") is set aside, and only the sentences
    that *tell* something are read for cues: the ones that only react to the other
    speaker (praise, thanks, questions back) are chatter, counted by their share of the
    text. Cues are looked for in the head of long content only: that keeps a pasted
    16,000-character document to a few milliseconds, and what matters is rarely only at
    the end of a memory.
    """
    text = _normalise(content[: 4 * _MAX_ANALYSED])[:_MAX_ANALYSED]
    body = _unlabelled(text)
    told, reacting = _told(body)
    low = told.lower()
    # "No.", "Yes, a lot.", "はい": an answer that means nothing without its question
    bare = bool(
        cues_events.BARE_ANSWER.match(body.lower()) or cues_events.BARE_ANSWER_JA.match(body)
    )
    cues = {} if bare else _find_cues(told, low)
    personal = _personal(low, cues, user_context)
    if personal < 1.0 and cue_words.USER_REF.match(text.lower()):  # "User: ..." as a label
        personal = 1.0
    elif personal < 0.75 and cue_words.NAMED_PERSON.match(told):  # someone in the user's world
        personal = 0.75
    damp = 1.0 if bare else _dampening(low, cues, personal)
    damp = 1.0 - (1.0 - damp) * (1.0 - _REACTING_DAMP * reacting)
    return _Reading(text, cues, personal, damp, specifics=_specifics(told, low))


def _told(body: str) -> tuple[str, float]:
    """The sentences of ``body`` that tell something, and the share of it that only reacts.

    A sentence reacts when it asks the other speaker something, praises, thanks or
    consoles them, or is about "you" with no "I" in it - unless it also states a
    first-person event, plan, change or feeling ("Thanks! I passed my exam."). A request
    tells only its first-person parts: its topic is the world's, however weighty ("Write
    an essay on the Cold War"), and asking damps nothing else the turn tells.
    """
    sentences = [s for s in cues_events.SENTENCE_END.split(body) if s and not s.isspace()]
    if len(sentences) <= 1 and not body:
        return "", 0.0
    kept: list[str] = []
    own: list[str] = []  # the user's things a request names, with no fact about them
    reacting = 0
    asked = False
    for sentence in sentences:
        low = sentence.lower()
        if asked and cues_events.REQUEST_TAIL.match(low) and not cues_events.speaks(sentence, low):
            continue  # "Keep it under 200 words.": more of the request
        asked = _asks(sentence, low)
        if asked:  # its first-person parts telling a fact, or naming the user's things
            for part, named, possessive in cues_events.own_parts(sentence):
                p = part.lower()
                fact = _find_cues(part, p) or _tells(p) or cues_events.particular(part, named)
                (kept if fact else own if possessive else []).append(part)
        elif _reacts(sentence, low):
            reacting += len(sentence)
        else:
            kept.append(sentence)
    total = sum(len(s) for s in sentences) or 1
    return " ".join(kept + own if kept else ()), reacting / total


def _asks(sentence: str, low: str) -> bool:
    """A request for help, or a question that is not about the listener ("What inspired you?")."""
    if cues_events.QUESTION.search(sentence):
        return not cues_events.SECOND_PERSON.search(low) or bool(cues_events.ASKS_YOU.search(low))
    if cues_events.I_FRAME.match(low):
        return True
    if cues_events.STANDING.search(low) or cue_words.INSTRUCTION_STRONG.search(low):
        return False  # "Always reply in English", "Never call before 10": standing wishes
    unquoted = cues_events.QUOTED.sub(" ", sentence).strip()
    return bool(cues_events.REQUEST_OPENING.match(low) or cues_events.JA_ASKS.search(unquoted))


def _reacts(sentence: str, low: str) -> bool:
    """True for a sentence that answers the other speaker rather than telling about oneself."""
    first = bool(cue_words.FIRST_PERSON.search(low) or cue_words.IMPLIED_SUBJECT_EN.match(low))
    if first and _tells(low):
        return False
    if cues_events.QUESTION.search(sentence):
        return True
    if cues_events.REACTION.search(low):  # "I love action films, so cool!" still says something
        rest = cues_events.REACTION.sub(" ", low)
        return not (cue_words.FIRST_PERSON.search(rest) and _content_words(rest) >= 3)
    return not first and bool(cues_events.SECOND_PERSON.search(low))


def _tells(low: str) -> bool:
    """A first-person event, plan, decision, change or disclosed feeling: news about the speaker."""
    return bool(
        cues_events.EVENT_PAST.search(low)
        or cues_events.DISCLOSURE.search(low)
        or cues_events.DECISION.search(low)
        or cues_events.CHANGE.search(low)
        or cue_words.PLAN.search(low)
    )


def _content_words(low: str) -> int:
    """Words left once stopwords and pronouns are set aside."""
    return sum(1 for t in cue_words.LATIN_TOKEN.findall(low) if t not in cue_words.STOPWORDS)


def _normalise(content: str) -> str:
    """NFKC, no control characters, single spaces: what every cue is matched against."""
    text = unicodedata.normalize("NFKC", content)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    return cue_words.SPACE.sub(" ", text).strip()


def _find_cues(text: str, low: str) -> dict[str, float]:
    """Label -> weight (1.0, or less when context weakens it) for every cue present."""
    cues = {label: 1.0 for label, rx in _CUES if rx.search(low)}
    if "milestone" in cues and (
        cue_words.OTHERS_EVENT.search(low)
        or ("pet" in cues and not cue_words.CORE_FAMILY.search(low))
    ):  # a friend's wedding or adopting a dog is news, not a life milestone
        cues["milestone"] = 0.4
    if "family" in cues and (
        cue_words.RELATION_NAME.search(text)
        or ("name" in cues and cue_words.CORE_FAMILY.search(low))
    ):
        cues["family name"] = 1.0
    if (  # "I went...", "my son started...", "Had an audition...": a personal event
        cues_events.EVENT_PAST.search(low)
        or cues_events.EVENT_IMPLIED.search(low)
        or cues_events.ONGOING.search(low)
        or cues_events.EVENT_JA.search(low)
    ):
        cues[
            "dated event" if cues_events.WHEN.search(low) or cue_words.DATE.search(low) else "event"
        ] = 1.0
    if cues_events.POSSESSION.search(low) or cues_events.OWNED_NAME.search(text):
        cues["possession"] = 1.0
    if cues_events.DISCLOSURE.search(low) or cues_events.DISCLOSURE_JA.search(low):
        cues["disclosure"] = 1.0
    return cues


def _personal(low: str, cues: dict[str, float], user_context: str | None) -> float:
    """How plainly the text is about the user (1.0) rather than the world (0.0)."""
    if cue_words.FIRST_PERSON.search(low) or cue_words.USER_REF.search(low):
        return 1.0
    if user_context and user_context.strip() and user_context.strip().lower() in low:
        return 1.0
    if cue_words.CJK_RUN.search(low) and (cue_words.IMPLIED_SUBJECT_JA.search(low) or cues):
        return 0.95
    if cue_words.IMPLIED_SUBJECT_EN.search(low):
        return 0.9
    # a note of one's own: dated ("Flight to Lisbon on May 2.", "車検は7月12日です。"), or a
    # routine or plan with no one named ("Book club meets on the first Thursday.")
    if (cues_events.DAY.search(low) or _OWN_ARRANGEMENTS & cues.keys()) and not (
        cue_words.WORLD_FACT.search(low) or cue_words.THIRD_PERSON.search(low)
    ):
        return 0.75
    if "family" in cues or "family name" in cues:
        return 0.8
    if _ABOUT_SOMEONE & cues.keys() and not cue_words.WORLD_FACT.search(low):
        return 0.75
    if cue_words.THIRD_PERSON.search(low):
        return 0.5
    return 0.0


def _substance(cues: dict[str, float]) -> float:
    """Weight of the weightiest cue: serious content resists the chatter dampers."""
    return max((w for label, w in cues.items() if label in _WEIGHTY), default=0.0)


#: Cues that make a turn news about the speaker, and the dampers such news outweighs.
_NEWS = frozenset({"dated event", "event", "change", "decision"})
_NEWS_OUTWEIGHS = frozenset({cue_words.GREETING, cue_words.TRANSIENT})


def _dampening(low: str, cues: dict[str, float], personal: float) -> float:
    """How much of the text is chatter: greetings, thanks, weather, meals, trivia, moods."""
    # "I usually skip breakfast", "I bike when it isn't raining" or "I like tea" describe a
    # habit or a taste (not today's), so the meal and weather words in them are not news.
    taste = "preference" in cues and not cue_words.TRANSIENT.search(low)
    habitual = taste or cue_words.HABITUAL.search(low) is not None
    # "Hi! I just started a new job" is news with a greeting, not a greeting.
    news = not _NEWS.isdisjoint(cues)
    chatter = 0.0
    for rx, weight in cue_words.DAMPERS:
        if rx.search(low):
            if habitual and rx in cue_words.MOMENTARY:
                weight *= 0.3
            if news and rx in _NEWS_OUTWEIGHS:
                weight *= 0.3
            chatter = 1.0 - (1.0 - chatter) * (1.0 - weight)
    if _is_contentless(low):
        chatter = 1.0
    if personal < 0.5 and cue_words.WORLD_FACT.search(low):
        chatter = max(chatter, 0.9)
    elif personal == 0.0 and not cues:
        chatter = max(chatter, 0.8)
    # A taste or a hobby holds off mild chatter; serious content holds off most of it.
    lasting = max((w * _WEIGHTS[label][1] for label, w in cues.items()), default=0.0)
    return chatter * (1.0 - 0.85 * max(_substance(cues), 0.6 * lasting))


def _is_contentless(low: str) -> bool:
    """True when nothing is left once greetings, thanks and filler are removed."""
    rest = cue_words.USER_REF.sub(" ", cue_words.FILLER.sub(" ", cue_words.GREETING.sub(" ", low)))
    latin = [t for t in cue_words.LATIN_TOKEN.findall(rest) if t not in cue_words.STOPWORDS]
    cjk = cue_words.JA_FUNCTION.sub("", "".join(cue_words.CJK_RUN.findall(rest)))
    return len(latin) <= 1 and len(cjk) <= 2


def _specifics(text: str, low: str) -> int:
    """Dates, times, numbers and proper names: details that make a memory particular.

    A name that only addresses the listener ("Thanks, Mel!") names no one new.
    """
    names = len(cue_words.PROPER_NOUN.findall(text)) - len(cues_events.VOCATIVE.findall(text))
    return (
        len(cue_words.DATE.findall(low))
        + max(names, 0)
        + len(cues_events.NUMBER.findall(low))
        + len(cues_events.WHEN.findall(low))
        + len(cues_events.TITLE.findall(text))
    )


def _combine(weights: Iterable[float]) -> float:
    """The strongest cue counts in full, the next ones a little: two hobbies are not a diagnosis."""
    ordered = sorted(weights, reverse=True)
    return min(1.0, sum(w * f for w, f in zip(ordered, (1.0, 0.3, 0.15, 0.1), strict=False)))


def _clip(fraction: float) -> float:
    """A fraction of a component's range -> a component value in [0, COMPONENT_MAX]."""
    return round(min(max(fraction, 0.0), 1.0) * COMPONENT_MAX, 4)


# --- the four components ------------------------------------------------------------------


def _emotional_impact(r: _Reading) -> float:
    """Grief, illness, upheaval and milestones weigh most; tastes barely register."""
    raw = _combine(w * _WEIGHTS[k][0] for k, w in r.cues.items())
    return _clip(raw * (1.0 - 0.9 * r.damp))


def _user_relevance(r: _Reading, user_context: str | None) -> float:
    """About the user, their family, identity or body; generic statements score near zero."""
    raw = 0.1 + 0.5 * r.personal
    raw += min(0.3, sum(w * _WEIGHTS[k][2] for k, w in r.cues.items()))
    if user_context and user_context.strip():
        raw += 0.1
    return _clip(raw * (1.0 - 0.7 * r.damp))


def _novelty(r: _Reading, related: Sequence[Memory]) -> float:
    """New, particular facts about the user; lowered by an existing similar memory."""
    lasting = max((w for k, w in r.cues.items() if _WEIGHTS[k][1]), default=0.0)
    raw = (
        0.15
        + 0.3 * r.personal
        + 0.15 * lasting
        + 0.25 * _substance(r.cues)
        + _SPECIFIC_NOVELTY * min(r.specifics, 3)
    )
    raw *= 1.0 - 0.85 * r.damp
    return _clip(raw * (1.0 - _max_similarity(r.text, related)))


def _utility(r: _Reading) -> float:
    """Will it change future help: safety facts, orders, names, plans, tastes, tools."""
    raw = _combine(w * _WEIGHTS[k][1] for k, w in r.cues.items())
    if not _NEWS.isdisjoint(r.cues):  # a named, dated or counted event is worth recalling
        raw += _SPECIFIC_UTILITY * min(r.specifics, 3)
    if r.personal < 0.5:  # "Python lists are zero-indexed" is not the user's setup
        raw *= 0.4
    return _clip(raw * (1.0 - 0.9 * r.damp))


# --- novelty against related memories -----------------------------------------------------


def _tokens(text: str) -> frozenset[str]:
    """Content words plus CJK character bigrams: comparable in both languages."""
    low = text.lower()
    words = {t for t in cue_words.LATIN_TOKEN.findall(low) if t not in cue_words.STOPWORDS}
    for run in cue_words.CJK_RUN.findall(low):
        words.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    return frozenset(words)


def _unlabelled(text: str) -> str:
    """``text`` without a transcript's speaker label: every turn of one speaker shares it."""
    return cues_events.SPEAKER_LABEL.sub("", text, count=1)


def _max_similarity(text: str, related: Sequence[Memory]) -> float:
    """Dice overlap with the most similar related memory: 0 new .. 1 a restatement."""
    mine = _tokens(_unlabelled(text)) if related else frozenset()
    best = 0.0
    for memory in related if mine else ():
        for other_text in (memory.content, memory.interpreted_content):
            other = _tokens(_unlabelled(_normalise(other_text)))
            if other:
                best = max(best, 2 * len(mine & other) / (len(mine) + len(other)))
    return 1.0 if best >= 0.9 else best


# --- standing facts and their updates ----------------------------------------------------

#: A standing fact about someone (where they live, their job, pet, car, a dated plan, a
#: dose): relevance and utility at least this share of a component, unless it is chatter.
_STANDING_FLOOR = 0.5
#: Cues of lasting facts about a person (as opposed to events and moods).
_LASTING = frozenset({"work/place", "routine", "preference", "tools", "pet", "family", "identity"})
#: An update says something new about a known fact: novelty at least this share.
_UPDATE_NOVELTY = 0.4


def _standing(
    r: _Reading, components: dict[str, float], replaced: Sequence[Memory]
) -> dict[str, float]:
    """Raise the floor of a standing fact, and let an update keep what it replaces.

    The current value of something worth remembering is worth at least what the stale
    value was: an update inherits the relevance and utility of the memories it
    supersedes (it would otherwise fall below the threshold its predecessor cleared),
    and is at least somewhat novel.
    """
    standing = fills_slot(r.text) or (r.personal >= 0.75 and bool(_LASTING & r.cues.keys()))
    floor = _clip(_STANDING_FLOOR * (1.0 - r.damp)) if standing else 0.0
    made = dict(components)
    for name in ("user_relevance", "utility"):
        inherited = [getattr(m, name) for m in replaced if getattr(m, name) is not None]
        made[name] = max(made[name], floor, *inherited)
    if replaced:
        made["novelty"] = max(made["novelty"], _clip(_UPDATE_NOVELTY))
    return made


#: How much chatter a change of the same slot of the same thing may read as and still count.
_CHANGE_DAMP = 0.75


def _current_first(
    r: _Reading, components: dict[str, float], related: Sequence[Memory]
) -> dict[str, float]:
    """A text changing a related memory's fact scores at least what that memory scored.

    "The MRI is now on June 3, not July 12" may be too unsure to retire "My MRI is on July
    12", but both compete for room and capacity forgets the lower (on a tie the older)
    first. A change names what it changes: the same speaker and subject, and the old
    memory's slot for the same thing, or its particular as the value replaced ("from $1,450").
    """
    mine = read(r.text) if r.damp < _CHANGE_DAMP else None
    made = dict(components)
    if mine is None or not mine.change:
        return made
    things = {(s.kind, p) for s in mine.slots for p in s.param if s.kind != "habit"}
    replaced = cues_events.particulars(" ".join(map("".join, cues_events.REPLACED.findall(r.text))))
    for m in related:
        old = _normalise(m.content)
        theirs = read(old)
        same_thing = things.intersection((s.kind, p) for s in theirs.slots for p in s.param)
        if (
            m.priority_score is not None
            and theirs.subject == mine.subject
            and len(
                {
                    *cues_events.SPEAKER_LABEL.findall(old),
                    *cues_events.SPEAKER_LABEL.findall(r.text),
                }
            )
            < 2
            # a terse change of the same slot of the same thing reads like chatter; a
            # replaced particular alone must not be chatter
            and (
                same_thing
                or (r.damp < 0.5 and replaced & cues_events.particulars(_unlabelled(old)))
            )
            and _max_similarity(r.text, [m]) < 0.9  # a repeat is no change
        ):
            made = {k: max(v, getattr(m, k) or 0.0) for k, v in made.items()}
    return made


# --- presentation -------------------------------------------------------------------------


def _rationale(r: _Reading) -> str:
    """One sentence naming the strongest cues, so a reader can see why it ranked there."""
    ranked = sorted(r.cues, key=lambda k: (-_WEIGHTS[k][0] - _WEIGHTS[k][1], k))
    parts = ["cues: " + ", ".join(ranked[:3]) if ranked else "no cue"]
    who = "about the user" if r.personal >= 0.75 else "third person" if r.personal else "generic"
    parts.append(f"relevance: {who}")
    if r.damp >= 0.3:
        parts.append(f"damped as chatter ({r.damp:.1f})")
    return "; ".join(parts) + "."


class HeuristicJudge:
    """A rule-based judge with English and Japanese cue vocabularies; offline, deterministic.

    The default judge when no LLM is configured: free and instant, good at ordering
    memories (serious > everyday > chatter) rather than at nuance.

    Example:
        >>> judge = HeuristicJudge()
        >>> i = judge.score("Never schedule meetings before 10am.")
        >>> i.prompt_version, i.utility > 0.2
        ('heuristic-v6', True)
    """

    source = "heuristic"
    model = "aimem-heuristic"
    #: 2: supersession, a restatement that names the slot, and event/plan signals;
    #: 3: supersession read clause by clause (statements inside requests, narrow slots);
    #: 4: terse standing facts (appointments, diet, work, things owned) clear the threshold,
    #: and a Japanese frame needs more than a shared subject; 5: a reported lead, a story or
    #: "when I was a kid" retires nothing, an end must name the thing it ends, and the
    #: rationale counts what a memory supersedes without quoting it; 6: the interpretation is
    #: the content told in the third person (slot words move to hidden recall terms), a
    #: request tells only its first-person parts, a bare answer ("No.") scores nothing, and
    #: a text naming what it changes scores at least what it changes.
    version = "6"

    async def interpret(
        self,
        content: str,
        *,
        user_context: str | None = None,
        related: Sequence[Memory] = (),
    ) -> Interpretation:
        """Satisfy the ``Judge`` protocol; the work is synchronous and instant."""
        return self.score(content, user_context=user_context, related=related)

    def score(
        self,
        content: str,
        *,
        user_context: str | None = None,
        related: Sequence[Memory] = (),
    ) -> Interpretation:
        """Score ``content``; ``related`` memories lower novelty when it repeats them.

        It also names the related memories ``content`` makes out of date (the same
        subject's same slot with a new value, or an explicit change or negation), and
        none when unsure: ``supersession.find_superseded`` holds the structural guard.
        """
        reading = _read(content, user_context)
        superseded = find_superseded(reading.text, [m.content for m in related])
        reasons = "; ".join(dict.fromkeys(reason for _, reason in superseded))
        components = _standing(
            reading,
            {
                "emotional_impact": _emotional_impact(reading),
                "user_relevance": _user_relevance(reading, user_context),
                "novelty": _novelty(reading, related),
                "utility": _utility(reading),
            },
            [related[i] for i, _ in superseded],
        )
        components = _current_first(reading, components, related)
        rationale = _rationale(reading)
        if superseded:
            # how many, never their words: a rationale must not outlive another memory's delete
            rationale = f"{rationale[:-1]}; supersedes {len(superseded)}."
        return Interpretation(
            interpreted_content=restate(reading.text),
            supersedes=tuple(i for i, _ in superseded),
            supersede_reason=reasons[:MAX_SUPERSEDE_REASON_CHARS],
            **components,
            rationale=rationale,
            model=self.model,
            prompt_version=f"heuristic-v{self.version}",
        )
