"""Property tests of the capacity manager, through the public MemoryStore API.

A plain-Python reference model applies DESIGN.md's rules (archive active unpinned memories below
``min_priority_score``, then the lowest by priority asc, created_at asc, id asc until the active
unpinned count is at most ``max_memories``; pinned memories sit outside the cap) and must archive
exactly what the store archives, after every operation.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from _stores import store_url
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aimem

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# Scores are multiples of 0.05 so that ties are common.
score_steps = st.integers(min_value=0, max_value=20)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("save"), score_steps),
        st.tuples(st.just("pin"), st.integers(min_value=0, max_value=1000)),
        st.tuples(st.just("unpin"), st.integers(min_value=0, max_value=1000)),
    ),
    min_size=1,
    max_size=25,
)


@pytest.fixture(scope="module", autouse=True)
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    home = tmp_path_factory.mktemp("prop-home")
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith(("AIMEM_", "OPENAI_")):
                mp.delenv(name)
        mp.setenv("HOME", str(home))
        mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        mp.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
        yield


@dataclass
class Ref:
    id: str
    priority: float
    created_at: datetime
    pinned: bool = False
    archived: bool = False


class Reference:
    """The capacity rules of DESIGN.md on a plain list."""

    def __init__(self, max_memories: int, min_priority_score: float) -> None:
        self.max_memories = max_memories
        self.min_priority_score = min_priority_score
        self.records: list[Ref] = []

    def by_id(self, memory_id: str) -> Ref:
        return next(r for r in self.records if r.id == memory_id)

    def capped(self) -> list[Ref]:
        return [r for r in self.records if not r.archived and not r.pinned]

    def enforce(self) -> list[str]:
        archived: list[str] = []
        for r in self.capped():
            if r.priority < self.min_priority_score:
                r.archived = True
                archived.append(r.id)
        remaining = sorted(self.capped(), key=lambda r: (r.priority, r.created_at, r.id))
        while len(remaining) > self.max_memories:
            r = remaining.pop(0)
            r.archived = True
            archived.append(r.id)
        return archived

    def archived_ids(self) -> set[str]:
        return {r.id for r in self.records if r.archived}


def _score(step: int) -> float:
    return round(step * 0.05, 2)


def _open_store(directory: str, scores: dict[str, float], **kwargs: Any) -> aimem.MemoryStore:
    from aimem.testing import FixedJudge

    judge = FixedJudge(scorer=lambda content: scores[content])
    url = store_url(Path(directory) / "prop.db")
    return aimem.MemoryStore(url, judge=judge, namespace="prop", **kwargs)


def _check(store: aimem.MemoryStore, ref: Reference, step: str) -> None:
    everything = store.list(include_archived=True)
    archived = {m.id for m in everything if m.archived_at is not None}
    active = [m for m in everything if m.archived_at is None]
    active_unpinned = [m for m in active if not m.pinned]

    assert len(everything) == len(ref.records), step
    assert len(active_unpinned) <= ref.max_memories, step
    for m in active_unpinned:
        assert m.priority_score is not None
        assert m.priority_score >= ref.min_priority_score, step
    assert all(m.archived_at is None for m in everything if m.pinned), step
    assert archived == ref.archived_ids(), step
    assert {m.id for m in store.list()} == {m.id for m in active}, step
    stats = store.stats()
    assert stats.count == len(active), step
    assert stats.archived == len(archived), step


@SETTINGS
@given(
    ops=operations,
    max_memories=st.integers(min_value=1, max_value=6),
    min_step=st.integers(min_value=0, max_value=10),
)
def test_capacity_matches_reference_model(
    ops: list[tuple[str, int]], max_memories: int, min_step: int
) -> None:
    min_priority_score = _score(min_step)
    scores: dict[str, float] = {}
    ref = Reference(max_memories, min_priority_score)
    with tempfile.TemporaryDirectory() as directory:
        store = _open_store(
            directory, scores, max_memories=max_memories, min_priority_score=min_priority_score
        )
        try:
            for n, (kind, arg) in enumerate(ops):
                step = f"op {n}: {kind} {arg}"
                if kind == "save":
                    content = f"memory {n}"
                    scores[content] = _score(arg)
                    m = store.save(content)
                    assert m.priority_score is not None
                    assert m.priority_score == pytest.approx(_score(arg), abs=1e-9)
                    ref.records.append(Ref(m.id, m.priority_score, m.created_at))
                    ref.enforce()
                elif kind == "pin":
                    candidates = ref.capped()
                    if not candidates:
                        continue
                    target = candidates[arg % len(candidates)]
                    store.pin(target.id)
                    target.pinned = True
                    assert ref.enforce() == []
                else:
                    candidates = [r for r in ref.records if r.pinned and not r.archived]
                    if not candidates:
                        continue
                    target = candidates[arg % len(candidates)]
                    store.unpin(target.id)
                    target.pinned = False
                    ref.enforce()
                _check(store, ref, step)
        finally:
            store.close()


@SETTINGS
@given(
    steps=st.lists(score_steps, min_size=1, max_size=15),
    max_memories=st.integers(min_value=1, max_value=6),
    min_step=st.integers(min_value=0, max_value=10),
)
def test_manual_prune_matches_reference_model(
    steps: list[int], max_memories: int, min_step: int
) -> None:
    min_priority_score = _score(min_step)
    scores: dict[str, float] = {}
    ref = Reference(max_memories, min_priority_score)
    with tempfile.TemporaryDirectory() as directory:
        store = _open_store(
            directory,
            scores,
            max_memories=max_memories,
            min_priority_score=min_priority_score,
            auto_prune=False,
        )
        try:
            for n, step in enumerate(steps):
                content = f"memory {n}"
                scores[content] = _score(step)
                m = store.save(content)
                assert m.priority_score is not None
                ref.records.append(Ref(m.id, m.priority_score, m.created_at))
            assert store.stats().count == len(steps)

            expected = set(ref.enforce())
            preview = store.prune(dry_run=True)
            assert {m.id for m in preview.archived} == expected
            assert store.stats().archived == 0

            report = store.prune()
            assert {m.id for m in report.archived} == expected
            _check(store, ref, "after prune")
            assert store.prune().archived == []
        finally:
            store.close()
