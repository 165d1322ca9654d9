"""Pure text -> FTS5 query conversion, safe against any user input.

Each word becomes a quoted term and the terms are OR-ed: a raw sentence passed to
MATCH is an implicit AND and finds almost nothing, and FTS syntax typed by a user
(quotes, NEAR, ``*``, ``-``, parentheses, column filters) must never be interpreted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["cjk_bigrams", "cjk_index_text", "fts_query", "match_any", "query_terms", "quote"]

_WORD = re.compile(r"\w+", re.UNICODE)
# Hiragana, katakana, CJK ideographs, halfwidth katakana, hangul: scripts written without
# spaces, where a tokenizer cannot find word boundaries.
_CJK = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af]+"
)
_MAX_QUERY_TERMS = 32

# Words that match most memories and say nothing about any of them: OR-ing them into a
# query only makes SQLite rank every row. Dropped unless a query has nothing else.
_STOPWORDS = frozenset(
    "a an and are as at be but by do does did for from had has have he her him his how i "
    "in is it its me my of on or our she so that the their them they this to was we "
    "were what when where which who why will with you your s t m ll re ve d".split()
)


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping two-character pieces of every CJK run (a lone character stays whole).

    SQLite's unicode61 tokenizer would index "私の猫が好き" as a single token, so a
    search for "猫が好き" could never find "猫が大好き". Querying bigrams, as Lucene's CJK
    analyzer does, matches any word of two or more characters.
    """
    pieces: list[str] = []
    for run in _CJK.findall(text):
        pieces.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return pieces


def cjk_index_text(text: str) -> str:
    """What the keyword index stores for CJK text: every character and every bigram.

    Characters too, because many Japanese and Chinese words are one character (猫, 母).
    """
    runs = _CJK.findall(text)
    return " ".join([*(c for run in runs for c in run), *cjk_bigrams(text)])


def query_terms(text: str, max_terms: int = _MAX_QUERY_TERMS) -> list[str]:
    """Distinct lowercase words of ``text`` worth matching, in order of appearance.

    Words of space-separated scripts come whole; CJK text comes as bigrams (see
    ``cjk_bigrams``). Stop words are dropped unless nothing else is left. With more than
    ``max_terms`` terms the longest are kept: long words are the rare ones (Zipf), which
    carry a match, while every extra common term makes SQLite rank many more rows.
    """
    words = [w.lower() for w in _WORD.findall(_CJK.sub(" ", text))]
    words = list(dict.fromkeys([*words, *cjk_bigrams(text)]))
    terms = [w for w in words if w not in _STOPWORDS] or words
    if len(terms) > max_terms:
        keep = set(sorted(terms, key=len, reverse=True)[:max_terms])
        terms = [t for t in terms if t in keep][:max_terms]
    return terms


def quote(term: str) -> str:
    """One FTS5 string term: everything inside is literal text, never syntax."""
    return '"' + term.replace('"', '""') + '"'


def match_any(terms: Sequence[str]) -> str | None:
    """An FTS5 MATCH expression for any of ``terms``; None for no terms."""
    return " OR ".join(quote(t) for t in terms) or None


def fts_query(text: str, max_terms: int = _MAX_QUERY_TERMS) -> str | None:
    """An FTS5 MATCH expression OR-ing the words of ``text``; None if it has none.

    >>> fts_query('say "hi" NEAR you*')
    '"say" OR "hi" OR "near"'
    """
    return match_any(query_terms(text, max_terms))
