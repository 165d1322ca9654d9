"""A conversation in, the turns to judge out: validation and batching, no I/O.

``save_conversation`` takes an OpenAI-style message list. Every message is checked
before any judging, so bad input gets one typed line naming its index and writes
nothing. Memories come only from the user's turns; the other roles are context the
extraction prompt may read (what a "yes" answers), clipped, and never stored. A long
transcript is cut into batches that each fit one judge call.

Example:
    >>> turns = check_messages(
    ...     [{"role": "assistant", "content": "Shall I book Tuesday?"},
    ...      {"role": "user", "content": [{"type": "text", "text": "Yes, Tuesday at 3."}]}],
    ...     max_chars=16_000)
    >>> [(t.index, t.role, t.text) for t in turns]
    [(0, 'assistant', 'Shall I book Tuesday?'), (1, 'user', 'Yes, Tuesday at 3.')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aimem.exceptions import ValidationError
from aimem.validation import clean_text, shown

__all__ = [
    "BATCH_CHARS",
    "CONTEXT_CHARS",
    "MAX_MESSAGES",
    "MAX_TRANSCRIPT_CHARS",
    "ROLES",
    "Messages",
    "Turn",
    "batches",
    "check_messages",
]

#: What ``save_conversation`` takes: OpenAI-style ``{"role": ..., "content": ...}`` dicts.
Messages = Sequence[Mapping[str, Any]]
#: The roles a message may have; "developer" is what newer OpenAI models call "system".
ROLES = ("user", "assistant", "system", "tool", "developer")
#: Most messages, and characters over all of them (about 250k tokens), one conversation may
#: hold; a longer transcript is saved in parts. Each message is bounded by max_content_chars.
MAX_MESSAGES = 2_000
MAX_TRANSCRIPT_CHARS = 1_000_000
#: A context (non-user) turn is shown to the judge up to this many characters: its start
#: and its end, where a question the user then answers usually is.
CONTEXT_CHARS = 1_000
_HEAD = 300
#: Characters of turns one extraction call carries at most; a longer user turn goes alone.
BATCH_CHARS = 12_000


@dataclass(frozen=True)
class Turn:
    """One non-empty message: its position in the list, its role, its text (parts joined)."""

    index: int
    role: str
    text: str

    @property
    def from_user(self) -> bool:
        """Whether memories may come from this turn."""
        return self.role == "user"


def check_messages(messages: Any, max_chars: int) -> list[Turn]:
    """The conversation's non-empty turns, in order, or a ValidationError naming the first bad one.

    A message is a dict with ``role`` (one of ``ROLES``) and ``content``: a str, None, or a
    list of parts of which ``{"type": "text", "text": ...}`` ones count (images and other
    parts are ignored). Other keys (``name``, ``tool_calls``) are ignored. User text must
    pass the stored-text rules; context text is never stored, so a character those rules
    refuse is shown as U+FFFD instead. At least one user turn must have text.

    Raises:
        ValidationError: not a list of such dicts, empty, over ``MAX_MESSAGES`` messages or
            ``MAX_TRANSCRIPT_CHARS`` characters, a message over ``max_chars``, or no user text.
    """
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise ValidationError(
            "messages must be a list of {'role': ..., 'content': ...} dicts, "
            f"not {type(messages).__name__}"
        )
    if not messages:
        raise ValidationError("messages is empty: there is nothing to remember")
    if len(messages) > MAX_MESSAGES:
        raise ValidationError(
            f"messages holds {len(messages)} messages, over the limit of {MAX_MESSAGES}: "
            "save the conversation in parts"
        )
    turns: list[Turn] = []
    total = 0
    for i, message in enumerate(messages):
        role, text = _message(i, message, max_chars)
        total += len(text)
        if total > MAX_TRANSCRIPT_CHARS:
            raise ValidationError(
                f"messages hold over {MAX_TRANSCRIPT_CHARS} characters (by messages[{i}]): "
                "save the conversation in parts"
            )
        if text.strip():
            turns.append(Turn(i, role, text if role == "user" else _clip(text)))
    if not any(t.from_user for t in turns):
        raise ValidationError(
            "messages have no user turn with text: memories come from what the user says"
        )
    return turns


def _message(i: int, message: Any, max_chars: int) -> tuple[str, str]:
    where = f"messages[{i}]"
    if not isinstance(message, Mapping):
        raise ValidationError(
            f"{where} must be a dict with 'role' and 'content', not {type(message).__name__}"
        )
    role = message.get("role")
    if role not in ROLES:
        allowed = ", ".join(repr(r) for r in ROLES)
        raise ValidationError(f"{where}.role must be one of {allowed}, got {role!r:.60}")
    text = _text(message.get("content"), f"{where}.content")
    if len(text) > max_chars:
        raise ValidationError(
            f"{where}.content is {len(text)} characters, over the limit of {max_chars}: "
            "split it, or raise max_content_chars"
        )
    if role == "user":
        return role, clean_text(text, f"{where}.content")
    return role, shown(text.replace("\r\n", "\n").replace("\r", "\n"))


def _text(content: Any, where: str) -> str:
    """A message's text: the string itself, or its text parts joined by line breaks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes):
        texts = []
        for j, part in enumerate(content):
            if not isinstance(part, Mapping):
                raise ValidationError(
                    f"{where}[{j}] must be a dict such as {{'type': 'text', 'text': ...}}, "
                    f"not {type(part).__name__}"
                )
            if part.get("type") != "text":
                continue  # images, audio, files: nothing a text memory can hold
            text = part.get("text")
            if not isinstance(text, str):
                raise ValidationError(f"{where}[{j}].text must be a str, not {type(text).__name__}")
            texts.append(text)
        return "\n".join(texts)
    raise ValidationError(
        f"{where} must be a str or a list of {{'type': 'text', 'text': ...}} parts, "
        f"not {type(content).__name__}"
    )


def _clip(text: str) -> str:
    """A context turn as the judge sees it: whole, or its start and end."""
    if len(text) <= CONTEXT_CHARS:
        return text
    return f"{text[:_HEAD]} [...] {text[-(CONTEXT_CHARS - _HEAD) :]}"


def batches(turns: Sequence[Turn], size: int, budget: int = BATCH_CHARS) -> list[list[Turn]]:
    """The turns cut into judge calls of at most ``size`` user turns and ``budget`` characters.

    Each user turn travels with the context turns just before it (the question its "yes"
    answers); context after the last user turn is left out, since nothing the user said
    can refer to it. A user turn longer than the budget goes alone.
    """
    groups: list[list[Turn]] = []
    waiting: list[Turn] = []
    for turn in turns:
        waiting.append(turn)
        if turn.from_user:
            groups.append(waiting)
            waiting = []
    cut: list[list[Turn]] = []
    current: list[Turn] = []
    users = chars = 0
    for group in groups:
        cost = sum(len(t.text) for t in group)
        if current and (users >= size or chars + cost > budget):
            cut.append(current)
            current, users, chars = [], 0, 0
        current += group
        users += 1
        chars += cost
    if current:
        cut.append(current)
    return cut
