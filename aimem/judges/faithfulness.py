"""A cheap check that an interpretation keeps its memory's facts.

Small local models (1-8B) sometimes distort what they restate: they swap kin ("my
daughter" becomes "the user's mother"), drop a negation, lose a number or a name, or
address the user as "you". ``unfaithful_reason`` catches those few distortions with word
lists and regexes, in English and Japanese (either side in either language), so the judge
can re-ask once with the reason and otherwise keep the content itself. It only flags what
it can check: a fact it cannot compare (a kanji name, an idiom) is never a reason.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator

from aimem.judges import faithfulness_terms

_MARKER = re.compile(r"\[[a-z_]+=[^\]]*\]")
_SPACE = re.compile(r"\s+")
_UNIFORM = str.maketrans("０１２３４５６７８９，．：’‘", "0123456789,.:''")
_JAPANESE, _KANJI = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]"), re.compile(r"[\u3400-\u9fff]")


_KIN, _LINEAGE, _alternation = (
    faithfulness_terms.KIN_LOOKUP,
    faithfulness_terms.LINEAGE,
    faithfulness_terms.alternation,
)
_KIN_WORDS = re.compile(
    r"(?<![a-z])(?:"
    + _alternation([w for w in _KIN if w.isascii()])
    + r")(?![a-z])|"
    + _alternation([w for w in _KIN if not w.isascii()])
)


_FIRST_PERSON = re.compile(faithfulness_terms.FIRST_PERSON)
_SECOND_PERSON = re.compile(faithfulness_terms.SECOND_PERSON)
_THIRD_PERSON = "write about them in the third person"
_THANKS = re.compile(r"\bthank you\b")
_SELF_ROLE = re.compile(faithfulness_terms.SELF_ROLE)
_NEGATION = re.compile(faithfulness_terms.NEGATION_EN + "|" + faithfulness_terms.NEGATION_JA)
_NEGATION_IDIOMS = re.compile(
    r"\b(?:"
    + faithfulness_terms.NEGATION_IDIOMS_EN
    + r")\b|"
    + faithfulness_terms.NEGATION_IDIOMS_JA
)
_CLAUSE = re.compile(r"[,.;:!?、。！？\n]|\bbut\b|けど|が、")
_POLARITY = re.compile(
    faithfulness_terms.NEGATIVE_POLARITY_EN + "|" + faithfulness_terms.NEGATIVE_POLARITY_JA
)
_SCALE_WORDS = _alternation(list(faithfulness_terms.SCALES))
_NUMBER = re.compile(
    r"(?P<digits>\d+(?:[.,]\d+)*)(?:\s*(?P<scale>" + _SCALE_WORDS + r")(?![a-z]))?"
)
_ONE_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_SEPARATOR = re.compile("[.,]")
_PM = re.compile(r"\s*(?:pm|p\.m\.)")
_REQUIRED_WORD = re.compile(r"\b(?:" + "|".join(faithfulness_terms.REQUIRED_NUMBER_WORDS) + r")\b")
_NUMBER_WORD = re.compile(r"\b(?:" + _alternation(list(faithfulness_terms.NUMBER_WORDS)) + r")\b")
_MONTH = re.compile(r"\b(?:" + _alternation(list(faithfulness_terms.MONTH_NUMBERS)) + r")\b")
_KANJI_NUMBER = re.compile(r"[〇零一二三四五六七八九十百千万億]+")
_KANJI_MARK = re.compile(r"[十百千万億]")
_KANJI_ASCII = str.maketrans({c: str(v) for c, v in faithfulness_terms.KANJI_DIGITS.items()})
_KANJI_MAX_CHARS = 1000
_PM_HOURS = {str(h): str(h + 12) for h in range(1, 12)}
_PM_HOURS_BACK = {v: k for k, v in _PM_HOURS.items()}
_CAPITALISED = re.compile(r"(?<![A-Za-z0-9'])[A-Z][a-zA-Z]*(?:['-][A-Za-z]+)*")
_SENTENCE_OPENERS = set(".!?。！？:;\"'“”(「『【-*•>#")
_JA_NAME, _JA_NAME_IN_RUN = (
    re.compile(faithfulness_terms.JA_NAME_CONTEXTS),
    re.compile(faithfulness_terms.JA_NAME_IN_RUN),
)
_QUOTED_CHARS = 60
_ROMAJI_PAIR = re.compile(_alternation(list(faithfulness_terms.ROMAJI)))
_FOLDS = tuple((re.compile(pattern), new) for pattern, new in faithfulness_terms.SPELLING_FOLDS)
_NOT_LATIN = re.compile("[^a-z]+")


def unfaithful_reason(content: str, interpretation: str) -> str | None:
    """Why ``interpretation`` distorts ``content``, in one sentence; None if it is faithful.

    Checks, first problem wins: the user addressed as "you", kin or pets swapped or
    dropped, a negation lost or added, a number lost, a name lost.
    """
    if _verbatim(content, interpretation):
        return None
    content = _MARKER.sub(" ", content).translate(_UNIFORM)
    interpretation = _MARKER.sub(" ", interpretation).translate(_UNIFORM)
    if not content.strip() or _verbatim(content, interpretation):
        return None
    low_content, low_interpretation = content.lower(), interpretation.lower()
    for check in (_addressing, _kinship, _negation, _numbers):
        if (reason := check(low_content, low_interpretation)) is not None:
            return reason
    return _names(content, interpretation)


def _verbatim(content: str, interpretation: str) -> bool:
    """The interpretation quotes the content whole (a stub's reply), adding no "not"/"you"."""
    said, told = (_SPACE.sub(" ", t).strip().casefold() for t in (content, interpretation))
    added = told.replace(said, " ") if said in told else None
    return added is not None and not any(
        p.search(added) and not p.search(said) for p in (_NEGATION, _SECOND_PERSON)
    )


def _addressing(content: str, interpretation: str) -> str | None:
    """The interpretation must speak about the user, not to them."""
    said = _SECOND_PERSON.findall(_THANKS.sub(" ", interpretation))
    if len(said) > len(_SECOND_PERSON.findall(_THANKS.sub(" ", content))):
        return f'the interpretation addresses the user ("{said[0]}"); {_THIRD_PERSON}'
    return None


def _kin_mentions(text: str) -> list[tuple[str, tuple[str, ...], bool]]:
    """Each kin word once: as written, its relations, whether it must be kept (no self-role)."""
    mentions = []
    for m in _KIN_WORDS.finditer(text):
        relations, strong = _KIN[m.group()]
        if strong and _SELF_ROLE.search(text, max(0, m.start() - 12), m.start()):
            strong = False  # "I'm a mother of two": the user's role, and it implies children
            lineage = set().union(*(_LINEAGE[r] for r in relations))
            relations += tuple(
                v for k, v in faithfulness_terms.SELF_ROLE_IMPLIES.items() if k in lineage
            )
        mentions.append((m.group(), relations, strong))
    return list(dict.fromkeys(mentions))  # compared pairwise by the callers: no repeats


def _related(a: str, b: str) -> bool:
    """One names the other or a broader relation (a son is a child; a child may be a son)."""
    return a in _LINEAGE[b] or b in _LINEAGE[a]


def _kinship(content: str, interpretation: str) -> str | None:
    """Every relation the content names is kept, and none is invented."""
    said, told = _kin_mentions(content), _kin_mentions(interpretation)
    said_relations = {r for _, rels, _ in said for r in rels}
    told_relations = {r for _, rels, _ in told for r in rels}
    invented = [
        (word, rels[0])
        for word, rels, strong in told
        if strong and not any(_related(r, s) for r in rels for s in said_relations)
    ]
    for word, rels, strong in said:
        if not strong or any(_related(r, t) for r in rels for t in told_relations):
            continue
        owner = "an " if rels[0][0] in "aeiou" else "a "
        if _FIRST_PERSON.search(content) or _JAPANESE.search(content):
            owner = "the user's "
        about = owner + rels[0] + (f' ("{word}")' if word != rels[0] else "")
        if invented:
            return f'the content is about {about}, but the interpretation says "{invented[0][0]}"'
        return f"the content is about {about}, the interpretation leaves it out"
    if invented:
        word, relation = invented[0]
        return f'the interpretation says "{word}", but the content mentions no {relation}'
    return None


def _negation(content: str, interpretation: str) -> str | None:
    """A negated fact stays negated (in any wording), and a plain one is not negated."""
    said = _NEGATION.search(_NEGATION_IDIOMS.sub(" ", content))
    told = _NEGATION.search(_NEGATION_IDIOMS.sub(" ", interpretation))
    if said and not told and not _polarity_kept(interpretation, content):
        return f'the content is negated ("{said.group()}"), the interpretation is not'
    if told and not said and not _polarity_kept(content, interpretation):
        return f'the interpretation is negated ("{told.group()}"), the content is not'
    return None


def _polarity_kept(plain: str, negated: str) -> bool:
    """``plain`` says the negation otherwise ("dislikes"), not by the word negated."""
    negated_words: set[str] = set()
    for clause in _CLAUSE.split(_NEGATION_IDIOMS.sub(" ", negated)):
        if _NEGATION.search(clause):
            negated_words.update(m.group() for m in _POLARITY.finditer(clause))
    return any(m.group() not in negated_words for m in _POLARITY.finditer(plain))


def _number_parts(token: str) -> list[tuple[str, str]]:
    """The numbers in one digit token, as written and canonical: 1,000 and 3.5 are one."""
    if _ONE_NUMBER.fullmatch(token):
        return [(token, _canonical(token.replace(",", "")))]
    return [(part, _canonical(part)) for part in _SEPARATOR.split(token)]


def _canonical(number: str, scale: str | None = None) -> str:
    """The number without padding zeros ("05" is "5", "3.50" is "3.5"), times its scale.

    Worked on the digits as text, never as int or Decimal: a number of any length is
    exact and cannot hit Python's 4,300-digit int limit (a scale is a power of ten).
    """
    if not number.isascii():  # other scripts' digits (٣): what Decimal would read
        number = "".join(c if c == "." else str(unicodedata.decimal(c)) for c in number)
    whole, _, fraction = number.partition(".")
    shift = faithfulness_terms.SCALES.get(scale or "", 0)
    fraction = fraction.ljust(shift, "0")
    whole, fraction = (whole + fraction[:shift]).lstrip("0") or "0", fraction[shift:].rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def _stated_numbers(text: str) -> list[tuple[str, set[str]]]:
    """Each number the content states, with the values that count as keeping it."""
    stated: list[tuple[str, set[str]]] = []
    for digits, scale in dict.fromkeys(m.group("digits", "scale") for m in _NUMBER.finditer(text)):
        parts = _number_parts(digits)
        for written, value in parts:
            if value == "0" and len(written) > 1:
                continue  # the ":00" of a time, which "7 a.m." rightly drops
            scaled = _canonical(value, scale) if len(parts) == 1 else value
            stated.append((written, {value, scaled}))
    words = dict.fromkeys(_REQUIRED_WORD.findall(text))
    return stated + [(w, {faithfulness_terms.REQUIRED_NUMBER_WORDS[w]}) for w in words]


def _kept_numbers(text: str) -> set[str]:
    """Every value an interpretation expresses, in digits, words, kanji or month names."""
    kept: set[str] = set()
    found = {
        (m["digits"], m["scale"], bool(_PM.match(text, m.end()))) for m in _NUMBER.finditer(text)
    }
    for digits, scale, pm in found:  # each distinct number once: a text may repeat one
        parts = [value for _, value in _number_parts(digits)]
        kept.update(parts)
        if len(parts) == 1:
            kept.add(_canonical(parts[0], scale))
            if parts[0] in _PM_HOURS and pm:
                kept.add(_PM_HOURS[parts[0]])  # "3 p.m." keeps the content's 15:00
    kept.update(faithfulness_terms.NUMBER_WORDS[w] for w in _NUMBER_WORD.findall(text))
    kept.update(v for k in _KANJI_NUMBER.findall(text) if (v := _kanji_value(k)) is not None)
    kept.update(faithfulness_terms.MONTH_NUMBERS[m] for m in _MONTH.findall(text))
    kept.update([_PM_HOURS_BACK[n] for n in kept if n in _PM_HOURS_BACK])
    return kept


def _kanji_value(numeral: str) -> str | None:
    """二十三 is "23", 三万 is "30000", 二〇二四 is "2024"; None for a run no one writes.

    Digits alone are read positionally as text, at any length. A numeral with units is
    summed as an int, which stays exact and far below the int-to-str limit up to
    ``_KANJI_MAX_CHARS`` characters (its value has at most 9 more digits than it has
    characters); a longer one is no number, and is not read.
    """
    if not _KANJI_MARK.search(numeral):
        return numeral.translate(_KANJI_ASCII).lstrip("0") or "0"
    if len(numeral) > _KANJI_MAX_CHARS:
        return None
    total = section = digit = 0
    for char in numeral:
        if char in faithfulness_terms.KANJI_DIGITS:
            digit = digit * 10 + faithfulness_terms.KANJI_DIGITS[char]
        elif char in faithfulness_terms.KANJI_UNITS:
            section, digit = section + (digit or 1) * faithfulness_terms.KANJI_UNITS[char], 0
        else:
            total += ((section + digit) or 1) * faithfulness_terms.KANJI_SECTIONS[char]
            section = digit = 0
    return str(total + section + digit)


def _numbers(content: str, interpretation: str) -> str | None:
    """Every number the content states is still there (reformatting allowed)."""
    kept = _kept_numbers(interpretation)
    for surface, values in _stated_numbers(content):
        if not values & kept:
            return f"the content says {_clip(surface)}, the interpretation leaves it out"
    return None


def _hiragana(text: str) -> str:
    return "".join(chr(ord(c) - 0x60) if "ァ" <= c <= "ヶ" else c for c in text)


def _romanised(text: str) -> str:
    """Kana turned into Hepburn romaji (everything else kept), for a loose comparison."""
    return _ROMAJI_PAIR.sub(lambda m: faithfulness_terms.ROMAJI[m.group()], _hiragana(text))


def _loose(text: str) -> str:
    """Latin letters only, with spelling variants folded (shi/si, ō/ou/o, tt/t, l/r)."""
    text = _NOT_LATIN.sub(" ", unicodedata.normalize("NFKD", _romanised(text).lower()))
    for pattern, replacement in _FOLDS:
        text = pattern.sub(replacement, text)
    return text


def _english_names(text: str) -> list[str]:
    """Capitalised words that are not the first word of a sentence, nor common words."""
    names = []
    for m in _CAPITALISED.finditer(text):
        word, opener = m.group().removesuffix("'s"), m.start()
        while opener and text[opener - 1].isspace():  # each gap once: linear on any text
            opener -= 1
        if not opener or text[opener - 1] in _SENTENCE_OPENERS or "\n" in text[opener : m.start()]:
            continue
        common = len(word) < 2 or word.isupper() or word.lower() in faithfulness_terms.NOT_NAMES
        if not common and not _KIN_WORDS.fullmatch(word.lower()):
            names.append(word)
    return names


def _kana_names(text: str) -> list[str]:
    """Kana names marked as names: さくらちゃん, 名前はミケ, ポチという名前."""
    kin_starts, kin_ends = [], []
    for m in _KIN_WORDS.finditer(text):  # in order, not overlapping: ends sorted too
        kin_starts.append(m.start())
        kin_ends.append(m.end())
    names = []
    for start, end, name in _ja_name_spans(text):
        k = bisect.bisect_right(kin_ends, start)  # the first kin word ending after start
        if k < len(kin_starts) and kin_starts[k] < end:
            continue
        lead = 0
        while len(name) - lead > 2 and name[lead] in faithfulness_terms.JA_LEADING_PARTICLES:
            lead += 1
        if not name.startswith(faithfulness_terms.JA_NOT_NAMES, lead):
            names.append(name[lead:])
    return names


def _ja_name_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """What ``finditer`` of the naming constructions would find, in linear time.

    ``_JA_NAME`` starts a hiragana name only where a hiragana run starts, so a long run
    is not tried again at every character. A match can end inside a run (名前はさくら|と,
    ミケちゃん|はなこさん): there only a hiragana name can start, and if it does not start
    right where the match ends it starts nowhere in the rest of the run.
    """
    pos = 0
    while (m := _JA_NAME.search(text, pos)) is not None:
        group = next(g for g in ("a", "b", "c") if m.group(g))
        yield (*m.span(group), m.group(group))
        pos = m.end()
        while (m := _JA_NAME_IN_RUN.match(text, pos)) is not None:
            yield (*m.span("b"), m.group("b"))
            pos = m.end()


def _names(content: str, interpretation: str) -> str | None:
    """Every name the content gives is kept, romanised or not; uncheckable ones pass."""
    kept, kana_kept = _Folded(interpretation), _hiragana(interpretation)
    japanese = _JAPANESE.search(interpretation) is not None
    for name in dict.fromkeys(_english_names(content)):
        if not japanese and not kept.has(name):
            return f'the content names "{_clip(name)}", the interpretation leaves it out'
    foreign: bool | None = None  # the interpretation names someone the content does not
    kanji = _KANJI.search(interpretation) is not None
    for name in dict.fromkeys(_kana_names(content)):
        if _hiragana(name) in kana_kept or kept.has(name):
            continue
        if foreign is None:  # found once, only if needed: a name lookup scans the text
            said = _Folded(content)
            foreign = any(not said.has(n) for n in dict.fromkeys(_english_names(interpretation)))
        if foreign or (kanji and not re.search("[ァ-ヴ]", name)):
            continue  # a hiragana name may be written in kanji: cannot check
        return f'the content names "{_clip(name)}", the interpretation leaves it out'
    return None


class _Folded:
    """A text folded by ``_loose`` once, to look many names up in."""

    def __init__(self, text: str) -> None:
        self.text = _loose(text)
        self.squashed = self.text.replace(" ", "")

    def has(self, name: str) -> bool:
        """``name`` is in the text, as words or run together ("VS Code", "VSCode")."""
        loose_name = _loose(name).strip()
        return loose_name in self.text or loose_name.replace(" ", "") in self.squashed


def _clip(term: str) -> str:
    """A term quoted in a reason, cut short: a reason is one sentence for a re-ask."""
    return term if len(term) <= _QUOTED_CHARS else term[: _QUOTED_CHARS - 1] + "…"


def invented_reason(source: str, statement: str) -> str | None:
    """Why ``statement``, a fact drawn from ``source``, says what ``source`` does not; or None.

    The converse of ``unfaithful_reason`` for extracted facts: a statement holds one fact
    of a turn, so leaving things out is fine; only a "you" the source lacks, or a person,
    negation, number or name it does not give, is a reason.
    """
    statement = _MARKER.sub(" ", statement).translate(_UNIFORM)
    source = _MARKER.sub(" ", source).translate(_UNIFORM)
    if _verbatim(statement, source):
        return None
    low_statement, low_source = statement.lower(), source.lower()
    if (reason := _addressing(low_source, low_statement)) is not None:
        return reason.replace("the interpretation", "the statement")
    said = {r for _, rels, _ in _kin_mentions(low_source) for r in rels}
    for word, rels, strong in _kin_mentions(low_statement):
        if strong and not any(_related(r, s) for r in rels for s in said):
            return f'the statement says "{word}", but the user mentions no {rels[0]}'
    negated = _NEGATION.search(_NEGATION_IDIOMS.sub(" ", low_statement))
    if (
        negated
        and not _NEGATION.search(_NEGATION_IDIOMS.sub(" ", low_source))
        and not _polarity_kept(low_source, low_statement)
    ):
        return f'the statement is negated ("{negated.group()}"), what the user said is not'
    kept = _kept_numbers(low_source)
    for surface, values in _stated_numbers(low_statement):
        if not values & kept:
            return f"the statement says {_clip(surface)}, which the user never gave"
    named = _names(statement, source)
    if named is not None:
        return named.replace("the content", "the statement").replace(
            "the interpretation leaves it out", "which the user never gave"
        )
    return None
