"""The lines of an export file, as data shapes: header, core, memory, history, trailer.

A ``MemoryLine`` is derived from ``aimem.Memory``'s own fields, so a field added to
``Memory`` is exported and imported without a second definition here. What each line
must satisfy beyond its types is ``checks``; reading and writing files is ``export_file``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from aimem.models import Memory

__all__ = [
    "LATER_FIELDS",
    "CoreLine",
    "Counts",
    "ExportedMemory",
    "Header",
    "HistoryLine",
    "KeyLine",
    "MemoryLine",
    "ParsedExport",
    "Trailer",
    "VectorData",
    "VersionLine",
]

_MAX_ERRORS = 20


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Counts(_Strict):
    """How many lines of each kind the file holds (checked on import)."""

    memories: int = Field(ge=0)
    history: int = Field(ge=0)


class Header(_Strict):
    """First line: what the file is and what it holds."""

    kind: Literal["header"]
    format: Literal["aimem-export"]
    format_version: int
    namespace: str
    schema_version: int
    history: bool
    counts: Counts


class CoreLine(_Strict):
    """The namespace's core text."""

    kind: Literal["core"]
    text: str
    updated_at: datetime | None


class VectorData(_Strict):
    """A memory's embedding: float32 little-endian, base64, unit length."""

    model: str
    dim: int
    data: str


class KeyLine(_Strict):
    """An idempotency key that answers with this memory."""

    key: str
    content_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    created_at: datetime


class VersionLine(_Strict):
    """A memory as it was before an update replaced it (``store.history`` shows it)."""

    version: int
    content: str
    interpreted_content: str
    emotional_impact: float | None
    user_relevance: float | None
    novelty: float | None
    utility: float | None
    priority_score: float | None
    rationale: str
    score_source: str
    model: str | None
    prompt_version: str | None
    replaced_at: datetime


#: Fields of ``Memory`` older files may lack (added after format version 1 was first
#: written): they take ``Memory``'s defaults. Every other field of ``Memory`` is required.
LATER_FIELDS = frozenset({"superseded_by", "restored_at", "contested_by", "recall_terms"})


class ExportedMemory(Memory):
    """A memory line's shape: ``aimem.Memory``'s own fields, plus what an export carries."""

    kind: Literal["memory"]
    vector: VectorData | None
    idempotency_keys: list[KeyLine]
    previous_versions: list[VersionLine] = Field(default_factory=list)


def _strict_line(shape: type[BaseModel]) -> type[_Strict]:
    """``shape`` as a strict line: no extra keys, no coercion, ``Memory``'s fields required.

    Types only: the bounds are the store's own (``checks.check_memory``).
    """
    fields: dict[str, Any] = {}
    for name, info in shape.model_fields.items():
        required = name in Memory.model_fields and name not in LATER_FIELDS
        fields[name] = (info.annotation, ... if required else info)
    line: type[_Strict] = create_model(
        "MemoryLine", __base__=_Strict, __module__=__name__, **fields
    )
    line.__doc__ = "One memory: every field of ``aimem.Memory`` plus its vector and keys."
    return line


if TYPE_CHECKING:  # type checkers see the shape; at run time it is made strict
    MemoryLine = ExportedMemory
else:
    MemoryLine = _strict_line(ExportedMemory)


class HistoryLine(_Strict):
    """One event of the append-only history (never a memory's text)."""

    kind: Literal["history"]
    memory_id: str
    event: str
    version: int
    at: datetime
    detail: str


class Trailer(_Strict):
    """Last line: how many lines precede it and their SHA-256."""

    kind: Literal["trailer"]
    lines: int
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


@dataclass
class ParsedExport:
    """A whole export file, validated; ``errors`` empty means it may be written."""

    header: Header | None = None
    core: CoreLine | None = None
    memories: list[MemoryLine] = field(default_factory=list)
    history: list[HistoryLine] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: Every problem found, ``errors`` being the first ``_MAX_ERRORS`` of them.
    error_count: int = 0
    #: The file's line number of each memory (same order as ``memories``).
    memory_lines: list[int] = field(default_factory=list)

    @property
    def header_history(self) -> bool:
        """Whether the file carries the history log."""
        return self.header is not None and self.header.history

    def fail(self, message: str) -> None:
        """Record a problem (the first few are kept; every one is counted)."""
        self.fail_all([message])

    def fail_all(self, messages: list[str]) -> None:
        """Record problems: ``errors`` keeps the first ``_MAX_ERRORS``, ``error_count`` all."""
        self.error_count += len(messages)
        self.errors.extend(messages[: max(0, _MAX_ERRORS - len(self.errors))])
