"""What ``aimem mcp`` answers: result models (the tools' ``outputSchema``) and compact views.

An agent reads every character of a result, so a memory is shown by default with what
it needs to act: its id, content, interpretation, priority, pinned and state (and why
it was archived). ``detail=true`` on a tool gives the full record (every ``Memory``
field), as does the resource ``memory://memories/{id}``. The models here describe both
shapes, so ``tools/list`` carries a real schema and the SDK checks every result against
it; the views are plain dicts built to match them, so optional keys are left out
rather than sent as ``null``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from aimem.models import HistoryEvent, Memory, PruneReport

__all__ = [
    "BatchResult",
    "CoreResult",
    "CoreSet",
    "Deleted",
    "EventView",
    "HistoryResult",
    "HitView",
    "Json",
    "MemoryOut",
    "MemoryRecord",
    "MemoryResult",
    "MemoryView",
    "PageResult",
    "PruneResult",
    "SaveResult",
    "SearchResult",
    "WriteResult",
    "event_view",
    "hit_view",
    "memory_view",
    "prune_view",
    "state_of",
]

Json = dict[str, Any]
State = Literal["active", "archived", "superseded", "pending"]
_TRUNCATED = (
    "Present (true) when a long text was cut to keep the result within the server's "
    "character budget; read memory://memories/{id} for the whole record."
)
_CURSOR = (
    "Pass it as cursor to get the rest (same tool unless the description says otherwise); "
    "null when nothing is left."
)
_IDS = "Ids of the memories this call archived (a newer memory, capacity, or a compress)."


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemoryView(_Out):
    """A memory as an agent needs it (the default view)."""

    id: str = Field(description="The full id; any unique prefix of 4+ characters also names it.")
    content: str = Field(description="What was said, verbatim.")
    interpretation: str = Field(description="The judge's reading of it.")
    priority: float | None = Field(
        description="Importance in [0, 1], rounded to 3 places; null while it waits for a judge."
    )
    pinned: bool
    state: State
    archive_reason: str | None = Field(
        default=None, description="Why it was archived (only for archived memories)."
    )
    superseded_by: str | None = Field(
        default=None, description="The memory that made it out of date, if one did."
    )
    contested_by: str | None = Field(
        default=None,
        description="A newer memory stating another value for the same thing: this one "
        "may be out of date.",
    )
    truncated: bool = Field(default=False, description=_TRUNCATED)


class MemoryRecord(Memory):
    """Every field of a memory (``detail=true``)."""

    truncated: bool = Field(default=False, description=_TRUNCATED)


#: A memory in a result: the compact view, or the whole record with ``detail=true``.
MemoryOut = MemoryView | MemoryRecord


#: What a search with no hit says, in place of an empty list alone.
NO_MATCH = "No memory matches the query."


class HitView(_Out):
    """One search hit: its score, its relevance and the memory."""

    score: float = Field(
        description="Orders this list: relevance first; priority and recency break near-ties."
    )
    relevance: float = Field(
        description="How well it matches, on an absolute scale 0..1 (comparable across queries)."
    )
    conflicts_with: str | None = Field(
        default=None,
        description="A newer hit stating another value for the same thing: this one is "
        "likely out of date.",
    )
    memory: MemoryOut


class PreviousView(_Out):
    """What an update replaced, compactly."""

    content: str | None = None
    interpretation: str | None = None
    priority: float | None = None
    truncated: bool = Field(default=False, description=_TRUNCATED)


class EventView(_Out):
    """One event of a memory's history (the default view)."""

    event: str = Field(description="save, judge, update, archive, restore, pin, unpin, ...")
    version: int
    at: str = Field(description="When, ISO 8601 with timezone.")
    reason: str | None = None
    superseded_by: str | None = None
    explanation: str | None = None
    previous: PreviousView | None = Field(
        default=None, description="For an update: the version it replaced."
    )
    truncated: bool = Field(default=False, description=_TRUNCATED)


class EventRecord(HistoryEvent):
    """Every field of a history event (``detail=true``)."""

    truncated: bool = Field(default=False, description=_TRUNCATED)


class MemoryResult(_Out):
    """One memory (get, pin, unpin)."""

    memory: MemoryOut


class WriteResult(_Out):
    """One memory written (update, restore), with what the write archived."""

    memory: MemoryOut
    archived: list[str] = Field(description=_IDS)
    superseded: list[str] = Field(description="Those of archived that a newer memory replaced.")
    truncated: bool = Field(default=False, description="Id lists were cut to fit the budget.")


class SaveResult(WriteResult):
    """One save: the memory, whether it already existed, and what it archived."""

    duplicate: bool = Field(description="True: the exact text was already an active memory.")


class PageResult(_Out):
    """A page of memories."""

    memories: list[MemoryOut]
    next_cursor: str | None = Field(description=_CURSOR)


class BatchResult(PageResult):
    """Memories written together (save_memories, save_conversation, compress)."""

    duplicates: list[str] = Field(
        default=[], description="Ids among memories that already existed (exact duplicates)."
    )
    archived: list[str] = Field(description=_IDS)
    superseded: list[str] = Field(description="Those of archived that a newer memory replaced.")
    truncated: bool = Field(default=False, description="Id lists were cut to fit the budget.")


class SearchResult(_Out):
    """Search hits, best first, in pages."""

    hits: list[HitView]
    note: str | None = Field(default=None, description="Said when no memory matches.")
    next_cursor: str | None = Field(description=_CURSOR)


class HistoryResult(_Out):
    """A memory's history, oldest first, in pages."""

    memory_id: str = Field(description="The full id of the memory.")
    events: list[EventView | EventRecord]
    next_cursor: str | None = Field(description=_CURSOR)


class PruneResult(_Out):
    """What a capacity run archived (or would, with dry_run)."""

    dry_run: bool
    archived: list[str] = Field(description="Ids archived (or that would be).")
    reasons: dict[str, str] = Field(description="Id -> capacity or below_min_score.")
    max_memories: int
    min_priority_score: float
    active_after: int
    truncated: bool = Field(default=False, description="Id lists were cut to fit the budget.")


class CoreResult(_Out):
    """The core record."""

    core: str
    truncated: bool = Field(
        default=False, description="The core was cut to fit; read memory://core for all of it."
    )


class CoreSet(_Out):
    """The core record was replaced."""

    ok: bool
    chars: int = Field(description="Characters of the new core text.")


class Deleted(_Out):
    """A memory deleted for good."""

    ok: bool
    deleted: str = Field(description="The full id of the deleted memory.")


def state_of(memory: Memory) -> State:
    """Archived (superseded when a newer memory replaced it), pending, or active."""
    if memory.archived_at is not None:
        return "superseded" if memory.archive_reason == "superseded" else "archived"
    return "pending" if memory.priority_score is None else "active"


def _rounded(score: float | None) -> float | None:
    return None if score is None else round(score, 3)


def memory_view(memory: Memory, detail: bool = False) -> Json:
    """The compact view of a memory, or with ``detail`` every field (today's full record)."""
    if detail:
        return memory.model_dump(mode="json")
    view: Json = {
        "id": memory.id,
        "content": memory.content,
        "interpretation": memory.interpreted_content,
        "priority": _rounded(memory.priority_score),
        "pinned": memory.pinned,
        "state": state_of(memory),
    }
    if memory.archived_at is not None:
        if memory.archive_reason:
            view["archive_reason"] = memory.archive_reason
        if memory.superseded_by:
            view["superseded_by"] = memory.superseded_by
    elif memory.contested_by:
        view["contested_by"] = memory.contested_by
    return view


def hit_view(
    memory: Memory,
    score: float,
    detail: bool = False,
    *,
    relevance: float | None = None,
    conflicts_with: str | None = None,
) -> Json:
    """A search hit: score and relevance (3 places unless ``detail``) and the memory's view."""
    view: Json = {"score": score if detail else round(score, 3)}
    fit = 1.0 if relevance is None else relevance
    view["relevance"] = fit if detail else round(fit, 3)
    if conflicts_with:
        view["conflicts_with"] = conflicts_with
    view["memory"] = memory_view(memory, detail)
    return view


def event_view(event: HistoryEvent, detail: bool = False) -> Json:
    """A history event without its empty fields (or every field with ``detail``)."""
    if detail:
        return event.model_dump(mode="json")
    view: Json = {
        "event": event.event,
        "version": event.version,
        "at": event.at.isoformat().replace("+00:00", "Z"),
    }
    for key in ("reason", "superseded_by", "explanation"):
        if getattr(event, key):
            view[key] = getattr(event, key)
    if event.previous:
        old = event.previous
        score = old.get("priority_score")
        view["previous"] = {
            "content": old.get("content"),
            "interpretation": old.get("interpreted_content"),
            "priority": _rounded(score) if isinstance(score, int | float) else None,
        }
    return view


def prune_view(report: PruneReport) -> Json:
    """A prune report with ids (and each one's reason) instead of whole memories."""
    return {
        "dry_run": report.dry_run,
        "archived": [m.id for m in report.archived],
        "reasons": report.reasons,
        "max_memories": report.max_memories,
        "min_priority_score": report.min_priority_score,
        "active_after": report.active_after,
    }
