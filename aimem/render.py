"""How memories look: a system-prompt context block, and rich tables for terminals."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.table import Table
from rich.text import Text

from .models import Memory, SearchHit, Stats

__all__ = [
    "archived_table",
    "memory_detail",
    "memory_list_table",
    "memory_table",
    "render_context",
    "search_table",
    "stats_table",
]

_ELLIPSIS = "…"


def _line(memory: Memory) -> str:
    score = "pending" if memory.priority_score is None else f"{memory.priority_score:.2f}"
    text = " ".join(memory.interpreted_content.split())
    return f"- [{score}] {text}"


def render_context(core: str, memories: Sequence[Memory], max_chars: int) -> str:
    """Core text, then memories in the given order, one line each, within ``max_chars``.

    Memories that do not fit whole are left out rather than cut mid-sentence; core
    text longer than the whole budget is cut with an ellipsis, since it comes first.
    """
    parts: list[str] = []
    if core.strip():
        parts.append("## Core\n" + core.strip())
    header = "## Memories (most important first)"
    body = "\n\n".join(parts)
    if len(body) > max_chars:
        return body[: max(0, max_chars - 1)] + _ELLIPSIS
    # Length of everything so far plus the header and its separator, grown line by line.
    used = len(body) + (2 if body else 0) + len(header)
    lines: list[str] = []
    for memory in memories:
        line = _line(memory)
        if used + 1 + len(line) > max_chars:
            break
        lines.append(line)
        used += 1 + len(line)
    if lines:
        parts.append("\n".join([header, *lines]))
    return "\n\n".join(parts)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


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
            _fmt(m.priority_score),
            _fmt(m.emotional_impact),
            _fmt(m.user_relevance),
            _fmt(m.novelty),
            _fmt(m.utility),
            Text(m.interpreted_content),
            state,
        )
    return table


# -- CLI renderers: full ids, and user text shown literally (never read as rich markup) ----


def _state(memory: Memory) -> str:
    if memory.archived_at is not None:
        return f"archived: {memory.archive_reason}"
    if memory.pinned:
        return "pinned"
    return "pending" if memory.pending else "active"


def _component_columns(table: Table) -> None:
    table.add_column("priority", justify="right", style="bold")
    for name in ("emo", "rel", "nov", "util"):
        table.add_column(name, justify="right")


def _component_cells(memory: Memory) -> tuple[str, ...]:
    return tuple(
        _fmt(v)
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
        table.add_row(m.id, *_component_cells(m), Text(m.interpreted_content), _state(m))
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
            _state(m),
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
            Text(_fmt(m.priority_score), style="red"),
            Text(m.archive_reason or "", style="red"),
            Text(m.interpreted_content, style="red"),
        )
    return table


def _when(value: datetime | None) -> str:
    return "—" if value is None else value.isoformat(timespec="seconds")


def memory_detail(memory: Memory) -> Table:
    """Every field of one memory as a two-column table (``aimem show``)."""
    m = memory
    table = Table(title=f"memory {m.id}", show_header=False, expand=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    rows: list[tuple[str, str]] = [
        ("id", m.id),
        ("namespace", m.namespace),
        ("state", _state(m)),
        ("priority", _fmt(m.priority_score)),
        ("emotional impact", _fmt(m.emotional_impact)),
        ("user relevance", _fmt(m.user_relevance)),
        ("novelty", _fmt(m.novelty)),
        ("utility", _fmt(m.utility)),
        ("interpretation", m.interpreted_content),
        ("content", m.content),
        ("rationale", m.rationale or "—"),
        ("user context", m.user_context or "—"),
        (
            "scored by",
            f"{m.score_source} (model {m.model or '—'}, prompt {m.prompt_version or '—'})",
        ),
        ("tokens", f"{m.prompt_tokens} prompt + {m.completion_tokens} completion"),
        ("created", _when(m.created_at)),
        ("updated", _when(m.updated_at)),
        ("last accessed", f"{_when(m.last_accessed_at)} ({m.access_count} accesses)"),
        ("version", str(m.version)),
    ]
    if m.archived_at is not None:
        rows.append(("archived", f"{_when(m.archived_at)} ({m.archive_reason})"))
    for name, value in rows:
        table.add_row(name, Text(value))
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
        ("mean priority", _fmt(stats.mean_priority)),
        ("prompt tokens", str(stats.prompt_tokens)),
        ("completion tokens", str(stats.completion_tokens)),
        ("max memories", str(stats.max_memories)),
        ("min priority score", f"{stats.min_priority_score:.2f}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table
