r"""Checks on caller input, run before anything is judged or written.

Each returns the value to use or raises ``ValidationError`` naming the fix.

Control characters, one rule for every text a caller hands in (content, queries,
user_context, core text, idempotency keys): line breaks are normalised (``\r\n``
and a lone ``\r`` become ``\n``), tab and newline are kept, and any other control
character (C0, DEL, C1) or an unpaired surrogate is refused with its position. Text
is otherwise stored exactly as given. Keys and user_context take no line breaks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .exceptions import ValidationError

__all__ = [
    "MAX_IDEMPOTENCY_KEY_CHARS",
    "MAX_LIMIT",
    "MAX_USER_CONTEXT_CHARS",
    "check_content",
    "check_contents",
    "check_core_text",
    "check_idempotency_key",
    "check_limit",
    "check_memory_id",
    "check_min_score",
    "check_namespace",
    "check_user_context",
    "check_version_number",
    "check_when",
]

MAX_USER_CONTEXT_CHARS = 1_000
MAX_LIMIT = 1_000
MAX_IDEMPOTENCY_KEY_CHARS = 200
_NAMESPACE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_REFUSED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_REFUSED_ON_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def clean_text(text: str, what: str, *, one_line: bool = False) -> str:
    """Apply the control-character rule (module docstring) to a caller's text."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    bad = (_REFUSED_ON_ONE_LINE if one_line else _REFUSED).search(text)
    if bad is not None:
        code = ord(bad.group())
        kind = "an unpaired surrogate" if 0xD800 <= code <= 0xDFFF else "a control character"
        allowed = "no control characters" if one_line else "only tab and line breaks"
        raise ValidationError(
            f"{what} contains {kind} (U+{code:04X}) at position {bad.start()}: "
            f"remove it ({allowed} are accepted)"
        )
    return text


def check_namespace(namespace: Any) -> str:
    """Namespaces are 1-64 letters, digits, ``_``, ``-`` or ``.``."""
    if not isinstance(namespace, str) or not _NAMESPACE.fullmatch(namespace):
        raise ValidationError(
            f"Invalid namespace {namespace!r}: "
            "use 1-64 characters of letters, digits, '_', '-', '.'"
        )
    return namespace


def check_content(content: Any, max_chars: int, *, what: str = "content") -> str:
    """Content must be a non-blank string of at most ``max_chars`` characters; kept verbatim."""
    if not isinstance(content, str):
        raise ValidationError(f"{what} must be a str, not {type(content).__name__}")
    if not content.strip():
        raise ValidationError(f"{what} is empty: there is nothing to remember")
    if len(content) > max_chars:
        raise ValidationError(
            f"{what} is {len(content)} characters, over the limit of {max_chars}: "
            "split it, or raise max_content_chars"
        )
    return clean_text(content, what)


def check_core_text(text: Any, max_chars: int) -> str:
    """Core text: a str (may be empty) of at most ``max_chars`` characters."""
    if not isinstance(text, str) or len(text) > max_chars:
        raise ValidationError(f"core text must be a str of at most {max_chars} characters")
    return clean_text(text, "core text")


def check_idempotency_key(key: Any) -> str | None:
    """Optional key naming one logical save, so a retried save is not stored twice."""
    if key is None:
        return None
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_IDEMPOTENCY_KEY_CHARS:
        raise ValidationError(
            f"idempotency_key must be a non-blank str of at most {MAX_IDEMPOTENCY_KEY_CHARS} "
            f"characters, got {key!r:.60}"
        )
    return clean_text(key, "idempotency_key", one_line=True)


def check_contents(contents: Any, max_chars: int) -> list[str]:
    """A list (or other non-string sequence) of valid contents; all are checked first."""
    if isinstance(contents, str | bytes) or not isinstance(contents, Sequence):
        raise ValidationError("expected a list of strings")
    return [check_content(c, max_chars, what=f"item {i}") for i, c in enumerate(contents)]


def check_user_context(user_context: Any) -> str | None:
    """Optional short text naming who or what a memory concerns."""
    if user_context is None:
        return None
    if not isinstance(user_context, str):
        raise ValidationError(
            f"user_context must be a str or None, not {type(user_context).__name__}"
        )
    if len(user_context) > MAX_USER_CONTEXT_CHARS:
        raise ValidationError(f"user_context is over {MAX_USER_CONTEXT_CHARS} characters")
    return clean_text(user_context, "user_context", one_line=True)


def check_limit(limit: Any, *, allow_none: bool = False) -> int | None:
    """A positive result count no larger than ``MAX_LIMIT``."""
    if limit is None and allow_none:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ValidationError(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    return limit


def check_memory_id(memory_id: Any) -> str:
    """Memory ids are non-empty strings."""
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise ValidationError(f"memory_id must be a non-empty str, got {memory_id!r}")
    return memory_id


def check_version_number(version: Any) -> int | None:
    """An optional expected record version: a positive integer."""
    if version is None:
        return None
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValidationError(f"expected_version must be a positive integer, got {version!r}")
    return version


def check_when(value: Any, what: str) -> datetime | None:
    """An optional timezone-aware datetime (naive ones are ambiguous: refused)."""
    if value is None:
        return None
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ValidationError(f"{what} must be a timezone-aware datetime, got {value!r}")
    return value


def check_min_score(min_score: Any) -> float | None:
    """An optional priority threshold in [0, 1]."""
    if min_score is None:
        return None
    if isinstance(min_score, bool) or not isinstance(min_score, int | float):
        raise ValidationError(f"min_score must be a number in [0, 1], got {min_score!r}")
    if not 0.0 <= float(min_score) <= 1.0:
        raise ValidationError(f"min_score must lie in [0, 1], got {min_score!r}")
    return float(min_score)
