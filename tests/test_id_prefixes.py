"""Short id prefixes (as git takes them) work wherever an id is taken; shown ones are unique."""

from __future__ import annotations

import pytest

import aimem
from aimem.ids import MIN_PREFIX, id_prefix, new_id, shortest_unique_prefixes


def test_a_prefix_is_hex_and_hyphens_between_four_characters_and_a_whole_id() -> None:
    whole = new_id()
    assert id_prefix(whole) is None  # a whole id is looked up as given
    assert id_prefix(whole[:MIN_PREFIX]) == whole[:MIN_PREFIX]
    assert id_prefix(whole[:13].upper()) == whole[:13]
    assert id_prefix("abc") is None
    assert id_prefix("not-an-id") is None


def test_shortest_unique_prefixes_differ_from_every_neighbour() -> None:
    universe = [
        "01a233d8-8a80-7705-be1d-4f479385f133",
        "01a233d8-8a82-7866-91c8-21a366383313",
        "01a233d8-8a82-7ee5-8f64-a236f3493512",
        "01b00000-0000-7000-8000-000000000000",
    ]
    short = shortest_unique_prefixes(universe, universe, 8)
    assert short == {
        universe[0]: "01a233d8-8a80",
        universe[1]: "01a233d8-8a82-78",
        universe[2]: "01a233d8-8a82-7e",
        universe[3]: "01b00000",
    }
    # A prefix never ends on a hyphen, and never claims an id another one shares.
    assert shortest_unique_prefixes([universe[0]], universe[:1], 8) == {universe[0]: "01a233d8"}
    assert shortest_unique_prefixes(universe[:1], universe, 9) == {universe[0]: "01a233d8-8a80"}
    for target, prefix in short.items():
        assert [u for u in universe if u.startswith(prefix)] == [target]


@pytest.fixture
def store(db_url: str) -> aimem.MemoryStore:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        yield store


def _saved(store: aimem.MemoryStore) -> list[aimem.Memory]:
    return store.save_many(
        ["I love green tea", "My sister lives in Osaka", "I'm allergic to penicillin"]
    )


def test_every_operation_taking_an_id_takes_its_shown_prefix(store: aimem.MemoryStore) -> None:
    memories = _saved(store)
    short = store.short_ids(m.id for m in memories)
    assert all(8 <= len(p) < 36 for p in short.values())
    for m in memories:
        prefix = short[m.id]
        assert store.resolve_id(prefix) == m.id
        assert store.get(prefix).id == m.id
        assert store.resolve_id(prefix.upper()) == m.id
    tea, sister, allergy = (short[m.id] for m in memories)
    assert store.pin(tea).pinned and not store.unpin(tea).pinned
    assert store.history(sister)[0].event == "save"
    updated = store.update(sister, "My sister moved to Kyoto")
    assert (updated.id, updated.version) == (memories[1].id, 2)
    store.delete(allergy)
    with pytest.raises(aimem.NotFoundError):
        store.get(memories[2].id)


def test_an_ambiguous_prefix_is_one_line_asking_for_more(store: aimem.MemoryStore) -> None:
    memories = _saved(store)
    common = memories[0].id[:8]
    assert all(m.id.startswith(common) for m in memories)  # saved within one minute
    with pytest.raises(aimem.AmbiguousIdError, match="give more characters") as caught:
        store.pin(common)
    assert isinstance(caught.value, aimem.ValidationError)
    assert "\n" not in str(caught.value)
    assert not any(store.get(m.id).pinned for m in memories)  # nothing was written


def test_unknown_and_too_short_prefixes_are_not_found(store: aimem.MemoryStore) -> None:
    _saved(store)
    with pytest.raises(aimem.NotFoundError, match="id prefix 'ffffffff'"):
        store.get("ffffffff")
    with pytest.raises(aimem.NotFoundError, match="at least 4 characters"):
        store.get("01a")
    with pytest.raises(aimem.ValidationError):
        store.get("")


def test_prefixes_stay_in_their_namespace(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), namespace="alice") as alice:
        mine = alice.save("I love green tea")
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), namespace="bob") as bob:
        with pytest.raises(aimem.NotFoundError):
            bob.get(mine.id[:20])
        theirs = bob.save("I love black coffee")
        # alice's memory does not make bob's prefix longer
        assert len(bob.short_ids([theirs.id])[theirs.id]) == 8


def test_archived_memories_count_for_uniqueness(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), max_memories=1) as store:
        memories = store.save_many(
            ["I'm allergic to penicillin", "My daughter Emma starts school in September"]
        )
        assert sum(store.get(m.id).archived_at is not None for m in memories) == 1
        short = store.short_ids([m.id for m in memories])
        for m in memories:
            assert store.get(short[m.id]).id == m.id
