from __future__ import annotations

from datetime import UTC, datetime, timedelta

from aimem.capacity import (
    BELOW_MIN,
    OVER_CAPACITY,
    Candidate,
    CapacityPolicy,
    choose_forgotten,
    needed_candidates,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def c(id_: str, p: float, minutes: int = 0) -> Candidate:
    return Candidate(id_, p, T0 + timedelta(minutes=minutes))


def ids(chosen: list[tuple[Candidate, str]]) -> list[tuple[str, str]]:
    return [(cand.id, reason) for cand, reason in chosen]


def test_below_min_first_then_lowest_until_within_cap() -> None:
    pool = [c("a", 0.9), c("b", 0.1), c("c", 0.5), c("d", 0.4), c("e", 0.6)]
    chosen = choose_forgotten(pool, active=5, policy=CapacityPolicy(3, 0.3))
    assert ids(chosen) == [("b", BELOW_MIN), ("d", OVER_CAPACITY)]


def test_below_min_archived_even_under_the_cap() -> None:
    chosen = choose_forgotten([c("a", 0.29), c("b", 0.3)], active=2, policy=CapacityPolicy(10, 0.3))
    assert ids(chosen) == [("a", BELOW_MIN)]


def test_ties_break_by_created_at_then_id() -> None:
    pool = [c("z", 0.5, 1), c("y", 0.5, 0), c("x", 0.5, 1), c("w", 0.9, 0)]
    chosen = choose_forgotten(pool, active=4, policy=CapacityPolicy(1, 0.0))
    assert ids(chosen) == [("y", OVER_CAPACITY), ("x", OVER_CAPACITY), ("z", OVER_CAPACITY)]


def test_protected_memory_is_stepped_over() -> None:
    pool = [c("restored", 0.1), c("next", 0.4), c("keep", 0.9)]
    chosen = choose_forgotten(
        pool, active=3, policy=CapacityPolicy(2, 0.3), protected=frozenset({"restored"})
    )
    assert ids(chosen) == [("next", OVER_CAPACITY)]


def test_needed_candidates_is_the_excess_plus_protected() -> None:
    assert needed_candidates(above_min=10, max_memories=10, protected=0) == 0
    assert needed_candidates(above_min=12, max_memories=10, protected=0) == 2
    assert needed_candidates(above_min=5, max_memories=10, protected=1) == 1
