"""Rendering a judge's prompt: the data blocks, the related memories, the schema note.

Kept apart from the transport so the stub server and the tests can render exactly what
the judge sends.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from aimem.judges.prompts import PromptTemplate, new_nonce
from aimem.models import Memory

if TYPE_CHECKING:  # annotations only: importing openai costs most of a second
    from openai.types.chat import ChatCompletionMessageParam

__all__ = ["MAX_RELATED", "build_messages", "one_line_json", "related_notes", "with_note"]

#: Related memories shown to the model for judging novelty, and how much of each.
MAX_RELATED = 5
_RELATED_CHARS = 300


#: Line breaks by Unicode's rules that json.dumps(ensure_ascii=False) leaves raw.
_UNICODE_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def one_line_json(text: str) -> str:
    """``text`` as a JSON string that no reader can split into two lines."""
    line = json.dumps(text, ensure_ascii=False)
    for raw, escaped in _UNICODE_BREAKS.items():
        line = line.replace(raw, escaped)
    return line


def related_notes(related: Sequence[Memory], *, numbered: bool = False) -> list[str]:
    """The related-memory lines a prompt shows: one escaped JSON string each, trimmed.

    ``numbered`` prefixes each with its number from 1 (``1. ``), which is how a reply's
    ``supersedes`` names them.
    """
    return [
        (f"{n}. " if numbered else "")
        + ("near-duplicate: " if getattr(m, "near_duplicate", False) else "")
        + one_line_json((m.interpreted_content or m.content)[:_RELATED_CHARS])
        for n, m in enumerate(related[:MAX_RELATED], start=1)
    ]


def build_messages(
    template: PromptTemplate,
    content: str,
    *,
    user_context: str | None = None,
    related: Sequence[Memory] = (),
    numbered: bool = False,
) -> list[ChatCompletionMessageParam]:
    """Render the prompt: static rubric first, then the data blocks under a fresh nonce.

    Each related memory is one JSON string per line, so none can span or forge lines;
    one the store found nearly identical to the content is marked ``near-duplicate:``;
    ``numbered`` (interpret.v2) numbers them for ``supersedes``.
    """
    notes = related_notes(related, numbered=numbered)
    context = user_context or "(none)"
    nonce = new_nonce(content, context, *notes)
    prompt = template.render(
        nonce=nonce, content=content, user_context=context, related="\n".join(notes) or "(none)"
    )
    return [
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": prompt.user},
    ]


def with_note(
    messages: list[ChatCompletionMessageParam], note: str | None
) -> list[ChatCompletionMessageParam]:
    """``messages`` with ``note`` appended to the system message (None: unchanged)."""
    if note is None or not messages or messages[0].get("role") != "system":
        return messages
    first = dict(messages[0])
    first["content"] = f"{first.get('content', '')}\n\n{note}"
    return [first, *messages[1:]]  # type: ignore[list-item]
