"""The sync store inside a running event loop (as in Jupyter), and the async twin."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import aimem

MakeJudge = Callable[..., aimem.OpenAIJudge]
DbUrl = Callable[[str], str]


def test_sync_store_works_inside_a_running_loop(
    db_url: DbUrl, make_judge: MakeJudge, stub: Any
) -> None:
    async def notebook_cell() -> dict[str, Any]:
        asyncio.get_running_loop()  # we really are inside a loop
        with aimem.MemoryStore(
            db_url("a.db"), judge=make_judge(), namespace="nb", max_memories=10
        ) as store:
            m = store.save("Saved from inside a running event loop")
            many = store.save_many(["jupyter one", "jupyter two"])
            got = store.get(m.id)
            listed = store.list()
            hits = store.search("event loop")
            store.pin(m.id)
            stats = store.stats()
            return {
                "m": m,
                "many": many,
                "got": got,
                "listed": listed,
                "hits": hits,
                "stats": stats,
            }

    result = asyncio.run(notebook_cell())
    m = result["m"]
    assert isinstance(m, aimem.Memory)
    assert m.content == "Saved from inside a running event loop"
    assert m.score_source == "llm"
    assert [x.content for x in result["many"]] == ["jupyter one", "jupyter two"]
    assert result["got"].id == m.id
    assert {x.id for x in result["listed"]} == {m.id, *(x.id for x in result["many"])}
    assert [h.memory.id for h in result["hits"]] == [m.id]
    assert result["stats"].count == 3
    assert result["stats"].pinned == 1
    assert stub.chat_calls == 2  # one save, then save_many's two items in one batch call


def test_sync_store_created_outside_used_inside_a_loop(
    db_url: DbUrl, make_judge: MakeJudge
) -> None:
    with aimem.MemoryStore(db_url("a.db"), judge=make_judge()) as store:
        before = store.save("saved before the loop")

        async def cell() -> list[aimem.Memory]:
            store.save("saved inside the loop")
            return store.list(order="recent")

        inside = asyncio.run(cell())
        assert [m.content for m in inside] == ["saved inside the loop", "saved before the loop"]
        after = store.save("saved after the loop")
        assert {m.id for m in store.list()} == {before.id, after.id, inside[0].id}


def test_sync_store_with_in_process_judge_inside_a_loop(db_url: DbUrl) -> None:
    from aimem.testing import FixedJudge

    judge = FixedJudge()

    async def cell() -> aimem.Memory:
        with aimem.MemoryStore(db_url("a.db"), judge=judge) as store:
            store.save("fixed judge in a loop [score=0.80]")
            return store.list()[0]

    m = asyncio.run(cell())
    assert m.priority_score == pytest.approx(0.8)
    assert judge.calls == ["fixed judge in a loop [score=0.80]"]


def test_async_store_with_async_with(db_url: DbUrl, make_judge: MakeJudge, stub: Any) -> None:
    async def main() -> None:
        async with aimem.AsyncMemoryStore(
            db_url("a.db"),
            judge=make_judge(),
            namespace="alice",
            max_memories=2,
            min_priority_score=0.0,
        ) as store:
            m = await store.save("async memory about tea [score=0.60]", user_context="syui")
            assert isinstance(m, aimem.Memory)
            assert m.user_context == "syui"
            assert m.score_source == "llm"
            assert (await store.get(m.id)).content == m.content

            many = await store.save_many(["async low [score=0.20]", "async high [score=0.90]"])
            assert [x.content for x in many] == [
                "async low [score=0.20]",
                "async high [score=0.90]",
            ]

            listed = await store.list()
            assert [x.id for x in listed] == [many[1].id, m.id]
            assert (await store.get(many[0].id)).archived_at is not None

            hits = await store.search("tea")
            assert [h.memory.id for h in hits] == [m.id]

            await store.pin(m.id)
            assert (await store.get(m.id)).pinned is True
            await store.unpin(m.id)

            updated = await store.update(m.id, "async memory about green tea [score=0.70]")
            assert updated.priority_score == pytest.approx(0.7)

            restored = await store.restore(many[0].id)
            assert restored.archived_at is None

            report = await store.prune(dry_run=True)
            assert isinstance(report, aimem.PruneReport)

            stats = await store.stats()
            assert stats.count == 2
            assert stats.total == 3

            await store.set_core("I am Ai.")
            assert await store.get_core() == "I am Ai."
            context = await store.context(max_chars=2000)
            assert "I am Ai." in context
            assert len(context) <= 2000

            await store.delete(many[1].id)
            with pytest.raises(aimem.NotFoundError):
                await store.get(many[1].id)
            with pytest.raises(aimem.ValidationError):
                await store.save("   ")

    asyncio.run(main())
    assert stub.chat_calls == 3  # save_many's items share one batch call


def test_async_store_explicit_close(db_url: DbUrl, make_judge: MakeJudge) -> None:
    async def main() -> str:
        store = aimem.AsyncMemoryStore(db_url("a.db"), judge=make_judge())
        try:
            m = await store.save("closed explicitly")
        finally:
            await store.close()
        return m.id

    memory_id = asyncio.run(main())
    with aimem.MemoryStore(db_url("a.db"), judge=aimem.HeuristicJudge()) as store:
        assert store.get(memory_id).content == "closed explicitly"


def test_async_concurrent_saves_respect_the_cap(db_url: DbUrl, make_judge: MakeJudge) -> None:
    async def main() -> tuple[int, int]:
        async with aimem.AsyncMemoryStore(
            db_url("a.db"), judge=make_judge(), max_memories=3
        ) as store:
            await asyncio.gather(*(store.save(f"concurrent note {i}") for i in range(8)))
            stats = await store.stats()
            return stats.count, stats.total

    count, total = asyncio.run(main())
    assert count == 3
    assert total == 8


DESIGN_METHODS = (
    "save",
    "save_many",
    "get",
    "list",
    "search",
    "update",
    "delete",
    "pin",
    "unpin",
    "prune",
    "restore",
    "stats",
    "get_core",
    "set_core",
    "compress",
    "context",
)


@pytest.mark.parametrize("name", DESIGN_METHODS)
def test_async_twin_has_the_same_methods_as_coroutines(name: str) -> None:
    import inspect

    assert callable(getattr(aimem.MemoryStore, name))
    assert inspect.iscoroutinefunction(getattr(aimem.AsyncMemoryStore, name))
