"""The slot rules of offline supersession: one value at a time for each kind of slot.

A move retires the current residence only (``slots.RESIDENCE_EXCLUDE`` keeps birthplace,
childhood and family homes apart); a new job, dose, schedule, possession, relationship
status, commute or working hours retires the old one of the same kind and parameter. Pets
add up: only a death or a rehoming ends one. ``supersession.py`` calls ``slot_changed``
for each pair of stated clauses of the same subject.
"""

from __future__ import annotations

import re

from aimem.judges.heuristic import changes, slots
from aimem.judges.heuristic.clauses import Clause
from aimem.judges.heuristic.cues import rx
from aimem.judges.heuristic.statement import Slot, content_tokens

__all__ = ["changed", "first", "held", "other_name", "slot_changed"]


def held(o: Clause) -> bool:
    """Whether the old clause asserts its thing (not already ended, denied or heard)."""
    return not (
        changes.NEGATION.search(o.low)
        or changes.END_ACT.search(o.low)
        or changes.END_EVENT.search(o.low)
        or changes.HEARSAY.search(o.low)
    )


_NOT_NAMES = slots.TIME_WORDS | {"i", "i'm", "i've", "i'd", "i'll"}


def _names(text: str) -> frozenset[str]:
    """Stems of the names in ``text``: capitalised words past a sentence's first, not dates."""
    found: set[str] = set()
    for m in re.finditer(r"(?<![\w'])([A-Z][\w'&-]*)", text):
        before = text[: m.start()].rstrip()
        word = m.group(1).lower()
        if not before or before[-1] in '.!?:;"“「(' or word in _NOT_NAMES:
            continue
        found |= content_tokens(word)
    return frozenset(found)


def other_name(new: str, old: str) -> bool:
    """Whether the new text names only things the old one does not, while the old names its own.

    "I broke up with Ken" ends nothing about Taro.
    """
    named = _names(new)
    old_names = _names(old)
    return bool(named and old_names) and not (named & (old_names | content_tokens(old.lower())))


#: Slots whose value is a place or an employer: a denied one ("not at Google") is no value.
_PLACES = frozenset({"residence", "job"})


def slot_changed(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """The same slot (and parameter) with a new value, or a change the slot names."""
    for s in n.reading.slots:
        if s.kind in _PLACES and s.value and changes.NEGATION.search(n.low) and not s.changed:
            continue  # "I don't work at Google anymore": a value denied is no new value
        t = o.reading.slot(s.kind)
        if t is None:
            continue
        got = _SLOT_RULES.get(s.kind, _no_rule)(s, t, n, o)
        if got is not None:
            return got
    return None


def _no_rule(s: Slot, t: Slot, n: Clause, o: Clause) -> tuple[str, bool] | None:
    return None


def _differs(s: Slot, t: Slot) -> bool:
    return bool(s.value and t.value and not (s.value & t.value))


def changed(n: Clause) -> bool:
    """Whether the clause says a value moved on ("now", "switched", "instead of")."""
    return bool(changes.CHANGED.search(n.low) or changes.FROM_VALUE.search(n.low))


def _residence(s: Slot, t: Slot, n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A move retires the current residence only (``slots.RESIDENCE_EXCLUDE`` keeps the rest)."""
    if s.changed and t.value and not (s.value and s.value <= t.value):
        return _full_if_both_labelled(
            f"new residence: {s.label} replaces {t.label}", "residence changed", s, t
        ), True
    if _differs(s, t):
        return f"new residence: {s.label} replaces {t.label}", changed(n)
    return None


def _job(s: Slot, t: Slot, n: Clause, o: Clause) -> tuple[str, bool] | None:
    if not (t.value or t.label):
        return None  # "my role involves spreadsheets" names no job a promotion replaces
    if s.changed and t.changed and not s.value:
        return None  # "moved for the new job" after "I start the new job on the 5th": one job
    if s.value and t.value and not s.value & t.value and _ends(n) and not changed(n):
        return None  # "I quit my job at Google" ends no job at Sony
    if s.changed and not (s.value and s.value <= t.value):
        return _full_if_both_labelled(
            f"job changed: {s.label} replaces {t.label}", "job changed", s, t
        ), True
    if _differs(s, t) and changed(n):
        return f"job changed: {s.label} replaces {t.label}", False
    return None


def _ends(n: Clause) -> bool:
    low = n.low
    return bool(
        changes.END_ACT.search(low)
        or changes.END_EVENT.search(low)
        or changes.NO_LONGER.search(low)
    )


def _valued_slot(s: Slot, t: Slot, n: Clause, o: Clause) -> tuple[str, bool] | None:
    """Commute and working hours: one value at a time."""
    if _differs(s, t):
        return f"{s.kind} changed: {s.label} replaces {t.label}", changed(n)
    return None


def _relationship(s: Slot, t: Slot, n: Clause, o: Clause) -> tuple[str, bool] | None:
    if not _STATUS_NEWS.search(n.low) or not (s.value and t.value) or s.value == t.value:
        return None
    if other_name(n.text, o.text):
        return None  # "I broke up with Ken" says nothing of "My boyfriend is Taro"
    return f"relationship changed: {s.label} replaces {t.label}", True


#: Words that state a relationship's status, not just name a partner or a wedding.
_STATUS_NEWS = rx(
    r"broke up|break up|split up|divorc\w*|separated|single|dating|seeing|engaged|married|"
    r"got together|going out|in a relationship|moved in together|made up|passed away|died",
    ja="別れ|離婚|付き合|婚約|結婚|入籍|独身|交際|仲直り|亡くな",
)


def _schedule(s: Slot, t: Slot, n: Clause, o: Clause) -> tuple[str, bool] | None:
    """The same (definite) event at another time: "the board meeting moved to Monday"."""
    events = {p for p in s.param if not p.startswith("q:")}
    if not events & t.param:
        return None
    quals_n = {p for p in s.param if p.startswith("q:")}
    quals_o = {p for p in t.param if p.startswith("q:")}
    if quals_n and quals_o and not quals_n & quals_o:
        return None
    if re.search(
        r"\b(?:an?|another|other)\b(?:\s+\w+){0,2}\s+(?:"
        + "|".join(re.escape(e) for e in events)
        + r")",
        o.low + " " + n.low,
    ) and not changed(n):
        return None  # "a dentist appointment on Friday" and one on Monday: two appointments
    if not any(slots.SPECIFIC_TIME.search(v) for v in t.value) or o.reading.slot("preference"):
        return None
    if _PAST_EVENT.search(o.low) and not _ROUTINE.search(o.low):
        return None  # "the gym fee went up in March" dates a change, not an appointment
    if _differs(s, t) or (s.value - t.value and t.value - s.value):
        return f"rescheduled: {s.label} replaces {t.label}", changed(n)
    return None


#: Words for medicine in general: two clauses sharing only these name no drug in common.
_ANY_DRUG = frozenset(
    "薬 お薬 medication medications meds medicine medicines pills tablets prescription".split()
)


#: A past event's verb before its time: "went up in March", "was born on".
_PAST_EVENT = re.compile(
    r"\b(?:went|was|were|had|did|got|came|began|started|ended|\w{3,}ed)\s+(?:\w+\s+)?(?:in|on|at|last)\b"
)

_ROUTINE = re.compile(
    r"\b(?:every|usually|always|weekly|daily|on (?:mon|tues|wednes|thurs|fri|satur|sun)days)\b"
)


def _dose(s: Slot, t: Slot, n: Clause, o: Clause) -> tuple[str, bool] | None:
    drugs = (s.param & t.param) - _ANY_DRUG
    if not drugs:
        return None  # "薬は朝食の後に飲む" names no drug the new dose changes
    drug = sorted(drugs)[0]
    if (changes.END_ACT.search(n.low) or changes.NO_LONGER.search(n.low)) and held(o):
        return f"no longer takes {drug}", True
    if _differs(s, t) or (changed(n) and s.value != t.value):
        return f"new dose of {drug}: {s.label or 'changed'}", True
    return None


def _possession(s: Slot, t: Slot, n: Clause, o: Clause) -> tuple[str, bool] | None:
    """The same kind of thing, ended or replaced: "I sold the car", "my new laptop is ..."."""
    if not s.param & t.param:
        return None
    what = sorted(s.param)[0]
    if changes.PREVIOUS.search(n.low):
        return None  # "my old car got stolen": not the one the user has now
    if (changes.END_ACT.search(n.low) or changes.END_EVENT.search(n.low)) and held(o):
        return f"{what} ended", True
    if _differs(s, t) and changed(n):
        return f"{what}: {s.label} replaces {t.label}", False
    return None


def _pet(s: Slot, t: Slot, n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A pet's death or rehoming; pets otherwise add up (a second dog is not a new dog)."""
    if not s.param & t.param or not held(o):
        return None
    if not (changes.END_EVENT.search(n.low) or changes.END_ACT.search(n.low)):
        return None
    named = s.value & t.value
    if named:
        return f"pet ({first(s.param)}): {first(named)} ended", True
    if slots.COUNT.search(n.low) or re.search(r"\b(?:one of|both)\b", n.low):
        return None  # one of several: the count rule decides
    return f"pet ({first(s.param)}) ended", False


_SLOT_RULES = {
    "residence": _residence,
    "job": _job,
    "commute": _valued_slot,
    "work hours": _valued_slot,
    "relationship": _relationship,
    "schedule": _schedule,
    "dose": _dose,
    "possession": _possession,
    "pet": _pet,
}


def first(values: frozenset[str] | set[str]) -> str:
    """The alphabetically first value: reasons stay the same from run to run."""
    return sorted(values)[0] if values else ""


def _full_if_both_labelled(full: str, short: str, s: Slot, t: Slot) -> str:
    """The full reason when both slots have labels to name, else the short one."""
    return full if s.label and t.label else short or full
