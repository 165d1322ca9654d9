r"""A text as clauses, each with how it is said: stated, asked, unsettled, planned, past or unreal.

People state new facts inside requests ("…the deposit has now gone up to 900, can you
help me redo the budget?", "since we moved to Leeds, which GP should I register with?",
"引っ越して大阪になったので、近くのジム探してくれる?"). A whole-text reading calls
these questions and never learns from them; read clause by clause, the declarative part
is a statement and the request around it is not. Only a ``stated`` clause can make an
older memory out of date; a question, a wish, a supposition, a story or a quote never
does, and a clause about the past ("I used to live in Tokyo") is history, not the
present.

Each clause keeps its ``statement.read`` reading (subject, slots, tokens), computed on
the clause alone, so a request's words do not leak into the fact's slot.

Example:
    >>> for c in clauses("Quick one: the deposit is now 900, can you redo the budget?"):
    ...     print(c.mood, "|", c.text)
    stated | the deposit is now 900
    asked | can you redo the budget?
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache

from aimem.judges.heuristic import changes, slots
from aimem.judges.heuristic.cues import CJK_RUN
from aimem.judges.heuristic.statement import READ_CHARS, Reading, Slot, read

__all__ = ["Clause", "clauses", "stated_facts"]

#: A memory with more facts than this is a story or a log: never retired whole.
MAX_CLAUSES = 12

#: A clause that opens with its own subject (else it shares the sentence's subject).
_OWN_SUBJECT = re.compile(
    r"^(?:(?:so|and|but|then|because|now)\s+)?(?:i|i'm|im|i've|i'd|i'll|we|we're|we've|we'd|we'll|my|our|the|his|her|their|"
    r"he|she|they|it|it's|this|that|there|user|the user|you|your|[a-z]+'s)\b"
)
#: "…my address, which is now 12 Hill St": the relative clause states the noun's value.
_RELATIVE = re.compile(r"^(?:which|that|who)\s+(?=(?:is|are|was|were|has|have|had)\b)")
_NOUN_PHRASE_END = re.compile(
    r"((?:my|our|the|his|her|their|user's)\s+(?:[\w'-]+\s+){0,3}[\w'-]+)\s*,?\s*$", re.I
)
#: A state told in the simple past ("I lived in Bergen in 2010"), not the present perfect.
_PAST_STATE = re.compile(
    r"\b(?:i|we|user|he|she|they)\s+(?:lived|worked|was living|were living|was working|"
    r"were working|studied|was based|were based)\b(?!.*\b(?:now|still|since)\b)"
)
#: "when" + a past verb tells what happened ("when we moved last year…"), not a supposition.
_PAST_VERB = re.compile(r"\b(?:\w+ed|was|were|had|got|left|sold|quit|went|came|began|took)\b")
_QUOTED_SPAN = re.compile(
    r"[\"“]([^\"”]{3,})[\"”]|「([^」]{2,})」|『([^』]{2,})』|(?<!\w)'((?:[^']|(?<=\w)'(?=\w)){6,})'(?!\w)"
)
#: Someone else's words about the user: "my aunt said, 'you'll give up singing'", 「…」と言われた.
_SAID_TO_USER = re.compile(
    r"\b(?:said|says|told me|tells me|asked me|warned me|keeps saying|used to say)\b[,:]?\s*$"
    r"|^\s*[,]?\s*(?:he|she|they|my \w+) (?:said|says|told me|warned)\b"
    r"|^\s*(?:と|って)(?:言われ|言って|言った|言う|話して|聞いた)"
)
_SECOND_PERSON = re.compile(r"\b(?:you|you'll|you're|you've|your)\b|あなた")
_FIRST_SUBJECT = re.compile(r"^(?:i|we|i've|we've|i'm|we're|i'd|we'd)\b")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|my|me|we|our|i've)\b|私|僕|俺|うち")


@dataclass(frozen=True)
class Clause:
    """One clause of a text: its words, how it is said, and its reading.

    ``mood`` is "stated" (a settled fact), "asked" (a question or request),
    "unsettled" (a wish, guess or supposition), "planned" (an intention not yet done),
    "historic" (what used to hold) or "unreal" (a story, game, quote or translation).
    """

    text: str
    low: str
    mood: str
    reading: Reading
    episode: bool

    @property
    def subject(self) -> str:
        """Whose fact this is: "user", "other:<relation>" or "name:<name>"."""
        return self.reading.subject

    @property
    def ja(self) -> bool:
        """Whether the clause is Japanese."""
        return self.reading.ja

    @property
    def fact(self) -> bool:
        """Whether the clause holds something worth keeping: a slot, a value, or content.

        "ok", "finally unpacked the last boxes" and "any ideas?" hold nothing that a
        retirement could lose; a residence, a name or a number does.
        """
        if self.mood in ("asked", "unreal"):
            return False
        r = self.reading
        if any(s.kind not in ("plan", "preference", "health") for s in r.slots):
            return True
        if changes.END_ACT.search(self.low) or changes.NO_LONGER.search(self.low):
            return bool(r.tokens)  # "I've stopped running": a state, even in few words
        values = [t for t in r.entities if not t.startswith("#")]
        specific = [t for t in r.tokens if t not in slots.WEAK and t not in slots.TIME_STEMS]
        return bool(values) or bool(re.search(r"\d", self.low)) or len(specific) >= 2


def clauses(text: str) -> tuple[Clause, ...]:
    """The clauses of ``text`` in order, each with its mood (see ``Clause``). Never raises."""
    try:
        return _clauses(text if isinstance(text, str) else "")
    except Exception:
        return ()


@lru_cache(maxsize=4096)
def _clauses(text: str) -> tuple[Clause, ...]:
    text = unicodedata.normalize("NFKC", text[:READ_CHARS])
    text = " ".join(slots.CONTROL.sub(" ", _original(text)).split())
    if not text:
        return ()
    unreal = _reported(text)
    out: list[Clause] = []
    for sentence in _sentences(text):
        sentence = changes.LEAD_IN.sub("", sentence.strip())
        if not sentence:
            continue
        asked_sentence = sentence.endswith(("?", "？"))
        pieces = [
            q.strip(" ,、") for p in changes.CLAUSE_BREAK.split(sentence) for q in _and_split(p)
        ]
        pieces = [p for p in pieces if p and re.search(r"\w", p)]
        subject: str | None = None
        previous = ""
        for n, piece in enumerate(pieces):
            piece = _expand_relative(piece, previous)
            previous = piece
            low = piece.lower()
            mood, body = _mood(piece, low, unreal, asked_sentence and n == len(pieces) - 1)
            reading = read(body)
            if reading.subject == "other:beneficiary" and _FIRST_SUBJECT.match(body.lower()):
                reading = replace(reading, subject="user")  # "we moved ... for my wife's job"
            if subject is not None and not _OWN_SUBJECT.match(body.lower()) and not reading.ja:
                reading = replace(reading, subject=subject)
            if reading.subject != "user" or _OWN_SUBJECT.match(body.lower()):
                subject = reading.subject
            out.append(Clause(body, body.lower(), mood, reading, bool(changes.EPISODE.search(low))))
            if len(out) > MAX_CLAUSES:
                return tuple(out)
    return _carried(tuple(out))


#: Abbreviations whose full stop ends no sentence ("St. Mary's", "Dr. Lee").
_ABBREVIATION = re.compile(
    r"(?:^|\s)(?:st|mr|mrs|ms|dr|prof|jr|sr|mt|ft|no|vs|etc|e\.g|i\.e|approx|dept|univ|ave|rd)\.$",
    re.I,
)


#: "... and I work at Dell": a second clause with its own subject.
_AND_SUBJECT = re.compile(r"\s+and\s+(?=(?:i|i'm|i've|we|we're|we've|my|our)\s)", re.I)
#: A finite verb: the words before "and I" already make a clause ("I live in Austin").
_FINITE = re.compile(
    r"\b(?:am|is|are|was|were|have|has|had|do|does|did|live|lives|work|works|go|goes|own|"
    r"owns|drive|drives|take|takes|use|uses|like|likes|love|loves|\w+ed)\b|'m\b|'s\b|'re\b|'ve\b",
    re.I,
)


def _and_split(piece: str) -> list[str]:
    """A second subject splits: "I live in Austin and I work at Dell"; "Priya and I" stays one."""
    m = _AND_SUBJECT.search(piece)
    if m is None or not _FINITE.search(piece[: m.start()]):
        return [piece]
    return [piece[: m.start()], *_and_split(piece[m.end() :])]


def _sentences(text: str) -> list[str]:
    """``text`` split at sentence ends, keeping "St. Mary's" and "Dr. Lee" whole."""
    out: list[str] = []
    for piece in changes.SENTENCE_BREAK.split(text):
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def stated_facts(text: str) -> str:
    """The stated facts of a longer text, joined ("" when that is all of it, or none).

    "Since we moved to York, can you find me a GP? Thanks!" -> "we moved to York": what a
    related lookup should search with, without the request's words.
    """
    found = clauses(text)
    facts = [c.text for c in found if c.mood == "stated" and c.fact]
    return " ".join(facts) if facts and len(facts) < len(found) else ""


def _original(text: str) -> str:
    """The user's own words inside one of our restatements, else ``text``."""
    m = slots.ORIGINAL.search(text)
    if m:
        return m.group("en") if m.group("en") is not None else m.group("ja") or ""
    if text.lower().startswith("user:"):
        return slots.RESTATED.sub("", text.strip(), count=1)
    return text


def _reported(text: str) -> bool:
    """A story, game, translation or quote: someone's words, not the user's fact."""
    low = text.lower()
    if changes.UNREAL.search(low):
        return True
    for m in _QUOTED_SPAN.finditer(text):
        quoted = next(g for g in m.groups() if g)
        if _FIRST_PERSON.search(quoted.lower()):
            return True
        said = _SAID_TO_USER.search(low[: m.start()]) or _SAID_TO_USER.search(low[m.end() :])
        if said and _SECOND_PERSON.search(quoted.lower()):
            return True
    return False


def _expand_relative(piece: str, previous: str) -> str:
    """A relative clause read with its noun: "…my address, which is now 12 Hill St"."""
    m = _RELATIVE.match(piece.lower())
    if not m:
        return piece
    np = _NOUN_PHRASE_END.search(previous)
    return f"{np.group(1)} {piece[m.end() :]}" if np else piece


def _mood(piece: str, low: str, unreal: bool, last_of_question: bool) -> tuple[str, str]:
    """How the clause is said, and its text without a lead-in ("since", "now that")."""
    if unreal:
        return "unreal", piece
    lead = changes.STATED_LEAD.match(low)
    if lead:
        body = piece[lead.end() :]
        if "now that" in lead.group():
            body = f"now {body}"  # "now that I live in Leeds": a change, stated
        return _settled(body.lower()), body
    supposed = changes.SUPPOSED_LEAD.match(low)
    if supposed:
        if low.startswith("when") and _PAST_VERB.search(low) and not changes.UNSETTLED.search(low):
            if changes.HISTORIC.search(low):
                return "historic", piece  # "when I was a kid I lived in Tokyo": the past
            return "stated", piece[supposed.end() :].strip()
        return "unsettled", piece
    ja = bool(CJK_RUN.search(low))
    if changes.NEEDING.match(low):
        return "asked", piece
    if ja and changes.ASKING_JA.search(piece):
        return "asked", piece
    if not ja and (changes.ASKING.match(low) or (last_of_question and low.endswith("?"))):
        return "asked", piece
    return _settled(low), piece


def _settled(low: str) -> str:
    """A clause's mood once it is not a question: unsettled, planned, historic or stated."""
    if changes.DECIDED.search(low) and not changes.UNSETTLED.search(low):
        return "stated"
    if changes.UNSETTLED.search(low) or slots.HYPOTHETICAL.search(low):
        return "planned" if changes.PLANNED.search(low) else "unsettled"
    if changes.PLANNED.search(low) or slots.FUTURE.search(low):
        return "planned"
    if changes.HISTORIC.search(low) or _PAST_STATE.search(low):
        return "historic"
    return "stated"


def _carried(found: tuple[Clause, ...]) -> tuple[Clause, ...]:
    """A past slot carried on: in "I used to live in Tokyo, now I'm in Osaka", "now" takes it.

    A stated clause right after a past one, marked as a change ("now", 今は) and naming
    a value but no slot of its own, changes the past clause's slot.
    """
    out = list(found)
    for i in range(1, len(out)):
        before, c = out[i - 1], out[i]
        if before.mood != "historic" or c.mood != "stated" or c.reading.slots:
            continue
        if not re.search(r"\bnow\b|these days|nowadays|今は|今では|現在", c.low):
            continue
        values = frozenset(t for t in c.reading.entities if not t.startswith("#"))
        kinds = [s for s in before.reading.slots if s.kind in ("residence", "job", "possession")]
        if values and kinds:
            slot = Slot(kinds[0].kind, kinds[0].param, values, " ".join(sorted(values)), True)
            out[i] = replace(c, reading=replace(c.reading, slots=(slot,)))
    return tuple(out)
