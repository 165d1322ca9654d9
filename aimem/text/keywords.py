"""Pure text -> keyword terms, for the index and for queries, safe against any user input.

aimem tokenizes keyword text itself rather than leaving it to SQLite: words are folded
(lowercase, diacritics removed), Porter-stemmed (``stemmer.py``) and CJK text becomes
characters and bigrams. Every term the index holds is then prefixed with its
namespace (``namespace_prefix``), so each namespace has its own posting lists: what one
namespace stores can change neither what another finds nor what its searches cost.

Query words become quoted terms that are OR-ed: a raw sentence passed to MATCH is an
implicit AND and finds almost nothing, and FTS syntax typed by a user (quotes, NEAR,
``*``, ``-``, parentheses, column filters) must never be interpreted.

The store's own framing ("the user", ユーザー, the ``user_context`` name) is no search term:
every interpretation says it, so it matched every memory ("Where does the user live?"
found the cat). ``unframed`` takes it out of interpretations before they are indexed and
out of questions before they are matched; the user's own words keep it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from aimem.text.stemmer import stem

__all__ = [
    "cjk_bigrams",
    "cjk_index_text",
    "fts_query",
    "index_terms",
    "match_any",
    "memory_terms",
    "namespace_prefix",
    "query_terms",
    "quote",
    "scoped",
    "search_terms",
    "unframed",
]

# Hiragana, katakana, CJK ideographs, halfwidth katakana, hangul: scripts written without
# spaces, where a tokenizer cannot find word boundaries.
_CJK = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af]+"
)
_MAX_QUERY_TERMS = 32
# Everything but letters and digits separates words (SQLite's unicode61 rule).
_SEPARATORS = re.compile(r"[\W_]+", re.UNICODE)

# Words that match most memories and say nothing about any of them: OR-ing them into a
# query only makes SQLite rank every row. Dropped unless a query has nothing else.
_STOPWORDS = frozenset(
    "a an and are as at be but by do does did for from had has have he her him his how i "
    "in is it its me my of on or our she so that the their them they this to was we "
    "were what when where which who why will with you your s t m ll re ve d "
    # a question's fillers: "Is the user allergic to anything?" asks about one thing
    "any anything anyone anybody some something someone ever there about can could would "
    "should please tell know".split()
)


def _fold(text: str) -> str:
    """Lowercase without diacritics (as SQLite's ``remove_diacritics``): café -> cafe."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def _words(text: str) -> list[str]:
    """Folded letter-and-digit runs outside CJK text, in order (``_`` separates too)."""
    return [w for w in _SEPARATORS.split(_fold(_CJK.sub(" ", text))) if w]


def index_terms(texts: Iterable[str]) -> str:
    """The keyword terms of ``texts`` as the index stores them: space-separated, repeats kept.

    Words are stemmed; CJK text gives its characters and bigrams (``cjk_index_text``).
    Repeats matter: BM25 weighs a term by how often a memory uses it.
    """
    terms: list[str] = []
    for text in texts:
        terms += [stem(w) for w in _words(text)]
        cjk = cjk_index_text(text)
        if cjk:
            terms.append(cjk)
    return " ".join(terms)


#: "the user", "The user's", "users'", "User:": how a store (or an LLM judge) frames a note.
_FRAMING_EN = re.compile(r"(?<![\w-])(?:the\s+)?users?(?:['’]s?)?(?![\w-])", re.IGNORECASE)
#: ユーザー (ユーザ) with the particle after it, so no stray particle makes a bigram.
_FRAMING_JA = re.compile(r"ユーザー?[のはがもをにへとで]?")


def unframed(text: str, user_context: str | None = None) -> str:
    """``text`` without the store's framing words: "the user", ユーザー, the ``user_context`` name.

    >>> unframed("The user's sister lives in Sendai.").split()
    ['sister', 'lives', 'in', 'Sendai.']
    """
    text = _FRAMING_JA.sub(" ", _FRAMING_EN.sub(" ", text))
    name = (user_context or "").strip()
    if name and len(name) <= 64:
        pattern = rf"(?<![\w-]){re.escape(name)}(?:['’]s?)?(?![\w-])"
        text = re.sub(pattern, " ", text, flags=re.IGNORECASE)
    return text


def memory_terms(
    content: str, interpretation: str, recall_terms: str = "", user_context: str | None = None
) -> str:
    """What the keyword index holds for one memory (``index_terms``).

    The content as the user said it, the interpretation without the store's framing,
    and the words that help recall it (a slot's synonyms: "residence live home"), which
    are indexed but never shown.
    """
    said = index_terms((content, unframed(interpretation, user_context)))
    # a slot's words stem alike ("live", "lives", "living"): each counts once, as a hint
    recall = " ".join(dict.fromkeys(index_terms([recall_terms]).split()))
    return f"{said} {recall}" if said and recall else said or recall


def search_terms(query: str, user_context: str | None = None) -> list[str]:
    """``query_terms`` of a question, its framing words left out unless nothing else is left."""
    return query_terms(unframed(query, user_context)) or query_terms(query)


def namespace_prefix(namespace: str) -> str:
    """What every index term of ``namespace`` starts with: its UTF-8 bytes in hex, then ``q``.

    Hex never contains ``q``, so the prefix ends unambiguously; the index triggers build
    the same prefix in SQL (``lower(hex(namespace)) || 'q'``).
    """
    return namespace.encode("utf-8").hex() + "q"


def scoped(terms: Iterable[str], namespace: str) -> list[str]:
    """Query words as the namespace's index terms: stemmed, prefixed, in order, distinct."""
    prefix = namespace_prefix(namespace)
    return list(dict.fromkeys(prefix + stem(t) for t in terms))


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
    ``cjk_bigrams``) and each kanji alone. Stop words are dropped unless nothing else is
    left. With more than ``max_terms`` terms the longest are kept: long words are the rare
    ones (Zipf), which carry a match, while every extra common term makes SQLite rank many
    more rows.
    """
    words = list(dict.fromkeys([*_words(text), *cjk_bigrams(text), *_kanji(text)]))
    terms = [w for w in words if w not in _STOPWORDS] or words
    if len(terms) > max_terms:
        keep = set(sorted(terms, key=len, reverse=True)[:max_terms])
        terms = [t for t in terms if t in keep][:max_terms]
    return terms


#: A kanji on its own is often a word (朝, 猫, 母); the index holds every character.
_KANJI = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _kanji(text: str) -> list[str]:
    """The kanji of ``text`` as terms: "朝何をする" finds "毎朝ジョギング" by 朝."""
    return _KANJI.findall(text)


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
