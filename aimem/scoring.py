"""Pure scoring: four rubric components -> one priority in [0, 1].

The model is never asked for the sum: aimem computes it here, the one place that
knows how, so a judge cannot hand back a total that disagrees with its parts.
"""

from __future__ import annotations

import math

__all__ = ["COMPONENTS", "COMPONENT_MAX", "priority_from"]

#: The four rubric components, in the order the seed design lists them.
COMPONENTS: tuple[str, ...] = ("emotional_impact", "user_relevance", "novelty", "utility")

#: Each component lies in [0, COMPONENT_MAX]; four of them sum to at most 1.0.
COMPONENT_MAX = 0.25


def priority_from(
    emotional_impact: float, user_relevance: float, novelty: float, utility: float
) -> float:
    """Return the priority score: the exact sum of the components, rounded to 12 places.

    ``math.fsum`` avoids the drift of naive float addition (0.075 * 4 must be 0.3,
    not 0.29999999999999993, or a memory would fall below a 0.3 threshold), and the
    rounding keeps displayed values tidy without moving any real decision.

    >>> priority_from(0.075, 0.075, 0.075, 0.075)
    0.3
    """
    parts = (emotional_impact, user_relevance, novelty, utility)
    for name, value in zip(COMPONENTS, parts, strict=True):
        if not (math.isfinite(value) and 0.0 <= value <= COMPONENT_MAX):
            raise ValueError(f"{name} must be a number in [0, {COMPONENT_MAX}], got {value!r}")
    return min(1.0, round(math.fsum(parts), 12))
