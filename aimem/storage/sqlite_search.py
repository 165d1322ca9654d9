"""SQLite's keyword search: FTS5 ranking over the namespace's own terms, within a budget.

Terms are the namespace-prefixed ones ``keywords.scoped`` makes, so document counts and
costs are each namespace's own. Relevance is returned higher-is-better (the negated
bm25, which SQLite reports lower-is-better), so fusion is the same for every backend.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, bindparam, select

from aimem.models import Memory
from aimem.storage.sql import MEMORIES, SearchFilters, m, memory_of
from aimem.text.keywords import match_any, quote, scoped, search_terms

__all__ = [
    "RELATED_POSTINGS",
    "SEARCH_POSTINGS",
    "affordable_terms",
    "compact_active_index",
    "keyword_matches",
]

_BY_SEQS = select(MEMORIES).where(m.seq.in_(bindparam("seqs", expanding=True)))


def keyword_matches(
    conn: Connection,
    namespace: str,
    query: str,
    *,
    limit: int,
    filters: SearchFilters = SearchFilters(),  # noqa: B008 - frozen, safe to share
    related: bool = False,
) -> list[tuple[Memory, float]]:
    """Keyword matches as ``(memory, relevance)``, best first; relevance is -bm25.

    Only terms whose matches fit a budget are ranked (see ``affordable_terms``): a tight
    one for the ``related`` lookup on every save, a generous one for searches.
    """
    index = "memories_fts" if filters.include_archived else "memories_active_fts"
    terms = scoped(search_terms(query, filters.user_context), namespace)
    if related:
        # Novelty needs a few close memories, not every match: when each word of the
        # content is common, the lookup finds nothing rather than ranking half the store.
        terms = affordable_terms(
            conn, index, terms, RELATED_POSTINGS, _RELATED_TERMS, keep_rarest=False
        )
    else:
        terms = affordable_terms(conn, index, terms, SEARCH_POSTINGS, len(terms))
    match = match_any(terms)
    if match is None:
        return []
    # Rank inside the index alone, then keep the namespace's rows that pass the filters.
    # Joining memories into the ranking query would look up every matching row, which
    # costs more than the ranking; widen the window only when too few rows survive.
    window = limit * 2
    while True:
        ranked = conn.exec_driver_sql(
            f"SELECT rowid, bm25({index}) AS rank FROM {index} WHERE {index} MATCH ? "
            "ORDER BY rank LIMIT ?",
            (match, window),
        ).all()
        rows = conn.execute(_BY_SEQS, {"seqs": [r[0] for r in ranked]}).mappings()
        found = {
            row["seq"]: memory
            for row in rows
            if (memory := memory_of(row)).namespace == namespace and filters.admits(memory)
        }
        if len(found) >= limit or len(ranked) < window:
            break
        window *= 4
    # SQLite's bm25 is lower-is-better; the seam's relevance is higher-is-better.
    hits = [(found[seq], -float(rank)) for seq, rank in ranked if seq in found]
    return hits[:limit]


#: Postings (term occurrences in memories) one search may rank, and a related lookup.
SEARCH_POSTINGS = 10_000
RELATED_POSTINGS = 300
_RELATED_TERMS = 6


def affordable_terms(
    conn: Connection,
    index: str,
    terms: Sequence[str],
    budget: int,
    max_terms: int,
    *,
    keep_rarest: bool = True,
) -> list[str]:
    """The rarest of ``terms`` whose memories add up to at most ``budget``.

    SQLite ranks every memory that matches any term, so a common word makes a query
    slow while adding almost nothing: BM25 weighs a term by its rarity. Terms are taken
    rarest first (absent ones skipped) while their document counts fit the budget. When
    none fits, ``keep_rarest`` keeps one anyway (a search must answer something);
    otherwise nothing is kept. In a small store every term fits and nothing changes.
    Counting stops just past the budget, so one statement prices all terms cheaply; past
    it, counts tie, which is why an over-budget term is never chosen by "rarity".
    """
    if not terms:
        return []
    # One statement whose text depends only on the number of terms; run below SQLAlchemy's
    # compiler, which would otherwise compile each new text afresh.
    count = f"(SELECT count(*) FROM (SELECT 1 FROM {index} WHERE {index} MATCH ? LIMIT ?))"
    sql = "SELECT " + ", ".join([count] * len(terms))
    params = tuple(p for t in terms for p in (quote(t), budget + 1))
    counts = conn.exec_driver_sql(sql, params).one()
    chosen: list[str] = []
    spent = 0
    for df, i in sorted((df, i) for i, df in enumerate(counts) if df):
        over = spent + df > budget
        if len(chosen) == max_terms or (over and (chosen or not keep_rarest)):
            break
        chosen.append(terms[i])
        spent += df
    return chosen


def compact_active_index(conn: Connection) -> None:
    """Merge the active keyword index so deleted entries stop costing every query.

    FTS5 keeps a tombstone for each archived memory until its segments merge; in a
    capped store nearly every memory is archived eventually, so without this the
    small active index would drag along the whole history.
    """
    conn.exec_driver_sql("INSERT INTO memories_active_fts(memories_active_fts) VALUES ('optimize')")
