"""Pure choice of what the capacity manager forgets; the store applies it in the save's transaction.

Rules (DESIGN.md): among a namespace's active, unpinned, judged memories, first every
one scoring below ``min_priority_score``, then the lowest (priority asc, created_at asc,
id asc) until at most ``max_memories`` remain. Pinned and pending memories never reach
this function. ``protected`` ids (a memory being restored) are stepped over while others
can go; the cap itself always holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

__all__ = [
    "BELOW_MIN",
    "OVER_CAPACITY",
    "Candidate",
    "CapacityPolicy",
    "choose_forgotten",
    "forgetting_order",
    "needed_candidates",
]

BELOW_MIN = "below_min_priority"
OVER_CAPACITY = "over_capacity"


@dataclass(frozen=True)
class CapacityPolicy:
    """The three settings the capacity manager obeys."""

    max_memories: int
    min_priority_score: float
    auto_prune: bool = True


@dataclass(frozen=True)
class Candidate:
    """The three facts that decide a memory's place in the forgetting order."""

    id: str
    priority_score: float
    created_at: datetime


def forgetting_order(candidate: Candidate) -> tuple[float, datetime, str]:
    """Sort key: the first to be forgotten sorts first."""
    return (candidate.priority_score, candidate.created_at, candidate.id)


def needed_candidates(above_min: int, max_memories: int, protected: int) -> int:
    """How many of the lowest memories at or above the threshold the store must fetch.

    Below-min memories are all archived anyway; of the ``above_min`` others, only the
    excess over ``max_memories`` can go, plus any protected ones we must step over.
    """
    return max(above_min - max_memories, 0) + protected


def choose_forgotten(
    lowest: Iterable[Candidate],
    *,
    active: int,
    policy: CapacityPolicy,
    protected: frozenset[str] = frozenset(),
) -> list[tuple[Candidate, str]]:
    """Return ``(candidate, reason)`` for each memory to archive, in forgetting order.

    Args:
        lowest: every below-min memory and the ``needed_candidates(...)`` lowest others.
        active: how many active, unpinned, judged memories the namespace holds now.
        policy: the cap and threshold.
        protected: ids to spare while others can go (a just-restored memory).
    """
    chosen: list[tuple[Candidate, str]] = []
    remaining = active
    ordered = sorted(lowest, key=forgetting_order)
    for candidate in ordered:
        if candidate.id in protected:
            continue
        if candidate.priority_score < policy.min_priority_score:
            chosen.append((candidate, BELOW_MIN))
        elif remaining > policy.max_memories:
            chosen.append((candidate, OVER_CAPACITY))
        else:
            break
        remaining -= 1
    # Protection spares a memory, never the cap: when only protected ones are left to
    # archive (more restored at once than the cap holds), the lowest of them go too.
    for candidate in ordered:
        if remaining <= policy.max_memories:
            break
        if candidate.id in protected:
            chosen.append((candidate, OVER_CAPACITY))
            remaining -= 1
    return sorted(chosen, key=lambda pair: forgetting_order(pair[0]))
