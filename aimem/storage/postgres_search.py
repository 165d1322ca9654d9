"""PostgreSQL's keyword search: BM25 over ``memories.fts``, within the same budgets as SQLite.

The terms are the namespace-prefixed ones ``keywords.scoped`` makes, held verbatim in a
``tsvector`` (``postgres_schema.py``), matched through a GIN index (the partial one over
active memories unless the search includes the archive). Ranking is FTS5's own BM25
(k1 1.2, b 0.75, FTS5's idf clamp) rather than ``ts_rank``, which has no idf: the same
query then ranks the same memories in the same order on both backends, and fusion sees
relevance on one scale, higher-is-better. Document counts and average lengths are the
namespace's own (``aimem_fts_stats``, kept by a trigger), as the terms are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sqlalchemy import Connection, bindparam, select, text

from aimem.models import Memory
from aimem.storage.sql import MEMORIES, SearchFilters, m, memory_of
from aimem.storage.sqlite_search import RELATED_POSTINGS, SEARCH_POSTINGS
from aimem.text.keywords import scoped, search_terms

__all__ = ["affordable_terms", "keyword_matches", "tsquery"]

_RELATED_TERMS = 6
#: Bytes of the longest term indexed (``aimem_fts`` in ``postgres_schema``).
_LONGEST = 1024
_K1, _B = 1.2, 0.75
_BY_SEQS = select(MEMORIES).where(m.seq.in_(bindparam("seqs", expanding=True)))
_ACTIVE = " AND archived_at IS NULL"
_RANK = """
WITH q AS (SELECT * FROM unnest(CAST(:terms AS text[]), CAST(:idfs AS float8[])) AS q(t, idf))
SELECT h.seq, sum(q.idf * (u.tf * {k1p}) / (u.tf + {k1} * (1 - {b} + {b} * h.term_count
       / :avgdl))) AS rank
FROM (SELECT seq, fts, term_count FROM memories
      WHERE fts @@ CAST(:query AS tsquery){active}) AS h
CROSS JOIN LATERAL (SELECT lexeme, coalesce(array_length(positions, 1), 1) AS tf
                    FROM unnest(h.fts)) AS u
JOIN q ON q.t = u.lexeme
GROUP BY h.seq ORDER BY rank DESC, h.seq LIMIT :window
"""


def tsquery(terms: Sequence[str]) -> str:
    """A tsquery OR-ing ``terms`` verbatim (quoted: never syntax); '' for none."""
    quoted = ("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)
    return " | ".join(quoted)


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
    if related:
        chosen = affordable_terms(
            conn, active, terms, RELATED_POSTINGS, _RELATED_TERMS, keep_rarest=False
        )
    else:
        chosen = affordable_terms(conn, active, terms, SEARCH_POSTINGS, len(terms))
    if not chosen:
        return []
    docs, avgdl = _namespace_stats(conn, namespace, active)
    idfs = [_idf(docs, df) for _, df in chosen]
    sql = text(
        _RANK.format(k1p=_K1 + 1, k1=_K1, b=_B, active=_ACTIVE if active else "")
    ).bindparams(
        terms=[t for t, _ in chosen],
        idfs=idfs,
        query=tsquery([t for t, _ in chosen]),
        avgdl=avgdl,
    )
    window = limit * 2
    while True:
        ranked = conn.execute(sql, {"window": window}).all()
        rows = conn.execute(_BY_SEQS, {"seqs": [r[0] for r in ranked]}).mappings()
        found = {
            row["seq"]: memory
            for row in rows
            if (memory := memory_of(row)).namespace == namespace and filters.admits(memory)
        }
        if len(found) >= limit or len(ranked) < window:
            break
        window *= 4
    hits = [(found[seq], float(rank)) for seq, rank in ranked if seq in found]
    return hits[:limit]


def _idf(docs: int, df: int) -> float:
    """FTS5's idf: rare terms weigh more; one in over half the memories barely counts."""
    value = math.log((docs - df + 0.5) / (df + 0.5)) if docs else 0.0
    return value if value > 0 else 1e-6


def _namespace_stats(conn: Connection, namespace: str, active: bool) -> tuple[int, float]:
    """``(memories in the index, their average number of terms)`` for the namespace."""
    columns = "active_docs, active_tokens" if active else "docs, tokens"
    row = conn.execute(
        text(f"SELECT {columns} FROM aimem_fts_stats WHERE namespace = :ns"), {"ns": namespace}
    ).first()
    docs, tokens = (int(row[0]), int(row[1])) if row else (0, 0)
    return docs, (tokens / docs if docs and tokens else 1.0)


def affordable_terms(
    conn: Connection,
    active: bool,
    terms: Sequence[str],
    budget: int,
    max_terms: int,
    *,
    keep_rarest: bool = True,
) -> list[tuple[str, int]]:
    """The rarest of ``terms`` (with their document counts) fitting ``budget`` matches.

    The same choice as ``sqlite_search.affordable_terms``, counted through the GIN
    index; each count stops just past the budget.
    """
    if not terms:
        return []
    where = "fts @@ CAST(:q{i} AS tsquery)" + (_ACTIVE if active else "")
    counts_sql = ", ".join(
        f"(SELECT count(*) FROM (SELECT 1 FROM memories WHERE {where.format(i=i)} "
        f"LIMIT :cap) AS c{i})"
        for i in range(len(terms))
    )
    params: dict[str, object] = {f"q{i}": tsquery([t]) for i, t in enumerate(terms)}
    params["cap"] = budget + 1
    counts = conn.execute(text(f"SELECT {counts_sql}"), params).one()
    chosen: list[tuple[str, int]] = []
    spent = 0
    for df, i in sorted((int(df), i) for i, df in enumerate(counts) if df):
        over = spent + df > budget
        if len(chosen) == max_terms or (over and (chosen or not keep_rarest)):
            break
        chosen.append((terms[i], df))
        spent += df
    return chosen
