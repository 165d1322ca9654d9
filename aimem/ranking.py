"""Pure ranking of search matches into scored hits, with a per-hit explanation.

Keyword relevance leads; priority only separates near-equal matches, so a memory
that answers the query is never buried under a merely important one.
"""

from __future__ import annotations

from collections.abc import Sequence

from .models import Memory, SearchHit

__all__ = ["KEYWORD_WEIGHT", "PRIORITY_WEIGHT", "rank_keyword_hits"]

KEYWORD_WEIGHT = 0.8
PRIORITY_WEIGHT = 0.2


def rank_keyword_hits(
    matches: Sequence[tuple[Memory, float]], *, explain: bool = False
) -> list[SearchHit]:
    """Score ``(memory, bm25)`` pairs (SQLite's bm25: lower is better) and sort best first.

    Relevance is the match's BM25 strength relative to the best match (1.0 for the top).
    """
    if not matches:
        return []
    strengths = [max(0.0, -bm25) for _, bm25 in matches]
    best = max(strengths) or 1.0
    hits = []
    for (memory, _), strength in zip(matches, strengths, strict=True):
        relevance = strength / best
        priority = memory.priority_score or 0.0
        score = KEYWORD_WEIGHT * relevance + PRIORITY_WEIGHT * priority
        explanation = (
            {"keyword": relevance, "bm25": strength, "priority": priority, "score": score}
            if explain
            else None
        )
        hits.append(SearchHit(memory=memory, score=score, explanation=explanation))
    hits.sort(key=lambda h: (-h.score, h.memory.id))
    return hits
