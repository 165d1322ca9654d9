"""How results look in a terminal: rich tables and reports (the CLI's and ``__rich__``).

User text is always a ``Text`` (shown literally, never read as rich markup).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..models import (
    HistoryEvent,
    ImportReport,
    Memory,
    PruneReport,
    SaveReport,
    SearchHit,
    Stats,
)
from .text import fmt_score, import_summary, prune_summary, state, when


def memory_table(memories: Sequence[Memory], *, title: str | None = None) -> Table:
    """A rich table: id, priority, the four components, interpretation and state."""
    table = Table(title=title, show_lines=False, expand=False)
    table.add_column("id", style="dim", no_wrap=True)
    table.add_column("priority", justify="right", style="bold")
    for name in ("emo", "rel", "nov", "util"):
        table.add_column(name, justify="right")
    table.add_column("interpretation", overflow="fold", ratio=1)
    table.add_column("state", no_wrap=True)
    for m in memories:
        state = "pinned" if m.pinned else ""
        if m.archived_at is not None:
            state = f"archived: {m.archive_reason}"
        table.add_row(
            m.id[-8:],
            fmt_score(m.priority_score),
            fmt_score(m.emotional_impact),
            fmt_score(m.user_relevance),
            fmt_score(m.novelty),
            fmt_score(m.utility),
            Text(m.interpreted_content),
            state,
        )
    return table


# -- CLI renderers: full ids, and user text shown literally (never read as rich markup) ----


def _component_columns(table: Table) -> None:
    table.add_column("priority", justify="right", style="bold")
    for name in ("emo", "rel", "nov", "util"):
        table.add_column(name, justify="right")


def _component_cells(memory: Memory) -> tuple[str, ...]:
    return tuple(
        fmt_score(v)
        for v in (
            memory.priority_score,
            memory.emotional_impact,
            memory.user_relevance,
            memory.novelty,
            memory.utility,
        )
    )


def memory_list_table(memories: Sequence[Memory], *, title: str | None = None) -> Table:
    """Like ``memory_table`` but with full ids, to copy into ``aimem show/pin ID``.

    Text is shown literally: brackets in a memory are never read as rich markup.
    """
    table = Table(title=title, expand=False)
    table.add_column("id", style="dim", no_wrap=True)
    _component_columns(table)
    table.add_column("interpretation", overflow="fold", ratio=1)
    table.add_column("state", no_wrap=True)
    for m in memories:
        table.add_row(m.id, *_component_cells(m), Text(m.interpreted_content), state(m))
    return table


def search_table(hits: Sequence[SearchHit], *, title: str | None = None) -> Table:
    """Search hits, best first: score, full id, priority, components and interpretation."""
    table = Table(title=title, expand=False)
    table.add_column("score", justify="right")
    table.add_column("id", style="dim", no_wrap=True)
    _component_columns(table)
    table.add_column("interpretation", overflow="fold", ratio=1)
    table.add_column("state", no_wrap=True)
    for hit in hits:
        m = hit.memory
        table.add_row(
            f"{hit.score:.4f}",
            m.id,
            *_component_cells(m),
            Text(m.interpreted_content),
            state(m),
        )
    return table


def archived_table(memories: Sequence[Memory], *, title: str | None = None) -> Table:
    """Memories the capacity manager archived (or would archive), in red, with the reason."""
    table = Table(title=title, style="red", title_style="bold red", expand=False)
    table.add_column("id", no_wrap=True)
    table.add_column("priority", justify="right")
    table.add_column("reason", no_wrap=True)
    table.add_column("interpretation", overflow="fold", ratio=1)
    for m in memories:
        table.add_row(
            Text(m.id, style="red"),
            Text(fmt_score(m.priority_score), style="red"),
            Text(m.archive_reason or "", style="red"),
            Text(m.interpreted_content, style="red"),
        )
    return table


def memory_detail(memory: Memory) -> Table:
    """Every field of one memory as a two-column table (``aimem show``)."""
    m = memory
    table = Table(title=f"memory {m.id}", show_header=False, expand=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    rows: list[tuple[str, str]] = [
        ("id", m.id),
        ("namespace", m.namespace),
        ("state", state(m)),
        ("priority", fmt_score(m.priority_score)),
        ("emotional impact", fmt_score(m.emotional_impact)),
        ("user relevance", fmt_score(m.user_relevance)),
        ("novelty", fmt_score(m.novelty)),
        ("utility", fmt_score(m.utility)),
        ("interpretation", m.interpreted_content),
        ("content", m.content),
        ("rationale", m.rationale or "—"),
        ("user context", m.user_context or "—"),
        (
            "scored by",
            f"{m.score_source} (model {m.model or '—'}, prompt {m.prompt_version or '—'})",
        ),
        ("tokens", f"{m.prompt_tokens} prompt + {m.completion_tokens} completion"),
        ("created", when(m.created_at)),
        ("updated", when(m.updated_at)),
        ("last accessed", f"{when(m.last_accessed_at)} ({m.access_count} accesses)"),
        ("version", str(m.version)),
    ]
    if m.archived_at is not None:
        rows.append(("archived", f"{when(m.archived_at)} ({m.archive_reason})"))
    if m.superseded_by is not None:
        rows.append(("superseded by", m.superseded_by))
    if m.restored_at is not None:
        rows.append(("restored", when(m.restored_at)))
    for name, value in rows:
        table.add_row(name, Text(value))
    return table


def history_table(events: Sequence[HistoryEvent], *, title: str | None = None) -> Table:
    """A memory's events, oldest first; an update shows the content it replaced."""
    table = Table(title=title, expand=False)
    table.add_column("when", no_wrap=True)
    table.add_column("event", no_wrap=True)
    table.add_column("version", justify="right")
    table.add_column("detail", overflow="fold", ratio=1)
    for e in events:
        parts = []
        if e.reason:
            parts.append(e.reason)
        if e.superseded_by:
            parts.append(f"by {e.superseded_by}")
        if e.explanation:
            parts.append(f"({e.explanation})")
        if e.previous is not None:
            parts.append(f"was: {e.previous.get('content')}")
        table.add_row(when(e.at), e.event, str(e.version), Text(" ".join(parts)))
    return table


def stats_table(stats: Stats) -> Table:
    """Counts, mean priority, tokens used and capacity settings of one namespace."""
    table = Table(title=f"namespace {stats.namespace}", show_header=False)
    table.add_column("stat", style="bold", no_wrap=True)
    table.add_column("value", justify="right")
    rows = [
        ("active", str(stats.count)),
        ("archived", str(stats.archived)),
        ("pinned", str(stats.pinned)),
        ("pending", str(stats.pending)),
        ("total", str(stats.total)),
        ("mean priority", fmt_score(stats.mean_priority)),
        ("prompt tokens", str(stats.prompt_tokens)),
        ("completion tokens", str(stats.completion_tokens)),
        ("max memories", str(stats.max_memories)),
        ("min priority score", f"{stats.min_priority_score:.2f}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


# -- Reports in a terminal ------------------------------------------------------------------


def prune_report_rich(report: PruneReport) -> RenderableType:
    """What a capacity run archived (or would), then where the namespace stands."""
    verb = "Would archive" if report.dry_run else "Archived"
    head: RenderableType = (
        archived_table(report.archived, title=f"{verb} ({len(report.archived)})")
        if report.archived
        else Text("Nothing to archive.")
    )
    return Group(head, Text(prune_summary(report)))


def save_report_rich(report: SaveReport) -> RenderableType:
    """The memories a save wrote, and in red what the capacity manager archived for them."""
    parts: list[RenderableType] = [
        memory_list_table(report.memories, title=f"Saved ({len(report.memories)})")
    ]
    if report.archived:
        parts.append(archived_table(report.archived, title=f"Archived ({len(report.archived)})"))
    return Group(*parts)


def import_report_rich(report: ImportReport) -> RenderableType:
    """Whether an import was valid, what it wrote (or would) and what it archived."""
    parts: list[RenderableType] = [Text(import_summary(report))]
    parts.extend(Text(f"  - {error}", style="red") for error in report.errors)
    if report.archived:
        parts.append(archived_table(report.archived, title=f"Archived ({len(report.archived)})"))
    return Group(*parts)
