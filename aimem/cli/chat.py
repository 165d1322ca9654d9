"""``aimem ingest --chat``: a conversation file in, OpenAI-style messages out, all checked.

A chat file is one JSON document, a list of ``{"role": ..., "content": ...}`` messages
or an object with a ``"messages"`` list (as an OpenAI request body has), or JSON Lines:
one message object per non-empty line. The messages are checked as
``save_conversation`` checks them before anything is saved, and a bad one is named by
its line (JSON Lines) or its index (``messages[3]``) in a one-line error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from aimem.exceptions import ValidationError
from aimem.saving.messages import check_messages
from aimem.validation import parse_json

__all__ = ["read_chat"]

_INDEX = re.compile(r"messages\[(\d+)\]")


def read_chat(text: str, *, name: str, jsonl: bool, max_chars: int) -> list[dict[str, Any]]:
    """The messages of a chat file, checked; ``jsonl`` reads it as JSON Lines only.

    Raises:
        ValidationError: the file is no conversation, or a message is bad; the one-line
            message starts with ``name`` and names the line or the index.
    """
    if not text.strip():
        raise ValidationError(f"{name} is empty: there is no conversation to save")
    lines: list[int] | None = None
    messages = None
    if not jsonl:
        try:
            document = parse_json(text)
        except ValueError as exc:
            # A broken document, or JSON Lines (no document once it has two lines).
            if text.lstrip().startswith("["):
                at = f"line {exc.lineno}: " if isinstance(exc, json.JSONDecodeError) else ""
                raise ValidationError(f"{name}: {at}{_json_problem(exc)}") from None
        else:
            messages = _document(document, name)
    if messages is None:
        messages, lines = _json_lines(text, name)
    try:
        check_messages(messages, max_chars)
    except ValidationError as exc:
        raise ValidationError(f"{name}: {_where(str(exc), lines)}") from None
    return messages


def _document(value: Any, name: str) -> list[dict[str, Any]] | None:
    """The messages of a JSON document; None for one object without "messages" (a line)."""
    if isinstance(value, Mapping):
        if "messages" not in value:
            return None
        value = value["messages"]
    if isinstance(value, Sequence) and not isinstance(value, str):
        return list(value)
    raise ValidationError(
        f'{name}: expected a list of {{"role": ..., "content": ...}} messages, or an object '
        f'with a "messages" list; got a JSON {type(value).__name__}'
    )


def _json_lines(text: str, name: str) -> tuple[list[dict[str, Any]], list[int]]:
    """One message per non-empty line, and the line number of each."""
    messages: list[dict[str, Any]] = []
    lines: list[int] = []
    # Only "\n" ends a line: JSON strings may hold U+2028, which splitlines() breaks.
    for n, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = parse_json(raw)
        except ValueError as exc:
            raise ValidationError(f"{name}: line {n}: {_json_problem(exc)}") from None
        if not isinstance(value, dict):
            raise ValidationError(
                f'{name}: line {n}: expected a message like {{"role": "user", "content": "..."}}'
            )
        messages.append(value)
        lines.append(n)
    return messages, lines


def _json_problem(exc: ValueError) -> str:
    """What the parser said; ``parse_json``'s own phrase for deep nesting or a long number."""
    return f"not valid JSON ({exc.msg if isinstance(exc, json.JSONDecodeError) else exc})"


def _where(message: str, lines: list[int] | None) -> str:
    """``messages[i]`` in a store message, as the line it came from in a JSON Lines file."""
    if lines is None:
        return message

    def line(match: re.Match[str]) -> str:
        i = int(match.group(1))
        return f"line {lines[i]}" if i < len(lines) else match.group(0)

    return _INDEX.sub(line, message)
