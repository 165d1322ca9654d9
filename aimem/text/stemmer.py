"""Porter's stemmer (1980), as SQLite's FTS5 ``porter`` tokenizer applies it.

aimem tokenizes keyword text itself (see ``keywords.py``) so that each namespace gets
its own index terms; this keeps the stemming search users had, so that "running"
still finds "runs". Like SQLite, only tokens of 3 to 64 ASCII characters are stemmed.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["stem"]

_VOWELS = frozenset("aeiou")
_MIN, _MAX = 3, 64


def _consonant(word: str, i: int) -> bool:
    c = word[i]
    if c in _VOWELS:
        return False
    if c == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """M in [C](VC)^m[V]: how many vowel-consonant sequences ``stem`` has."""
    m, previous_vowel = 0, False
    for i in range(len(stem)):
        vowel = not _consonant(stem, i)
        if previous_vowel and not vowel:
            m += 1
        previous_vowel = vowel
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (e.g. -hop, not -how)."""
    n = len(word)
    return (
        n >= 3
        and _consonant(word, n - 1)
        and not _consonant(word, n - 2)
        and _consonant(word, n - 3)
        and word[-1] not in "wxy"
    )


def _replace(word: str, rules: tuple[tuple[str, str], ...], min_measure: int) -> str:
    """Apply the first rule whose suffix matches, if its stem has measure > min_measure."""
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if _measure(stem) > min_measure else word
    return word


_STEP2 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("bli", "ble"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
    ("logi", "log"),
)
_STEP3 = (
    ("icate", "ic"),
    ("ative", ""),
    ("alize", "al"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ful", ""),
    ("ness", ""),
)
_STEP4 = (
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ment",
    "ent",
    "ion",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
)


def _longest_match(word: str, suffixes: tuple[str, ...]) -> str | None:
    matches = [s for s in suffixes if word.endswith(s)]
    return max(matches, key=len) if matches else None


def _step1ab(word: str) -> str:
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
        return word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            word = word[: -len(suffix)]
            if word.endswith(("at", "bl", "iz")):
                return word + "e"
            if _double_consonant(word) and word[-1] not in "lsz":
                return word[:-1]
            if _measure(word) == 1 and _cvc(word):
                return word + "e"
            return word
    return word


def _step4(word: str) -> str:
    suffix = _longest_match(word, _STEP4)
    if suffix is None:
        return word
    stem = word[: -len(suffix)]
    if suffix == "ion" and not stem.endswith(("s", "t")):
        return word
    return stem if _measure(stem) > 1 else word


def _step5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Porter stem of a lowercase ``word``; other tokens come back unchanged.

    >>> [stem(w) for w in ("running", "runs", "allergies", "happiness", "猫")]
    ['run', 'run', 'allergi', 'happi', '猫']
    """
    if not (_MIN <= len(word) <= _MAX) or not word.isascii():
        return word
    word = _step1ab(word)
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _replace(word, _STEP2, 0)
    word = _replace(word, _STEP3, 0)
    word = _step4(word)
    return _step5(word)
