"""aimem's Porter stemmer, word by word against SQLite FTS5's own ``porter`` tokenizer.

aimem stems its keyword terms itself (``aimem/text/stemmer.py``) and hands the index
terms that its tokenizer (``tokenize='ascii'``, ``storage/sqlite_schema.py``) only
splits on spaces; the stemmer means to stem as FTS5's ``porter`` does. The golden
answers come from SQLite: one row per word of ``data/stemmer_words.txt`` in an
in-memory ``porter ascii`` table (the porter stemmer over the same base tokenizer), read
back through an ``instance`` fts5vocab table, whose (term, doc) pairs map each row, so
each word, to its stem.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from aimem.text.stemmer import stem

WORDS_FILE = Path(__file__).parent / "data" / "stemmer_words.txt"

#: Words where aimem and SQLite differ today, with SQLite's stem: kept known so that the
#: test still catches any new difference. None is an English word; two rules differ:
#: - a suffix that is the whole word: SQLite applies "sses"->"ss", "ies"->"i" and
#:   "eed"->"ee" only with at least one letter before them (so "eed" falls through to
#:   the "ed" rule), aimem (like Porter's paper) applies them to the bare suffix too;
#: - "yy" left by -ed/-ing: SQLite counts a doubled y as a double consonant and drops
#:   one ("todayy" -> "today" -> "todai"); aimem, like Porter's reference code, reads
#:   the second y as a vowel and keeps both ("todayi").
KNOWN_DIFFERENCES = {
    "eed": "e",
    "eeds": "e",
    "ies": "ie",
    "sses": "sse",
    "todayyed": "todai",
    "todayying": "todai",
}


def _words() -> list[str]:
    lines = WORDS_FILE.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def _sqlite_stems(words: list[str]) -> dict[str, str]:
    """Each word's stem by FTS5's porter tokenizer (one row per word, read per doc)."""
    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE VIRTUAL TABLE words USING fts5(t, tokenize='porter ascii')")
        con.executemany("INSERT INTO words(rowid, t) VALUES (?, ?)", enumerate(words))
        con.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(words, 'instance')")
        instances = con.execute("SELECT doc, term FROM terms ORDER BY doc").fetchall()
    finally:
        con.close()
    assert len(instances) == len(words), "every word is one token"
    return {words[doc]: term for doc, term in instances}


@pytest.fixture(scope="module")
def golden() -> dict[str, str]:
    return _sqlite_stems(_words())


def test_the_word_list_is_varied_lowercase_ascii() -> None:
    words = _words()
    assert 2_000 <= len(words) <= 5_000
    assert len(set(words)) == len(words)
    assert all(w.isascii() and w.isalpha() and w.islower() for w in words)
    assert {"running", "relational", "generalizations", "allergies"} <= set(words)


def test_aimem_stems_every_word_as_sqlite_porter_does(golden: dict[str, str]) -> None:
    differences = {w: (sqlite, stem(w)) for w, sqlite in golden.items() if stem(w) != sqlite}
    new = {w: d for w, d in differences.items() if w not in KNOWN_DIFFERENCES}
    assert not new, "word: (SQLite porter, aimem) = " + ", ".join(
        f"{w}: {d}" for w, d in sorted(new.items())
    )
    # A known difference that is gone (or changed) is a list to update, not a pass.
    assert {w: s for w, (s, _) in differences.items()} == KNOWN_DIFFERENCES
