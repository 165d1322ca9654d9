"""Pure text -> FTS5 query conversion, safe against any user input.

Each word becomes a quoted term and the terms are OR-ed: a raw sentence passed to
MATCH is an implicit AND and finds almost nothing, and FTS syntax typed by a user
(quotes, NEAR, ``*``, ``-``, parentheses, column filters) must never be interpreted.
"""

from __future__ import annotations

import re

__all__ = ["fts_query"]

_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_QUERY_TERMS = 32

# Words that match most memories and say nothing about any of them: OR-ing them into a
# query only makes SQLite rank every row. Dropped unless a query has nothing else.
_STOPWORDS = frozenset(
    "a an and are as at be but by do does did for from had has have he her him his how i "
    "in is it its me my of on or our she so that the their them they this to was we "
    "were what when where which who why will with you your s t m ll re ve d".split()
)


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression OR-ing the distinct words of ``text``; None if it has none.

    >>> fts_query('say "hi" NEAR you*')
    '"say" OR "hi" OR "near"'
    """
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))
    terms = [w for w in words if w not in _STOPWORDS] or words
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms[:_MAX_QUERY_TERMS])
