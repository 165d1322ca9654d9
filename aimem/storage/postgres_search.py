"""PostgreSQL's keyword search: BM25 from kept statistics, within the same budgets as SQLite.

The terms are the namespace-prefixed ones ``keywords.scoped`` makes, held verbatim in a
``tsvector`` (``postgres_schema.py``). Triggers keep what BM25 needs in two tables: per
term, how many memories (all, and active) hold it (``aimem_terms``), and per term and
memory, how often it occurs there and the memory's length (``aimem_postings``). A search
reads the document frequencies of its terms in one lookup, picks the affordable ones as
SQLite does, and ranks their postings: its cost follows the postings it ranks, never
the table, and no row is unpacked to count. Ranking is FTS5's own BM25 (k1 1.2, b 0.75,
FTS5's idf clamp) rather than ``ts_rank``, which has no idf: the same query then ranks
the same memories in the same order on both backends, and fusion sees relevance on one
scale, higher-is-better. Document counts and average lengths are the namespace's own
(``aimem_fts_stats``), as the terms are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sqlalchemy import Connection, Float, column, text

from aimem.models import Memory
from aimem.storage.sql import MEMORIES, SearchFilters, memory_of
from aimem.storage.sqlite_search import RELATED_POSTINGS, SEARCH_POSTINGS
from aimem.text.keywords import scoped, search_terms

__all__ = ["affordable_terms", "keyword_matches", "term_stats"]

_RELATED_TERMS = 6
#: Bytes of the longest term indexed (``aimem_fts`` in ``postgres_schema``).
_LONGEST = 1024
_K1, _B = 1.2, 0.75
_ACTIVE = " AND p.active"
#: BM25 over the chosen terms' postings (``aimem_postings``: term frequency and length
#: per memory, read through its primary key), then the best rows, in one statement.
#: Document frequencies come from ``aimem_terms``, passed in as ``idfs``.
_RANK = """
WITH q AS (SELECT * FROM unnest(CAST(:terms AS text[]), CAST(:idfs AS float8[])) AS q(t, idf)),
ranked AS (
  SELECT p.seq, sum(q.idf * (p.tf * {k1p}) / (p.tf + {k1} * (1 - {b} + {b} * p.doclen
         / :avgdl))) AS rank
  FROM q JOIN aimem_postings AS p ON p.term = q.t{active}
  GROUP BY p.seq ORDER BY rank DESC, p.seq LIMIT :window)
SELECT ranked.rank AS aimem_rank, {columns}
FROM ranked JOIN memories ON memories.seq = ranked.seq ORDER BY ranked.rank DESC, ranked.seq
"""
_COLUMNS = ", ".join(f"memories.{column.name}" for column in MEMORIES.c)
#: The namespace's document count and total length, and the chosen column's document
#: frequency of each asked term, in one round trip.
_STATS = """
SELECT s.{docs}, s.{tokens},
       (SELECT coalesce(json_object_agg(term, {docs}), '{{}}') FROM aimem_terms
        WHERE term = ANY(CAST(:terms AS text[])) AND {docs} > 0)
FROM (SELECT 1) AS one LEFT JOIN aimem_fts_stats AS s ON s.namespace = :ns
"""


def keyword_matches(
    conn: Connection,
    namespace: str,
    query: str,
    *,
    limit: int,
    filters: SearchFilters = SearchFilters(),  # noqa: B008 - frozen, safe to share
    related: bool = False,
) -> list[tuple[Memory, float]]:
    """Keyword matches as ``(memory, relevance)``, best first; relevance is BM25.

    Only terms whose matches fit a budget are ranked, as on SQLite (see
    ``sqlite_search.affordable_terms``): a tight one for the ``related`` lookup on every
    save, a generous one for searches.
    """
    active = not filters.include_archived
    # The index leaves out terms past a lexeme's size (postgres_schema), so may the query.
    terms = scoped(search_terms(query, filters.user_context), namespace)
    terms = [t for t in terms if len(t.encode()) <= _LONGEST]
    if not terms:
        return []
    docs, avgdl, frequencies = term_stats(conn, namespace, terms, active)
    if related:
        chosen = affordable_terms(
            terms, frequencies, RELATED_POSTINGS, _RELATED_TERMS, keep_rarest=False
        )
    else:
        chosen = affordable_terms(terms, frequencies, SEARCH_POSTINGS, len(terms))
    if not chosen:
        return []
    sql = (
        text(
            _RANK.format(
                k1p=_K1 + 1, k1=_K1, b=_B, active=_ACTIVE if active else "", columns=_COLUMNS
            )
        )
        .bindparams(
            terms=[t for t, _ in chosen],
            idfs=[_idf(docs, df) for _, df in chosen],
            avgdl=avgdl,
        )
        .columns(column("aimem_rank", Float), *MEMORIES.c)
    )  # positional; timestamps come back aware
    window = limit * 2
    while True:
        rows = conn.execute(sql, {"window": window}).mappings().all()
        hits = [
            (memory, float(row["aimem_rank"]))
            for row in rows
            if (memory := memory_of(row)).namespace == namespace and filters.admits(memory)
        ]
        if len(hits) >= limit or len(rows) < window:
            return hits[:limit]
        window *= 4


def _idf(docs: int, df: int) -> float:
    """FTS5's idf: rare terms weigh more; one in over half the memories barely counts."""
    value = math.log((docs - df + 0.5) / (df + 0.5)) if docs else 0.0
    return value if value > 0 else 1e-6


def term_stats(
    conn: Connection, namespace: str, terms: Sequence[str], active: bool
) -> tuple[int, float, dict[str, int]]:
    """``(documents, average terms per document, {term: document frequency})``.

    All of the namespace's memories, or its active ones only, as the search covers; a
    term no memory holds is left out.
    """
    docs_column, tokens_column = ("active_docs", "active_tokens") if active else ("docs", "tokens")
    row = conn.execute(
        text(_STATS.format(docs=docs_column, tokens=tokens_column)),
        {"ns": namespace, "terms": list(terms)},
    ).one()
    docs, tokens = int(row[0] or 0), int(row[1] or 0)
    frequencies = {str(term): int(df) for term, df in (row[2] or {}).items()}
    return docs, (tokens / docs if docs and tokens else 1.0), frequencies


def affordable_terms(
    terms: Sequence[str],
    frequencies: dict[str, int],
    budget: int,
    max_terms: int,
    *,
    keep_rarest: bool = True,
) -> list[tuple[str, int]]:
    """The rarest of ``terms`` (with their document counts) fitting ``budget`` matches.

    The same choice as ``sqlite_search.affordable_terms``: counts past the budget tie
    there (its counting stops just past it), so they tie here too.
    """
    counts = [min(frequencies.get(t, 0), budget + 1) for t in terms]
    chosen: list[tuple[str, int]] = []
    spent = 0
    for capped, i in sorted((df, i) for i, df in enumerate(counts) if df):
        over = spent + capped > budget
        if len(chosen) == max_terms or (over and (chosen or not keep_rarest)):
            break
        chosen.append((terms[i], frequencies[terms[i]]))
        spent += capped
    return chosen
