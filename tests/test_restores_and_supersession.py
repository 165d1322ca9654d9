"""Restores and supersessions under a hostile caller (issue 24, items 2 to 4).

A restore makes room once: the memory is spared by the call that restores it, not forever,
and the cap holds after any sequence of calls. A memory that does not end up active
supersedes nothing. A restored memory is the user's word: later saves leave it be, and
only an explicit change of that very fact retires it again.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from _stores import store_url
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import aimem
from aimem import Interpretation, JudgeError, Memory
from aimem.testing import FixedJudge


def _capped(store: aimem.MemoryStore) -> int:
    return sum(1 for m in store.list() if not m.pinned and m.priority_score is not None)


def test_restoring_more_than_the_cap_holds_keeps_the_cap(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=2) as store:
        saved = [store.save(f"fact number {i} [score=0.{5 + i}]") for i in range(4)]
        for memory in saved:
            store.restore(memory.id)
            assert _capped(store) <= 2
            assert store.get(memory.id).archived_at is None  # spared by its own restore
        # a later save competes as usual: the restored ones are not protected for good
        top = store.save("the most important thing [score=0.99]")
        assert top.archived_at is None
        assert _capped(store) == 2
        assert store.prune(dry_run=True).archived == []


def test_a_restore_spares_the_memory_once_not_forever(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=2) as store:
        low = store.save("a minor detail [score=0.4]")
        store.save("first big fact [score=0.8]")
        store.save("second big fact [score=0.9]")
        assert store.get(low.id).archive_reason == "over_capacity"
        report = store.restore_with_report(low.id)
        assert report.memories[0].archived_at is None
        assert [m.content for m in report.archived] == ["first big fact [score=0.8]"]
        store.save("third big fact [score=0.85]")
        again = store.get(low.id)
        assert again.archive_reason == "over_capacity"  # the lowest goes first, as any memory


def test_a_save_archived_at_once_supersedes_nothing(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        home = store.save("I live in Sendai [score=0.8]")
        junk = store.save("whatever lol [score=0.1][supersedes=1]")
        assert junk.archive_reason == "below_min_priority"
        current = store.get(home.id)
        assert current.archived_at is None
        assert current.superseded_by is None
        assert [m.id for m in store.list()] == [home.id]


class _PendingOnCue(FixedJudge):
    """Fails on "unjudged" (the memory is kept pending, outside the cap); retires "note"s."""

    def __init__(self) -> None:
        super().__init__(
            supersedes=lambda content, related: (
                [i for i, m in enumerate(related) if "note" in m.content]
                if "[retire]" in content
                else []
            )
        )

    async def interpret(self, content: str, **kwargs: Any) -> Interpretation:
        if "unjudged" in content:
            raise JudgeError("the judge is down for this one")
        return await super().interpret(content, **kwargs)


def test_a_successor_archived_for_capacity_supersedes_nothing(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=_PendingOnCue(), max_memories=1) as store:
        note = store.save("an unjudged note about the garden")
        assert note.pending
        store.save("the big fact [score=0.9]")
        # retiring a pending memory frees no room: the new one is the lowest over the cap,
        # so capacity archives it, and its supersession is undone with it
        low = store.save("a garden follow-up [score=0.4] [retire]")
        assert low.archive_reason == "over_capacity"
        kept = store.get(note.id)
        assert kept.archived_at is None and kept.superseded_by is None
        assert _capped(store) == 1


def test_an_update_of_an_archived_memory_supersedes_nothing(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        old = store.save("an old note [score=0.1]")
        assert old.archive_reason == "below_min_priority"
        home = store.save("I live in Sendai [score=0.8]")
        edited = store.update(old.id, "we moved to Sapporo [score=0.9][supersedes=1]")
        assert edited.archived_at is not None
        assert store.get(home.id).archived_at is None
        assert store.get(home.id).superseded_by is None


def test_a_restored_memory_is_left_be_by_later_saves(db_url: str) -> None:
    def sendai(content: str, related: Sequence[Memory]) -> list[int]:
        return [i for i, m in enumerate(related) if "Sendai" in m.content]

    with aimem.MemoryStore(db_url, judge=FixedJudge(supersedes=sendai)) as store:
        home = store.save("I live in Sendai [score=0.8]")
        store.save("We moved to Sapporo last month, the Sendai days are over [score=0.8]")
        assert store.get(home.id).archive_reason == "superseded"
        store.restore(home.id)
        store.save("Sapporo is lovely in winter, Sendai was milder [score=0.8]")
        assert store.get(home.id).archived_at is None


def test_an_explicit_change_of_that_fact_still_retires_a_restored_memory(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        home = store.save("I live in Sendai.")
        store.save("We moved to Sapporo last month.")
        assert store.get(home.id).archive_reason == "superseded"
        store.restore(home.id)
        store.save("We moved again, to Osaka this time.")
        assert store.get(home.id).archived_at is None  # names nothing of Sendai
        store.save("I no longer live in Sendai.")
        assert store.get(home.id).archive_reason == "superseded"


# -- the cap holds after any sequence of calls -------------------------------------------

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("save"), st.integers(0, 20)),
        st.tuples(st.just("restore"), st.integers(0, 1000)),
        st.tuples(st.just("pin"), st.integers(0, 1000)),
        st.tuples(st.just("unpin"), st.integers(0, 1000)),
        st.tuples(st.just("update"), st.integers(0, 1000)),
        st.tuples(st.just("prune"), st.just(0)),
        st.tuples(st.just("compress"), st.integers(1, 3)),
    ),
    min_size=1,
    max_size=25,
)


@settings(
    max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(ops=_OPS, cap=st.integers(1, 4))
@example(ops=[("save", 10), ("save", 12), ("restore", 0), ("restore", 1), ("save", 20)], cap=1)
def test_the_cap_holds_after_any_sequence_of_calls(ops: list[tuple[str, int]], cap: int) -> None:
    url = store_url(Path(tempfile.mkdtemp(prefix="aimem-cap-")) / "cap.db")
    with aimem.MemoryStore(url, judge=FixedJudge(), max_memories=cap) as store:
        made: list[str] = []
        for step, (op, n) in enumerate(ops):
            every = store.list(include_archived=True)
            if op == "restore":  # restoring what is archived is what can break the cap
                every = [m for m in every if m.archived_at is not None] or every
            target = every[n % len(every)].id if every else None
            if op == "save":
                made.append(store.save(f"fact {step} [score={n / 20:.2f}]").id)
            elif op == "compress":  # more items than the cap is refused, writing nothing
                before = store.list(include_archived=True)
                try:
                    store.compress([f"summary {step}.{i} [score=0.6]" for i in range(n)])
                except aimem.ValidationError:
                    assert n > cap and store.list(include_archived=True) == before
                else:
                    assert n <= cap
            elif op == "prune":
                store.prune()
            elif target is not None:
                try:
                    if op == "restore":
                        store.restore(target)
                    elif op == "pin":
                        store.pin(target)
                    elif op == "unpin":
                        store.unpin(target)
                    else:
                        store.update(target, f"edited {step} [score={(n % 20) / 20:.2f}]")
                except aimem.ConflictError:
                    pass  # restoring a duplicate of an active memory is refused, writing nothing
            assert _capped(store) <= cap, (op, n)
            stats = store.stats()
            assert stats.count - stats.pinned - stats.pending <= cap


@pytest.mark.parametrize("cap", [1, 3])
def test_prune_after_restores_reports_what_it_would_do(db_url: str, cap: int) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=cap) as store:
        ids = [store.save(f"item {i} [score=0.{4 + i}]").id for i in range(5)]
        for memory_id in ids:
            store.restore(memory_id)
        assert store.prune(dry_run=True).archived == []
        assert _capped(store) == cap
