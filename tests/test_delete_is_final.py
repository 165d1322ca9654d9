"""A delete is final (issue 24, item 5): no other row, history event or export keeps its text.

History is append-only and outlives a delete, so it holds events, never words: a
supersession's reason is kept only as its kind ("new residence"); the judge's own words
(which name both memories) stay out. A successor's rationale counts what it superseded and
never quotes it, and a deleted successor leaves no ``superseded_by`` link behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import aimem
from aimem.testing import OpenAIStub

OLD = "I live at 12 Hillcrest Lane, Sendai."
NEW = "We moved to 7 Willowmere Road, Sapporo, last month."


def _everything(store: aimem.MemoryStore, tmp_path: Path, name: str) -> str:
    """All a user can read back: every memory, every history event and an export file."""
    parts: list[str] = []
    for m in store.list(include_archived=True):
        parts.append(m.model_dump_json())
        parts += [e.model_dump_json() for e in store.history(m.id)]
    target = tmp_path / f"{name}.jsonl"
    store.export_to(target)
    parts.append(target.read_text(encoding="utf-8"))
    return "\n".join(parts)


@pytest.mark.parametrize("deleted", ["old", "new"])
def test_no_words_of_a_deleted_memory_survive_a_supersession(
    db_url: str, tmp_path: Path, deleted: str
) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        old = store.save(OLD)
        report = store.save_with_report(NEW)
        assert [m.id for m in report.archived] == [old.id]
        new = report.memories[0]
        explanation = store.history(old.id)[-1].explanation
        assert explanation == "new residence"  # the kind of change, not the addresses
        gone, kept = (old, new) if deleted == "old" else (new, old)
        store.delete(gone.id)
        text = _everything(store, tmp_path, deleted)
        for word in ("Hillcrest", "Sendai") if deleted == "old" else ("Willowmere", "Sapporo"):
            assert word.lower() not in text.lower(), word
        assert gone.id not in json.dumps(store.get(kept.id).model_dump(mode="json"))


def test_an_llm_reason_is_not_kept_in_history(db_url: str, tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        judge = aimem.OpenAIJudge(base_url=stub.base_url, api_key="x")
        with aimem.MemoryStore(db_url, judge=judge) as store:
            old = store.save("I live in Sendai.")
            report = store.save_with_report("Moved from Sendai to Sapporo [supersedes=1]")
            assert [m.id for m in report.archived] == [old.id]
            [event] = [e for e in store.history(old.id) if e.event == "archive"]
            assert event.explanation is None  # the stub's free-text reason is not stored
            assert "marked as an update" not in _everything(store, tmp_path, "llm")
