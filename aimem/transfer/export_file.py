"""The export format: checksummed JSON Lines that carry a namespace losslessly.

One header line (format, namespace, counts), the core, one line per memory with every
field (archived ones too, in storage order, with its vector and idempotency keys),
optionally the history, and a trailer holding the line count and a SHA-256 over every
line before it. Values are written exactly (floats by ``repr``, ``None`` kept), and
nothing in the file depends on when it was written, so export -> import into an empty
store -> export gives the same bytes.

Pure: the storage layer reads what to export (``ExportData``) and writes what was
imported (``storage/sql_transfer.py``). Import is two steps: ``parse_export`` reads and
validates the whole file (checksum, schema, every invariant, ``checks.py``)
without touching a database; the store then checks it against the database and writes
it in one transaction. A tampered or truncated file never reaches the second step.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from aimem.models import Memory
from aimem.transfer.checks import check_history, check_memory, check_whole
from aimem.transfer.lines import (
    CoreLine,
    Header,
    HistoryLine,
    MemoryLine,
    ParsedExport,
    Trailer,
    VersionLine,
)
from aimem.validation import parse_json

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ExportData",
    "ParsedExport",
    "VersionLine",
    "export_lines",
    "link_new",
    "parse_export",
    "restored_last",
    "write_new_file",
]

FORMAT = "aimem-export"
FORMAT_VERSION = 1


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"


def _when(value: datetime | None) -> str | None:
    """UTC, written the way pydantic writes the memory's own timestamps."""
    return None if value is None else value.astimezone(UTC).isoformat().replace("+00:00", "Z")


# -- export ---------------------------------------------------------------------------


@dataclass
class ExportData:
    """What an export holds, read from one snapshot by the storage layer."""

    namespace: str
    include_history: bool
    #: The storage schema the data was read from (informational in format 1).
    schema_version: int
    #: Every memory of the namespace, in storage order, archived ones too.
    memories: list[Memory]
    #: Memory id -> (embedder name, dimension, packed float32 vector).
    vectors: dict[str, tuple[str, int, bytes]]
    #: Memory id -> its idempotency keys as (key, content_hash, created_at), by key.
    keys: dict[str, list[tuple[str, str, datetime]]]
    #: Memory id -> the versions its updates replaced, oldest first (VersionLine fields).
    versions: dict[str, list[dict[str, Any]]]
    #: History events as (memory_id, event, version, at, detail), oldest first.
    history: list[tuple[str, str, int, datetime, str]]
    core_text: str
    core_updated_at: datetime | None


def export_lines(data: ExportData) -> Iterator[str]:
    """Every line of a namespace's export, trailer last."""
    digest = hashlib.sha256()
    count = 0

    def emit(obj: dict[str, Any]) -> str:
        nonlocal count
        line = _dump(obj)
        digest.update(line.encode("utf-8"))
        count += 1
        return line

    yield emit(
        {
            "kind": "header",
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "namespace": data.namespace,
            "schema_version": data.schema_version,
            "history": data.include_history,
            "counts": {"memories": len(data.memories), "history": len(data.history)},
        }
    )
    yield emit({"kind": "core", "text": data.core_text, "updated_at": _when(data.core_updated_at)})
    for memory in data.memories:
        vector = data.vectors.get(memory.id)
        yield emit(
            {
                "kind": "memory",
                **memory.model_dump(mode="json"),
                "vector": None
                if vector is None
                else {
                    "model": vector[0],
                    "dim": vector[1],
                    "data": base64.b64encode(vector[2]).decode("ascii"),
                },
                "idempotency_keys": [
                    {"key": key, "content_hash": digest_, "created_at": _when(at)}
                    for key, digest_, at in data.keys.get(memory.id, [])
                ],
                "previous_versions": [
                    {**v, "replaced_at": _when(v["replaced_at"])}
                    for v in data.versions.get(memory.id, [])
                ],
            }
        )
    for memory_id, event, version, at, detail in data.history:
        yield emit(
            {
                "kind": "history",
                "memory_id": memory_id,
                "event": event,
                "version": version,
                "at": _when(at),
                "detail": detail,
            }
        )
    yield _dump({"kind": "trailer", "lines": count, "sha256": digest.hexdigest()})


# -- import: validate everything first --------------------------------------------------


def parse_export(path: Path, *, max_content_chars: int) -> ParsedExport:
    """Read and validate a whole export file; never raises for bad content, only reports."""
    parsed = ParsedExport()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        parsed.fail(f"cannot read the file: {exc.strerror or exc}")
        return parsed
    if not raw.endswith(b"\n"):
        parsed.fail("the file does not end with a newline: it is truncated")
        return parsed
    lines = raw.split(b"\n")[:-1]
    if len(lines) < 3:
        parsed.fail("the file is too short to be an aimem export (header, core, trailer)")
        return parsed
    trailer = _parse_line(parsed, len(lines), lines[-1], Trailer)
    if trailer is None:
        parsed.fail("the last line is not a valid trailer: the file is truncated or altered")
        return parsed
    body = lines[:-1]
    digest = hashlib.sha256(b"".join(line + b"\n" for line in body)).hexdigest()
    if trailer.lines != len(body) or trailer.sha256 != digest:
        parsed.fail(
            "checksum mismatch: the file was altered or truncated "
            f"(trailer says {trailer.lines} lines, found {len(body)})"
        )
        return parsed
    parsed.header = _parse_line(parsed, 1, body[0], Header)
    parsed.core = _parse_line(parsed, 2, body[1], CoreLine)
    if parsed.header is None or parsed.core is None:
        return parsed
    if parsed.header.format_version != FORMAT_VERSION:
        parsed.fail(
            f"format_version {parsed.header.format_version} is not supported "
            f"(this aimem reads {FORMAT_VERSION}): upgrade aimem"
        )
        return parsed
    for number, line in enumerate(body[2:], start=3):
        kind, unreadable = _kind(line)
        if unreadable is not None:
            parsed.fail(f"line {number}: {unreadable}")
        elif kind == "memory" and not parsed.history:
            memory = _parse_line(parsed, number, line, MemoryLine)
            if memory is not None:
                check_memory(parsed, number, memory, max_content_chars)
                parsed.memories.append(memory)
                parsed.memory_lines.append(number)
        elif kind == "history" and parsed.header.history:
            event = _parse_line(parsed, number, line, HistoryLine)
            if event is not None:
                check_history(parsed, number, event)
                parsed.history.append(event)
        else:
            parsed.fail(f"line {number}: unexpected {kind or 'unreadable'} line here")
    check_whole(parsed, max_content_chars)
    return parsed


def _kind(line: bytes) -> tuple[str | None, str | None]:
    """A body line's ``kind`` (None if it names none), or why the line is no JSON at all."""
    try:
        value = parse_json(line)
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg})"
    except ValueError as exc:  # parse_json's phrase: nested too deeply, a number too long
        return None, f"not valid JSON ({exc})"
    kind = value.get("kind") if isinstance(value, dict) else None
    return (kind if isinstance(kind, str) else None), None


M = TypeVar("M", bound=BaseModel)


def _parse_line(parsed: ParsedExport, number: int, line: bytes, model: type[M]) -> M | None:
    try:
        return model.model_validate_json(line)
    except PydanticValidationError as exc:
        where = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'line'}: {e['msg']}" for e in exc.errors()[:3]
        )
        parsed.fail(f"line {number}: not a valid {model.__name__.lower()}: {where}")
        return None


def restored_last(parsed: ParsedExport) -> frozenset[str]:
    """Memories the user kept on purpose: the import's capacity run spares them.

    Those whose last event in the file is a restore, or the save of a ``compress`` (whose
    items stay active whatever they score, until a later save applies the usual rules).
    A file without history has no events to read: there, the active memories the user
    restored (``restored_at``). Export, import into an empty store, export again: the
    same bytes.
    """
    if not parsed.header_history:  # no events to read: a restored memory still says so
        return frozenset(
            m.id for m in parsed.memories if m.restored_at is not None and m.archived_at is None
        )
    last: dict[str, tuple[str, str]] = {}
    for event in parsed.history:
        last[event.memory_id] = (event.event, event.detail)
    kept = {"restore"}
    return frozenset(
        i
        for i, (e, detail) in last.items()
        if e in kept or (e == "save" and _via(detail) == "compress")
    )


def _via(detail: str) -> object:
    """The operation a history event's detail names (``{"via": "compress"}``), if any."""
    try:
        parsed = json.loads(detail)
    except ValueError:
        return None
    return parsed.get("via") if isinstance(parsed, dict) else None


# -- files ---------------------------------------------------------------------------------


def link_new(source: Path, target: Path) -> None:
    """Give ``source`` the name ``target``, failing if ``target`` exists (no overwrite)."""
    os.link(source, target)


def write_new_file(target: Path, data: bytes) -> None:
    """Write ``data`` to a new file ``target``: complete and synced, or not there at all."""
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.partial")
    try:
        with partial.open("xb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        link_new(partial, target)
    finally:
        partial.unlink(missing_ok=True)
