"""Pure text -> FTS5 query conversion, safe against any user input.

Each word becomes a quoted term and the terms are OR-ed: a raw sentence passed to
MATCH is an implicit AND and finds almost nothing, and FTS syntax typed by a user
(quotes, NEAR, ``*``, ``-``, parentheses, column filters) must never be interpreted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["fts_query", "match_any", "query_terms", "quote"]

_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_QUERY_TERMS = 32

# Words that match most memories and say nothing about any of them: OR-ing them into a
# query only makes SQLite rank every row. Dropped unless a query has nothing else.
_STOPWORDS = frozenset(
    "a an and are as at be but by do does did for from had has have he her him his how i "
    "in is it its me my of on or our she so that the their them they this to was we "
    "were what when where which who why will with you your s t m ll re ve d".split()
)


def query_terms(text: str, max_terms: int = _MAX_QUERY_TERMS) -> list[str]:
    """Distinct lowercase words of ``text`` worth matching, in order of appearance.

    Stop words are dropped unless nothing else is left. With more than ``max_terms``
    words the longest are kept: long words are the rare ones (Zipf), which carry a
    match, while every extra common term makes SQLite rank many more rows.
    """
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))
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
