"""The current truth first: conflicting siblings in a result list, and whose fact each is.

When "I live in Sendai" and the newer "We moved to Sapporo" both stay active (the
judge was unsure, or a restore kept the old one), a search for "Where does the user
live?" must answer with the newer. Two memories are *siblings* when they state the same
subject's facts about the same thing: the same person (read as supersession reads it,
``subject_of``) and enough of the same words, recall terms included (two residences
share "residence live home ..." however differently they are worded), or two stated facts
that both hold a word the question asked about, the newer saying it changed or moved on
("I deferred the pottery course"; never a transcript's turns). Among siblings
in a result list the newer ranks first; the older is marked ``conflicts_with`` the newer
when each names a value the other does not (numbers, codes, names) or when a save said so
(``Memory.contested_by``). This only reorders and marks: nothing is archived.

Whose fact a memory is matters on its own: for a question about the user, "My sister
lives in Sendai" is someone else's fact and ranks below the user's own.

Each memory's reading is cached by id and version, so a repeated candidate costs a
dictionary lookup; pairs are compared only within the top of a list.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import cached_property, lru_cache
from typing import TypeVar

from aimem.judges.base import TextReading
from aimem.models import Memory
from aimem.text.keywords import index_terms, memory_terms
from aimem.text.stemmer import stem
from aimem.text.third_person import speaker_label

__all__ = ["Facts", "about_someone_else", "current_first", "facts_of"]

T = TypeVar("T")

#: How many memories' readings are kept (about 1 KB each).
_CACHE_SIZE = 20_000
_cache: OrderedDict[tuple[str, int, TextReading], Facts] = OrderedDict()

#: Words every memory may share: they show nothing about being the same thing.
_COMMON = frozenset(
    stem(w)
    for w in (
        "a an and are as at be been but by can could day do does did for from get got go going "
        "had has have he her him his how i if in into is it its just like me more my no not now "
        "of on one or our out really she so some still than that the their them then there they "
        "this time to too up us very was we well went were what when where which who why will "
        "with would you your today yesterday tomorrow week month year ago last next new old "
        "also lot much many thing things about actually already any anything ve re ll d s t m "
        "should keep see make made been being am ok okay lol tbh honestly user"
    ).split()
)
_VALUE = re.compile(
    r"\d+(?:[.,:/]\d+)*|\b[a-z]*\d+[a-z0-9]*\b|(?<=[a-z0-9,'’)] )[A-Z][\w'’-]+|[ァ-ヴー]{2,}"
)
#: Slots that hold one value at a time: two memories filling one are about the same thing.
_SINGLE_VALUED = frozenset(
    {"residence", "job", "relationship", "commute", "work hours", "birthday"}
)
_ADDS = re.compile(
    r"\b(?:also|too|another(?! (?:go|try|chance|shot|attempt|round)\b)|as well|in addition|"
    r"additionally)\b|も(?:[、。]|$)"
)
#: A state begun or moved on, in words too loose for supersession but plain enough to put the
#: newer of two memories a question found together first: "adopted a greyhound", "deferred
#: the master's", "transferred to a private school", 転校した, 延びた.
_MOVED_ON = re.compile(
    r"\b(?:adopted|bought|got (?:a|an|my|our)|started|began|joined|signed up|enrolled|took up|"
    r"deferred|postponed|passed|converted|transferred|graduated|finished|completed)\b|"
    r"転校|転職|転勤|転居|引っ越|生まれ|延び|始め|入会|入学|買った|飼い始|合格|修了|なった"
)


class Facts:
    """What the ordering needs to know about one memory, each part read when first needed.

    Every judged hit needs its terms (relevance) and most its subject (whose fact); only
    the few compared as siblings need the rest.
    """

    def __init__(self, memory: Memory, reading: TextReading) -> None:
        self._reading = reading
        self._content = memory.content[:2000]
        self._recall = memory.recall_terms
        stored = memory._terms or memory_terms(
            memory.content, memory.interpreted_content, memory.recall_terms, memory.user_context
        )
        #: Its index terms: content, unframed interpretation, recall terms.
        self.terms = frozenset(stored.split())

    @cached_property
    def topic(self) -> frozenset[str]:
        """Its own words (no recall words, no common ones): what it is about."""
        own = self.terms - _recall_stems(self._recall)
        return frozenset(t for t in own if t not in _COMMON and len(t) > 1)

    @cached_property
    def kinds(self) -> frozenset[str]:
        """The single-valued slots it fills (a residence, a job, ...)."""
        return self._reading.recall_kinds(self._recall) & _SINGLE_VALUED

    @cached_property
    def subject(self) -> str:
        """``"user"``, ``"other:<relation>"`` or ``"name:<name>"``, by speaker in a transcript."""
        return _whose(self._content, self._reading.subject_of)

    @cached_property
    def values(self) -> frozenset[str]:
        """The numbers, codes and names it states."""
        return frozenset(v.lower() for v in _VALUE.findall(self._content))

    @cached_property
    def adds(self) -> bool:
        """An added fact ("also", "another"), not a replacement."""
        return bool(_ADDS.search(self._content.lower()))

    @cached_property
    def changes(self) -> bool:
        """Says something changed ("now", "moved", "cancelled", "back on")."""
        return self._reading.says_change(self._content)

    @cached_property
    def moved_on(self) -> bool:
        """Says something changed, or began or moved on ("adopted", "deferred", 転校)."""
        return self.changes or bool(_MOVED_ON.search(self._content.lower()))

    @cached_property
    def speaker(self) -> str | None:
        """Who said it, when it is a transcript's turn ("Caroline: ...")."""
        return speaker_label(self._content)[0]

    @cached_property
    def named(self) -> frozenset[str]:
        """In a transcript, the index terms of its speaker and the names it states.

        Every turn of one speaker shares them, so they say nothing of a shared topic there.
        """
        if not self.speaker:
            return frozenset()
        names = [v for v in self.values if not v.isdigit()]
        return frozenset(index_terms([" ".join([*names, self.speaker])]).split())


def facts_of(memory: Memory, reading: TextReading) -> Facts:
    """The reading of ``memory`` (cached by id, version and reading)."""
    key = (memory.id, memory.version, reading)  # an edit bumps the version
    found = _cache.get(key)
    if found is not None:
        _cache.move_to_end(key)
        return found
    facts = Facts(memory, reading)
    _cache[key] = facts
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return facts


@lru_cache(maxsize=256)
def _recall_stems(recall_terms: str) -> frozenset[str]:
    """The index terms recall words add: not what the memory itself says."""
    return frozenset(index_terms([recall_terms]).split())


def _whose(content: str, subject_of: Callable[[str], str]) -> str:
    """Whose fact: in a transcript each speaker's "I" is their own ("Caroline: I ...")."""
    speaker, said = speaker_label(content)
    return subject_of(said) if not speaker else f"{speaker.lower()}/{subject_of(said)}"


@lru_cache(maxsize=8)
def _relatives(relatives_en: str, relatives_ja: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The relatives a question may name ("my sister", 母は), compiled once per vocabulary."""
    return (
        re.compile(
            rf"\b(?:my|our|the user's|user's|his|her|their)\s+(?:\w+\s)?(?:{relatives_en})\b"
        ),
        re.compile(rf"(?:{relatives_ja})(?:の|は|が|って)"),
    )


def about_someone_else(query: str, user_context: str | None, reading: TextReading) -> bool:
    """Whether ``query`` asks about another person ("my sister", "Caroline"), not the user."""
    english, japanese = _relatives(*reading.relatives())
    if english.search(query.lower()) or japanese.search(query):
        return True
    name = (user_context or "").lower()
    for m in re.finditer(r"(?<=\S )[A-Z][a-z][\w'’-]*", query):
        word = m.group().lower().removesuffix("'s").removesuffix("’s")
        if word not in ("i", "user", name) and word not in _COMMON:
            return True
    return False


def current_first(
    items: Sequence[T],
    memory: Callable[[T], Memory],
    reading: TextReading,
    *,
    window: int,
    by_words: bool = True,
    asked: frozenset[str] = frozenset(),
) -> tuple[list[T], dict[str, str]]:
    """``items`` with each newer sibling moved just above its older one (module docstring).

    Only the first ``window`` items are compared, each pair once. Without
    ``by_words`` only a save's contest or the same single-valued slot makes siblings (a
    list by priority, which no query narrowed to one topic). ``asked``, the question's
    index terms, narrows the topic: two memories of one subject that share a word the
    question asked about are siblings when the newer says it changed or moved on. Returns
    the new order and ``{older id: newer id}`` for the olders that are marked.
    """
    head = list(items[:window])
    read = [(m, facts_of(m, reading)) for m in (memory(item) for item in head)]
    marks: dict[str, str] = {}
    newer_of: dict[str, set[str]] = {}  # id -> ids of its newer siblings
    for i, a in enumerate(read):
        for b in read[i + 1 :]:
            older, newer = (
                (a, b) if (a[0].created_at, a[0].id) < (b[0].created_at, b[0].id) else (b, a)
            )
            if _newer_sibling(older, newer, marks, by_words, asked):
                newer_of.setdefault(older[0].id, set()).add(newer[0].id)
    if newer_of:
        for _ in range(len(head)):  # each pass moves one newer sibling up; bounded
            moved = False
            for i in range(len(head)):
                later = newer_of.get(memory(head[i]).id)
                j = next(
                    (k for k in range(i + 1, len(head)) if later and memory(head[k]).id in later),
                    None,
                )
                if j is not None:
                    head.insert(i, head.pop(j))
                    moved = True
                    break
            if not moved:
                break
    return head + list(items[window:]), marks


def _newer_sibling(
    older_read: tuple[Memory, Facts],
    newer_read: tuple[Memory, Facts],
    marks: dict[str, str],
    by_words: bool,
    asked: frozenset[str],
) -> bool:
    """Whether ``newer`` states the same thing as ``older``, later; marks ``older`` if so."""
    (older, a), (newer, b) = older_read, newer_read
    if older.contested_by == newer.id:
        marks[older.id] = newer.id
        return True
    if a.subject != b.subject:
        return False
    if not (a.kinds & b.kinds):
        # the same words only make siblings of two that also name different values, or of
        # a newer one saying something changed: two memories on one topic are more often
        # two facts than one fact and its update
        if not by_words:
            return False
        shared = a.topic & b.topic
        if shared:  # (names read only when needed: most pairs share nothing)
            shared -= a.named | b.named
        overlap = len(shared) / max(1, min(len(a.topic), len(b.topic)))
        alike = len(shared) >= 2 and overlap >= 0.4
        by_topic = (alike or (shared and overlap >= 0.5 and b.changes)) and (
            b.changes or _differ(a, b)
        )
        if not (by_topic or (_asked_of_both(a, b, asked) and b.moved_on)):
            return False
    if b.adds:
        return False
    if _differ(a, b):
        marks[older.id] = newer.id
    return True


def _asked_of_both(a: Facts, b: Facts, asked: frozenset[str]) -> bool:
    """Whether both state facts and hold a word the question asked about, its own to one.

    Not for a transcript's turns: a conversation comes back to a topic in passing, and its
    newer turn on it is no newer fact (on LoCoMo, reading turns this way put the older
    evidence below chatter: hybrid MRR@10 40 -> 34).
    """
    shared = (a.terms & b.terms & asked) - _COMMON
    if not shared or a.speaker or b.speaker:
        return False
    return any(t in a.topic or t in b.topic for t in shared)


def _differ(a: Facts, b: Facts) -> bool:
    """Each names a value (a number, code or name) the other does not."""
    return bool(a.values - b.values and b.values - a.values)
