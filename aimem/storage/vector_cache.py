"""Keeps each namespace's in-memory vector index in step with the database.

Built once from the active memories' vectors, then brought up to date before every
search from the append-only history log: only memories saved, updated, restored,
archived or deleted since the last look are read again. Writes by other processes
show up the same way, since every change is logged in its own transaction.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from sqlalchemy import Connection

from ..vectors import VectorIndex, unpack
from . import sql_vectors as vq

__all__ = ["VectorCache"]

#: Events that can move a memory into or out of the active set, or change its vector.
_MOVES = frozenset({"save", "update", "judge", "import", "restore", "archive", "delete", "reembed"})


@dataclass
class _Entry:
    index: VectorIndex
    cursor: int  # the last history event applied


class VectorCache:
    """``(namespace, model)`` -> an up-to-date ``VectorIndex`` of its active memories."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._lock = threading.Lock()

    def index(self, conn: Connection, namespace: str, model: str, dim: int) -> VectorIndex:
        """The index for this namespace and model, as of ``conn``'s snapshot."""
        with self._lock:
            entry = self._entries.get((namespace, model))
            if entry is None or entry.index.dim != dim:
                entry = self._build(conn, namespace, model, dim)
                self._entries[(namespace, model)] = entry
            else:
                self._catch_up(conn, entry, namespace, model)
            return entry.index

    @staticmethod
    def _build(conn: Connection, namespace: str, model: str, dim: int) -> _Entry:
        cursor = vq.last_event(conn)  # same snapshot as the vectors read next
        index = VectorIndex(dim)
        index.reserve(vq.count_active_vectors(conn, namespace, model))
        for memory_id, blob in vq.active_vectors(conn, namespace, model):
            index.upsert(memory_id, unpack(blob))
        return _Entry(index, cursor)

    @staticmethod
    def _catch_up(conn: Connection, entry: _Entry, namespace: str, model: str) -> None:
        events = vq.events_since(conn, namespace, entry.cursor)
        if not events:
            return
        # Whatever happened to a touched memory, its row now says where it stands: drop
        # it, then take back the vector of each one that is active (pins change nothing).
        touched = list(dict.fromkeys(i for _, i, event in events if event in _MOVES))
        for memory_id in touched:
            entry.index.remove(memory_id)
        for memory_id, blob in vq.active_vectors(conn, namespace, model, touched):
            entry.index.upsert(memory_id, unpack(blob))
        entry.cursor = events[-1][0]
