"""The end of a thing: which old fact a "quit", "sold", "died" or "no longer" ends.

An end is tied to the very thing: "I sold the Corolla" ends "I drive a Toyota Corolla",
"I'm not allergic to cats" ends no penicillin allergy (the thing denied must be the thing
held), "I gave away my old records" ends no record shop job (a word that only modifies another
noun is not the thing), and a sale ends a thing owned, never a game played. Also the
token helpers the other supersession rules share.
"""

from __future__ import annotations

import re

from aimem.judges.heuristic import changes, slots
from aimem.judges.heuristic.clauses import Clause
from aimem.judges.heuristic.frames import negated_only
from aimem.judges.heuristic.slot_changes import first, held, other_name
from aimem.judges.heuristic.statement import content_tokens

__all__ = [
    "about_user",
    "ended",
    "ended_thing",
    "ends_previous",
    "held_alike",
    "names_held_value",
    "shared_tokens",
    "specific",
]


def about_user(o: Clause) -> bool:
    """Whether the clause is the user's own fact, said as such ("I", "my", "User's")."""
    return o.subject == "user" and bool(
        slots.USER_MENTION.search(o.low) or o.ja or o.low.startswith(("user", "the user"))
    )


#: The user named as a subject: every memory of a store shares it, so it shows nothing.
_SUBJECT_WORDS = frozenset({"user", "ユーザー", "ユーザ", "私", "僕", "俺", "自分"})


#: Single kanji that are times or verb stems ("冬", "寝"), not things: never shared alone.
_WEAK_KANJI = slots.GENERIC_JA | frozenset(
    "冬夏春秋朝夜昼晩寝食飲行来見聞読書買売住働起着使作乗持入出言思会休止"
)


def specific(tokens: frozenset[str]) -> frozenset[str]:
    """Tokens specific enough to show two clauses are about the same thing."""
    return frozenset(
        t
        for t in tokens
        if t not in slots.TIME_STEMS
        and t not in slots.WEAK
        and not t.isdigit()
        and t not in ("#sleep", "#move", "#job")
        and t not in _SUBJECT_WORDS
        and (len(t) > 1 or (slots.KANJI.fullmatch(t) is not None and t not in _WEAK_KANJI))
    )


def shared_tokens(a: frozenset[str], b: frozenset[str]) -> frozenset[str]:
    """Specific tokens in common, counting long words of one stem-like prefix as one.

    The stemmer leaves some derived forms apart ("anaemia", "anaemic").
    """
    long_b = [t for t in b if len(t) >= 5 and t.isalpha()]
    near = frozenset(
        t
        for t in a
        if len(t) >= 5
        and t.isalpha()
        and t[:5] not in slots.WEAK_PREFIXES
        and any(u.startswith(t) or t.startswith(u) or u[:6] == t[:6] for u in long_b)
    )
    return specific((a & b) | near)


def ended(n: Clause, o: Clause) -> tuple[str, bool] | None:
    """An end, denial or correction of the very thing the old clause holds."""
    if changes.INSTRUCTION.search(n.low) or changes.TEMPORARY.search(n.low) or not held(o):
        return None
    if not about_user(o) and not n.subject.startswith("other:"):
        return None
    if n.reading.slot("pet") and not o.reading.slot("pet"):
        return None  # a pet's death ends the pet, not "goldfish scooping at the fair"
    what = ended_thing(n)
    if what is None:
        if negated_only(o.low, n.low):
            return f"now denied: {_label(o)}", True
        return None
    if other_name(_end_span(n), o.text):
        return None  # "I don't work at Google anymore" ends no job at Sony
    shared = shared_tokens(what, o.reading.tokens)
    if not shared:
        slot = _ended_slot(n, o)
        return (f"{slot} ended", True) if slot else None
    shared = frozenset(
        t
        for t in shared
        if not (_modifier_only(t, o.text) and not _modifier_only(t, n.text))
        and not _other_kind(t, n.text, o.text)
    )
    place = n.reading.slot("residence") is not None
    shared = frozenset(t for t in shared if _same_sense(t, n.text, o.text, place=place))
    if not shared - _PREDICATES:
        return None  # "not allergic to cats" shares only "allergic" with a penicillin allergy
    if not held_alike(n, o):
        return None
    return f"no longer: {', '.join(sorted(shared)[:2]).lstrip('#')}", True


_PREDICATES = content_tokens(changes.PREDICATE_WORDS)


def names_held_value(new: str, old: str) -> bool:
    """Whether ``new`` names what ``old`` holds (its own words, not its verbs or subject).

    "I moved from Sendai to Osaka" names the Sendai of "I live in Sendai"; "We moved to
    Sapporo" does not: the test for an explicit change of one very fact.
    """
    new_tokens, old_tokens = content_tokens(new.lower()), content_tokens(old.lower())
    return bool(shared_tokens(new_tokens, old_tokens) - _PREDICATES)


_DETERMINERS = frozenset("the a an my our his her their this that your".split())
#: Words before a noun that say which one, not what kind ("my club", "the old club").
_WHICH_ONE = frozenset("old new former ex previous current first second last other".split())


def _other_kind(stem: str, new: str, old: str) -> bool:
    """Whether the two texts' shared noun is of two kinds: "the chess club", "the hiking club".

    A word between a determiner and the noun qualifies it; when both texts qualify it, and
    the new qualifier is nowhere in the old text, the two are different things.
    """

    def qualifiers(text: str) -> set[str]:
        words = re.findall(r"[a-z][a-z'-]*", text.lower())
        return {
            before
            for det, before, w in zip(words, words[1:], words[2:], strict=False)
            if stem in content_tokens(w)
            and det in _DETERMINERS
            and before not in changes.FUNCTION
            and before not in _WHICH_ONE
            and not before.endswith("'s")
        }

    mine, theirs = qualifiers(new), qualifiers(old)
    old_stems = content_tokens(old.lower())
    return bool(mine and theirs) and not any(content_tokens(q) & old_stems for q in mine)


_WHEN_WORDS = frozenset("last next this every ago since until".split())
_SUBJECT_PRONOUNS = frozenset("i we you they he she".split())
_COUNT_WORDS = frozenset("one two three four five six seven eight nine ten a few several".split())


def _modifier_only(stem: str, text: str) -> bool:
    """Whether ``stem`` only modifies another noun in ``text`` ("record shop", "car insurance").

    "I gave away my old records" ends records, not "I work at a record shop"; a name
    before its noun ("my Casio watch") is the thing itself.
    """
    words = re.findall(r"[A-Za-z][A-Za-z'-]*|[^\sA-Za-z]", text)
    seen = False
    if not words:
        return False
    for before, w, after in zip([".", *words[:-1]], words, [*words[1:], "."], strict=True):
        if stem not in content_tokens(w.lower()):
            continue
        seen = True
        if before.lower() in _SUBJECT_PRONOUNS:
            return False  # "I teach maths": a verb and its object
        after = after.lower()
        if w[:1].isupper() or not after.isalpha() or after in changes.FUNCTION:
            return False
        if after.endswith(("ed", "ing", "ly")) or after in slots.TIME_WORDS or after in _WHEN_WORDS:
            return False
        if after in _COUNT_WORDS:
            return False  # "quit smoking three months ago"
    return seen


def _same_sense(stem: str, new: str, old: str, *, place: bool) -> bool:
    """Whether a word shared by an end and an old fact names the same thing in both.

    A name in the new text ("Sold the Fiesta") is not the old text's common word ("a fiesta
    in the square"), unless the old text is typed all in lowercase; and one word of a longer
    name ("Hartley Albion") is not the place a move names ("don't live in hartley").
    """

    def forms(text: str) -> list[tuple[str, str]]:
        words = re.findall(r"[A-Za-z][A-Za-z'-]*", text)
        if not words:
            return []
        return [
            (w, after)
            for i, (w, after) in enumerate(zip(words, [*words[1:], ""], strict=True))
            if stem in content_tokens(w.lower()) and i > 0
        ]

    new_forms, old_forms = forms(new), forms(old)
    if not new_forms or not old_forms:
        return True
    named_new = all(w[:1].isupper() for w, _ in new_forms)
    named_old = any(w[:1].isupper() for w, _ in old_forms)
    if named_new and not named_old and old != old.lower():
        return False
    if not place:
        return True
    compound = [a for w, a in old_forms if w[:1].isupper() and a[:1].isupper()]
    return not compound or any(a in compound for _, a in new_forms)


def held_alike(n: Clause, o: Clause) -> bool:
    """Whether the end fits how the old clause holds its thing.

    "I sold my Golf" ends "I drive a VW Golf", not "I play golf on Sundays"; "I've given
    up golf" ends the game, not the car.
    """
    owning, doing = bool(changes.OWNING.search(o.low)), bool(changes.DOING.search(o.low))
    if changes.ENDS_OWNING.search(n.low) and doing and not owning:
        return False
    return not (changes.ENDS_DOING.search(n.low) and not doing and re.search(r"\bdriv", o.low))


#: An end marker's words: "sold the Corolla last week" -> the Corolla.
_ARG_STOP = re.compile(
    r"\b(?:on|at|in|for|with|to|from|after|before|because|since|last|this|next|"
    r"yesterday|today|ago|and|but|so|when|while)\b|[,.;!?]"
)


def ends_previous(n: Clause) -> bool:
    """Whether the clause ends an earlier one of a thing ("my old car", "前の職場")."""
    return bool(changes.PREVIOUS.search(n.low))


def ended_thing(n: Clause) -> frozenset[str] | None:
    """The tokens of what the new clause ends, denies or corrects; None when it ends nothing.

    "Sold the Corolla last week" -> corolla; "my old car got stolen" ends nothing the user
    holds now.
    """
    low = n.low
    if ends_previous(n):
        return None
    if n.ja:
        m = (
            changes.END_ACT.search(low)
            or changes.END_EVENT.search(low)
            or changes.NO_LONGER.search(low)
        )
        if not m:
            return None
        window = low[max(0, m.start() - 14) : m.start()]
        modifiers: set[str] = set()  # "祖母の家の猫が亡くなった" ends the cat, not 祖母の家
        for mod in re.findall(r"([^\s、。はがをにでとも]+)の", window):
            modifiers |= content_tokens(mod)
        return content_tokens(window) - modifiers
    marker = changes.NO_LONGER.search(low) or changes.CORRECTION.search(low)
    if marker:
        start = max(low.rfind(p, 0, marker.start()) for p in ",;—–(")
        stops = [i for i in (low.find(p, marker.end()) for p in ",;—–(") if i != -1]
        return content_tokens(low[start + 1 : min(stops, default=len(low))])
    m = changes.END_ACT.search(low)
    if m:
        after = low[m.end() :]
        stop = _ARG_STOP.search(after, 1)
        arg = after[: stop.start()] if stop else after
        if not re.search(r"[a-z]", arg.replace("my", "").replace("the", "")):
            return frozenset()
        return content_tokens(" ".join(arg.split()[:5]))
    m = changes.END_EVENT.search(low)
    if m:
        before = low[: m.start()].split()[-5:]
        source = re.match(r"\s+(?:from|at|by)\s+(?:my |our |the )?([^,.;!?]+)", low[m.end() :])
        if source:  # "was laid off from Halvorsen Bank": the bank, not the user
            arg = source.group(1)
            stop = _ARG_STOP.search(arg)
            before = (arg[: stop.start()] if stop else arg).split()[:4]
        return content_tokens(" ".join(before))
    return None


_SPAN_END = re.compile(r"[,;:—–(]|\s(?:and|but|so|now)\s")


def _end_span(n: Clause) -> str:
    """The words of the end itself: "I quit my job at Google, now I'm at Sony" -> the first part."""
    m = (
        changes.NO_LONGER.search(n.low)
        or changes.END_ACT.search(n.low)
        or changes.END_EVENT.search(n.low)
    )
    if m is None or len(n.low) != len(n.text):
        return n.text
    start = max(n.low.rfind(p, 0, m.start()) for p in ",;:—–(") + 1
    stop = _SPAN_END.search(n.low, m.end())
    return n.text[start : stop.start() if stop else len(n.text)]


def _ended_slot(n: Clause, o: Clause) -> str:
    """The slot an end names when it names no word of the old clause ("my car got stolen")."""
    for kind in ("possession", "pet", "job", "dose"):
        ns, os_ = n.reading.slot(kind), o.reading.slot(kind)
        if ns and os_ and (not ns.param or ns.param & os_.param):
            return f"{kind} ({first(os_.param) or kind})" if kind in ("possession", "pet") else kind
    return ""


def _label(o: Clause) -> str:
    return " ".join(o.text.split()[:6])
