"""History you can read: a memory's events, and the versions its edits replaced."""

from __future__ import annotations

import json
from datetime import datetime

from sqlalchemy import Connection, insert, select

from aimem.models import HistoryEvent, Memory
from aimem.storage.sql import HISTORY, VERSIONS, require

__all__ = ["VERSION_FIELDS", "history", "save_version"]


def save_version(conn: Connection, memory: Memory, now: datetime) -> None:
    """Keep a memory as it is now, before an update replaces its content and judgement."""
    conn.execute(
        insert(VERSIONS).values(
            memory_id=memory.id,
            namespace=memory.namespace,
            version=memory.version,
            content=memory.content,
            interpreted_content=memory.interpreted_content,
            emotional_impact=memory.emotional_impact,
            user_relevance=memory.user_relevance,
            novelty=memory.novelty,
            utility=memory.utility,
            priority_score=memory.priority_score,
            rationale=memory.rationale,
            score_source=memory.score_source,
            model=memory.model,
            prompt_version=memory.prompt_version,
            replaced_at=now,
        )
    )


#: The previous version's fields an ``update`` event shows.
VERSION_FIELDS = (
    "content",
    "interpreted_content",
    "emotional_impact",
    "user_relevance",
    "novelty",
    "utility",
    "priority_score",
    "rationale",
    "score_source",
    "model",
    "prompt_version",
)


def history(conn: Connection, namespace: str, memory_id: str) -> list[HistoryEvent]:
    """A memory's events, oldest first; an update carries the version it replaced."""
    require(conn, namespace, memory_id)
    h = HISTORY.c
    events = conn.execute(
        select(h.memory_id, h.event, h.version, h.at, h.detail)
        .where(h.namespace == namespace, h.memory_id == memory_id)
        .order_by(h.id)
    ).all()
    v = VERSIONS.c
    previous = {
        row["version"]: {k: row[k] for k in VERSION_FIELDS}
        for row in conn.execute(
            select(VERSIONS).where(v.namespace == namespace, v.memory_id == memory_id)
        ).mappings()
    }
    made = []
    for memory_id_, event, version, at, raw in events:
        try:
            detail = json.loads(raw) if raw else {}
        except ValueError:
            detail = {}
        if not isinstance(detail, dict):
            detail = {}
        made.append(
            HistoryEvent(
                memory_id=memory_id_,
                event=event,
                version=int(version),
                at=at,
                reason=_text(detail.get("reason")),
                superseded_by=_text(detail.get("by")),
                explanation=_text(detail.get("why")),
                previous=previous.get(int(version) - 1) if event == "update" else None,
                detail=detail,
            )
        )
    return made


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
