"""Offline supersession: which older memories a new one replaces, read clause by clause.

"We moved to Portland" retires "I live in Austin", but "My sister moved to Tucson", "I'm
also allergic to shellfish", "I was born in Austin" and "Write a story where I live in
Tokyo" retire nothing. Both texts are read as clauses (``clauses.py``): only a stated
clause of the new text can retire, wherever it sits (inside a request too), and only a
clause of the old text that states the same subject's same thing. The ways a fact
changes, each tied to what it changes:

* **the same frame with a new value** (``frames.py``): "Oolong is my usual order" ->
  "Genmaicha is my usual order";
* **an end tied to its thing**: "I sold the Corolla" ends "I drive a Toyota Corolla",
  "Pickle was put to sleep" ends "We have a terrier named Pickle"; "I'm not allergic to
  cats" ends no penicillin allergy, since the thing denied must be the thing held;
* **a narrow slot**: a move retires only the user's current residence (never where they
  were born, grew up or studied, nor a job or a shop in the old city); a new job, dose,
  schedule, possession, relationship status, commute or working hours the old one;
* **a changed count**: "the deposit has gone up to 900" after "the deposit is 800";
* **a plan settled**: "I've decided on Vienna for my master's" after "I'm planning to
  study in Berlin for my master's"; **a rename**; **a resumption** of a stopped habit.

Facts that add up (allergies, diagnoses, pets, children, languages, hobbies, likes)
never retire each other without an explicit end. An old memory is retired only when
every fact it holds is replaced: a story that mentions the old city stays. When unsure,
nothing: a stale memory the read path ranks lower is better than a true one lost.

Example:
    >>> find_superseded("We moved to Portland last month.", ["I live in Austin.", "I like tea."])
    ((0, 'new residence: portland replaces austin'),)
    >>> find_superseded("My sister just moved to Tucson.", ["I live in Denver."])
    ()
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from aimem.judges.heuristic import changes, slots
from aimem.judges.heuristic.clauses import Clause, clauses
from aimem.judges.heuristic.cues import rx
from aimem.judges.heuristic.ends import (
    about_user,
    ended,
    ended_thing,
    ends_previous,
    held_alike,
    shared_tokens,
    specific,
)
from aimem.judges.heuristic.frames import same_frame
from aimem.judges.heuristic.slot_changes import changed, first, held, slot_changed
from aimem.judges.heuristic.statement import content_tokens, read

_log = logging.getLogger(__name__)

__all__ = ["Verdict", "find_superseded", "read", "verdicts"]

_MAX_REASON = 200


@dataclass(frozen=True)
class Verdict:
    """Why a new text retires one related memory, and whether the rule is a precise one.

    Precise rules (an explicit change or end tied to the very thing, a move against a
    residence, a new dose) are the ones an LLM's answer may be amended with; the others
    (the same frame with no change word, a changed count) only the offline judge uses.
    """

    index: int
    reason: str
    precise: bool


def find_superseded(
    content: str, related: Sequence[str], *, precise: bool = False
) -> tuple[tuple[int, str], ...]:
    """Positions in ``related`` (0-based) that ``content`` supersedes, each with a short reason.

    ``precise`` keeps only the high-precision rules (see ``Verdict``). Empty when unsure.
    Never raises.
    """
    return tuple(
        (v.index, v.reason) for v in verdicts(content, related) if v.precise or not precise
    )


def verdicts(content: str, related: Sequence[str]) -> tuple[Verdict, ...]:
    """One ``Verdict`` per related memory that ``content`` supersedes. Never raises.

    A save asks twice (the judge, then the contested-fact reading) and a small model's
    amendment once more: the answer for the same texts is kept, not read again.
    """
    try:
        key = (content, tuple(related))
        hash(key)
    except TypeError:  # not texts: read them as they are (the rules skip what is no str)
        return _verdicts(content, related)
    return _remembered_verdicts(*key)


@lru_cache(maxsize=64)
def _remembered_verdicts(content: str, related: tuple[str, ...]) -> tuple[Verdict, ...]:
    return _verdicts(content, related)


def _verdicts(content: str, related: Sequence[str]) -> tuple[Verdict, ...]:
    try:
        speaker, said = _speaker(content if isinstance(content, str) else "")
        new = [c for c in clauses(said) if c.mood in ("stated", "planned", "asked")]
        if not any(
            c.mood == "stated" or _new_attribute_of(c) or _decides(c) or _order_given(c)
            for c in new
        ):
            return ()
        new += _joint(new)
        found = []
        for i, text in enumerate(related):
            other, old_said = _speaker(text if isinstance(text, str) else "")
            if other != speaker or not isinstance(text, str):
                continue
            if old_said.strip() == said.strip():
                continue
            verdict = _retires(new, clauses(old_said), transcript=speaker is not None)
            if verdict is not None:
                found.append(Verdict(i, verdict[0][:_MAX_REASON], verdict[1]))
        return tuple(found)
    except Exception:  # a rule's bug must not lose a save: keep both, and say so
        _log.warning("offline supersession failed; keeping both memories", exc_info=True)
        return ()


#: A transcript's speaker label ("Caroline: ..."); "User:" is the store's own framing.
_SPEAKER = re.compile(r"([A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30})?): +(?=\S)")


#: Labels that open a remark, not a speaker's turn: "Sorry: ...", "Correction: ...".
_NOT_A_SPEAKER = re.compile(
    r"(?:sorry|oops|correction|update|note|edit|fyi|btw|ps|reminder|news|ok|okay|so|also|"
    r"actually|heads up|quick update|quick note|small update|big news|good news|bad news)$",
    re.I,
)


def _speaker(text: str) -> tuple[str | None, str]:
    """``(speaker, what they said)`` for a labelled turn, else ``(None, text)``.

    In a transcript each turn's "I" is its speaker: two speakers' turns never share a
    subject, and the speaker's name is not a word the two texts have in common.
    """
    m = _SPEAKER.match(text.lstrip())
    if m is None or m.group(1).lower() in ("user", "original") or _NOT_A_SPEAKER.match(m.group(1)):
        return None, text
    return m.group(1).lower(), text.lstrip()[m.end() :]


def _joint(new: list[Clause]) -> list[Clause]:
    """The stated clauses read as one, for rules whose parts may sit in two clauses.

    "Took the sofa off the listing — I decided to keep it": the decision and its thing;
    "the hail killed one of the lemon trees, so we're down to three": number and noun.
    """
    stated = [c for c in new if c.mood == "stated"]
    if len(stated) < 2:
        return []
    text = " ".join(c.text for c in stated)
    first = stated[0]
    return [Clause(text, text.lower(), "joint", read(text), first.episode)]


# --- one memory --------------------------------------------------------------------------


def _retires(
    new: list[Clause], old: tuple[Clause, ...], *, transcript: bool
) -> tuple[str, bool] | None:
    """``(reason, precise)`` when the new clauses replace every fact the old memory holds."""
    facts = _held_facts(old)
    if not facts or len(facts) > 4:
        return None
    reasons: list[tuple[str, bool]] = []
    for o in facts:
        got = None
        for n in new:
            got = _replaces(n, o, transcript=transcript)
            if got is not None:
                break
        if got is None:
            return None
        reasons.append(got)
    return reasons[0][0], all(p for _, p in reasons)


def _held_facts(old: tuple[Clause, ...]) -> list[Clause]:
    """The clauses of an old memory that must all be replaced before it is retired.

    Its weighty facts (a slot, a name, a number: "I work at Dell", "born in Austin") when
    it has any; a long chatty turn's asides ("the kitchen is tiny") go with the memory they
    sit in, which stays restorable. A request that only mentions a fact in passing ("any
    dentists near my flat in Leeds?") holds that fact.
    """
    said = [c for c in old if c.mood not in ("asked", "unreal")]
    if not said:
        return [c for c in old if c.mood == "asked" and (_weighty(c) or _standing_order(c.low))]
    if len(said) == 1:
        return said
    facts = [c for c in said if c.fact]
    return (
        [c for c in facts if _weighty(c)]
        or facts
        or [c for c in said if specific(c.reading.tokens)]
    )


def _weighty(c: Clause) -> bool:
    """A clause holding a slot, a named value or a number, not only an opinion or an aside."""
    r = c.reading
    if any(s.kind not in ("plan", "preference") for s in r.slots):
        return True
    values = [t for t in r.entities if not t.startswith("#")]
    return bool(values) or bool(re.search(r"\d", c.low)) or len(specific(r.tokens)) >= 3


def _replaces(n: Clause, o: Clause, *, transcript: bool) -> tuple[str, bool] | None:
    """Whether clause ``n`` replaces the fact of clause ``o``: ``(reason, precise)`` or None."""
    if n.mood == "asked":
        return _new_attribute(n, o) or _instruction_revised(n, o)
    if n.mood == "joint":
        if o.mood in ("planned", "unsettled"):
            return _plan_settled(n, o)
        return None if transcript or not _same_subject(n, o) else _count_changed(n, o)
    if n.mood == "planned":
        return _plan_revised(n, o)
    if o.mood == "unreal" or _adds(n):
        return None
    if o.mood in ("planned", "unsettled"):
        return _plan_settled(n, o)
    same = _same_subject(n, o)
    if not same:
        return _entity_ended(n, o) or _bereaved(n, o)
    if o.mood == "historic":
        return None  # what used to hold is history: it stays true whatever happens next
    rules = (
        _resumed,
        ended,
        _switched,
        slot_changed,
        _new_attribute,
        _frame_changed,
        _count_changed,
        _renamed,
        _instruction_revised,
    )
    for rule in rules:
        if transcript and rule in (_frame_changed, _count_changed):
            continue
        got = rule(n, o)
        if got is not None:
            return got
    return None


def _adds(n: Clause) -> bool:
    """An added fact on the same topic ("also", "another", も): it replaces nothing."""
    return bool(changes.ADDED.search(n.low))


#: "Genmaicha is my usual order": the user's fact, though a name comes first.
_VALUE_FIRST = re.compile(r"^[\w'-]+(?: [\w'-]+){0,2} (?:is|are) (?:my|our|the user's|user's)\b")


def _subject(c: Clause) -> str:
    if c.subject.startswith("name:") and _VALUE_FIRST.match(c.low):
        return "user"
    return c.subject


def _same_subject(n: Clause, o: Clause) -> bool:
    if _subject(n) == _subject(o):
        return True
    partners = {f"other:{p}" for p in slots.PARTNERS}
    return {n.subject, o.subject} <= {"user"} | partners and bool(
        n.reading.slot("relationship") and o.reading.slot("relationship")
    )


def _resumed(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A stop undone: "I'm running again" after "I've stopped running"."""
    if not changes.RESUME.search(n.low):
        return None
    if held(o):
        return None
    shared = shared_tokens(n.reading.tokens, o.reading.tokens)
    return (f"resumed: {', '.join(sorted(shared)[:2]).lstrip('#')}", True) if shared else None


def _switched(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A substitution: "I switched from Android to an iPhone" replaces what named Android."""
    if not held(o) or not about_user(o) or not held_alike(n, o):
        return None
    for m in [*changes.FROM_VALUE.finditer(n.low), *changes.FROM_VALUE_JA.finditer(n.low)]:
        shared = specific(content_tokens(m.group("v")) & o.reading.tokens)
        if shared:
            return f"replaced: {first(shared).lstrip('#')}", True
    changed_attr = _attribute_changed(n, o)
    if changed_attr:
        return f"changed: {changed_attr}", True
    for m in changes.NOT_VALUE.finditer(n.low):
        value = content_tokens(next(g for g in m.groups() if g).rstrip(".'"))
        shared = value & o.reading.tokens  # a weekday counts here: "Thursday, not Friday"
        # the value set aside, and the frame too: "the dentist is Tuesday, not Monday" after
        # "my dentist appointment is on Monday"; "I like tea, not coffee" is no correction of
        # "I drink coffee every morning"
        anchor = shared_tokens(n.reading.tokens - value, o.reading.tokens - value)
        if shared and anchor:
            return f"corrected: {first(shared).lstrip('#')}", True
    return None


_USER_OWNERS = frozenset({"私", "僕", "俺", "うち", "ユーザー", "自分", "家"})


def _attribute_changed(n: Clause, o: Clause) -> str:
    """The attribute the new clause changes and the old one states ("surname", "名字"), or "".

    Another owner's attribute is another thing: "家のプリンター" is not "会社のプリンター".
    """
    m = changes.ATTRIBUTE_CHANGED.search(n.low)
    if not m:
        return ""
    attr = m.group("en") or m.group("ja")
    if m.group("en"):
        return attr if re.search(rf"\b{re.escape(attr)}\b (?:is|are|was)\b", o.low) else ""
    if re.search(slots.OTHER_PERSON_JA, attr) or not re.search(rf"{attr}(?:は|が|:)", o.low):
        return ""
    owner_new = re.search(rf"([^\s、。はがを]{{1,4}})の{attr}", n.low)
    owner_old = re.search(rf"([^\s、。はがを]{{1,4}})の{attr}", o.low)
    if owner_new and owner_old and owner_new.group(1) != owner_old.group(1):
        return ""
    lone = owner_new or owner_old
    if lone and not (owner_new and owner_old) and lone.group(1) not in _USER_OWNERS:
        return ""  # "会社のプリンター" against a bare "プリンター": not known to be one
    return attr


#: Words around a standing order that do not change it: "please", "could you", "from now on".
_ORDER_FRAME = re.compile(
    r"^(?:(?:please|kindly|and|so|could you|can you|would you|will you|from now on|going forward|"
    r"in future|from today)[,\s]+)+|(?:[,\s]+(?:please|from now on|going forward|in future|"
    r"instead|now|thanks|thank you))+[.!?]*$|[.!?]+$"
)
_ORDER_VERBS = {"answer": "reply", "respond": "reply", "write": "reply", "talk": "reply"}
_ORDER_HEADS = frozenset("call reply address refer use format keep send give show".split())
_FROM_NOW_ON = rx(r"from now on|going forward|in future|from today|instead|now|anymore|any more")


def _standing_order(low: str) -> tuple[str, ...]:
    """A standing order's words without its politeness ("call me liz"), or () if it is none."""
    words = _ORDER_FRAME.sub("", _ORDER_FRAME.sub("", low.strip())).split()
    words = [_ORDER_VERBS.get(w, w) for w in words]
    if words[:3] == ["reply", "to", "me"]:
        words = ["reply", *words[3:]]  # "reply to me in English" is "reply in English"
    return tuple(words) if words and words[0] in _ORDER_HEADS else ()


def _order_given(c: Clause) -> bool:
    """Whether a clause gives a standing order from now on ("please call me Liz from now on")."""
    return bool(_FROM_NOW_ON.search(c.low) and _standing_order(c.low))


def _instruction_revised(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A standing order given anew: "Please call me Liz from now on" after "Call me Elizabeth".

    Both are orders with the same verb and frame and one new value at the end, and the new
    one says it holds from now on: a one-off "could you answer in Spanish?" changes nothing.
    """
    if not _FROM_NOW_ON.search(n.low):
        return None
    a, b = _standing_order(o.low), _standing_order(n.low)
    if not a or not b or a[0] != b[0]:
        return None
    k = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    if k < 2 or k == len(a) or k == len(b) or len(a) - k > 3 or len(b) - k > 3:
        return None
    return f"order changed: {' '.join(b[k:])} replaces {' '.join(a[k:])}", True


def _entity_ended(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A named subject ended: "Pickle died" ends "We have a terrier named Pickle"."""
    if not n.subject.startswith("name:") or o.subject != "user" or not about_user(o):
        return None
    name = n.subject.split(":", 1)[1]
    if not re.search(rf"\b{re.escape(name)}\b", o.low):
        return None
    if (
        changes.END_EVENT.search(n.low)
        or changes.END_ACT.search(n.low)
        or changes.RENAMED.search(n.low)
    ):
        return f"{name}: ended or changed", True
    return None


#: A death: the relative's routines with the user end with them.
_DIED = rx(
    r"died|passed away|passed on|lost (?:her|his|their) (?:battle|fight)", ja="亡くな|他界|死ん"
)


def _bereaved(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A death ends routines: "My grandmother passed away" ends "I call her every Sunday".

    Only a routine with that person (a habit slot) ends; a memory of them stays.
    """
    if not n.subject.startswith("other:") or o.subject != "user" or not _DIED.search(n.low):
        return None
    who = n.subject.split(":", 1)[1]
    if not o.reading.slot("habit") or not re.search(
        rf"\b{re.escape(who)}\b|{re.escape(who)}", o.low
    ):
        return None
    return f"{who} died: routine ended", True


#: "my new email", "the user's new prescription": the attribute named is replaced.
_NEW_ATTRIBUTE = re.compile(
    r"\b(?:my|our|the user's|user's|his|her|their) (?:brand )?new ([a-z][\w-]*(?: [a-z][\w-]*)?)"
)
#: Heads whose "new" one adds rather than replaces (a new friend, a new puppy).
_ADDS_UP = rx(
    r"friend|friends|hobby|hobbies|baby|kid|son|daughter|puppy|kitten|dog|cat|pet|fish|"
    r"colleague|coworker|neighbou?r|tattoo|plant|project|book|game|favou?rite|toy|song|"
    r"recipe|show|series|client|customer|student"
)


def _new_attribute_of(n: Clause) -> frozenset[str]:
    """The stems of the attribute a clause calls new ("my new email" -> {"email"})."""
    m = _NEW_ATTRIBUTE.search(n.low)
    if m is None or _ADDS_UP.search(m.group(1)):
        return frozenset()
    people = changes.PERSON_WORDS & set(m.group(1).split())
    if people and not changes.SINGLE_VALUED.search(" ".join(people)):
        return frozenset()  # a new friend adds one; a new manager or landlord replaces one
    return specific(content_tokens(m.group(1)))


def _new_attribute(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A new attribute: "Please use my new email, jo@x.co" retires "My email is jo@gmail.com".

    The old clause must hold that attribute with a value (a number, an address, a name),
    and state it, not end or deny it.
    """
    head = _new_attribute_of(n)
    if not head or not held(o) or not about_user(o) or o.episode:
        return None
    shared = head & o.reading.tokens
    if not shared or not (re.search(r"\d|@", o.low) or specific(o.reading.entities) - head):
        return None
    return f"new {first(shared).lstrip('#')}", False


#: A date or time in a differing span ("on 14 march", "monday at 9", "3rd", 水曜日).
_WHEN = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|"
    r"oct|nov|dec)[a-z]*\b|\b\d{1,2}(?:st|nd|rd|th)\b|[月火水木金土日]曜|\d+日"
)
#: An event named indefinitely: "I have a dentist appointment", "another session".
_INDEFINITE = re.compile(r"\b(?:a|an|another|one more|some)\b")
#: A correction that names the old value wrong: "actually it's Tuesday, not Monday".
_CORRECTED = re.compile(
    r"\bactually\b|\bnot (?:on )?(?:the )?\w+day\b|\bsorry\b|じゃなくて|ではなく"
)


def _frame_changed(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """The same sentence with a new value (``frames.same_frame``)."""
    if n.episode or o.episode:
        return None
    moved_on = changed(n) or bool(_CORRECTED.search(n.low))
    said = same_frame(o.text, n.text, changed=moved_on)
    if not said:
        return None
    single = bool(changes.SINGLE_VALUED.search(o.low))
    if not moved_on and _WHEN.search(said) and _INDEFINITE.search(o.low + " " + n.low):
        return None  # "a dentist appointment on Friday", one on Monday: two appointments
    return f"same fact, new value: {said}", moved_on or single


_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
}
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b|\b(?:" + "|".join(_NUMBER_WORDS) + r")\b")


def _numbers(low: str) -> dict[str, set[str]]:
    """Content stems near each number of a clause: {stem: {numbers}}."""
    words = low.replace(",", "").split()
    out: dict[str, set[str]] = {}
    for i, w in enumerate(words):
        m = _NUMBER.fullmatch(w.strip(".!?;:()$£€¥%"))
        if not m:
            continue
        value = _NUMBER_WORDS.get(m.group(), m.group()) + ("%" if "%" in w else "")
        near = " ".join(words[max(0, i - 6) : i] + words[i + 1 : i + 4])
        for t in specific(content_tokens(near)):
            out.setdefault(t, set()).add(value)
    return out


def _ja_counts(low: str) -> set[str]:
    """The counted numbers of a Japanese clause, without a rate's "per day" (一日三回 -> 三)."""
    low = re.sub(r"(?:一|1|１)(?:日|週間?|か月|ヶ月)(?=[に0-9一二三四五六七八九十])", "", low)
    return set(re.findall(r"[0-9一二三四五六七八九十]+(?=[匹頭羽台人個回錠杯本缶万円時日])", low))


def _count_changed(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A changed number of the same thing: "up to 5 runs a week" after "I run 3 times a week"."""
    if n.ja != o.ja or not changed(n) or n.episode:
        return None
    if n.ja:
        nn, on = _ja_counts(n.low), _ja_counts(o.low)
        shared = specific(n.reading.tokens & o.reading.tokens)
        if re.search(r"の[一1１][匹頭羽台人個つ](?:は|が)", o.low):
            return None  # "犬の一匹は柴犬": one of them, not how many
        if nn and on and not nn & on and shared:
            return f"count changed: {first(shared)}", False
        return None
    new, old = _numbers(n.low), _numbers(o.low)
    for t in sorted(set(new) & set(old)):
        if {v.endswith("%") for v in new[t]} != {v.endswith("%") for v in old[t]}:
            continue  # a share and a count are different quantities
        if not new[t] & old[t]:
            return f"count changed: {t.lstrip('#')} {first(old[t])} -> {first(new[t])}", False
    return None


def _renamed(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A new name for the thing the old clause names ("the project is now called Falcon")."""
    if not changes.RENAMED.search(n.low) or not _NAMES.search(o.low):
        return None
    shared = specific(n.reading.entities & o.reading.entities) or specific(
        n.reading.tokens & o.reading.tokens
    ) - {"name", "call", "surnam", "usernam", "名前"}
    return (f"renamed: {first(shared)}", True) if shared else None


#: An old clause that names something ("is called", "named", 名前は).
_NAMES = rx(
    r"called|named|name|names|titled|title|known as|goes by|go by",
    ja="名前|呼|という|って名|名字|苗字",
)


#: A time that sets an event apart from the plan at hand: another year, "years ago", 前回.
_OTHER_OCCASION = rx(
    r"\b(?:in|back in|during|since) (?:19|20)\d\d\b|\byears? ago\b|\blast time\b|\bback then\b|"
    r"\bthe (?:first|previous|last) time\b|\bwhen i was (?:a kid|young|little|at school)\b",
    ja="[0-9０-９]{4}年|何年も前|数年前|前回|あの時|子供の頃|子どもの頃",
)


def _decides(n: Clause) -> bool:
    return bool(changes.DECIDED.search(n.low))


def _plan_settled(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A decision, booking or cancellation of the plan the old clause holds."""
    if (
        n.mood not in ("stated", "joint")
        or not _same_subject(n, o)
        or changes.HEARSAY.search(o.low)
    ):
        return None
    if ends_previous(n):
        return None  # "the previous trip was cancelled" settles no plan at hand
    shared = specific(n.reading.tokens & o.reading.tokens)
    if not (
        _decides(n)
        or changes.END_ACT.search(n.low)
        or changes.END_EVENT.search(n.low)
        or _PLAN_MOVED.search(n.low)
    ):
        if len(shared) >= 2 and _DONE.search(n.low) and not changes.PLANNED.search(n.low):
            return f"plan done: {', '.join(sorted(shared)[:2]).lstrip('#')}", False
        return None
    thing = ended_thing(n)
    if thing:  # "祖母の家の猫が亡くなって" ends the cat, not the plan to visit 祖母の家
        shared = shared_tokens(thing, o.reading.tokens) or (shared if _decides(n) else frozenset())
    if not shared or (_OTHER_OCCASION.search(n.low) and not _OTHER_OCCASION.search(o.low)):
        return None  # "the holiday we booked back in 2018 got cancelled" is not this year's trip
    return f"plan settled: {', '.join(sorted(shared)[:2]).lstrip('#')}", True


#: A plan carried out: a past verb ("got married", "we moved in", 行ってきた).
_DONE = re.compile(
    r"\b(?:got|went|did|had|finished|completed|moved|arrived|passed|bought|signed|started|"
    r"began|opened|launched|shipped|sent|submitted|took|made)\b|\b\w+ed\b"
    r"|(?:しました|ました|てきた|てきました|終わった|終わりました)"
)


#: A plan moved rather than decided: "we moved the trip to Greece instead".
_PLAN_MOVED = rx(
    r"moved|changed|switched|rescheduled|postponed|pushed back|brought forward|swapped|"
    r"instead|delayed|put off",
    ja="変更|延期|前倒し|変えた|変えま|ずらし",
)


def _plan_revised(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """A plan changed into another plan: "... to Greece instead" after "... to Spain"."""
    if o.mood != "planned" or not _same_subject(n, o) or not changed(n):
        return None
    said = same_frame(o.text, n.text, changed=True)
    return (f"plan changed: {said}", False) if said else None
