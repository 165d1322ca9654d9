"""Capacity manager rules of DESIGN.md, driven through saves judged by the stub server."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import aimem

Tag = Callable[[str, float], str]
MakeStore = Callable[..., aimem.MemoryStore]


def _active_ids(store: aimem.MemoryStore) -> set[str]:
    return {m.id for m in store.list()}


def _archived_ids(store: aimem.MemoryStore) -> set[str]:
    return {m.id for m in store.list(include_archived=True) if m.archived_at is not None}


def _assert_archived(store: aimem.MemoryStore, memory_id: str) -> aimem.Memory:
    m = store.get(memory_id)
    assert m.archived_at is not None
    assert m.archived_at.tzinfo is not None
    assert isinstance(m.archive_reason, str)
    assert m.archive_reason
    return m


def test_max_memories_bounds_active_count(make_store: MakeStore) -> None:
    store = make_store(max_memories=3)
    saved = [store.save(f"equal priority note {i}") for i in range(5)]

    stats = store.stats()
    assert stats.count == 3
    assert stats.archived == 2
    assert stats.total == 5
    # All at priority 0.4: ties go to the older memory first.
    assert _active_ids(store) == {m.id for m in saved[2:]}
    assert _archived_ids(store) == {m.id for m in saved[:2]}


def test_cap_holds_after_every_save(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=2, min_priority_score=0.0)
    for i, score in enumerate([0.5, 0.9, 0.1, 0.7, 0.3, 1.0, 0.0]):
        store.save(tag(f"note {i}", score))
        assert len(store.list()) <= 2
        assert store.stats().count <= 2


def test_lowest_priority_is_archived_first(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=3, min_priority_score=0.0)
    m60 = store.save(tag("sixty", 0.6))
    m20 = store.save(tag("twenty", 0.2))
    m80 = store.save(tag("eighty", 0.8))
    m40 = store.save(tag("forty", 0.4))

    assert _archived_ids(store) == {m20.id}
    _assert_archived(store, m20.id)
    assert _active_ids(store) == {m60.id, m80.id, m40.id}

    # A new memory that is itself the lowest is the one forgotten.
    m10 = store.save(tag("ten", 0.1))
    assert _archived_ids(store) == {m20.id, m10.id}
    assert _active_ids(store) == {m60.id, m80.id, m40.id}


def test_below_min_priority_is_archived_even_under_the_cap(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=5, min_priority_score=0.5)
    high = store.save(tag("important", 0.8))
    low = store.save(tag("trivial", 0.4))
    edge = store.save(tag("exactly at the minimum", 0.5))

    _assert_archived(store, low.id)
    assert _active_ids(store) == {high.id, edge.id}
    assert store.stats().count == 2


def test_ties_break_by_age(make_store: MakeStore) -> None:
    store = make_store(max_memories=2)
    a = store.save("tie a")
    b = store.save("tie b")
    c = store.save("tie c")
    assert _archived_ids(store) == {a.id}
    d = store.save("tie d")
    assert _archived_ids(store) == {a.id, b.id}
    assert _active_ids(store) == {c.id, d.id}


def test_pinned_are_outside_the_cap_and_never_archived(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=2, min_priority_score=0.3)
    pinned = store.save(tag("pinned but low", 0.35))
    store.pin(pinned.id)
    m60 = store.save(tag("sixty", 0.6))
    m80 = store.save(tag("eighty", 0.8))

    assert _active_ids(store) == {pinned.id, m60.id, m80.id}
    stats = store.stats()
    assert stats.pinned == 1
    assert stats.archived == 0

    m70 = store.save(tag("seventy", 0.7))
    assert _archived_ids(store) == {m60.id}
    assert _active_ids(store) == {pinned.id, m70.id, m80.id}
    assert store.get(pinned.id).archived_at is None
    assert store.get(pinned.id).pinned is True

    # Even a prune leaves the pinned one alone.
    report = store.prune()
    assert pinned.id not in {m.id for m in report.archived}
    assert store.get(pinned.id).archived_at is None


def test_unpinned_memory_counts_again(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=1, min_priority_score=0.0)
    low = store.save(tag("low", 0.2))
    store.pin(low.id)
    high = store.save(tag("high", 0.9))
    assert _active_ids(store) == {low.id, high.id}

    store.unpin(low.id)
    active_unpinned = [m for m in store.list() if not m.pinned]
    assert len(active_unpinned) <= 1
    assert _active_ids(store) == {high.id}
    _assert_archived(store, low.id)


def test_namespaces_are_counted_separately(make_store: MakeStore) -> None:
    alice = make_store(max_memories=2, namespace="alice")
    bob = make_store(max_memories=2, namespace="bob")
    a = [alice.save(f"alice note {i}") for i in range(3)]
    b = [bob.save(f"bob note {i}") for i in range(2)]

    assert alice.stats().count == 2
    assert alice.stats().archived == 1
    assert bob.stats().count == 2
    assert bob.stats().archived == 0
    assert _archived_ids(alice) == {a[0].id}
    assert {m.id for m in bob.list()} == {m.id for m in b}


def test_namespaces_are_isolated(make_store: MakeStore) -> None:
    alice = make_store(namespace="alice")
    bob = make_store(namespace="bob")
    a = alice.save("Alice keeps bees in her garden")
    b = bob.save("Bob collects vintage typewriters")

    assert {m.id for m in alice.list(include_archived=True)} == {a.id}
    assert {m.id for m in bob.list(include_archived=True)} == {b.id}
    assert alice.search("typewriters") == []
    assert bob.search("bees") == []
    assert [h.memory.id for h in alice.search("bees")] == [a.id]
    assert alice.get(a.id).namespace == "alice"

    with pytest.raises(aimem.NotFoundError):
        alice.get(b.id)
    with pytest.raises(aimem.NotFoundError):
        bob.get(a.id)
    assert alice.stats().total == 1
    assert bob.stats().total == 1


@pytest.mark.parametrize("operation", ["delete", "pin", "unpin", "restore", "update"])
def test_other_namespace_ids_cannot_be_touched(make_store: MakeStore, operation: str) -> None:
    alice = make_store(namespace="alice")
    bob = make_store(namespace="bob")
    b = bob.save("Bob's private memory")

    method = getattr(alice, operation)
    with pytest.raises(aimem.NotFoundError):
        if operation == "update":
            method(b.id, "hijacked content")
        else:
            method(b.id)

    after = bob.get(b.id)
    assert after.content == "Bob's private memory"
    assert after.version == b.version
    assert after.pinned is False
    assert after.archived_at is None


def test_archived_visible_to_get_hidden_from_list_and_search(
    make_store: MakeStore, tag: Tag
) -> None:
    store = make_store(max_memories=1, min_priority_score=0.0)
    old = store.save(tag("The user once owned a red bicycle", 0.2))
    new = store.save(tag("The user now drives an electric car", 0.8))

    archived = _assert_archived(store, old.id)
    assert archived.content == old.content
    assert [m.id for m in store.list()] == [new.id]
    assert old.id in {m.id for m in store.list(include_archived=True)}
    assert store.search("bicycle") == []
    assert [h.memory.id for h in store.search("electric")] == [new.id]


def test_restore_makes_room_by_archiving_the_next_lowest(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=2, min_priority_score=0.0)
    m40 = store.save(tag("forty", 0.4))
    m60 = store.save(tag("sixty", 0.6))
    m80 = store.save(tag("eighty", 0.8))
    assert _archived_ids(store) == {m40.id}

    restored = store.restore(m40.id)
    assert isinstance(restored, aimem.Memory)
    assert restored.id == m40.id
    assert restored.archived_at is None
    assert store.get(m40.id).archived_at is None
    assert _active_ids(store) == {m40.id, m80.id}
    _assert_archived(store, m60.id)
    assert store.stats().count == 2


def test_restore_never_archives_the_restored_even_if_lowest(
    make_store: MakeStore, tag: Tag
) -> None:
    store = make_store(max_memories=1, min_priority_score=0.0)
    low = store.save(tag("low", 0.2))
    high = store.save(tag("high", 0.9))
    assert _archived_ids(store) == {low.id}

    store.restore(low.id)
    assert _active_ids(store) == {low.id}
    _assert_archived(store, high.id)


def test_update_reruns_the_capacity_manager(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=5, min_priority_score=0.3)
    keep = store.save(tag("keeps its place", 0.6))
    m = store.save(tag("was important", 0.8))
    store.update(m.id, tag("now trivial", 0.2))

    _assert_archived(store, m.id)
    assert _active_ids(store) == {keep.id}


def test_prune_dry_run_previews_without_changes(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=2, min_priority_score=0.0, auto_prune=False)
    m40 = store.save(tag("forty", 0.4))
    m60 = store.save(tag("sixty", 0.6))
    m80 = store.save(tag("eighty", 0.8))
    m20 = store.save(tag("twenty", 0.2))
    before = {m.id: m for m in store.list(include_archived=True)}
    assert len(before) == 4
    assert store.stats().count == 4

    preview = store.prune(dry_run=True)
    assert isinstance(preview, aimem.PruneReport)
    assert {m.id for m in preview.archived} == {m20.id, m40.id}

    after = {m.id: m for m in store.list(include_archived=True)}
    assert set(after) == set(before)
    for memory_id, m in after.items():
        assert m.archived_at is None
        assert m.version == before[memory_id].version
    assert store.stats().count == 4
    assert store.stats().archived == 0

    report = store.prune()
    assert isinstance(report, aimem.PruneReport)
    assert {m.id for m in report.archived} == {m20.id, m40.id}
    assert _active_ids(store) == {m60.id, m80.id}
    _assert_archived(store, m20.id)
    _assert_archived(store, m40.id)

    assert store.prune().archived == []


def test_auto_prune_false_lets_count_exceed_max_until_prune(
    make_store: MakeStore, tag: Tag
) -> None:
    store = make_store(max_memories=2, min_priority_score=0.5, auto_prune=False)
    low = store.save(tag("below minimum", 0.2))
    saved = [store.save(f"note {i}") for i in range(3)]  # 0.4 each, also below 0.5
    high = [store.save(tag(f"high {i}", 0.9)) for i in range(3)]

    assert store.stats().count == 7
    assert store.stats().archived == 0
    assert store.get(low.id).archived_at is None

    report = store.prune()
    archived = {m.id for m in report.archived}
    assert {low.id, *(m.id for m in saved)} <= archived
    assert high[0].id in archived  # then the oldest of the tied 0.9s
    assert _active_ids(store) == {high[1].id, high[2].id}


def test_on_archive_receives_what_a_save_archived(
    db_url: Callable[[str], str],
    make_judge: Callable[..., aimem.OpenAIJudge],
    tag: Tag,
) -> None:
    received: list[list[aimem.Memory]] = []
    with aimem.MemoryStore(
        db_url("a.db"),
        judge=make_judge(),
        max_memories=2,
        min_priority_score=0.3,
        on_archive=received.append,
    ) as store:
        first = store.save(tag("first", 0.5))
        store.save(tag("second", 0.6))
        assert [m for batch in received for m in batch] == []

        store.save(tag("third", 0.7))
        flat = [m for batch in received for m in batch]
        assert [m.id for m in flat] == [first.id]
        assert all(isinstance(m, aimem.Memory) for m in flat)
        assert flat[0].archived_at is not None

        received.clear()
        trivial = store.save(tag("trivial", 0.1))
        assert [m.id for batch in received for m in batch] == [trivial.id]


def test_delete_is_a_hard_delete(store: aimem.MemoryStore) -> None:
    m = store.save("to be deleted")
    other = store.save("stays")
    store.delete(m.id)
    with pytest.raises(aimem.NotFoundError):
        store.get(m.id)
    assert {x.id for x in store.list(include_archived=True)} == {other.id}
    assert store.stats().total == 1


def test_list_orders_filters_and_limits(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=10, min_priority_score=0.0)
    m50 = store.save(tag("fifty", 0.5))
    m90 = store.save(tag("ninety", 0.9))
    m30 = store.save(tag("thirty", 0.3))
    m70 = store.save(tag("seventy", 0.7))

    assert [m.id for m in store.list()] == [m90.id, m70.id, m50.id, m30.id]
    assert [m.id for m in store.list(order="priority")] == [m90.id, m70.id, m50.id, m30.id]
    assert [m.id for m in store.list(order="recent")] == [m70.id, m30.id, m90.id, m50.id]
    assert [m.id for m in store.list(limit=2)] == [m90.id, m70.id]
    assert [m.id for m in store.list(min_score=0.5)] == [m90.id, m70.id, m50.id]


def test_search_min_score_filters_on_priority(make_store: MakeStore, tag: Tag) -> None:
    store = make_store(max_memories=10, min_priority_score=0.0)
    low = store.save(tag("penguin fact one", 0.3))
    high = store.save(tag("penguin fact two", 0.9))

    assert {h.memory.id for h in store.search("penguin")} == {low.id, high.id}
    assert [h.memory.id for h in store.search("penguin", min_score=0.5)] == [high.id]
    assert len(store.search("penguin", limit=1)) == 1
