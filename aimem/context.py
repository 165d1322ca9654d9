"""The system-prompt context block: core text, then the memories that fit a budget.

Pure text; ``store.context()`` and the MCP server's ``instructions`` use it.
"""

from __future__ import annotations

from collections.abc import Sequence

from aimem.models import Memory
from aimem.validation import shown

__all__ = ["BY_PRIORITY", "BY_RELEVANCE", "NO_MATCH", "render_context"]

_ELLIPSIS = "…"


def _line(memory: Memory) -> str:
    score = "pending" if memory.priority_score is None else f"{memory.priority_score:.2f}"
    text = " ".join(memory.interpreted_content.split())
    return f"- [{score}] {text}"


#: How the memories of a block are ordered, said in its header.
BY_PRIORITY = "## Memories (most important first; a newer fact above the one it replaces)"
BY_RELEVANCE = "## Memories relevant to the query (most relevant first)"
NO_MATCH = "## Memories relevant to the query\nNo memory matches the query."


def render_context(
    core: str, memories: Sequence[Memory], max_chars: int, *, query: str | None = None
) -> str:
    """Core text, then memories in the given order, one line each, within ``max_chars``.

    The header says how they are ordered: by priority, or (with ``query``) by relevance
    to it, and it says when nothing matched. Memories that do not fit whole are left out
    rather than cut mid-sentence; core text longer than the whole budget is cut with an
    ellipsis, since it comes first.
    """
    parts: list[str] = []
    if core.strip():
        parts.append("## Core\n" + core.strip())
    header = BY_PRIORITY if query is None else BY_RELEVANCE
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
    elif query is not None and not memories and used - len(header) + len(NO_MATCH) <= max_chars:
        parts.append(NO_MATCH)
    return shown("\n\n".join(parts))
