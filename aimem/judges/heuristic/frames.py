"""Same frame, new value: two clauses that say the same thing but for one differing span.

"Oolong is my usual order" -> "Genmaicha is my usual order", "The offsite is on 7 March"
-> "... on 14 March", "I run 3 times a week" -> "I run 5 times a week": the two clauses are
aligned word by word (``difflib``), and the newer replaces the older when everything but
one span is shared, that span sits where a value goes (not in the subject: "my physio
appointment" is not "my dentist appointment"), the shared words carry content (not just
"I like"), and the frame is not one of the facts that add up (a second allergy, language or
hobby). Japanese is aligned character by character, with the value after the topic (は).

Example:
    >>> same_frame("Oolong is my usual order.", "Genmaicha is my usual order.")
    'genmaicha replaces oolong'
    >>> same_frame("I'm allergic to peanuts.", "I'm allergic to shellfish.")
    ''
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from itertools import pairwise

from aimem.judges.heuristic import changes, slots

__all__ = ["frame_tokens", "negated_only", "same_frame"]

#: The longest span that still reads as a value, in words (English) or characters.
_MAX_SPAN = 6
_MAX_SPAN_JA = 14
_WORD = re.compile(r"[a-z0-9]+(?:['./:\-][a-z0-9]+)*")
_EVENT_VERBS = frozenset(
    "meets starts begins ends finishes opens closes runs happens takes leaves departs arrives "
    "costs lasts".split()
)
_AUX = frozenset("is are was were am has have had will would can could does do did".split())
_PRONOUN = frozenset("i we he she they you it user".split())
_JA_FILLER = re.compile(r"今は|今では|現在は|現在|最近は|もう|実は|ちなみに|いま|[。、!?！？\s]")
_JA_PERSON = re.compile(slots.OTHER_PERSON_JA)
_JA_ADDING = re.compile(r"アレルギー|診断|持病|趣味|話せ|飼って|習って|行った|訪れ")
_JA_CONTENT = re.compile(r"[\u4e00-\u9fff\u30a0-\u30ffー々]{2,}")
_JA_FRAME_WORD = re.compile(r"[\u4e00-\u9fff\u30a0-\u30ffー々]")
_JA_NAME = re.compile(r"^\S{1,6}?(?:さん|くん|君|ちゃん|様|氏|先生)")
#: Topics that name no attribute: a person ("ユーザーは", "父は") or a time ("年末は").
_JA_NO_ATTRIBUTE = re.compile(
    r"(?:ユーザー|私|僕|俺|自分|わたし|うち|" + slots.OTHER_PERSON_JA + r")$"
    r"|^(?:年末|年始|週末|平日|休日|土日|朝|夜|昼|午前|午後|春|夏|秋|冬|来年|今年|毎日|毎朝|毎晩|"
    r"夏休み|冬休み|春休み|連休|お盆|正月|ゴールデンウィーク)$"
)


def frame_tokens(low: str) -> tuple[str, ...]:
    """The words of a lowercased English clause as the aligner compares them.

    Contractions are opened, thousands separators and currency signs dropped, words that
    only mark time ("now", "actually") removed, and "X is my usual order" turned into
    "my usual order is X" so that a value at the start aligns with one at the end.
    """
    text = low.replace("’", "'")
    for pattern, repl in changes.CONTRACTIONS:
        text = pattern.sub(repl, text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"^([^:]{2,40}):\s+", r"\1 is ", text)  # "working hours: 9-5" is a copula
    words = [w for w in _WORD.findall(text) if w not in changes.FRAME_FILLER]
    return tuple(_inverted(words))


def _inverted(words: list[str]) -> list[str]:
    """The value after its frame: "oolong is my usual order" -> "my usual order is oolong"."""
    k = next((i for i, w in enumerate(words) if w in changes.COPULA), -1)
    if (
        0 < k <= 5
        and k + 1 < len(words)
        and words[k + 1] in changes.DEFINITE
        and words[0] not in changes.DEFINITE
        and words[0] not in _PRONOUN
        and words[0] != "there"
    ):
        return [*words[k + 1 :], words[k], *words[:k]]
    return words


def negated_only(old_low: str, new_low: str) -> bool:
    """Whether ``new`` is ``old`` with a negation added ("I eat meat" -> "I do not eat meat")."""
    a, b = frame_tokens(old_low), frame_tokens(new_low)
    negation = {"not", "never", "no"}
    if not any(w in negation for w in b) or any(w in negation for w in a):
        return False
    stripped = tuple(w for w in b if w not in negation and w not in ("do", "does", "did"))
    base = tuple(w for w in a if w not in ("do", "does", "did"))
    content = [w for w in base if w not in changes.FUNCTION]
    return stripped == base and len(content) >= 1


def same_frame(old: str, new: str, *, changed: bool = False) -> str:
    """``"<new value> replaces <old value>"`` when ``new`` restates ``old``'s frame, else "".

    ``old`` and ``new`` are single clauses; ``changed`` says the new one carries a change
    word ("now", "switched"), which lets a frame that usually adds up ("I love Thai food")
    count as a replacement.
    """
    old_low, new_low = old.lower(), new.lower()
    if bool(slots.KANJI.search(old_low) or slots.KATAKANA.search(old_low)) != bool(
        slots.KANJI.search(new_low) or slots.KATAKANA.search(new_low)
    ):
        return ""
    if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", new_low):
        return _same_frame_ja(old_low, new_low)
    return _same_frame_en(frame_tokens(old_low), frame_tokens(new_low), changed)


def _same_frame_en(a: tuple[str, ...], b: tuple[str, ...], changed: bool) -> str:
    where = _one_span(a, b, gap=1, shortest=3, longest=_MAX_SPAN)
    if where is None:
        return ""
    i1, i2, j1, j2 = where
    was, now = a[i1:i2], b[j1:j2]
    if _past(now) and not _past(was):
        return ""  # "I was born in Leeds" tells history; "I live in Leeds" still holds
    span = set(was) | set(now)
    if span & {"and", "also", "too", "another", "both", "plus", "or", "not", "never", "no"}:
        return ""
    if span & changes.PERSON_WORDS or not (_valued(was) and _valued(now)):
        return ""
    shared = a[:i1] + a[i2:]
    content = [w for w in shared if w not in changes.FUNCTION and w not in slots.TIME_WORDS]
    if len(shared) < 2 or not content:
        return ""
    if not _value_position(a, i1):
        return ""
    if a[0] in _PRONOUN and i1 == 1 and max(len(was), len(now)) > 1:
        return ""  # verb and object both new ("prefers window seats", "wants early flights")
    if len(content) == 1 and a[0] in _PRONOUN and min(len(was), len(now)) > 2:
        return ""  # "I work in a warehouse" / "I work the night shift": two facts
    frame = " ".join(shared)
    single = bool(changes.SINGLE_VALUED.search(frame) or _ATTRIBUTE_IS.match(frame))
    if changes.ACCUMULATING.search(frame) and not single and not changed:
        return ""
    if changes.EPISODE.search(" ".join(a)) or changes.EPISODE.search(" ".join(b)):
        return ""
    return f"{' '.join(now)} replaces {' '.join(was)}"


def _one_span(
    a: Sequence[str], b: Sequence[str], *, gap: int, shortest: int, longest: int
) -> tuple[int, int, int, int] | None:
    """The one differing span of two aligned sequences, or None when they differ in more.

    Differences split by at most ``gap`` shared items are one span: "村上春樹" and
    "川上未映子" share 上 by chance, "9 5 pacific" and "8 4 central" nothing at all. Both
    sequences have at least ``shortest`` items, and neither side of the span more than
    ``longest`` (a longer one is another sentence, not a new value).
    """
    if len(a) < shortest or len(b) < shortest:
        return None
    ops = [
        op for op in SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    if not ops:
        return None
    for left, right in pairwise(ops):
        if right[1] - left[2] > gap or right[3] - left[4] > gap:
            return None
    i1, j1, i2, j2 = ops[0][1], ops[0][3], ops[-1][2], ops[-1][4]
    if i1 == i2 or j1 == j2:
        return None  # only added or only dropped words: no value was replaced
    if i2 - i1 > longest or j2 - j1 > longest:
        return None
    return i1, i2, j1, j2


#: "my watch is a ...": an attribute of the user's with one value at a time.
_ATTRIBUTE_IS = re.compile(r"(?:my|our|user's) (?:\w+ ){0,2}?\w+ is\b")

_PAST_WORDS = frozenset("was were had did born grew raised used".split())


def _past(span: tuple[str, ...]) -> bool:
    """Whether a span is told in the past ("was born", "lived"), not a present value."""
    return any(w in _PAST_WORDS or (len(w) > 4 and w.endswith("ed")) for w in span)


def _valued(span: tuple[str, ...]) -> bool:
    """A span that names something: a content word or a number, not only function words."""
    return any(w not in changes.FUNCTION or w[:1].isdigit() for w in span)


def _value_position(a: tuple[str, ...], start: int) -> bool:
    """Whether a span starting at ``start`` sits where a value goes, not in the subject.

    After a pronoun ("I run 3 times a week") anything may change; after a definite
    subject ("my physio appointment is ...") only what follows its verb.
    """
    if start == 0:
        return False
    if a[0] in _PRONOUN:
        return True
    # after a subject ("my physio appointment", "usual order") only what follows its verb;
    # the verb itself shared: "my brother is a pilot" is not "my brother hates jazz"
    verb = next((i for i, w in enumerate(a) if w in _AUX or (i and w in _EVENT_VERBS)), -1)
    return verb != -1 and start > verb


def _same_frame_ja(a_low: str, b_low: str) -> str:
    a, b = _JA_FILLER.sub("", a_low), _JA_FILLER.sub("", b_low)
    where = _one_span(a, b, gap=2, shortest=4, longest=_MAX_SPAN_JA)
    if where is None:
        return ""
    i1, i2, j1, j2 = where
    was, now = a[i1:i2], b[j1:j2]
    prefix = a[:i1]
    topic = max(prefix.rfind("は"), prefix.rfind("が"))
    if topic < 2:
        return ""
    head = prefix[:topic]
    content = [k for k in _JA_CONTENT.findall(head) if k not in slots.GENERIC_JA]
    if not content or _JA_ADDING.search(prefix) or _JA_PERSON.search(was + now):
        return ""
    if re.search(r"も|追加|ほかに|他に", now) or changes.EPISODE.search(a + b):
        return ""
    named = all(_JA_NAME.search(span) for span in (was, now))  # "私の担任は田中先生"
    if not (_ja_attribute(head) or named) and not (
        _JA_FRAME_WORD.search(a[topic + 1 : i1] + a[i2:]) and len(a) - i2 >= 2
    ):
        # "ユーザーは花粉症" / "ユーザーはマスクを持っている" share a subject only, and
        # "蕎麦が好き" / "蕎麦アレルギーではない" an object: a frame keeps its predicate
        return ""
    return f"{now} replaces {was}"


def _ja_attribute(head: str) -> bool:
    """Whether a Japanese topic names an attribute ("通勤手段", "車"), not a person or a time.

    "ユーザーは X" against "ユーザーは Y" shares only its subject: the frame must then be
    shared after the topic ("…に住んでいる", "週末に…をする").
    """
    last = re.split(r"の", head)[-1]
    return bool(last) and not _JA_NO_ATTRIBUTE.search(last) and last not in slots.GENERIC_JA
