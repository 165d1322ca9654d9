"""Read and write aigpt memory trees, so an aigpt agent can move to aimem and back.

aigpt keeps one ATProto record (a JSON file) per memory::

    PATH/{did}/ai.syui.gpt.core/self.json      core: identity and personality
    PATH/{did}/ai.syui.gpt.memory/{tid}.json   one memory each, named by a TID

Reading validates the whole tree before anything is returned, so an import either
sees every record or fails naming the bad file. Record texts follow the store's own
rules (``validation.check_content`` and ``check_core_text``), so once reading succeeds
nothing in the tree can make a save fail halfway.

Trees may come from untrusted places, so reading and writing stay inside PATH: a
symlinked did folder, collection folder or record file is refused (never followed,
even when it points inside: it could import one record twice or be swapped for an
outside one), and so is anything whose resolved path leaves PATH (a Windows junction).
Only regular files of at most 16 MB are read, opened without blocking, so a FIFO or
a device cannot hang an import. Writing never touches existing records.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from aimem.exceptions import ValidationError
from aimem.forking import at_fork
from aimem.models import Memory
from aimem.sync_store import MemoryStore
from aimem.validation import check_content, check_core_text, parse_json

__all__ = [
    "AigptMemory",
    "AigptTree",
    "ImportReport",
    "export_tree",
    "import_tree",
    "is_tid",
    "new_tid",
    "read_tree",
    "write_tree",
]

CORE = "ai.syui.gpt.core"
MEMORY = "ai.syui.gpt.memory"
_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
_TID = re.compile(r"[2-7a-j][2-7a-z]{12}")
_DID = re.compile(r"did:[a-z]+:[A-Za-z0-9._:%-]*[A-Za-z0-9._-]")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_CLOCK_ID = secrets.randbelow(1024)  # random per process, as ATProto suggests
_MAX_RECORD_BYTES = 16 * 1024 * 1024  # aigpt records are a few KB: this is only a fuse
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)  # a symlink swapped in after the check fails to open
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in opens at once instead of hanging
    | getattr(os, "O_BINARY", 0)
)
_lock = threading.Lock()
_last = 0


def _renew() -> None:
    """In a forked child: its own clock id (else it would mint the parent's TIDs), a new lock."""
    global _CLOCK_ID, _lock
    _CLOCK_ID, _lock = secrets.randbelow(1024), threading.Lock()


at_fork(_renew)


def new_tid(now: datetime | None = None, clock_id: int | None = None) -> str:
    """A new ATProto TID, strictly increasing within this process (so files sort by age).

    Layout: top bit 0, 53 bits of microseconds since the Unix epoch, 10 bits clock id,
    written as 13 characters of the sortable base32 alphabet. Two calls in the same
    microsecond (or a ``now`` in the past) get the previous value plus one.
    """
    global _last
    when = datetime.now(UTC) if now is None else _aware(now, "now")
    clock = _CLOCK_ID if clock_id is None else clock_id
    if isinstance(clock, bool) or not isinstance(clock, int) or not 0 <= clock < 1024:
        raise ValidationError(f"clock_id must be an integer from 0 to 1023, got {clock_id!r}")
    micros = (when - _EPOCH) // _MICROSECOND
    if not 0 <= micros < 1 << 53:
        raise ValidationError(f"{when.isoformat()} cannot be stored in a TID")
    with _lock:
        value = max((micros << 10) | clock, _last + 1)
        _last = value
    return "".join(_ALPHABET[(value >> shift) & 31] for shift in range(60, -1, -5))


def is_tid(s: str) -> bool:
    """True when ``s`` has ATProto TID syntax (13 sortable-base32 chars that fit 64 bits)."""
    return isinstance(s, str) and _TID.fullmatch(s) is not None


@dataclass(frozen=True)
class AigptMemory:
    """One memory record: its rkey (file name), text and createdAt, if it had one."""

    rkey: str
    text: str
    created_at: datetime | None


@dataclass(frozen=True)
class AigptTree:
    """Everything one did's aigpt tree holds; memories in rkey order (oldest first)."""

    did: str
    handle: str | None
    core: str | None
    memories: list[AigptMemory]


@dataclass(frozen=True)
class ImportReport:
    """What ``import_tree`` did: ``memories`` follow the tree's order, duplicates included."""

    did: str
    core_imported: bool
    memories: list[Memory]


def read_tree(path: Path, did: str | None = None, *, max_chars: int | None = None) -> AigptTree:
    """Read and validate one did's aigpt tree under ``path``.

    Every record text must pass the store's checks (no control characters other than
    tab and line breaks; at most ``max_chars`` characters when given). Texts are
    returned as the files hold them; the store normalises line breaks when saving.

    Raises:
        ValidationError: no such path, no single did to pick, a bad record, or an
            entry that is a symlink, not a regular file or over 16 MB (the message
            names it relative to ``path`` and what is wrong).
    """
    given = Path(path)
    if not given.is_dir():
        raise ValidationError(f"{given} is not a directory: point at the aigpt content path")
    root = given.resolve()  # once: every entry below must stay inside it
    if did is None:
        found = [p for p in sorted(root.iterdir()) if p.name.startswith("did:")]
        # A stray file named did:* is not a candidate; a symlinked folder is refused.
        found = [p for p in found if (p.is_symlink() or p.is_dir()) and _kind(root, p, "dir")]
        if len(found) != 1:
            names = ", ".join(_name(root, p) for p in found)
            what = "no did:* directory" if not found else f"several dids ({names})"
            raise ValidationError(f"{given} holds {what}: pass --did to choose the agent to read")
        did = found[0].name
    bad = not did or "/" in did or "\\" in did or "\x00" in did or did in (".", "..")
    if bad or not _kind(root, root / did, "dir"):
        raise ValidationError(f"{given} has no directory for did {did!r}: check --did")
    core: str | None = None
    handle: str | None = None
    core_dir = root / did / CORE
    if _kind(root, core_dir, "dir") and _kind(root, core_dir / "self.json", "file"):
        value, core, _ = _read(root, core_dir / "self.json", max_chars, core=True)
        handle = value.get("handle")
    memory_dir = root / did / MEMORY
    files = sorted(memory_dir.iterdir()) if _kind(root, memory_dir, "dir") else []
    memories = [
        AigptMemory(f.stem, *_read(root, f, max_chars, core=False)[1:])
        for f in files
        if f.name.endswith(".json") and _kind(root, f, "file")
    ]
    return AigptTree(did, handle, core, memories)


def write_tree(
    path: Path,
    did: str,
    memories: Sequence[tuple[str, datetime]],
    core: str | None,
    handle: str | None = None,
) -> list[Path]:
    """Write an aigpt tree: fresh increasing TIDs in the given order, one atomic file each.

    Returns the written files, core first. Everything is checked before the first
    write, and a target that already holds records is refused so none is overwritten.
    """
    if not isinstance(did, str) or len(did) > 2048 or not _DID.fullmatch(did):
        raise ValidationError(f"{did!r} is not a did like did:plc:abc123: check --did")
    if handle is not None and not isinstance(handle, str):
        raise ValidationError("handle must be a string or None")
    items = [
        (_check_text(t, f"memory {i}"), _aware(w, f"memory {i}"))
        for i, (t, w) in enumerate(memories)
    ]
    if core is not None:
        _check_text(core, "core")
    base = Path(path) / did
    root = Path(path).resolve()
    # Folders already there must be real ones inside the target: never write through a link.
    for folder in (root / did, root / did / CORE, root / did / MEMORY):
        _kind(root, folder, "dir")
    held = (base / MEMORY).is_dir() and any(
        p.name.endswith(".json") for p in (base / MEMORY).iterdir()
    )
    if held or os.path.lexists(base / CORE / "self.json"):
        raise ValidationError(f"{base} already holds aigpt records; choose an empty path")
    written = [] if core is None else [_write(base, CORE, "self", core, None, handle)]
    (base / MEMORY).mkdir(parents=True, exist_ok=True)
    written += [_write(base, MEMORY, new_tid(), text, when, None) for text, when in items]
    return written


def import_tree(store: MemoryStore, path: Path, did: str | None = None) -> ImportReport:
    """Load an aigpt tree into ``store``: each memory is judged; the core replaces the store's.

    The whole tree, core text included, is validated with the store's own rules and
    limit first, and memories are saved (in one transaction) before the core, so a bad
    file or a failing judge leaves the store as it was.
    """
    tree = read_tree(path, did, max_chars=store.settings.max_content_chars)
    saved = store.save_many([m.text for m in tree.memories]) if tree.memories else []
    if tree.core is not None:
        store.set_core(tree.core)
    return ImportReport(tree.did, tree.core is not None, saved)


def export_tree(store: MemoryStore, path: Path, did: str, handle: str | None = None) -> list[Path]:
    """Write the store's core and active memories as an aigpt tree, oldest memory first.

    Memories keep their original wording (``content``) and creation time; archived
    ones stay behind, since aigpt would deliver them to the agent again.
    """
    active = list(reversed(store.list(order="recent")))  # limit=None: every active memory
    core = store.get_core()
    pairs = [(m.content, m.created_at) for m in active]
    return write_tree(path, did, pairs, core if core.strip() else None, handle)


def _aware(when: datetime, what: str) -> datetime:
    """Naive datetimes are ambiguous (local or UTC?), so they are refused."""
    if not isinstance(when, datetime) or when.tzinfo is None:
        raise ValidationError(f"{what}: expected a timezone-aware datetime, got {when!r}")
    return when


def _check_text(text: object, what: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"{what}: text must be a non-empty string, got {text!r}")
    return text


def _stamp(when: datetime) -> str:
    """ATProto's usual datetime form: UTC with milliseconds and a ``Z``."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _name(root: Path, entry: Path) -> str:
    """``entry`` relative to ``root``, quoted when it holds characters a terminal would act on."""
    name = entry.relative_to(root).as_posix()
    return name if name.isprintable() else repr(name)


def _kind(root: Path, entry: Path, want: Literal["dir", "file"]) -> str:
    """``want`` ("dir" or "file") when ``entry`` is one, "" when it does not exist.

    Anything else (a symlink, a FIFO or device, a folder where a file belongs, a path
    resolving outside ``root``) raises ValidationError naming ``entry``.
    """
    name = _name(root, entry)
    try:
        info = os.lstat(entry)
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except OSError as exc:
        raise ValidationError(f"{name}: cannot be examined ({exc.strerror})") from exc
    if stat.S_ISLNK(info.st_mode):
        where = "inside" if _inside(root, entry) else "outside"
        raise ValidationError(
            f"{name}: is a symlink pointing {where} the tree; symlinks are not followed, "
            "so an aigpt tree is read and written only inside its path: copy the real "
            "file or folder into place"
        )
    if not _inside(root, entry):  # a Windows junction is not a symlink, but leads elsewhere
        raise ValidationError(f"{name}: points outside the tree; it is not followed")
    if want == "dir" and not stat.S_ISDIR(info.st_mode):
        raise ValidationError(f"{name}: is not a directory")
    if want == "file" and not stat.S_ISREG(info.st_mode):
        raise ValidationError(f"{name}: is not a regular file (a FIFO, device or folder)")
    return want


def _inside(root: Path, entry: Path) -> bool:
    try:
        return entry.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        return False


def _load(root: Path, file: Path) -> bytes:
    """A record file's bytes; it must still be a regular file of at most 16 MB when opened."""
    name = _name(root, file)
    try:
        fd = os.open(file, _OPEN_FLAGS)
    except OSError as exc:  # ELOOP: a symlink appeared since the check
        raise ValidationError(f"{name}: cannot be opened ({exc.strerror})") from exc
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValidationError(f"{name}: is not a regular file (a FIFO, device or folder)")
        data = stream.read(_MAX_RECORD_BYTES + 1) if info.st_size <= _MAX_RECORD_BYTES else b""
        if info.st_size > _MAX_RECORD_BYTES or len(data) > _MAX_RECORD_BYTES:
            raise ValidationError(f"{name}: is over 16 MB, too large for an aigpt record")
    return data


def _read(
    root: Path, file: Path, max_chars: int | None, *, core: bool
) -> tuple[dict[str, Any], str, datetime | None]:
    """One record's ``value``, text and createdAt; any flaw names the file (relative)."""
    name = _name(root, file)
    try:
        record = parse_json(_load(root, file).decode("utf-8"))
    except ValueError as exc:  # not UTF-8, not JSON, or nested too deeply / a number too long
        raise ValidationError(f"{name}: not readable JSON ({exc})") from exc
    value = record.get("value") if isinstance(record, dict) else None
    content = value.get("content") if isinstance(value, dict) else None
    if not isinstance(value, dict) or not isinstance(content, dict) or "text" not in content:
        raise ValidationError(f"{name}: value.content.text is missing: not an aigpt record")
    text, raw, when = content["text"], value.get("createdAt"), None
    if not isinstance(text, str) or not text.strip():
        problem = "empty" if isinstance(text, str) else f"a {type(text).__name__}, not a string"
        raise ValidationError(f"{name}: value.content.text is {problem}")
    if max_chars is not None and len(text) > max_chars:
        raise ValidationError(f"{name} is over max_content_chars ({max_chars}): raise the limit")
    limit = len(text) if max_chars is None else max_chars
    try:  # the store's own rules, so that saving cannot fail on this text later
        if core:
            check_core_text(text, limit)
        else:
            check_content(text, limit, what="value.content.text")
    except ValidationError as exc:
        raise ValidationError(f"{name}: {exc}") from exc
    if not isinstance(value.get("handle", ""), str):
        raise ValidationError(f"{name}: value.handle is not a string")
    with contextlib.suppress(TypeError, ValueError):
        when = None if raw is None else datetime.fromisoformat(raw)
    if raw is not None and (when is None or when.tzinfo is None):
        raise ValidationError(f"{name}: createdAt {raw!r} is not an ISO time with a timezone")
    return value, text, when


def _write(
    base: Path, collection: str, rkey: str, text: str, when: datetime | None, handle: str | None
) -> Path:
    """Write one record via a temp file and ``os.replace``: no reader sees half a file."""
    did, target = base.name, base / collection / f"{rkey}.json"
    value: dict[str, Any] = {"$type": collection, "did": did}
    value |= {} if handle is None else {"handle": handle}
    value |= {"content": {"$type": f"{collection}#markdown", "text": text}}
    value["createdAt"] = _stamp(when or datetime.now(UTC))
    record = {"uri": f"at://{did}/{collection}/{rkey}", "value": value}
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False, indent=2))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
