"""Memory that keeps up with changing facts: supersession, history, honest edits, restores.

Through the public API on a real store. The judge names what a content supersedes by
position in the related memories it was shown: here a ``FixedJudge`` that, for content
marked ``{retires WORD}``, names every related memory containing WORD.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

import aimem
from aimem import Interpretation, Memory
from aimem.exceptions import ConflictError, NotFoundError, ValidationError
from aimem.testing import FixedJudge

_RETIRES = re.compile(r"\{retires (\w+)\}")


def retires(content: str, related: Sequence[Memory]) -> list[int]:
    """Positions of the related memories holding the word a ``{retires WORD}`` mark names."""
    mark = _RETIRES.search(content)
    if mark is None:
        return []
    word = mark.group(1).lower()
    return [
        i
        for i, m in enumerate(related)
        if word in m.content.lower() and not _RETIRES.search(m.content)
    ]


def store(url: str, **kw: object) -> aimem.MemoryStore:
    kw.setdefault("judge", FixedJudge(supersedes=retires))
    return aimem.MemoryStore(url, **kw)  # type: ignore[arg-type]


# --- supersession on save -----------------------------------------------------------------


def test_a_superseded_memory_leaves_the_active_set_with_a_link_and_an_event(db_url: str) -> None:
    seen: list[list[Memory]] = []
    with store(db_url, on_archive=seen.append) as s:
        old = s.save("I live in Sendai, near the station.")
        report = s.save_with_report("We moved to Sapporo, far from Sendai. {retires Sendai}")
        [new] = report.memories

        assert [m.id for m in report.archived] == [old.id]
        assert [[m.id for m in batch] for batch in seen] == [[old.id]]
        gone = s.get(old.id)
        assert gone.archive_reason == "superseded" and gone.superseded_by == new.id
        assert gone.archived_at is not None
        # current truth by default ...
        assert [m.id for m in s.list()] == [new.id]
        assert [h.memory.id for h in s.search("Sendai")] == [new.id]
        assert "Sendai, near the station" not in s.context()
        # ... history on request
        assert old.id in {m.id for m in s.list(include_archived=True)}
        assert old.id in {h.memory.id for h in s.search("Sendai", include_archived=True)}
        events = s.history(old.id)
        assert [e.event for e in events] == ["save", "archive"]
        last = events[-1]
        assert (last.reason, last.superseded_by) == ("superseded", new.id)
        assert last.explanation and last.version == gone.version
        # outside the cap count
        assert s.stats().count == 1


def test_supersession_and_capacity_happen_in_one_transaction(db_url: str) -> None:
    with store(db_url, max_memories=2, min_priority_score=0.0) as s:
        a = s.save("I work at Acme as a designer [score=0.9]")
        b = s.save("My cat is called Miso [score=0.5]")
        # c supersedes a: a leaves the active set, so nothing needs forgetting for room
        report = s.save_with_report("I left Acme, now I work at Globex [score=0.6] {retires Acme}")
        assert [(m.id, m.archive_reason) for m in report.archived] == [(a.id, "superseded")]
        assert {m.id for m in s.list()} == {b.id, report.memories[0].id}
        # the next save is over the cap: the lowest goes, the superseded one stays archived
        d = s.save_with_report("I play the cello [score=0.7]")
        assert [(m.id, m.archive_reason) for m in d.archived] == [(b.id, "over_capacity")]
        assert s.stats().count == 2


def test_a_position_the_judge_was_not_shown_is_refused_and_nothing_is_written(
    db_url: str,
) -> None:
    with store(db_url, judge=FixedJudge()) as s:  # the [supersedes=N] marker rule
        s.save("I live in Sendai.")
        with pytest.raises(ValidationError, match="supersedes names related memory 3"):
            s.save("We moved to Sapporo from Sendai [supersedes=4]")
        assert len(s.list(include_archived=True)) == 1


@pytest.mark.parametrize("positions", [(-1,), (0, 0), (1,), tuple(range(30))])
def test_malformed_positions_are_refused(db_url: str, positions: Sequence[object]) -> None:
    judge = FixedJudge(supersedes=lambda content, related: positions if related else ())  # type: ignore[arg-type,return-value]
    with store(db_url, judge=judge) as s:
        s.save("I live in Sendai.")
        with pytest.raises(ValidationError, match="supersedes"):
            s.save("We moved to Sapporo from Sendai.")
        assert len(s.list(include_archived=True)) == 1


def test_nothing_is_superseded_without_related_memories_or_when_unsure(db_url: str) -> None:
    with store(db_url) as s:
        first = s.save("I live in Sendai.")
        second = s.save("My sister lives in Sendai too.")  # no marker: the judge is unsure
        assert {m.id for m in s.list()} == {first.id, second.id}


def test_a_pinned_memory_is_never_superseded(db_url: str) -> None:
    with store(db_url) as s:
        old = s.pin(s.save("I live in Sendai.").id)
        report = s.save_with_report("We moved to Sapporo from Sendai {retires Sendai}")
        assert report.archived == []
        assert s.get(old.id).archived_at is None


def test_a_wrong_supersession_is_undone_by_restore_and_stays(db_url: str) -> None:
    with store(db_url, max_memories=3, min_priority_score=0.0) as s:
        old = s.save("I live in Sendai [score=0.2]")
        s.save("My sister moved to Sapporo from Sendai {retires Sendai}")
        assert s.get(old.id).archive_reason == "superseded"

        restored = s.restore_with_report(old.id)
        back = restored.memories[0]
        assert back.archived_at is None and back.superseded_by is None
        assert back.restored_at is not None
        assert s.history(old.id)[-1].event == "restore"
        # a later save's supersession leaves it be
        s.save("Sapporo is cold in winter {retires Sendai}")
        assert s.get(old.id).archived_at is None
        # but the restore spared it once, not forever: when the cap fills, the lowest goes
        for text in ("I play the cello [score=0.5]", "I like green tea [score=0.6]"):
            s.save(text)
        assert s.get(old.id).archive_reason == "over_capacity"
        assert s.stats().count == 3


def test_restore_reports_what_it_archived_to_make_room(db_url: str) -> None:
    with store(db_url, max_memories=1, min_priority_score=0.0) as s:
        low = s.save("I like tea [score=0.3]")
        high = s.save("I am allergic to penicillin [score=0.9]")
        assert s.get(low.id).archive_reason == "over_capacity"
        report = s.restore_with_report(low.id)
        assert [m.id for m in report.archived] == [high.id]


def test_supersession_never_crosses_namespaces(db_url: str) -> None:
    with store(db_url, namespace="alice") as alice, store(db_url, namespace="bob") as bob:
        theirs = bob.save("I live in Sendai.")
        mine = alice.save("I live in Sendai.")
        alice.save("We moved to Sapporo from Sendai {retires Sendai}")
        assert alice.get(mine.id).archive_reason == "superseded"
        assert bob.get(theirs.id).archived_at is None
        with pytest.raises(NotFoundError):
            bob.history(mine.id)


def test_save_many_supersedes_per_item(db_url: str) -> None:
    with store(db_url) as s:
        home = s.save("I live in Sendai.")
        job = s.save("I work as a nurse.")
        report = s.save_many_with_report(
            [
                "We moved to Sapporo from Sendai {retires Sendai}",
                "I quit being a nurse {retires nurse}",
            ]
        )
        assert {m.id for m in report.archived} == {home.id, job.id}
        assert {m.archive_reason for m in report.archived} == {"superseded"}


# --- honest edits -----------------------------------------------------------------------


def test_update_is_judged_without_itself_and_keeps_the_previous_version(db_url: str) -> None:
    judge = FixedJudge()
    with store(db_url, judge=judge) as s:
        memory = s.save("I'm allergic to penicillin.")
        other = s.save("Penicillin made me sick as a child.")
        judge.related_seen.clear()
        updated = s.update(memory.id, "I'm severely allergic to penicillin.")

        assert memory.id not in judge.related_seen[-1]
        assert other.id in judge.related_seen[-1]
        assert (updated.id, updated.version) == (memory.id, 2)
        [_, event] = s.history(memory.id)
        assert event.event == "update" and event.version == 2
        assert event.previous is not None
        assert event.previous["content"] == "I'm allergic to penicillin."
        assert event.previous["priority_score"] == memory.priority_score
        assert event.previous["interpreted_content"] == memory.interpreted_content


def test_update_cannot_supersede_its_own_memory_and_reports_what_it_archived(
    db_url: str,
) -> None:
    with store(db_url) as s:
        home = s.save("I live in Sendai.")
        note = s.save("Sendai winters are mild.")
        # the only related memory shown is the other one: position 1 is `home`, never `note`
        report = s.update_with_report(note.id, "Moved from Sendai to Sapporo {retires Sendai}")
        assert [m.id for m in report.archived] == [home.id]
        assert s.get(note.id).archived_at is None


def test_every_version_of_repeated_updates_stays_readable(db_url: str) -> None:
    with store(db_url) as s:
        m = s.save("Dose: 10 mg")
        s.update(m.id, "Dose: 20 mg")
        s.update(m.id, "Dose: 5 mg")
        previous = [e.previous["content"] for e in s.history(m.id) if e.previous]
        assert previous == ["Dose: 10 mg", "Dose: 20 mg"]


def test_compress_is_judged_without_the_memories_it_replaces(db_url: str) -> None:
    judge = FixedJudge()
    with store(db_url, judge=judge) as s:
        a = s.save("I like green tea.")
        b = s.save("I like black tea.")
        kept = s.pin(s.save("I like tea ceremonies.").id)
        judge.related_seen.clear()
        s.compress(["I like green and black tea."])
        assert a.id not in judge.related_seen[-1] and b.id not in judge.related_seen[-1]
        assert kept.id in judge.related_seen[-1]


def test_a_failed_update_changes_nothing(db_url: str) -> None:
    with store(db_url) as s:
        m = s.save("I live in Sendai.")
        s.save("Other text")
        with pytest.raises(ConflictError):
            s.update(m.id, "Other text")
        assert s.history(m.id)[-1].event == "save"
        assert s.get(m.id).version == 1


# --- history, delete, export ------------------------------------------------------------


def test_delete_removes_every_trace_including_versions(db_url: str, tmp_path: Path) -> None:
    with store(db_url) as s:
        m = s.save("Dose: 10 mg")
        s.update(m.id, "Dose: 20 mg")
        s.delete(m.id)
        with pytest.raises(NotFoundError):
            s.history(m.id)
        s.export_to(tmp_path / "out.jsonl")
        assert "10 mg" not in (tmp_path / "out.jsonl").read_text(encoding="utf-8")


def test_export_import_keeps_links_versions_and_restores(
    db_url_factory: object, tmp_path: Path
) -> None:
    url = db_url_factory  # type: ignore[assignment]
    with store(url("a")) as s:  # type: ignore[operator]
        old = s.save("I live in Sendai.")
        new = s.save("We moved to Sapporo from Sendai {retires Sendai}")
        dose = s.save("Dose: 10 mg")
        s.update(dose.id, "Dose: 20 mg")
        other = s.save("I play the cello.")
        s.save("I gave up the cello {retires cello}")
        s.restore(other.id)
        s.export_to(tmp_path / "a.jsonl")
    with store(url("b")) as t:  # type: ignore[operator]
        t.import_from(tmp_path / "a.jsonl")
        assert t.get(old.id).superseded_by == new.id
        assert t.get(other.id).restored_at is not None
        assert [e.previous["content"] for e in t.history(dose.id) if e.previous] == ["Dose: 10 mg"]
        t.export_to(tmp_path / "b.jsonl")
    first = (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()
    second = (tmp_path / "b.jsonl").read_text(encoding="utf-8").splitlines()
    assert first[1:-1] == second[1:-1]  # header and trailer carry times; the rest is identical


def test_an_import_claiming_a_supersession_without_a_successor_is_refused(
    db_url: str, tmp_path: Path
) -> None:
    with store(db_url, namespace="src") as s:
        s.save("I live in Sendai.")
        s.save("We moved to Sapporo from Sendai {retires Sendai}")
        s.export_to(tmp_path / "x.jsonl", include_history=False)
    text = (tmp_path / "x.jsonl").read_text(encoding="utf-8")
    forged = text.replace('"superseded_by":"', '"superseded_by":"x').replace(
        '"superseded_by": "', '"superseded_by": "x'
    )
    assert forged != text
    path = tmp_path / "forged.jsonl"
    path.write_text(forged, encoding="utf-8")
    with store(db_url, namespace="dst") as t:
        report = t.import_from(path, dry_run=True)
        assert not report.ok


# --- the async twin and a running loop --------------------------------------------------


def test_history_and_reports_work_in_the_async_api(db_url: str) -> None:
    async def go() -> None:
        async with aimem.AsyncMemoryStore(db_url, judge=FixedJudge(supersedes=retires)) as s:
            old = await s.save("I live in Sendai.")
            report = await s.save_with_report("Moved from Sendai to Sapporo {retires Sendai}")
            assert [m.id for m in report.archived] == [old.id]
            assert (await s.history(old.id))[-1].reason == "superseded"
            back = await s.restore_with_report(old.id)
            assert back.memories[0].archived_at is None

    asyncio.run(go())


def test_client_scores_cannot_name_positions_they_were_not_shown(db_url: str) -> None:
    with store(db_url) as s:
        old = s.save("I live in Sendai.")
        mine = Interpretation(
            interpreted_content="The user now lives in Sapporo.",
            emotional_impact=0.1,
            user_relevance=0.2,
            novelty=0.2,
            utility=0.2,
            supersedes=(0,),
            supersede_reason="moved",
        )
        with pytest.raises(ValidationError, match="none were shown"):
            s.save("We moved to Sapporo from Sendai.", interpretation=mine)
        assert s.get(old.id).archived_at is None
        assert len(s.list(include_archived=True)) == 1


def test_a_memory_judged_late_never_retires_newer_news(db_url: str) -> None:
    class Flaky(FixedJudge):
        down = True

        async def interpret(self, content: str, **kw: object) -> Interpretation:
            if self.down and "Sendai" in content:
                raise aimem.JudgeError("endpoint down")
            return await super().interpret(content, **kw)  # type: ignore[arg-type]

    judge = Flaky(supersedes=retires)
    with store(db_url, judge=judge) as s:
        pending = s.save("I live in Sendai {retires Sapporo}")  # judged later, wrongly
        assert pending.score_source == "pending"
        newer = s.save("We moved to Sapporo last month.")
        judge.down = False
        [judged] = s.reinterpret_pending()
        assert judged.id == pending.id
        assert s.get(newer.id).archived_at is None  # newer news stays


def test_a_memory_judged_late_still_retires_what_is_older(db_url: str) -> None:
    judge = FixedJudge(supersedes=retires)
    with store(db_url, judge=judge) as s:
        old = s.save("I work at Acme.")
        broken = aimem.MemoryStore(db_url, judge=_Down(), on_judge_error="pending")
        with broken as t:
            pending = t.save("I left Acme for Globex {retires Acme}")
        assert pending.score_source == "pending"
        [judged] = s.reinterpret_pending()
        assert judged.id == pending.id
        assert s.get(old.id).superseded_by == pending.id


class _Down(FixedJudge):
    async def interpret(self, content: str, **kw: object) -> Interpretation:
        raise aimem.JudgeError("endpoint down")
