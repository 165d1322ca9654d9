"""How well a memory matches a query, on a scale that means the same for every query.

The fused rank score orders one result list: its top is about 1.0 whatever was asked,
so it cannot tell "nothing relevant" from a match. Relevance can:

* **keyword evidence**: the share of the query's content words (stemmed, without stop
  words or the store's framing: "Where does the user live?" has one, "live") that the
  memory holds in its content, interpretation or recall terms;
* **semantic evidence**: the cosine of the two embeddings mapped through the embedder's
  calibration: 0 at or below ``low`` (what unrelated texts reach), 1 at or above ``high``
  (a close paraphrase);
* **relevance** = 1 - (1 - keyword) * (1 - semantic): either kind of evidence alone can
  carry a match, and both together count more than either.

0 means the memory shares no content word with the query and is no closer in meaning
than unrelated text; 1 means it holds every content word, or says the same thing.

Pure: ``retrieval`` feeds it the candidates' terms and cosines.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

__all__ = ["DEFAULT_CALIBRATION", "Calibration", "calibration_of", "combined", "keyword_share"]


@dataclass(frozen=True)
class Calibration:
    """Cosines of one embedder: ``low`` and below is no evidence, ``high`` and above is full."""

    low: float
    high: float

    def evidence(self, cosine: float | None) -> float:
        """``cosine`` on the 0..1 evidence scale (0 without one)."""
        if cosine is None or self.high <= self.low:
            return 0.0
        return min(1.0, max(0.0, (cosine - self.low) / (self.high - self.low)))


#: all-MiniLM-L6-v2, measured by bench/relevance_calibration.py: 90% of knowledge-update
#: questions reach 0.20 with the memory that answers them (median 0.42), 98% of LoCoMo
#: questions with their gold evidence (median 0.50); general questions ("What is the capital
#: of France?") stay under 0.20 with the best of one user's everyday facts 92% of the time
#: (median 0.11). A topical neighbour ("best pizza recipe" / "I hate cilantro") is weak evidence.
DEFAULT_CALIBRATION = Calibration(low=0.2, high=0.6)


def calibration_of(embedder: object) -> Calibration:
    """The embedder's own ``calibration`` attribute if it has one, else the default.

    Any embedder may declare ``calibration = Calibration(low, high)`` for its cosines.
    """
    found = getattr(embedder, "calibration", None)
    return found if isinstance(found, Calibration) else DEFAULT_CALIBRATION


#: A bigram of kana only ("いま", "ます"): grammar in Japanese, not what a question is about.
_KANA_ONLY = re.compile(r"[\u3040-\u309f\u30fc]+")


def keyword_share(query_terms: Collection[str], memory_terms: Collection[str]) -> float:
    """The share of ``query_terms`` found among ``memory_terms`` (0 for an empty query).

    Hiragana-only bigrams ("ます", "いま") count only when the query has nothing else:
    "猫を飼っています" shares them with every question that ends in "いますか".
    """
    asked = [t for t in query_terms if not _KANA_ONLY.fullmatch(t)] or list(query_terms)
    if not asked:
        return 0.0
    held = set(memory_terms)
    return sum(1 for t in asked if t in held) / len(asked)


def combined(keyword: float, semantic: float) -> float:
    """Both kinds of evidence on one 0..1 scale (module docstring)."""
    return 1.0 - (1.0 - keyword) * (1.0 - semantic)
