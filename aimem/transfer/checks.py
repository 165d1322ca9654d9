"""Every invariant the store keeps, checked on an export file before anything is written.

A file that passes the checksum was sealed by someone, not necessarily by aimem: each
line must also be something a save could have produced. The field rules are the
store's own (``validation.py``), so whatever a save accepts passes here, and each
problem names its line. Checks against the database (clashing ids, keys, duplicates,
vector dimensions) are the storage layer's (``storage/sql_transfer.py``).
"""

from __future__ import annotations

import base64
import binascii
import math
import uuid
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from aimem.exceptions import AimemError, ValidationError
from aimem.ids import content_hash
from aimem.scoring import priority_from
from aimem.validation import (
    MAX_COUNT,
    MAX_LABEL_CHARS,
    MAX_RATIONALE_CHARS,
    MAX_SOURCE_CHARS,
    check_content,
    check_core_text,
    check_count,
    check_idempotency_key,
    check_label,
    check_latency,
    check_namespace,
    check_score_source,
    check_stored_text,
    check_user_context,
    interpretation_limit,
    parse_json,
)

if TYPE_CHECKING:
    from aimem.transfer.lines import HistoryLine, MemoryLine, ParsedExport

__all__ = ["MAX_DIM", "UNIT_TOLERANCE", "check_history", "check_memory", "check_whole"]

#: Longest vector accepted, and how far from length 1 a stored unit vector may be.
MAX_DIM = 8192
UNIT_TOLERANCE = 1e-3
_MAX_EVENT_CHARS = 32
_MAX_DETAIL_CHARS = 10_000


def is_memory_id(value: str) -> bool:
    """Ids in the store's own format: a canonical (lowercase, hyphenated) UUID."""
    try:
        return str(uuid.UUID(value)) == value
    except (ValueError, AttributeError, TypeError):
        return False


def _same(check: Callable[[], object], value: object, what: str) -> None:
    """Run a validator; its result must equal ``value`` (stored text is in normal form)."""
    if check() != value:
        raise ValidationError(f"{what} is not in the form aimem stores (line breaks as LF)")


def check_memory(parsed: ParsedExport, number: int, m: MemoryLine, max_chars: int) -> None:
    """Bounds and invariants one memory line must satisfy, as a save would have made it."""

    def bad(message: str) -> None:
        parsed.fail(f"line {number} (memory {m.id[:40]!r}): {message}")

    header = parsed.header
    assert header is not None
    if not is_memory_id(m.id):
        bad("the id is not in aimem's format (a lowercase UUID)")
    if m.namespace != header.namespace:
        bad(f"namespace {m.namespace[:64]!r} differs from the header's {header.namespace!r}")
    components = (m.emotional_impact, m.user_relevance, m.novelty, m.utility)
    scored = any(c is not None for c in components)
    checks: list[tuple[str, Callable[[], object], object]] = [
        ("content", lambda: check_content(m.content, max_chars), m.content),
        (
            "interpreted_content",
            lambda: check_stored_text(
                m.interpreted_content, "interpreted_content", interpretation_limit(max_chars)
            ),
            m.interpreted_content,
        ),
        (
            "rationale",
            lambda: check_stored_text(m.rationale, "rationale", MAX_RATIONALE_CHARS, blank=True),
            m.rationale,
        ),
        ("user_context", lambda: check_user_context(m.user_context), m.user_context),
        ("model", lambda: check_label(m.model, "model"), m.model),
        (
            "prompt_version",
            lambda: check_label(m.prompt_version, "prompt_version"),
            m.prompt_version,
        ),
        (
            "archive_reason",
            lambda: check_label(m.archive_reason, "archive_reason", MAX_SOURCE_CHARS),
            m.archive_reason,
        ),
        ("score_source", lambda: check_score_source(m.score_source, scored=scored), m.score_source),
        ("prompt_tokens", lambda: check_count(m.prompt_tokens, "prompt_tokens"), m.prompt_tokens),
        (
            "completion_tokens",
            lambda: check_count(m.completion_tokens, "completion_tokens"),
            m.completion_tokens,
        ),
        ("judge_retries", lambda: check_count(m.judge_retries, "judge_retries"), m.judge_retries),
        ("access_count", lambda: check_count(m.access_count, "access_count"), m.access_count),
        ("version", lambda: check_count(m.version, "version"), m.version),
        (
            "judge_latency_ms",
            lambda: check_latency(m.judge_latency_ms, "judge_latency_ms"),
            m.judge_latency_ms,
        ),
    ]
    checks += [
        (f"idempotency key {i}", partial(check_idempotency_key, k.key), k.key)
        for i, k in enumerate(m.idempotency_keys)
    ]
    for what, check, value in checks:
        try:
            _same(check, value, what)
        except AimemError as exc:
            bad(str(exc))
    if m.version < 1:
        bad("version must be at least 1")
    if not scored:
        if m.priority_score is not None:
            bad("an unscored (pending) memory cannot have a priority_score")
    elif any(c is None or not (0.0 <= c <= 0.25 and math.isfinite(c)) for c in components):
        bad("each component must lie in [0, 0.25]")
    elif m.priority_score != priority_from(*components):  # type: ignore[arg-type]
        bad("priority_score is not the sum of the four components")
    if (m.archived_at is None) != (m.archive_reason is None):
        bad("archived_at and archive_reason must both be set or both be null")
    stamps = (m.created_at, m.updated_at, m.last_accessed_at, m.archived_at, m.restored_at)
    keys = tuple(k.created_at for k in m.idempotency_keys)
    replaced = tuple(v.replaced_at for v in m.previous_versions)
    if any(t is not None and t.tzinfo is None for t in (*stamps, *keys, *replaced)):
        bad("timestamps must carry a timezone")
    if m.superseded_by is not None:
        if not is_memory_id(m.superseded_by) or m.superseded_by == m.id:
            bad("superseded_by is not another memory's id in aimem's format")
        if m.archive_reason != "superseded":
            bad("only a memory archived as 'superseded' names a successor")
    elif m.archive_reason == "superseded":
        bad("a memory archived as 'superseded' names its successor (superseded_by)")
    if m.contested_by is not None and (not is_memory_id(m.contested_by) or m.contested_by == m.id):
        bad("contested_by is not another memory's id in aimem's format")
    if len(m.recall_terms) > max_chars:
        bad(f"recall_terms is longer than {max_chars} characters")
    for version_problem in _version_problems(m, max_chars):
        bad(version_problem)
    if m.vector is not None:
        problem = _vector_problem(m)
        if problem:
            bad(problem)


def _version_problems(m: MemoryLine, max_chars: int) -> list[str]:
    """What is wrong with the versions a memory's updates replaced: the rules of a save."""
    problems: list[str] = []
    seen: set[int] = set()
    for v in m.previous_versions:
        where = f"previous version {v.version}"
        if isinstance(v.version, bool) or not 1 <= v.version < m.version or v.version in seen:
            problems.append(f"{where}: versions are distinct and below the memory's {m.version}")
        seen.add(v.version)
        texts: list[tuple[str, Callable[[], object], object]] = [
            ("content", partial(check_content, v.content, max_chars), v.content),
            (
                "interpreted_content",
                partial(
                    check_stored_text,
                    v.interpreted_content,
                    "interpreted_content",
                    interpretation_limit(max_chars),
                ),
                v.interpreted_content,
            ),
            (
                "rationale",
                partial(
                    check_stored_text, v.rationale, "rationale", MAX_RATIONALE_CHARS, blank=True
                ),
                v.rationale,
            ),
            ("model", partial(check_label, v.model, "model"), v.model),
            (
                "prompt_version",
                partial(check_label, v.prompt_version, "prompt_version"),
                v.prompt_version,
            ),
        ]
        components = (v.emotional_impact, v.user_relevance, v.novelty, v.utility)
        scored = any(c is not None for c in components)
        try:
            for what, check, value in texts:
                _same(check, value, what)
            check_score_source(v.score_source, scored=scored)
        except AimemError as exc:
            problems.append(f"{where}: {exc}")
        if not scored:
            if v.priority_score is not None:
                problems.append(f"{where}: an unscored version cannot have a priority_score")
        elif any(c is None or not (0.0 <= c <= 0.25 and math.isfinite(c)) for c in components):
            problems.append(f"{where}: each component must lie in [0, 0.25]")
        elif v.priority_score != priority_from(*components):  # type: ignore[arg-type]
            problems.append(f"{where}: priority_score is not the sum of the four components")
    return problems


def _vector_problem(m: MemoryLine) -> str | None:
    """What is wrong with a memory's vector, if anything: it must be a finite unit vector."""
    import numpy as np

    assert m.vector is not None
    try:
        check_label(m.vector.model, "the vector's model", MAX_LABEL_CHARS)
    except ValidationError as exc:
        return str(exc)
    if not 1 <= m.vector.dim <= MAX_DIM:
        return f"vector dimension {m.vector.dim} is outside 1-{MAX_DIM}"
    try:
        blob = base64.b64decode(m.vector.data, validate=True)
    except (binascii.Error, ValueError):
        return "vector data is not base64"
    if len(blob) != 4 * m.vector.dim:
        return f"vector has {len(blob)} bytes, expected {4 * m.vector.dim}"
    values = np.frombuffer(blob, dtype="<f4")
    if not np.isfinite(values).all():
        return "the vector holds a non-finite value"
    norm = float(np.linalg.norm(values.astype(np.float64)))
    if abs(norm - 1.0) > UNIT_TOLERANCE:
        return f"the vector is not of unit length (length {norm:.4g})"
    return None


def check_history(parsed: ParsedExport, number: int, event: HistoryLine) -> None:
    """One history line: an event of a memory id in aimem's format, with a JSON detail."""

    def bad(message: str) -> None:
        parsed.fail(f"line {number} (history): {message}")

    if not is_memory_id(event.memory_id):
        bad("memory_id is not in aimem's format (a lowercase UUID)")
    try:
        _same(
            lambda: check_stored_text(event.event, "event", _MAX_EVENT_CHARS, one_line=True),
            event.event,
            "event",
        )
        _same(
            lambda: check_stored_text(event.detail, "detail", _MAX_DETAIL_CHARS),
            event.detail,
            "detail",
        )
        check_count(event.version, "version")
    except AimemError as exc:
        bad(str(exc))
        return
    if event.version < 1:
        bad("version must be at least 1")
    if event.at.tzinfo is None:
        bad("the event time must carry a timezone")
    try:
        detail = parse_json(event.detail)
    except ValueError:
        bad("detail is not JSON")
        return
    if not isinstance(detail, dict):
        bad("detail is not a JSON object")


def check_whole(parsed: ParsedExport, max_chars: int) -> None:
    """Checks across lines: counts, unique ids and keys, duplicates, keys, vectors, core."""
    header, core = parsed.header, parsed.core
    assert header is not None and core is not None
    try:
        check_namespace(header.namespace)
    except AimemError as exc:
        parsed.fail(f"line 1: {exc}")
    if not 0 <= header.counts.memories <= MAX_COUNT or header.counts.memories != len(
        parsed.memories
    ):
        parsed.fail(
            f"header counts {header.counts.memories} memories, the file has {len(parsed.memories)}"
        )
    if header.counts.history != len(parsed.history):
        parsed.fail(
            f"header counts {header.counts.history} history events, the file has "
            f"{len(parsed.history)}"
        )
    lines = dict(zip((m.id for m in parsed.memories), parsed.memory_lines, strict=True))
    if len(lines) != len(parsed.memories):
        parsed.fail("a memory id appears more than once")
    keys = [k.key for m in parsed.memories for k in m.idempotency_keys]
    if len(set(keys)) != len(keys):
        parsed.fail("an idempotency key appears more than once")
    active: dict[str, str] = {}
    for m in parsed.memories:
        if m.archived_at is None:
            digest = content_hash(m.content)
            if digest in active:
                parsed.fail(
                    f"line {lines[m.id]} (memory {m.id[:40]!r}): the same content as active "
                    f"memory {active[digest]!r}; two active memories never share a content"
                )
            active.setdefault(digest, m.id)
    _check_keys(parsed, lines)
    _check_dimensions(parsed, lines)
    if parsed.header_history:
        _check_versions(parsed, lines)
    try:
        _same(lambda: check_core_text(core.text, max_chars), core.text, "core text")
    except AimemError as exc:
        parsed.fail(f"line 2: {exc}")
    if core.updated_at is None and core.text:
        parsed.fail("line 2: a core text always has an updated_at")
    if core.updated_at is not None and core.updated_at.tzinfo is None:
        parsed.fail("line 2: updated_at must carry a timezone")


def _check_versions(parsed: ParsedExport, lines: dict[str, int]) -> None:
    """With the history: every memory has events, and its version is the latest event's.

    Every change of a memory is logged with its new version in the same transaction,
    so a memory without events, or at another version, was not made by aimem.
    """
    latest: dict[str, int] = {}
    for event in parsed.history:
        latest[event.memory_id] = max(latest.get(event.memory_id, 0), event.version)
    for m in parsed.memories:
        where = f"line {lines.get(m.id, '?')} (memory {m.id[:40]!r})"
        if m.id not in latest:
            parsed.fail(f"{where}: the history has no event of this memory")
        elif latest[m.id] != m.version:
            parsed.fail(
                f"{where}: version {m.version} differs from its last history event's {latest[m.id]}"
            )


def _check_keys(parsed: ParsedExport, lines: dict[str, int]) -> None:
    """Each key answers its memory's content, unless the history shows an edit since.

    ``update`` changes a memory's content but a retried save with its key must still
    return it, so a key may name the content the memory had when the key was bound.
    """
    edited = {e.memory_id for e in parsed.history if e.event == "update"}
    for m in parsed.memories:
        if not m.idempotency_keys:
            continue
        may_differ = m.id in edited or (not parsed.header_history and m.version > 1)
        digest = content_hash(m.content)
        for key in m.idempotency_keys:
            if key.content_hash != digest and not may_differ:
                parsed.fail(
                    f"line {lines.get(m.id, '?')} (memory {m.id[:40]!r}): idempotency key "
                    f"{key.key[:40]!r} names other content than the memory holds"
                )


def _check_dimensions(parsed: ParsedExport, lines: dict[str, int]) -> None:
    """All vectors of one embedder share one dimension (a store keeps one per embedder)."""
    seen: dict[str, tuple[int, str]] = {}
    for m in parsed.memories:
        if m.vector is None:
            continue
        first = seen.setdefault(m.vector.model, (m.vector.dim, m.id))
        if first[0] != m.vector.dim:
            parsed.fail(
                f"line {lines.get(m.id, '?')} (memory {m.id[:40]!r}): vector dimension "
                f"{m.vector.dim} differs from {first[0]} of memory {first[1]!r} for embedder "
                f"{m.vector.model[:60]!r}"
            )
