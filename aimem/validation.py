r"""Checks on everything aimem stores, run before anything is judged or written.

Each returns the value to use or raises ``ValidationError`` naming the fix. The same
functions guard every way in: a caller's arguments, a client-scored save (Python or
MCP), a judge's answer (the LLM's, the heuristic's, a custom judge's) and an import, so
whatever a save accepts round-trips through export and import, and whatever import
refuses, a save refused first.

Control characters, one rule for every stored text (content, interpretation, rationale,
user_context, core text, keys, labels such as model names): line breaks are normalised
(``\r\n`` and a lone ``\r`` become ``\n``), tab and newline are kept, and any other
control character (C0, DEL, C1), a bidirectional override or isolate (U+202A-U+202E,
U+2066-U+2069, which can make a terminal or another agent show text other than what
is stored) or an unpaired surrogate is refused with its position. Text is otherwise
stored exactly as given. Keys, labels and user_context take no line breaks.

Bounds (``Bounds`` below): one table of limits for every stored field.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from aimem.exceptions import ValidationError

if TYPE_CHECKING:
    from aimem.models import Interpretation

__all__ = [
    "MAX_COUNT",
    "MAX_IDEMPOTENCY_KEY_CHARS",
    "MAX_INTERPRETATION_CHARS",
    "MAX_LABEL_CHARS",
    "MAX_LATENCY_MS",
    "MAX_LIMIT",
    "MAX_RATIONALE_CHARS",
    "MAX_SOURCE_CHARS",
    "MAX_SUPERSEDES",
    "MAX_SUPERSEDE_REASON_CHARS",
    "MAX_USER_CONTEXT_CHARS",
    "check_compress",
    "check_content",
    "check_contents",
    "check_core_text",
    "check_count",
    "check_idempotency_key",
    "check_interpretation",
    "check_label",
    "check_latency",
    "check_limit",
    "check_memory_id",
    "check_min_score",
    "check_namespace",
    "check_score_source",
    "check_stored_text",
    "check_supersedes",
    "check_user_context",
    "check_version_number",
    "check_when",
    "clean_text",
    "history_reason",
    "interpretation_limit",
    "parse_json",
    "shown",
]

# -- Bounds: one table for every stored field ---------------------------------------------
MAX_USER_CONTEXT_CHARS = 1_000
MAX_LIMIT = 1_000
MAX_IDEMPOTENCY_KEY_CHARS = 200
#: An interpretation restates the content: this, or ``max_content_chars`` when larger.
MAX_INTERPRETATION_CHARS = 20_000
MAX_RATIONALE_CHARS = 4_000
#: ``score_source`` and ``archive_reason``.
MAX_SOURCE_CHARS = 64
#: ``model``, ``prompt_version`` and an embedder's name.
MAX_LABEL_CHARS = 200
#: Token counts, retries, access counts, versions: the largest value both backends store
#: (PostgreSQL's ``integer`` columns are 32-bit; 10**12 passed here and then failed there
#: as a database error instead of a ValidationError).
MAX_COUNT = 2**31 - 1
#: A judgement's latency: a day, in milliseconds, is already absurd.
MAX_LATENCY_MS = 86_400_000.0
#: Why a memory makes others out of date: a few words, not an essay.
MAX_SUPERSEDE_REASON_CHARS = 500
#: Related memories a judge is shown, hence the most one save can supersede.
MAX_SUPERSEDES = 20

_NAMESPACE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_BIDI = r"\u202a-\u202e\u2066-\u2069"
_REFUSED = re.compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
_REFUSED_ON_ONE_LINE = re.compile(rf"[\x00-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")


def clean_text(text: str, what: str, *, one_line: bool = False) -> str:
    """Apply the control-character rule (module docstring) to a caller's text."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    bad = (_REFUSED_ON_ONE_LINE if one_line else _REFUSED).search(text)
    if bad is not None:
        code = ord(bad.group())
        if 0xD800 <= code <= 0xDFFF:
            kind = "an unpaired surrogate"
        elif code >= 0x2000:
            kind = "a bidirectional control character"
        else:
            kind = "a control character"
        allowed = "no control characters" if one_line else "only tab and line breaks"
        raise ValidationError(
            f"{what} contains {kind} (U+{code:04X}) at position {bad.start()}: "
            f"remove it ({allowed} are accepted)"
        )
    return text


def parse_json(text: str | bytes) -> Any:
    """``json.loads`` for a file's or a client's text: it fails only with ``ValueError``.

    ``json.loads`` itself also raises ``RecursionError`` on deep nesting (``[[[...]]]``),
    and a bare ``ValueError`` on an integer past Python's int-string limit (4,300
    digits); every reader of outside JSON goes through here, so neither is a traceback.

    Raises:
        json.JSONDecodeError: not JSON (its ``msg`` and ``lineno`` say where).
        UnicodeDecodeError: bytes that are not UTF-8.
        ValidationError: JSON aimem cannot read: nested too deeply, or a number too long;
            its message is a short phrase ("nested too deeply to read").
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValidationError("nested too deeply to read") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except ValueError:  # the int-string limit: no other ValueError comes from json.loads
        limit = sys.get_int_max_str_digits()
        raise ValidationError(f"a number of more than {limit} digits") from None


def shown(text: str) -> str:
    """``text`` safe to show: characters the rule refuses become U+FFFD.

    Everything stored now passes the rule; this guards output (a system prompt, MCP
    ``instructions``) against rows written before it, by older versions of aimem.
    """
    return _REFUSED.sub("\ufffd", text)


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


class BatchLimits(Protocol):
    """The settings a batch is checked against (``aimem.Settings`` has them)."""

    @property
    def max_content_chars(self) -> int: ...

    @property
    def max_batch_items(self) -> int: ...

    @property
    def max_memories(self) -> int: ...


def check_contents(contents: Any, settings: BatchLimits) -> list[str]:
    """A list (or other non-string sequence) of valid contents; all are checked first.

    At most ``max_batch_items``, counted before any is read: the batch is one write
    transaction, which holds the namespace's other writers for as long as it runs.
    """
    if isinstance(contents, str | bytes) or not isinstance(contents, Sequence):
        raise ValidationError("expected a list of strings")
    max_chars, max_items = settings.max_content_chars, settings.max_batch_items
    if len(contents) > max_items:
        raise ValidationError(
            f"{len(contents)} items in one call, over the limit of {max_items} "
            f"(max_batch_items): split them into calls of at most {max_items}"
        )
    return [check_content(c, max_chars, what=f"item {i}") for i, c in enumerate(contents)]


def check_compress(items: Any, settings: BatchLimits, *, allow_empty: bool) -> list[str]:
    """``compress``'s items, each once, if they can all stay active; else nothing is done.

    A compress result is the caller's consolidated memory, kept whole: none of it is
    archived by the compress that writes it, so it must fit under ``max_memories``
    (pinned memories sit outside the cap). An empty list would archive every memory.
    """
    contents = list(dict.fromkeys(check_contents(items, settings)))
    if not contents and not allow_empty:
        raise ValidationError(
            "compress() got no items: that would archive every memory. "
            "Pass allow_empty=True if that is what you want."
        )
    if len(contents) > settings.max_memories:
        raise ValidationError(
            f"compress() got {len(contents)} items but only {settings.max_memories} fit "
            f"(max_memories={settings.max_memories}; pinned memories sit outside the cap): "
            "merge them into fewer, or raise max_memories"
        )
    return contents


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


def check_min_score(min_score: Any, name: str = "min_score") -> float | None:
    """An optional threshold in [0, 1] (a priority, or with ``name`` another one)."""
    if min_score is None:
        return None
    if isinstance(min_score, bool) or not isinstance(min_score, int | float):
        raise ValidationError(f"{name} must be a number in [0, 1], got {min_score!r}")
    if not 0.0 <= float(min_score) <= 1.0:
        raise ValidationError(f"{name} must lie in [0, 1], got {min_score!r}")
    return float(min_score)


# -- stored fields, from any source ----------------------------------------------------------


def check_stored_text(
    value: Any, what: str, max_chars: int, *, one_line: bool = False, blank: bool = False
) -> str:
    """A stored text field: a str within ``max_chars``, non-blank unless ``blank``, clean."""
    if not isinstance(value, str):
        raise ValidationError(f"{what} must be a str, not {type(value).__name__}")
    if not blank and not value.strip():
        raise ValidationError(f"{what} is empty")
    if len(value) > max_chars:
        raise ValidationError(
            f"{what} is {len(value)} characters, over the limit of {max_chars}: shorten it"
        )
    return clean_text(value, what, one_line=one_line)


def check_label(value: Any, what: str, max_chars: int = MAX_LABEL_CHARS) -> str | None:
    """An optional one-line label (a model name, a prompt version): None or clean text."""
    if value is None:
        return None
    return check_stored_text(value, what, max_chars, one_line=True)


def check_count(value: Any, what: str) -> int:
    """A stored counter (tokens, retries, accesses, versions): an int in [0, MAX_COUNT]."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise ValidationError(f"{what} must be an integer from 0 to {MAX_COUNT}, got {value!r:.40}")
    return value


def check_latency(value: Any, what: str = "latency_ms") -> float:
    """A judgement's latency in milliseconds: finite, in [0, MAX_LATENCY_MS]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(f"{what} must be a number, got {value!r:.40}")
    if not (math.isfinite(value) and 0.0 <= value <= MAX_LATENCY_MS):
        raise ValidationError(f"{what} must be a finite number from 0 to {MAX_LATENCY_MS:.0f}")
    return float(value)


def check_score_source(source: Any, *, scored: bool) -> str:
    """``score_source`` agrees with the scores: "pending" exactly when there are none."""
    label = check_stored_text(source, "score_source", MAX_SOURCE_CHARS, one_line=True)
    if scored and label == "pending":
        raise ValidationError(
            "score_source 'pending' is reserved for memories without scores: give the judge "
            "another source"
        )
    if not scored and label != "pending":
        raise ValidationError(f"an unscored memory must have score_source 'pending', not {label!r}")
    return label


def interpretation_limit(max_content_chars: int) -> int:
    """Longest interpretation stored: a pending memory's is its whole content."""
    return max(MAX_INTERPRETATION_CHARS, max_content_chars)


#: Words a supersession's reason may keep in history: kinds of change, never a memory's own
#: words. History is append-only and outlives a delete ("the event, never the text").
_REASON_WORDS = frozenset(
    "new no longer now denied changed ended replaced corrected resumed renamed rescheduled "
    "same fact value order count plan done settled dose of takes residence job role "
    "relationship schedule commute hours possession pet habit health preference routine "
    "membership name email phone address appointment".split()
)


def history_reason(reason: str) -> str | None:
    """The kind of a supersession's reason, fit to keep in history, or None for free text.

    "new residence: sapporo replaces sendai" keeps "new residence"; an LLM's own words stay out.
    """
    kept: list[str] = []
    for word in reason.lower().replace(",", " ").split():
        word = word.strip(":;.()")
        if word not in _REASON_WORDS:
            break
        kept.append(word)
    return " ".join(kept) or None


def check_supersedes(positions: Any, shown: int | None = None) -> tuple[int, ...]:
    """Positions into the related memories a judge was shown: distinct, each below ``shown``.

    Without ``shown`` only the form is checked (at most ``MAX_SUPERSEDES`` distinct
    non-negative integers).

    Raises:
        ValidationError: not such a sequence, or a position at or beyond ``shown``.
    """
    if isinstance(positions, str | bytes) or not isinstance(positions, tuple | list):
        raise ValidationError("supersedes must be a list of positions in the related memories")
    for position in positions:
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            raise ValidationError(
                f"supersedes holds {position!r}, not a position (an integer from 0)"
            )
        if shown is not None and position >= shown:
            raise ValidationError(
                f"supersedes names related memory {position} but only {shown} "
                f"{'was' if shown == 1 else 'were'} shown (positions from 0)"
                if shown
                else f"supersedes names related memory {position} but none were shown"
            )
    if len(set(positions)) != len(positions) or len(positions) > MAX_SUPERSEDES:
        raise ValidationError(
            f"supersedes names a related memory twice, or more than {MAX_SUPERSEDES}"
        )
    return tuple(positions)


def check_interpretation(
    interp: Interpretation, source: str, max_content_chars: int, *, what: str = "the judge"
) -> Interpretation:
    """Every field a judgement stores, whoever made it (a judge, a client, an import).

    Returns the interpretation with its texts in normal form (LF line breaks).

    Raises:
        ValidationError: a field that ``import_from`` would refuse, named with ``what``.
    """
    try:
        texts = {
            "interpreted_content": check_stored_text(
                interp.interpreted_content,
                "interpreted_content",
                interpretation_limit(max_content_chars),
            ),
            "rationale": check_stored_text(
                interp.rationale, "rationale", MAX_RATIONALE_CHARS, blank=True
            ),
        }
        texts["supersede_reason"] = check_stored_text(
            interp.supersede_reason, "supersede_reason", MAX_SUPERSEDE_REASON_CHARS, blank=True
        )
        check_supersedes(interp.supersedes)
        check_label(interp.model, "model")
        check_label(interp.prompt_version, "prompt_version")
        check_score_source(source, scored=True)
        for name in ("emotional_impact", "user_relevance", "novelty", "utility"):
            value = getattr(interp, name)
            if not (isinstance(value, float | int) and math.isfinite(value) and 0 <= value <= 0.25):
                raise ValidationError(f"{name} must be a number from 0 to 0.25")
        usage = interp.usage
        if usage is not None:
            check_label(usage.model, "usage.model")
            check_count(usage.prompt_tokens, "usage.prompt_tokens")
            check_count(usage.completion_tokens, "usage.completion_tokens")
            check_count(usage.retries, "usage.retries")
            check_latency(usage.latency_ms, "usage.latency_ms")
    except ValidationError as exc:
        raise ValidationError(f"Refused what {what} returned: {exc}") from None
    if all(texts[k] == getattr(interp, k) for k in texts):
        return interp
    return interp.model_copy(update=texts)
