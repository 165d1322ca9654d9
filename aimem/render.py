"""How memories look: a system-prompt context block, and rich tables for terminals."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from .models import Memory

__all__ = ["memory_table", "render_context"]

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
            m.interpreted_content,
            state,
        )
    return table
