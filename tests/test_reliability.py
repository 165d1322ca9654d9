"""Nothing lost, nothing invented: pending judgements, idempotency keys, versions, input rules."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from _judges import FlakyJudge
from _stores import store_url

import aimem
from aimem.storage.schema import SCHEMA_VERSION
from aimem.testing import FixedJudge

# -- judge failure policy ------------------------------------------------------------


def test_pending_is_the_default_and_keeps_the_raw_content(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    judge = FlakyJudge(down=True)
    with aimem.MemoryStore(db_url, judge=judge, max_memories=1) as store:
        judged_first = None
        judge.down = False
        judged_first = store.save("kept [score=0.5]")
        judge.down = True
        pending = store.save("I moved to Osaka\ttoday [score=0.9]", user_context="syui")
        assert pending.score_source == "pending" and pending.pending
        assert pending.content == "I moved to Osaka\ttoday [score=0.9]"
        assert pending.interpreted_content == pending.content
        assert (pending.priority_score, pending.emotional_impact, pending.utility) == (
            None,
            None,
            None,
        )
        assert pending.archived_at is None and pending.user_context == "syui"
        assert "stored as pending" in caplog.text
        stats = store.stats()
        assert (stats.count, stats.pending) == (2, 1), "pending sits outside the cap of 1"
        assert [m.id for m in store.list()] == [judged_first.id, pending.id], "pending last"
        assert [h.memory.id for h in store.search("Osaka")] == [pending.id]
        assert store.prune(dry_run=True).archived == []


def test_reinterpret_pending_judges_them_later(db_url: str) -> None:
    judge = FlakyJudge(down=True)
    with aimem.MemoryStore(db_url, judge=judge, max_memories=1) as store:
        a = store.save("low [score=0.4]")
        b = store.save("high [score=0.9]")
        assert store.reinterpret_pending() == [], "still down: nothing judged, nothing lost"
        assert store.stats().pending == 2
        judge.down = False
        judged = store.reinterpret_pending()
        assert [m.id for m in judged] == [a.id, b.id]
        assert [m.score_source for m in judged] == ["custom", "custom"]
        assert [m.version for m in judged] == [2, 2]
        assert store.stats().pending == 0
        # The cap of 1 now applies: judging b archived a.
        assert store.get(a.id).archive_reason == "over_capacity"
        assert [m.id for m in store.list()] == [b.id]
        assert store.reinterpret_pending() == []


def test_raise_policy_writes_nothing(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FlakyJudge(down=True), on_judge_error="raise") as store:
        with pytest.raises(aimem.JudgeError):
            store.save("x")
        with pytest.raises(aimem.JudgeError):
            store.save_many(["y", "z"])
        assert store.stats().total == 0


def test_save_many_pends_only_the_items_whose_judgement_failed(db_url: str) -> None:
    class HalfBroken(FixedJudge):
        async def interpret(
            self,
            content: str,
            *,
            user_context: str | None = None,
            related: Sequence[aimem.Memory] = (),
        ) -> aimem.Interpretation:
            if "broken" in content:
                raise RuntimeError("model on fire")
            return await super().interpret(content, user_context=user_context, related=related)

    with aimem.MemoryStore(db_url, judge=HalfBroken()) as store:
        saved = store.save_many(["fine [score=0.6]", "broken", "also fine [score=0.7]"])
        assert [m.score_source for m in saved] == ["custom", "pending", "custom"]


def test_update_never_pends_an_existing_memory(db_url: str) -> None:
    judge = FlakyJudge(down=True)
    judge.down = False
    with aimem.MemoryStore(db_url, judge=judge) as store:
        m = store.save("old [score=0.6]")
        judge.down = True
        with pytest.raises(aimem.JudgeError):
            store.update(m.id, "new")
        kept = store.get(m.id)
        assert (kept.content, kept.priority_score, kept.version) == ("old [score=0.6]", 0.6, 1)


def test_on_judge_error_from_the_environment(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIMEM_ON_JUDGE_ERROR", "raise")
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        assert store.settings.on_judge_error == "raise"
    with pytest.raises(aimem.ValidationError):
        aimem.MemoryStore(db_url, judge=FixedJudge(), on_judge_error="ignore")


# -- idempotency -------------------------------------------------------------------


def test_a_retried_save_returns_the_same_memory_without_a_second_call(db_url: str) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge, max_memories=1) as store:
        first = store.save("a [score=0.5]", idempotency_key="req-1")
        again = store.save("a [score=0.5]", idempotency_key="req-1")
        assert again.id == first.id and len(judge.calls) == 1
        # Archived since (pushed out by a higher one): the key still answers with it.
        store.save("b [score=0.9]")
        assert store.get(first.id).archived_at is not None
        retried = store.save("a [score=0.5]", idempotency_key="req-1")
        assert retried.id == first.id and retried.archived_at is not None
        assert len(judge.calls) == 2 and store.stats().total == 2
        with pytest.raises(aimem.ConflictError, match="req-1"):
            store.save("different", idempotency_key="req-1")
        assert store.stats().total == 2
    with aimem.MemoryStore(db_url, judge=judge) as reopened:
        assert reopened.save("a [score=0.5]", idempotency_key="req-1").id == first.id


def test_keys_are_per_namespace_and_freed_by_delete(db_url: str) -> None:
    judge = FixedJudge()
    with (
        aimem.MemoryStore(db_url, judge=judge, namespace="alice") as alice,
        aimem.MemoryStore(db_url, judge=judge, namespace="bob") as bob,
    ):
        a = alice.save("same [score=0.5]", idempotency_key="k")
        b = bob.save("other [score=0.5]", idempotency_key="k")
        assert a.id != b.id
        alice.delete(a.id)
        fresh = alice.save("new text [score=0.5]", idempotency_key="k")
        assert fresh.id != a.id


def test_a_keyed_exact_duplicate_adopts_the_existing_memory(db_url: str) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge) as store:
        plain = store.save("tea [score=0.5]")
        keyed = store.save("tea [score=0.5]", idempotency_key="k2")
        assert keyed.id == plain.id and len(judge.calls) == 1
        store.delete(plain.id)
        assert store.save("tea [score=0.5]", idempotency_key="k2").id != plain.id


def test_concurrent_retries_with_one_key_make_one_row(db_url: str) -> None:
    judge = FixedJudge()
    with aimem.MemoryStore(db_url, judge=judge) as store:
        ids: list[str] = []
        barrier = threading.Barrier(6)

        def retry() -> None:
            barrier.wait()
            ids.append(store.save("once [score=0.5]", idempotency_key="same").id)

        threads = [threading.Thread(target=retry) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(set(ids)) == 1 and store.stats().total == 1


@pytest.mark.parametrize("key", ["", "   ", "x" * 201, "a\nb", 7])
def test_bad_keys_are_refused(db_url: str, key: object) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        with pytest.raises(aimem.ValidationError, match="idempotency_key"):
            store.save("x", idempotency_key=key)  # type: ignore[arg-type]
        assert store.stats().total == 0


# -- versions ----------------------------------------------------------------------


def test_version_rises_on_every_change_and_guards_updates(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), max_memories=1) as store:
        m = store.save("a [score=0.5]")
        assert m.version == 1
        assert store.pin(m.id).version == 2
        assert store.unpin(m.id).version == 3
        store.save("b [score=0.9]")  # archives a
        assert store.get(m.id).version == 4
        assert store.restore(m.id).version == 5
        updated = store.update(m.id, "a2 [score=0.95]", expected_version=5)
        assert updated.version == 6
        with pytest.raises(aimem.ConflictError, match="version 6"):
            store.update(m.id, "stale write", expected_version=5)
        assert store.get(m.id).content == "a2 [score=0.95]"
        with pytest.raises(aimem.ValidationError):
            store.update(m.id, "x", expected_version=0)


# -- input rules -------------------------------------------------------------------


def test_line_breaks_are_normalised_and_control_characters_refused(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge()) as store:
        m = store.save("line one\r\nline two\rthree\tend")
        assert m.content == "line one\nline two\nthree\tend"
        for bad in ("nul\x00byte", "ansi \x1b[31mred", "del\x7f", "c1\x85", "half \ud800"):
            with pytest.raises(aimem.ValidationError, match="U\\+"):
                store.save(bad)
        with pytest.raises(aimem.ValidationError, match="user_context"):
            store.save("fine", user_context="two\nlines")
        with pytest.raises(aimem.ValidationError, match="core text"):
            store.set_core("bell\x07")
        with pytest.raises(aimem.ValidationError, match="query"):
            store.search("esc\x1b")
        assert store.stats().total == 1


# -- schema migration ------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_a_version_1_database_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    url = store_url(path)
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        kept = store.save("from the old days [score=0.5]")
    con = sqlite3.connect(path)
    con.execute("DROP TRIGGER memories_keys_ad")
    con.execute("DROP TABLE idempotency_keys")
    con.execute("UPDATE aimem_meta SET value = '1' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with aimem.MemoryStore(url, judge=FixedJudge()) as store:
        assert store.get(kept.id).content == "from the old days [score=0.5]"
        keyed = store.save("new [score=0.5]", idempotency_key="k")
        assert store.save("new [score=0.5]", idempotency_key="k").id == keyed.id
    con = sqlite3.connect(path)
    [(version,)] = con.execute("SELECT value FROM aimem_meta WHERE key = 'schema_version'")
    con.close()
    assert version == str(SCHEMA_VERSION)


def test_a_failed_batch_stops_the_other_judgements(db_url: str) -> None:
    import asyncio

    started: list[str] = []
    cancelled: list[str] = []

    class OneFails:
        async def interpret(self, content: str, **_: object) -> aimem.Interpretation:
            started.append(content)
            if content == "bad":
                await asyncio.sleep(0.05)
                raise aimem.JudgeError("no")
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(content)
                raise
            raise AssertionError("not cancelled")

    with aimem.MemoryStore(db_url, judge=OneFails(), on_judge_error="raise") as store:  # type: ignore[arg-type]
        with pytest.raises(aimem.JudgeError):
            store.save_many(["slow one", "bad", "slow two"])
        assert sorted(cancelled) == ["slow one", "slow two"]
        assert store.stats().total == 0
