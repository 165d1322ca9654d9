"""The system-prompt context block: core text, then the memories that fit a budget.

Pure text; ``store.context()`` and the MCP server's ``instructions`` use it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .models import Memory
from .validation import shown

__all__ = ["render_context"]

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
    return shown("\n\n".join(parts))
