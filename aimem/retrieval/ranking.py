"""Pure ranking: fuse keyword and semantic result lists, then blend in priority and recency.

Relevance comes from reciprocal-rank fusion (RRF): each list contributes ``1 / (k + rank)``,
so neither BM25's nor cosine's scale has to be trusted. It is normalised to [0, 1] and
leads the final score; priority and recency are small added terms that break near-ties,
as in Generative Agents' recency + importance + relevance, but with relevance first.
Every hit can explain itself: the three weighted parts add up to its score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from aimem.models import Memory, SearchHit

__all__ = ["RankingWeights", "rank_hits", "recency"]


@dataclass(frozen=True)
class RankingWeights:
    """How the final score is made: relevance first, priority and recency as tie-breakers."""

    relevance: float = 1.0
    # Normalised relevance of adjacent ranks differs by about 0.08 at the top and 0.007
    # at rank 30 (k=10), so these defaults reorder only near-equal matches, never lifting
    # a weak match over a clear one.
    priority: float = 0.01
    recency: float = 0.005
    half_life_days: float = 30.0
    # k=60, the usual choice for fusing many long TREC runs, lets memories that are merely
    # mediocre in both lists outrank the best of either; a small k keeps each list's top
    # on top. Measured on LoCoMo dev (answerable questions), recall@10 with 50 candidates
    # per list: k=60 53.6, k=20 58.7, k=10 63.0, k=5 63.9 (keyword alone 61.7).
    rrf_k: int = 10


def recency(memory: Memory, now: datetime, half_life_days: float) -> float:
    """1.0 for a memory used just now, halving every ``half_life_days`` since its last use."""
    age_days = max(0.0, (now - memory.last_accessed_at).total_seconds() / 86_400)
    return float(0.5 ** (age_days / half_life_days)) if half_life_days > 0 else 0.0


def rank_hits(
    keyword: Sequence[tuple[Memory, float]],
    semantic: Sequence[tuple[Memory, float]],
    *,
    weights: RankingWeights,
    now: datetime,
    limit: int,
    explain: bool = False,
) -> list[SearchHit]:
    """Fuse ``(memory, relevance)`` keyword and ``(memory, cosine)`` lists (best first).

    Relevance is the RRF sum over the lists that were searched, divided by the best
    possible sum, so the top of every list scores 1.0 whether one or two lists ran.
    """
    lists = [lst for lst in (keyword, semantic) if lst]
    if not lists:
        return []
    best = sum(1.0 / (weights.rrf_k + 1) for _ in lists)
    memories: dict[str, Memory] = {}
    fused: dict[str, float] = {}
    signals: dict[str, dict[str, float]] = {}
    for name, results in (("keyword", keyword), ("semantic", semantic)):
        raw_name = "bm25" if name == "keyword" else "cosine"
        for rank, (memory, raw) in enumerate(results, start=1):
            memories.setdefault(memory.id, memory)
            fused[memory.id] = fused.get(memory.id, 0.0) + 1.0 / (weights.rrf_k + rank)
            # Both signals are higher-is-better (the storage seam negates SQLite's bm25).
            signal = signals.setdefault(memory.id, {})
            signal[f"{name}_rank"] = float(rank)
            signal[raw_name] = raw
    hits = []
    for memory_id, rrf in fused.items():
        memory = memories[memory_id]
        parts = {
            "relevance": weights.relevance * rrf / best,
            "priority": weights.priority * (memory.priority_score or 0.0),
            "recency": weights.recency * recency(memory, now, weights.half_life_days),
        }
        score = sum(parts.values())
        explanation = {**signals[memory_id], **parts, "score": score} if explain else None
        hits.append(SearchHit(memory=memory, score=score, explanation=explanation))
    hits.sort(key=lambda h: (-h.score, h.memory.id))
    return hits[:limit]
