"""Offline supersession: which older memories a new one replaces, by a structural guard.

"We moved to Portland" retires "I live in Austin", but "My sister moved to Tucson" and
"I'm also allergic to shellfish" retire nothing. Each text is read into a subject (the
user, or someone named), markers (a change, an end, a resumption, an addition, a
hypothetical) and slots (residence, job, schedule, dose, possession, pet, relationship,
habit...), each with a parameter (which drug, which event) and a value. A new text
supersedes an old one only when both are about the same subject and the same slot (and
parameter), and the value differs or a change, end or resumption marker says so. An
addition, a question or a hypothetical never supersedes: retiring a memory that still
holds is worse than keeping a stale one, so anything unsure returns nothing.

Example:
    >>> find_superseded("We moved to Portland last month.", ["I live in Austin.", "I like tea."])
    ((0, 'new residence: portland replaces austin'),)
    >>> find_superseded("My sister just moved to Tucson.", ["I live in Denver."])
    ()
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from . import slots as sv
from .cues import ALLERGY, rx
from .statement import Reading, Slot, content_tokens, read

__all__ = ["find_superseded", "read"]

_MAX_REASON = 200


def find_superseded(content: str, related: Sequence[str]) -> tuple[tuple[int, str], ...]:
    """Positions in ``related`` (0-based) that ``content`` supersedes, each with a short reason.

    Same subject, same slot (and parameter), and a different value or an explicit
    change, end or resumption; an addition, question or hypothetical never supersedes.
    Empty when unsure. Never raises.
    """
    try:
        speaker, said = _speaker(content if isinstance(content, str) else "")
        new = read(said)
        if not new.low or new.additive or new.unsure:
            return ()
        found = []
        for i, text in enumerate(related):
            other, old_said = _speaker(text if isinstance(text, str) else "")
            if other != speaker:  # "I" in another speaker's turn is someone else
                continue
            old = read(old_said)
            if not old.low or old.low == new.low or old.unsure or not _one_statement(old_said):
                continue
            reason = _supersedes(new, old, slots_only=speaker is not None)
            if reason:
                found.append((i, reason[:_MAX_REASON]))
        return tuple(found)
    except Exception:
        return ()


#: A transcript's speaker label ("Caroline: ..."); "User:" is the store's own framing.
_SPEAKER = re.compile(r"([A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30})?): +(?=\S)")


def _speaker(text: str) -> tuple[str | None, str]:
    """``(speaker, what they said)`` for a labelled turn, else ``(None, text)``.

    In a transcript each turn's "I" is its speaker: two speakers' turns never share a
    subject, and the speaker's name is not a word the two texts have in common.
    """
    m = _SPEAKER.match(text.lstrip())
    if m is None or m.group(1).lower() in ("user", "original"):
        return None, text
    return m.group(1).lower(), text.lstrip()[m.end() :]


# --- deciding ---------------------------------------------------------------------------


#: Sentence ends, for telling one statement from a story.
_SENTENCE_END = re.compile(r"[.!?。！？]+(?=\s|$)")
_MAX_STATEMENT_WORDS = 40


def _one_statement(text: str) -> bool:
    """At most two sentences and forty words: a memory that states one thing.

    A longer memory holds several facts; news about one of them does not make the rest
    out of date, so it is never retired whole (collateral is worse than a miss).
    """
    body = text.strip()
    return len(_SENTENCE_END.findall(body[:-1])) <= 1 and len(body.split()) <= _MAX_STATEMENT_WORDS


def _supersedes(new: Reading, old: Reading, *, slots_only: bool = False) -> str:
    """A reason ``new`` replaces ``old``, or "" when it does not (or we cannot tell).

    ``slots_only`` (transcript turns) keeps only the same-slot rule: in conversation the
    looser rules (a change word and a shared word) fire on chat about anything.
    """
    frame = _same_frame(new, old)
    if frame:
        return frame
    same = new.subject == old.subject or (
        new.subject.startswith("name:") and _mentions(old, new.subject[5:])
    )
    if not same:
        return _entity_ended(new, old) or _partner_rule(new, old)
    for slot in new.slots:
        reason = _slot_rule(slot, old.slot(slot.kind), new, old)
        if reason:
            return reason
    if slots_only:
        return ""
    return _marker_rule(new, old) or _new_attribute(new, old) or _count_change(new, old)


def _mentions(r: Reading, word: str) -> bool:
    return bool(re.search(rf"\b{re.escape(word)}\b", r.low))


def _partner_rule(new: Reading, old: Reading) -> str:
    """A partner's fact is the user's relationship: a divorce from Mark ends "husband is Mark"."""
    if {new.subject, old.subject} - {"user"} - {f"other:{p}" for p in sv.PARTNERS}:
        return ""
    return _slot_rule(new.slot("relationship") or Slot("none"), old.slot("relationship"), new, old)


#: Words that state a relationship's status, not just name a partner or a wedding.
_STATUS_NEWS = rx(
    r"broke up|break up|split up|divorc\w*|separated|single|dating|seeing|engaged|married|"
    r"got together|going out|in a relationship|moved in together|made up|passed away|died",
    ja="別れ|離婚|付き合|婚約|結婚|入籍|独身|交際|仲直り|亡くな",
)


#: A stop that says it is temporary ("can't run for a few weeks", "cancelled this Saturday").
_TEMPORARY = rx(
    r"for (?:a|the|the next)? ?(?:few|couple of|couple)? ?(?:days?|weeks?|months?)|for now|"
    r"for the time being|temporarily|this (?:week|weekend|month|morning|evening|(?:mon|tues|"
    r"wednes|thurs|fri|satur|sun)day)|today|tonight|until|till",
    ja="しばらく|一時的|今週|今日|今夜|当分",
)
#: What the user heard rather than a fact of theirs ("apparently", "らしい").
_HEARSAY = rx(r"apparently|i heard|rumou?r|supposedly", ja="らしい|そうです|だそう")


def _slot_rule(n: Slot, o: Slot | None, new: Reading, old: Reading) -> str:
    """Same slot, same parameter, a different value or an explicit change."""
    if o is None:
        return ""
    kind = n.kind
    differs = bool(n.value and o.value and not (n.value & o.value))
    if kind == "residence":
        if new.future and not n.changed:
            return ""
        if n.changed and not (n.value and n.value <= o.value):
            return _say(
                f"new residence: {n.label} replaces {o.label}", "residence changed (moved)", n, o
            )
        return _say(f"new residence: {n.label} replaces {o.label}", "", n, o) if differs else ""
    if kind == "job":
        if new.future or not (n.changed or differs):
            return ""
        return _say(f"job changed: {n.label} replaces {o.label}", "job changed", n, o)
    if kind in ("work hours", "commute", "relationship"):
        if (new.future and kind != "relationship") or not (n.value and o.value):
            return ""
        if kind == "relationship" and not _STATUS_NEWS.search(new.low):
            return ""  # "my fiancée is from Bergen" names a partner; it changes no status
        if differs or (new.change and n.value != o.value):
            return _say(f"{kind} changed: {n.label} replaces {o.label}", f"{kind} changed", n, o)
        return ""
    if kind == "schedule":
        events = {p for p in n.param if not p.startswith("q:")}
        if not events & o.param:
            return ""
        quals_n = {p for p in n.param if p.startswith("q:")}
        quals_o = {p for p in o.param if p.startswith("q:")}
        if quals_n and quals_o and not quals_n & quals_o:
            return ""
        if not any(sv.SPECIFIC_TIME.search(v) for v in o.value) or old.slot("preference"):
            return ""
        replaced = bool(n.value - o.value and o.value - n.value)
        if (
            replaced
            or (new.change and n.value != o.value)
            or (new.change and _marked(new, old.tokens))
        ):
            return _say(f"rescheduled: {n.label} replaces {o.label}", "schedule changed", n, o)
        return ""
    if kind == "dose":
        if not n.param & o.param:
            return ""
        drug = sorted(n.param & o.param)[0]
        if sv.END.search(new.low) and not sv.END.search(old.low):
            if ALLERGY.search(new.low):
                return f"allergy to {drug}: no longer holds"
            return f"no longer takes {drug}"
        if differs or (new.change and n.value != o.value):
            return f"new dose of {drug}: {n.label or 'changed'}"
        return ""
    if kind in ("possession", "pet"):
        if not n.param & o.param or (new.future and kind == "possession"):
            return ""
        what = sorted(n.param)[0]
        if (new.change or differs) and (n.value != o.value or _marked(new, old.tokens)):
            detail = f": {n.label} replaces {o.label}" if differs else " changed"
            return f"{kind} ({what}){detail}"
        return ""
    if kind == "habit":
        shared = _strong(n.param & o.param) - sv.WEAK
        if not shared or not new.change:
            return ""
        if n.value != o.value or _marked(new, old.tokens):
            return f"habit changed: {', '.join(sorted(shared)[:2]).lstrip('#')} ({n.label})"
    return ""


def _say(full: str, short: str, n: Slot, o: Slot) -> str:
    return full if n.label and o.label else short or full


def _scopes(clause: str, ja: bool) -> list[tuple[str, str]]:
    """(marker kind, text around it) for every end, resume or from-value marker in a clause."""
    out = []
    for kind, pattern in (("resume", sv.RESUME), ("end", sv.END), ("from", sv.FROM_VALUE)):
        for m in pattern.finditer(clause):
            before, after = (14, 8) if ja else (32, 34)
            out.append((kind, clause[max(0, m.start() - before) : m.end() + after]))
    return out


def _marker_rule(new: Reading, old: Reading) -> str:
    """An end, resumption or replacement of the very thing the old text is about."""
    old_negative = bool(sv.END.search(old.low))
    kinds = {s.kind for s in new.slots} & {s.kind for s in old.slots} - {"plan"}
    if old.slot("plan") and not new.slot("plan"):
        kinds.add("plan")
    resumes = any(sv.RESUME.search(c) for c, _ in new.clauses)
    for clause, _ in new.clauses:
        if sv.INSTRUCTION_LIKE.search(clause):
            continue
        for kind, scope in _scopes(clause, new.ja):
            shared = _strong(_overlap(content_tokens(scope), old.tokens)) - sv.WEAK
            if not shared:
                continue
            what = ", ".join(sorted(shared)[:2]).replace("#", "")
            if kind == "resume" and _negated(old, shared):
                return f"resumed: {what}"
            if not (kinds or shared & (new.entities | old.entities)):
                continue
            if kind == "end" and (_TEMPORARY.search(new.low) or _HEARSAY.search(old.low)):
                continue  # a pause ends nothing lasting; hearsay was never the user's fact
            if kind == "end" and not resumes and not old_negative and _about_user(old):
                return f"no longer: {what}"
            if kind == "from":
                return f"replaced: {what}"
    return ""


def _overlap(a: frozenset[str], b: frozenset[str]) -> frozenset[str]:
    """Shared tokens, counting long words that share a stem-like prefix as one.

    The stemmer leaves some derived forms apart ("anaemia", "anaemic").
    """
    long_b = [t for t in b if len(t) >= 5 and t.isalpha()]
    return (a & b) | frozenset(
        t
        for t in a
        if len(t) >= 5
        and t.isalpha()
        and t[:5] not in sv.WEAK_PREFIXES
        and any(u.startswith(t) or t.startswith(u) or u[:6] == t[:6] for u in long_b)
    )


def _negated(old: Reading, shared: frozenset[str]) -> bool:
    """The old text ends or denies (or only hopes for) the very thing that is shared."""
    for clause, _ in old.clauses:
        for kind, scope in _scopes(clause, old.ja):
            if kind == "end" and shared & content_tokens(scope):
                return True
    if sv.ABSTAIN.search(old.low) and shared & old.entities:
        return True
    return bool(sv.HYPOTHETICAL.search(old.low) and shared & old.entities)


def _new_attribute(new: Reading, old: Reading) -> str:
    """Replace "My email is ..." with "My new email is ...": the same attribute, marked new."""
    for m in sv.NEW_ATTRIBUTE.finditer(new.low):
        two = m.group(2) and m.group(2) not in sv.GENERIC
        for name in (f"{m.group(1)} {m.group(2)}",) if two else (m.group(1),):
            if not name or name in sv.GENERIC or re.fullmatch(sv.OTHER_PERSON_EN, name):
                continue
            stated = re.search(
                rf"\b(?:my|our|user's|the user's) (?:current |old )?"
                rf"{re.escape(name)}"
                rf"(?: is| are|:| =)|[\d.+-]+\s*{re.escape(name)}\b",
                old.low,
            )
            if stated:
                return f"new {name} replaces the old one"
    return ""


def _count_change(new: Reading, old: Reading) -> str:
    """A changed count of the same thing: "down to two" after "three chickens"."""
    if old.ja != new.ja:
        return ""
    for clause, tokens in new.clauses:
        if not (sv.CHANGE.search(clause) and sv.COUNT.search(clause)):
            continue
        for t in sorted(_strong(tokens & old.tokens) - sv.WEAK):
            for m in re.finditer(re.escape(t[:5]), old.low):
                near = old.low[max(0, m.start() - 18) : m.end() + 18]
                if sv.COUNT.search(near) and sv.COUNT.search(near).group() not in clause:  # type: ignore[union-attr]
                    return f"count changed: {t}"
    return ""


def _entity_ended(new: Reading, old: Reading) -> str:
    """End the old text's own thing: "Rufus died" ends "We have a beagle named Rufus"."""
    if old.subject != "user" or not new.subject.startswith(("name:", "other:")):
        return ""
    name = new.subject.split(":", 1)[1]
    if not re.search(rf"\b{re.escape(name)}\b", old.low) or not _about_user(old):
        return ""
    clause = new.clauses[0][0] if new.clauses else ""
    if new.subject.startswith("other:") and not sv.BEREAVED.search(clause):
        return ""
    if sv.END.search(clause) or sv.CHANGE.search(clause) or sv.RESUME.search(clause):
        return f"{name}: changed or ended"
    return ""


def _marked(new: Reading, old_tokens: frozenset[str]) -> bool:
    """A change/end/resume marker in a clause that shares a content token with the old text."""
    for clause, tokens in new.clauses:
        if (_strong(tokens & old_tokens) - sv.WEAK) and (
            sv.CHANGE.search(clause) or sv.END.search(clause) or sv.RESUME.search(clause)
        ):
            return True
    return False


def _strong(shared: frozenset[str]) -> frozenset[str]:
    """Shared tokens specific enough to show two texts are about the same thing."""
    return frozenset(
        t
        for t in shared
        if t not in sv.TIME_STEMS
        and not t.isdigit()
        and t not in ("#sleep", "#move", "#job")
        and len(t) > 1
    )


def _about_user(r: Reading) -> bool:
    return r.subject == "user" and bool(
        sv.USER_MENTION.search(r.low) or r.ja or r.low.startswith(("user", "the user"))
    )


def _align(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Drop up to three leading words of one side so both start at the same word."""
    if a[:1] == b[:1]:
        return a, b
    for k in range(1, 4):
        if a[k : k + 2] == b[:2]:
            return a[k:], b
        if b[k : k + 2] == a[:2]:
            return a, b[k:]
    return a, b


def _align_ja(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Japanese: start the older text where the newer one's first four characters occur."""
    head = "".join(b[:4])
    k = "".join(a).find(head) if len(head) == 4 else -1
    return (a[k:], b) if 0 < k <= 16 else (a, b)


def _same_frame(new: Reading, old: Reading) -> str:
    """The same sentence with a new value: "The offsite is on 7 March" -> "... 14 March"."""
    if new.ja != old.ja or len(old.seq) < 3 or len(new.seq) < 3:
        return ""
    if new.subject != old.subject and not new.subject.startswith("name:"):
        return ""
    a, b = _align_ja(old.seq, new.seq) if new.ja else _align(old.seq, new.seq)
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    ma, mb = a[p : len(a) - s], b[p : len(b) - s]
    if not ma or not mb:
        return ""
    if new.ja:
        prefix = "".join(a[:p])
        topic = "は" in prefix or (ma[0] in "はをが" and (mb[0] in "はをが") and new.change)
        if not topic or len(prefix) < 3 or len(ma) > 20 or len(mb) > 24:
            return ""
        content = [
            k
            for k in sv.KANJI.findall(prefix) + sv.KATAKANA.findall(prefix)
            if k not in sv.GENERIC_JA and len(k) >= 2
        ]
        if not content:
            return ""
        return f"same fact, new value: {''.join(mb).strip('。 ')[:60]}"
    if p < 2 or len(ma) > 6 or len(mb) > 6 or sv.LINKERS.isdisjoint(a[:p] + a[len(a) - s :]):
        return ""
    if any(t in ("is", "are", "was", ":", "and", "also", "too") for t in ma + mb):
        return ""
    content = [
        t
        for t in a[:p]
        if t not in sv.GENERIC
        and t not in sv.FRAME_WORDS
        and t not in sv.LINKERS
        and t not in ("user's", "user")
    ]
    tail = [t for t in a[len(a) - s :] if t not in sv.GENERIC and t not in sv.LINKERS]
    if not content and not (tail and sv.LINKERS.intersection(a[:p])):
        return ""
    return f"same fact, new value: {' '.join(mb)} replaces {' '.join(ma)}"
