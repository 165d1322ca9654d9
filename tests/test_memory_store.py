"""The facades end to end on a real SQLite file, with an in-process judge."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Sequence

import pytest

import aimem
from aimem.testing import FixedJudge


def test_save_records_interpretation_scores_and_provenance(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), namespace="alice") as store:
        m = store.save("I'm allergic to penicillin [score=0.80]", user_context="alice")
    assert m.content == "I'm allergic to penicillin [score=0.80]"
    assert m.interpreted_content.startswith("Interpreted: ")
    assert (m.emotional_impact, m.user_relevance, m.novelty, m.utility) == (0.2, 0.2, 0.2, 0.2)
    assert m.priority_score == 0.8
    assert (m.namespace, m.user_context, m.score_source, m.model) == (
        "alice",
        "alice",
        "custom",
        "fixed-judge",
    )
    assert m.version == 1 and m.access_count == 0 and not m.pinned
    assert m.created_at.tzinfo is not None and m.archived_at is None


def test_exact_duplicate_makes_no_judge_call_and_reinforces(db_url: str) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge) as store:
        first = store.save("I play the cello")
        again = store.save("I play the cello")
        assert again.id == first.id and again.access_count == 1
        assert len(judge.calls) == 1 and store.stats().total == 1
        store.save("I play the cello ")  # not exact: a new memory
        assert len(judge.calls) == 2


def test_related_memories_reach_the_judge(db_url: str) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge) as store:
        cello = store.save("I play the cello on weekends")
        store.save("Paris is in France")
        store.save("I want to play the cello in an orchestra")
    assert judge.related_seen[-1][0] == cello.id  # best keyword match first


def test_save_many_keeps_input_order_and_judges_each_distinct_item_once(db_url: str) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge) as store:
        existing = store.save("already here")
        out = store.save_many(["b [score=0.9]", "already here", "a", "b [score=0.9]"])
    assert [m.content for m in out] == ["b [score=0.9]", "already here", "a", "b [score=0.9]"]
    assert out[0].id == out[3].id and out[1].id == existing.id
    assert sorted(judge.calls) == ["a", "already here", "b [score=0.9]"]


def test_save_many_bounds_judge_concurrency(db_url: str) -> None:
    running = peak = 0

    class SlowJudge:
        async def interpret(self, content: str, **_: object) -> aimem.Interpretation:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.01)
            running -= 1
            return aimem.Interpretation(
                interpreted_content=content,
                emotional_impact=0.1,
                user_relevance=0.1,
                novelty=0.1,
                utility=0.1,
            )

    with aimem.MemoryStore(db_url, judge=SlowJudge(), judge_concurrency=3) as store:
        out = store.save_many([f"item {i}" for i in range(12)])
    assert len(out) == 12 and peak == 3
    assert {m.score_source for m in out} == {"custom"}


@pytest.mark.parametrize("bad", ["", "   \n\t", None, 123, b"bytes", ["list"], "x" * 16_001])
def test_bad_content_raises_validation_error_and_writes_nothing(db_url: str, bad: object) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge) as store:
        with pytest.raises(aimem.ValidationError):
            store.save(bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError):  # ValidationError is a ValueError too
            store.save_many(["fine", bad])  # type: ignore[list-item]
        assert store.stats().total == 0 and judge.calls == []


def test_max_content_chars_override(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_content_chars=10) as store:
        store.save("x" * 10)
        with pytest.raises(aimem.ValidationError, match="max_content_chars"):
            store.save("x" * 11)


@pytest.mark.parametrize("namespace", ["", "a" * 65, "has space", "slash/no", "ü", None])
def test_bad_namespace_is_refused(db_url: str, namespace: object) -> None:
    with pytest.raises(aimem.ValidationError, match="namespace"):
        aimem.MemoryStore(db_url, judge=FixedJudge(), namespace=namespace)  # type: ignore[arg-type]


def test_unknown_setting_is_a_validation_error(db_url: str) -> None:
    with pytest.raises(aimem.ValidationError, match="max_memorys"):
        aimem.MemoryStore(db_url, judge=FixedJudge(), max_memorys=3)


def test_judge_failure_writes_nothing(db_url: str) -> None:
    class Broken:
        async def interpret(self, content: str, **_: object) -> aimem.Interpretation:
            raise RuntimeError("model on fire")

    class WrongType:
        async def interpret(self, content: str, **_: object) -> object:
            return {"priority_score": 1.0}

    for judge in (Broken(), WrongType()):
        with aimem.MemoryStore(  # type: ignore[arg-type]
            db_url, judge=judge, on_judge_error="raise"
        ) as store:
            with pytest.raises(aimem.JudgeError):
                store.save("hello")
            with pytest.raises(aimem.JudgeError):
                store.save_many(["one", "two"])
            assert store.stats().total == 0


def test_interpretation_disabled_uses_heuristic_without_calling_the_judge(db_url: str) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge, interpretation_enabled=False) as store:
        m = store.save("I'm allergic to peanuts")
    assert judge.calls == []
    assert m.interpreted_content == "I'm allergic to peanuts"
    assert m.score_source == "heuristic" and m.priority_score is not None


def test_no_api_key_defaults_to_heuristic_and_says_so_once(
    db_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("aimem.saving.contents._warned_heuristic", False)
    with (
        caplog.at_level(logging.WARNING, logger="aimem"),
        aimem.MemoryStore(db_url) as a,
        aimem.MemoryStore(db_url) as b,
    ):
        assert isinstance(a.judge, aimem.HeuristicJudge)
        assert isinstance(b.judge, aimem.HeuristicJudge)
        assert a.save("My son Kai was born today").score_source == "heuristic"
    warnings = [r for r in caplog.records if "HeuristicJudge" in r.getMessage()]
    assert len(warnings) == 1 and "OPENAI_API_KEY" in warnings[0].getMessage()


def test_base_url_setting_selects_openai_judge(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with aimem.MemoryStore(db_url, model="llama3.1") as store:
        assert isinstance(store.judge, aimem.OpenAIJudge)


def test_capacity_archives_and_tells_the_caller(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    told: list[list[aimem.Memory]] = []
    with (
        caplog.at_level(logging.INFO, logger="aimem"),
        aimem.MemoryStore(
            db_url, judge=FixedJudge(), max_memories=2, on_archive=told.append
        ) as store,
    ):
        low = store.save("low [score=0.2]")
        assert low.archived_at is not None and low.archive_reason == "below_min_priority"
        a = store.save("a [score=0.5]")
        store.save("b [score=0.6]")
        store.save("c [score=0.7]")
        assert [m.content for m in store.list()] == ["c [score=0.7]", "b [score=0.6]"]
        archived_a = store.get(a.id)
        assert archived_a.archive_reason == "over_capacity" and archived_a.version == 2
    assert [[m.id for m in batch] for batch in told] == [[low.id], [a.id]]
    assert any(a.id in r.getMessage() for r in caplog.records)


def test_on_archive_callback_errors_do_not_undo_the_save(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(_: Sequence[aimem.Memory]) -> None:
        raise RuntimeError("callback bug")

    with aimem.MemoryStore(db_url, judge=FixedJudge(), on_archive=explode) as store:
        m = store.save("low [score=0.1]")
        assert store.get(m.id).archived_at is not None
    assert "on_archive callback raised" in caplog.text


def test_pinned_memories_are_outside_the_cap(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=1) as store:
        pinned = store.pin(store.save("pinned but low [score=0.35]").id)
        store.save("x [score=0.5]")
        store.save("y [score=0.6]")
        active = store.list()
        assert {m.content for m in active} == {"pinned but low [score=0.35]", "y [score=0.6]"}
        assert pinned.version == 2
        store.unpin(pinned.id)  # now counted, and lowest: archived at once
        assert store.get(pinned.id).archived_at is not None


def test_auto_prune_off_lets_the_store_grow_until_prune(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=2, auto_prune=False) as store:
        for p in (0.2, 0.5, 0.6, 0.7):
            store.save(f"m [score={p}]")
        assert store.stats().count == 4
        preview = store.prune(dry_run=True)
        assert preview.dry_run and [m.priority_score for m in preview.archived] == [0.2, 0.5]
        assert store.stats().count == 4 and store.stats().archived == 0
        report = store.prune()
        assert [m.priority_score for m in report.archived] == [0.2, 0.5]
        assert report.reasons == {
            report.archived[0].id: "below_min_priority",
            report.archived[1].id: "over_capacity",
        }
        assert report.active_after == 2 and store.stats().archived == 2


def test_restore_makes_room_without_archiving_the_restored(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=2) as store:
        a = store.save("a [score=0.4]")
        b = store.save("b [score=0.5]")
        store.save("c [score=0.6]")  # archives a
        restored = store.restore(a.id)
        assert restored.archived_at is None and restored.version == 3
        assert store.get(b.id).archived_at is not None  # next lowest made room
        assert store.stats().count == 2


def test_update_reinterprets_and_bumps_version(db_url: str) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge) as store:
        m = store.save("I live in Osaka")
        updated = store.update(m.id, "I moved to Kyoto [score=0.7]")
        assert (updated.id, updated.version, updated.priority_score) == (m.id, 2, 0.7)
        assert updated.content == "I moved to Kyoto [score=0.7]"
        assert store.search("Kyoto")[0].memory.id == m.id
        assert store.search("Osaka") == []
        with pytest.raises(aimem.NotFoundError):
            store.update("no-such-id", "x")


def test_namespaces_are_isolated(db_url: str) -> None:
    with (
        aimem.MemoryStore(db_url, judge=FixedJudge(), namespace="alice", max_memories=1) as alice,
        aimem.MemoryStore(db_url, judge=FixedJudge(), namespace="bob", max_memories=1) as bob,
    ):
        a = alice.save("alice likes tea [score=0.5]")
        b = bob.save("bob likes tea [score=0.5]")
        assert [m.id for m in alice.list()] == [a.id] and [m.id for m in bob.list()] == [b.id]
        assert [h.memory.id for h in alice.search("tea")] == [a.id]
        with pytest.raises(aimem.NotFoundError):
            alice.get(b.id)
        with pytest.raises(KeyError):
            alice.delete(b.id)
        bob.save("bob likes coffee [score=0.9]")  # bob's cap archives bob's memory only
        assert alice.get(a.id).archived_at is None


def test_list_orders_and_filters(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        for p in (0.5, 0.9, 0.7):
            store.save(f"m [score={p}]")
        assert [m.priority_score for m in store.list()] == [0.9, 0.7, 0.5]
        assert [m.priority_score for m in store.list(order="recent")] == [0.7, 0.9, 0.5]
        assert [m.priority_score for m in store.list(min_score=0.6, limit=1)] == [0.9]
        with pytest.raises(aimem.ValidationError):
            store.list(order="random")  # type: ignore[arg-type]
        with pytest.raises(aimem.ValidationError):
            store.list(limit=0)


def test_search_explains_and_reinforces(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        tea = store.save("I drink green tea every morning [score=0.6]")
        store.save("Coffee makes me jittery [score=0.9]")
        hits = store.search("what tea do I drink?", explain=True)
        assert [h.memory.id for h in hits] == [tea.id]
        assert hits[0].explanation is not None and hits[0].explanation["keyword_rank"] == 1.0
        assert store.get(tea.id).access_count == 1
        assert store.search("tea", min_score=0.7) == []


def test_core_and_context_within_budget(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        store.core = "You are Ai, a cheerful assistant."
        assert store.get_core() == "You are Ai, a cheerful assistant."
        for i, p in enumerate((0.9, 0.5, 0.7)):
            store.save(f"memory number {i} [score={p}]")
        full = store.context()
        assert full.index("Ai, a cheerful") < full.index("memory number 0")
        assert (
            full.index("memory number 0")
            < full.index("memory number 2")
            < full.index("memory number 1")
        )
        for budget in (20, 60, 120, 200):
            assert len(store.context(max_chars=budget)) <= budget


def test_compress_archives_unpinned_and_refuses_empty(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        old = store.save("old detail one")
        kept = store.pin(store.save("pinned fact").id)
        with pytest.raises(aimem.ValidationError, match="allow_empty"):
            store.compress([])
        new = store.compress(["summary of everything [score=0.8]"])
        assert [m.content for m in new] == ["summary of everything [score=0.8]"]
        assert store.get(old.id).archive_reason == "compressed"
        assert store.get(kept.id).archived_at is None
        store.compress([], allow_empty=True)
        assert {m.id for m in store.list()} == {kept.id}


def test_compress_keeps_every_item_it_was_given(db_url: str) -> None:
    # Issue 26: the offline judge scored "Kenji likes tea." under min_priority_score and the
    # compress that wrote it archived it at once, leaving one memory of the two given.
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        assert (store.settings.min_priority_score, store.settings.auto_prune) == (0.3, True)
        old = [
            store.save(t) for t in ("I like coffee in the morning.", "My sister lives in Osaka.")
        ]
        report = store.compress_with_report(["Kenji likes tea.", "Kenji's wife is Yumi."])
        assert [m.content for m in report.memories] == ["Kenji likes tea.", "Kenji's wife is Yumi."]
        assert all(m.archived_at is None for m in report.memories)
        assert sorted(m.id for m in report.archived) == sorted(m.id for m in old)
        assert {m.archive_reason for m in report.archived} == {"compressed"}
        assert {m.content for m in store.list()} == {"Kenji likes tea.", "Kenji's wife is Yumi."}


def test_compress_keeps_items_below_the_threshold_until_a_later_save(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=2) as store:
        store.save("old [score=0.9]")
        kept = store.compress(["low [score=0.1]", "high [score=0.8]"])
        assert [m.archived_at for m in kept] == [None, None]
        assert store.stats().count == 2
        # Later saves apply the capacity rules to them as to any memory.
        later = store.save_with_report("new [score=0.5]")
        assert [(m.content, m.archive_reason) for m in later.archived] == [
            ("low [score=0.1]", "below_min_priority")
        ]


def test_compress_over_capacity_refuses_before_judging_or_writing(db_url: str) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge, max_memories=2) as store:
        store.save("one [score=0.5]")
        store.pin(store.save("pinned [score=0.5]").id)
        store.save("two [score=0.6]")
        calls = len(judge.calls)

        def rows() -> list[tuple[str, int, object]]:
            memories = store.list(include_archived=True)
            return [(m.id, m.version, m.archived_at) for m in memories] + [
                (m.id, len(store.history(m.id)), None) for m in memories
            ]

        before = rows()
        message = r"compress\(\) got 3 items but only 2 fit \(max_memories=2; pinned"
        with pytest.raises(aimem.ValidationError, match=message):
            store.compress(["a", "b", "c"])
        assert rows() == before and len(judge.calls) == calls
        # Each distinct item counts once; the pinned memory sits outside the cap.
        kept = store.compress(["a [score=0.2]", "b [score=0.2]", "a [score=0.2]"])
        assert len({m.id for m in kept}) == 2 and store.stats().count == 3


def test_sync_store_works_inside_a_running_event_loop(db_url: str) -> None:
    async def notebook_cell() -> list[str]:
        asyncio.get_running_loop()  # we really are inside a loop, as in Jupyter
        with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
            store.save("My wife's name is Aiko.")
            store.save_many(["I'm vegetarian.", "ok"])
            return [h.memory.content for h in store.search("wife")]

    assert asyncio.run(notebook_cell()) == ["My wife's name is Aiko."]


def test_async_store_round_trip(db_url: str) -> None:
    async def main() -> aimem.Stats:
        async with aimem.AsyncMemoryStore(db_url, judge=FixedJudge()) as store:
            m = await store.save("async memory")
            assert (await store.get(m.id)).id == m.id
            return await store.stats()

    assert asyncio.run(main()).count == 1


def test_closed_store_says_so(db_url: str) -> None:
    store = aimem.MemoryStore(db_url, judge=FixedJudge())
    store.close()
    store.close()  # idempotent
    with pytest.raises(aimem.AimemError, match="closed"):
        store.list()


def test_sync_and_async_twins_have_the_same_signatures() -> None:
    def public(cls: type) -> dict[str, inspect.Signature]:
        return {
            n: inspect.signature(f)
            for n, f in inspect.getmembers(cls, inspect.isfunction)
            if not n.startswith("_")
        }

    sync, async_ = public(aimem.MemoryStore), public(aimem.AsyncMemoryStore)
    assert async_.pop("aclose") == sync["close"]
    assert sync.keys() == async_.keys()
    for name, signature in sync.items():
        assert inspect.iscoroutinefunction(getattr(aimem.AsyncMemoryStore, name)), name
        assert signature == async_[name], name


def test_client_interpretation_is_stored_without_a_judge_call(db_url: str) -> None:
    judge = FixedJudge()
    mine = aimem.Interpretation(
        interpreted_content="The user prefers Rust for systems work.",
        emotional_impact=0.05,
        user_relevance=0.2,
        novelty=0.1,
        utility=0.2,
        rationale="stable preference",
    )
    with aimem.MemoryStore(db_url, judge=judge) as store:
        m = store.save("prefers rust", interpretation=mine)
        assert judge.calls == []
        assert (m.score_source, m.model, m.prompt_version) == ("client", None, None)
        assert m.interpreted_content == mine.interpreted_content
        assert m.priority_score == pytest.approx(0.55) and m.rationale == "stable preference"
        with pytest.raises(aimem.ValidationError, match=r"aimem\.Interpretation"):
            store.save("x", interpretation={"interpreted_content": "x"})  # type: ignore[arg-type]
        assert store.stats().total == 1


def test_save_and_compress_with_report_name_what_they_archived(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=1) as store:
        first = store.save_with_report("a [score=0.5]")
        assert first.archived == [] and first.memories[0].content == "a [score=0.5]"
        second = store.save_with_report("b [score=0.6]")
        assert [m.id for m in second.archived] == [first.memories[0].id]
        assert second.archived[0].archive_reason == "over_capacity"
        again = store.save_with_report("b [score=0.6]")
        assert again.memories[0].id == second.memories[0].id and again.archived == []
        assert again.duplicates == [second.memories[0].id] and second.duplicates == []
        many = store.save_many_with_report(["b [score=0.6]", "d [score=0.9]", "b [score=0.6]"])
        assert [m.content for m in many.memories] == [
            "b [score=0.6]",
            "d [score=0.9]",
            "b [score=0.6]",
        ]
        assert many.duplicates == [second.memories[0].id]
        assert [m.id for m in many.archived] == [second.memories[0].id]
        compressed = store.compress_with_report(["c [score=0.7]"])
        assert [m.content for m in compressed.memories] == ["c [score=0.7]"]
        assert [m.id for m in compressed.archived] == [many.memories[1].id]
        assert compressed.archived[0].archive_reason == "compressed"
