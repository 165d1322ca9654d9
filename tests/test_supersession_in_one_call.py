"""Supersession inside one call: a later item of ``save_many`` retires an earlier one.

The offline judge sees the call's earlier items as unsaved related memories, as a
conversation's later turn sees its earlier turns; a look-alike in the same call stays.
"""

from __future__ import annotations

import aimem


def test_a_later_item_of_save_many_retires_an_earlier_one(db_url: str) -> None:
    with aimem.MemoryStore(db_url) as store:
        report = store.save_many_with_report(
            [
                "I live in Leeds.",
                "I was born in Leeds.",
                "I'm allergic to penicillin.",
                "Since we moved to York last month, can you find me a GP nearby?",
                "I'm not allergic to cats.",
            ]
        )
        by_content = {m.content: m for m in report.memories}
        archived = {m.content for m in report.archived}
        assert archived == {"I live in Leeds."}
        moved = by_content["Since we moved to York last month, can you find me a GP nearby?"]
        assert store.get(by_content["I live in Leeds."].id).superseded_by == moved.id
        kept = {hit.memory.content for hit in store.search("Leeds")}
        assert "I was born in Leeds." in kept and "I live in Leeds." not in kept
        assert store.get(by_content["I'm allergic to penicillin."].id).archived_at is None


def test_the_later_statement_wins_never_the_earlier(db_url: str) -> None:
    with aimem.MemoryStore(db_url) as store:
        report = store.save_many_with_report(["We moved to York last month.", "I live in Leeds."])
        assert [m.content for m in report.archived] == ["We moved to York last month."]
        assert store.get(report.memories[1].id).archived_at is None
