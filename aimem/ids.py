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

__all__ = ["content_hash", "new_id"]

_lock = threading.Lock()
_last = 0


def new_id() -> str:
    """Return a new UUIDv7 string, strictly increasing within this process."""
    global _last
    with _lock:
        # 48-bit millisecond clock, then 74 random bits; bump the counter part when
        # the clock has not moved so ids stay strictly increasing in one process.
        stamp = time.time_ns() // 1_000_000
        rand = int.from_bytes(os.urandom(10), "big") & ((1 << 74) - 1)
        candidate = (stamp << 74) | rand
        if candidate <= _last:
            candidate = _last + 1
        _last = candidate
    ms, low = candidate >> 74, candidate & ((1 << 74) - 1)
    value = (ms << 80) | (0x7 << 76) | ((low >> 62) << 64) | (0b10 << 62) | (low & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def content_hash(content: str) -> str:
    """Exact-duplicate key: SHA-256 of the verbatim content."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()
