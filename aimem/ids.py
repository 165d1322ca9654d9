"""Identities: time-sortable memory ids (UUIDv7 layout) and the exact-content key.

The capacity manager breaks priority ties by ``created_at`` then ``id``; with v7 ids
the second key agrees with the first even for memories saved in the same microsecond.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import uuid
from collections.abc import Iterable

__all__ = [
    "DISPLAY_PREFIX",
    "MIN_PREFIX",
    "content_hash",
    "id_prefix",
    "new_id",
    "shortest_unique_prefixes",
]

#: The shortest id prefix a lookup accepts (git's rule); shorter would name too many.
MIN_PREFIX = 4
#: The shortest prefix shown for an id (its first 8 characters, before the first hyphen).
DISPLAY_PREFIX = 8
_ID_LENGTH = 36
_PREFIX_CHARS = frozenset("0123456789abcdef-")

_lock = threading.Lock()
_last = 0


def _new_lock() -> None:
    """In a forked child: a thread that no longer exists may hold the lock."""
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=_new_lock)


def new_id() -> str:
    """Return a new UUIDv7 string, strictly increasing within this process."""
    global _last
    with _lock:
        # 48-bit millisecond clock, then 74 random bits; when the clock has not moved,
        # bump the 12 bits after the clock (rand_a, RFC 9562's counter) and draw the rest
        # anew, so ids stay strictly increasing in one process and ids of the same
        # millisecond differ early (their short prefixes stay short), not in the last digit.
        stamp = time.time_ns() // 1_000_000
        rand = int.from_bytes(os.urandom(10), "big") & ((1 << 74) - 1)
        candidate = (stamp << 74) | rand
        if candidate <= _last:
            candidate = (((_last >> 62) + 1) << 62) | (rand & ((1 << 62) - 1))
        _last = candidate
    ms, low = candidate >> 74, candidate & ((1 << 74) - 1)
    value = (ms << 80) | (0x7 << 76) | ((low >> 62) << 64) | (0b10 << 62) | (low & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def content_hash(content: str) -> str:
    """Exact-duplicate key: SHA-256 of the verbatim content."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def id_prefix(text: str) -> str | None:
    """``text`` as a lower-case id prefix to look up, or None when it is a whole id (or no prefix).

    Only strings of hex digits and hyphens shorter than an id, at least ``MIN_PREFIX``
    long, are prefixes; anything else is looked up as given (and is simply not found).
    """
    candidate = text.strip().lower()
    if not MIN_PREFIX <= len(candidate) < _ID_LENGTH or not set(candidate) <= _PREFIX_CHARS:
        return None
    return candidate


def shortest_unique_prefixes(
    targets: Iterable[str], universe: Iterable[str], min_length: int = DISPLAY_PREFIX
) -> dict[str, str]:
    """Each target id -> its shortest prefix (>= ``min_length``) no other id of ``universe`` shares.

    Ids sort the way their strings do, so an id's longest shared prefix is with one of
    its two neighbours in sorted order: one sort, then two comparisons per id.
    """
    ordered = sorted(set(universe) | set(targets))
    position = {value: i for i, value in enumerate(ordered)}

    def shared(a: str, b: str) -> int:
        n = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            n += 1
        return n

    result: dict[str, str] = {}
    for target in targets:
        i = position[target]
        longest = 0
        if i > 0:
            longest = shared(ordered[i - 1], target)
        if i + 1 < len(ordered):
            longest = max(longest, shared(ordered[i + 1], target))
        length = max(min_length, longest + 1)
        if length < len(target) and target[length - 1] == "-":
            length += 1  # never end a prefix on a hyphen
        result[target] = target[:length]
    return result
