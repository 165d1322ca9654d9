"""Data steps of schema migrations, the same on every dialect (Core statements).

A dialect adds the columns its own way (``sqlite_schema``, ``postgres_schema``), then runs
the step here inside the same transaction, so an upgrade is all or nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import Connection, bindparam, select, update

from aimem.storage.sql import MEMORIES, m
from aimem.text.keywords import memory_terms
from aimem.text.restatement import legacy_recall_terms, restate

__all__ = ["readable_interpretations"]

log = logging.getLogger("aimem")
_BATCH = 2000


def readable_interpretations(conn: Connection) -> int:
    """Schema 5: clean the offline judge's framed interpretations and re-index every memory.

    An interpretation heuristic-v1 to v5 framed (``User: ...``, ``The user's residence
    (...): "..."``) becomes the content told in the third person (``restatement``), its
    slot words kept as recall terms. Every memory's keyword terms are computed again
    without the store's framing words ("the user", ユーザー, the ``user_context`` name),
    which had matched every memory. Returns how many interpretations were rewritten.
    """
    rewritten = 0
    last = 0
    statement = (
        update(MEMORIES)
        .where(m.seq == bindparam("b_seq"))
        .values(
            interpreted_content=bindparam("b_interpreted"),
            recall_terms=bindparam("b_recall"),
            terms=bindparam("b_terms"),
        )
    )
    while True:
        rows = conn.execute(
            select(
                m.seq,
                m.content,
                m.interpreted_content,
                m.score_source,
                m.user_context,
                m.recall_terms,
                m.terms,
            )
            .where(m.seq > last)
            .order_by(m.seq)
            .limit(_BATCH)
        ).all()
        if not rows:
            break
        changes: list[dict[str, Any]] = []
        for seq, content, interpreted, source, user_context, recall, terms in rows:
            legacy = legacy_recall_terms(interpreted) if source == "heuristic" else None
            if legacy is not None:
                interpreted, recall = restate(content), legacy
                rewritten += 1
            new_terms = memory_terms(content, interpreted, recall, user_context)
            if legacy is not None or new_terms != terms:
                changes.append(
                    {
                        "b_seq": seq,
                        "b_interpreted": interpreted,
                        "b_recall": recall,
                        "b_terms": new_terms,
                    }
                )
        if changes:
            conn.execute(statement, changes)
        last = rows[-1][0]
    if rewritten:
        log.info("aimem: rewrote %d offline interpretations without framing (schema 5)", rewritten)
    return rewritten
