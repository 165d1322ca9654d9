"""``aimem ingest``: check every line of a text or JSON Lines file, then save it in batches.

Plain text holds one memory per non-empty line. JSON Lines holds one object per
non-empty line, ``{"content": "...", "user_context": "..."}`` (``user_context`` optional).
A file is read as JSON Lines when its name ends in ``.jsonl`` or when every non-empty
line parses as a JSON object. The whole file is checked before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from aimem.exceptions import AimemError, ValidationError
from aimem.sync_store import MemoryStore
from aimem.validation import check_content, check_user_context, parse_json

__all__ = ["IngestItem", "IngestSummary", "parse_lines", "save_in_batches"]

Format = Literal["auto", "text", "jsonl"]
_KEYS = frozenset({"content", "user_context"})


@dataclass(frozen=True)
class IngestItem:
    """One memory to save, with the file line it came from."""

    line: int
    content: str
    user_context: str | None


@dataclass(frozen=True)
class IngestSummary:
    """What an ingest did: lines read, new memories, duplicates returned, memories archived."""

    lines: int
    saved: int
    duplicates: int
    archived: int


def _object(line: str) -> object:
    try:
        value: object = parse_json(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def parse_lines(
    text: str,
    *,
    fmt: Format,
    jsonl_name: bool,
    user_context: str | None,
    max_chars: int,
) -> tuple[list[IngestItem], list[str]]:
    """Read every non-empty line into an item, or into a problem naming its line number.

    Args:
        text: the whole file.
        fmt: ``"text"``, ``"jsonl"``, or ``"auto"`` to decide from the name and the lines.
        jsonl_name: the file name ends in ``.jsonl`` (``"auto"`` then means JSON Lines).
        user_context: used for text lines and JSON objects without their own.
        max_chars: the store's ``max_content_chars``.

    Returns:
        The items in file order and, for bad lines, messages like ``"line 3: ..."``.
    """
    # Only "\n" ends a line: JSON strings may hold U+2028 and friends, which splitlines() breaks.
    lines = [(n, raw.rstrip("\r")) for n, raw in enumerate(text.split("\n"), start=1)]
    lines = [(n, line) for n, line in lines if line.strip()]
    if fmt == "auto":
        is_jsonl = jsonl_name or (bool(lines) and all(_object(line) for _, line in lines))
        fmt = "jsonl" if is_jsonl else "text"
    items: list[IngestItem] = []
    problems: list[str] = []
    for n, line in lines:
        try:
            if fmt == "text":
                content, context = line.strip(), user_context
            else:
                content, context = _json_item(line, user_context)
            items.append(
                IngestItem(n, check_content(content, max_chars), check_user_context(context))
            )
        except ValidationError as exc:
            problems.append(f"line {n}: {exc}")
    return items, problems


def _json_item(line: str, default_context: str | None) -> tuple[str, str | None]:
    try:
        value = parse_json(line)
    except ValueError as exc:
        raise ValidationError(f"not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ValidationError(f'expected a JSON object like {{"content": "..."}}, got {line[:40]}')
    unknown = sorted(set(value) - _KEYS)
    if unknown:
        raise ValidationError(
            f"unknown key(s) {', '.join(map(repr, unknown))}: use 'content' and 'user_context'"
        )
    if "content" not in value:
        raise ValidationError("missing 'content'")
    context = value.get("user_context")
    return value["content"], default_context if context is None else context


def save_in_batches(
    store: MemoryStore,
    items: Sequence[IngestItem],
    *,
    batch: int,
    archived: Callable[[], int],
    progress: Callable[[int, int], None] | None = None,
) -> IngestSummary:
    """Save ``items`` with ``store.save_many``, ``batch`` lines at a time.

    Within a batch, items are grouped by user context (one ``save_many`` per context).
    ``archived`` returns how many memories the store has archived so far (its
    ``on_archive`` tally), read before and after. ``progress(done, total)`` is called
    after each group is saved.

    Raises:
        AimemError: a batch failed; the message says how many lines were already saved.
    """
    archived_before = archived()
    new_ids: set[str] = set()
    done = 0
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        groups: dict[str | None, list[str]] = {}
        for item in chunk:
            groups.setdefault(item.user_context, []).append(item.content)
        for context, contents in groups.items():
            try:
                report = store.save_many_with_report(contents, user_context=context)
            except AimemError as exc:
                raise AimemError(
                    f"{exc} ({done} of {len(items)} lines were saved before this failure; "
                    "running the same ingest again returns those as duplicates)"
                ) from exc
            new_ids.update(m.id for m in report.memories if m.id not in report.duplicates)
            done += len(contents)
            if progress is not None:
                progress(done, len(items))
    return IngestSummary(
        lines=len(items),
        saved=len(new_ids),
        duplicates=len(items) - len(new_ids),
        archived=archived() - archived_before,
    )
