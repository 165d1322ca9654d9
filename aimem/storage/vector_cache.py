"""Keeps each namespace's in-memory vector index in step with the database.

Built once from the active memories' vectors, then brought up to date before every
search from the append-only history log: only memories saved, updated, restored,
archived or deleted since the last look are read again. Writes by other processes
show up the same way, since every change is logged in its own transaction.

The cursor is safe where event ids can commit out of order (a PostgreSQL sequence:
an id is taken when a row is inserted, and a later id may commit first). A namespace's
writers are serialised (SQLite's one writer; PostgreSQL's advisory lock per namespace),
so within a namespace an event id is only taken after every earlier writer committed:
a snapshot that shows one of a namespace's events shows all its earlier ones. The
cursor therefore follows the namespace's own events only (``scoped_cursor``: another
namespace's newer id, committed first, must not move it past a write still in flight),
and there each catch-up also looks ``OVERLAP`` ids behind it for events it has not
applied yet (a belt to those braces; applying an event twice would change nothing, and
the ids already applied are remembered so the look costs one small indexed read).

Memory is bounded: the indexes of a process weigh at most ``budget_bytes`` (256 MB by
default; ``?vector_cache_mb=`` on a PostgreSQL URL), and past it the namespaces searched
least recently are dropped, to be built again on their next search. One namespace whose
index alone outweighs the budget is still kept and served (reading every vector from disk
on each search would cost far more than the memory), with everything else dropped and a
warning logged once: raise the budget, or search on the server (pgvector, see
``postgres_vectors.py``). ``report()`` says what is in use, for ``Stats``.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from aimem.models import Memory
from aimem.storage import sql, sql_vectors
from aimem.storage.sql import SearchFilters
from aimem.vectors import Vector, VectorIndex, unpack

__all__ = ["DEFAULT_BUDGET", "VectorCache"]

log = logging.getLogger("aimem")

#: Bytes the in-memory indexes of one process may hold: ~160,000 vectors of 384 floats.
DEFAULT_BUDGET = 256 << 20

#: Events that can move a memory into or out of the active set, or change its vector.
_MOVES = frozenset({"save", "update", "judge", "import", "restore", "archive", "delete", "reembed"})
#: History ids behind the cursor each catch-up reads again (idempotent: see the docstring).
OVERLAP = 64


@dataclass
class _Entry:
    index: VectorIndex
    cursor: int  # the last history event applied
    #: Ids applied within ``OVERLAP`` behind the cursor (scoped cursors only).
    seen: set[int]


class VectorCache:
    """``(namespace, model)`` -> an up-to-date ``VectorIndex`` of its active memories."""

    #: Its cursor and the vectors it reads next must come from one snapshot.
    needs_snapshot = True

    def __init__(self, *, scoped_cursor: bool = False, budget_bytes: int = DEFAULT_BUDGET) -> None:
        #: Least recently searched first: the order eviction follows.
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()
        #: Build cursors from the namespace's own newest event, not the global newest.
        self._scoped_cursor = scoped_cursor
        self.budget_bytes = budget_bytes
        #: Keys already warned about as outweighing the whole budget.
        self._oversized: set[tuple[str, str]] = set()

    def forget(self) -> None:
        """Drop every index and start a new lock (a forked child: it may be held there)."""
        self._entries, self._lock = OrderedDict(), threading.Lock()

    @property
    def bytes_in_use(self) -> int:
        """What the cached indexes hold now (an estimate, ``VectorIndex.nbytes``)."""
        return sum(entry.index.nbytes for entry in list(self._entries.values()))

    def report(self) -> dict[str, Any]:
        """How semantic search runs, for ``Stats``: in this process, within a budget."""
        return {
            "vector_search": "in-process index",
            "vector_cache_bytes": self.bytes_in_use,
            "vector_cache_budget_bytes": self.budget_bytes,
        }

    def written(self, conn: Connection) -> None:
        """Nothing to do after a write: the history log says what changed."""
        return None

    def nearest(
        self,
        conn: Connection,
        namespace: str,
        model: str,
        vector: Vector,
        limit: int,
        filters: SearchFilters,
    ) -> list[tuple[Memory, float]]:
        """The memories most similar to ``vector`` that pass ``filters``, as ``(memory, cosine)``.

        Active memories come from the cached index; a search that includes the archive
        reads its vectors from disk. Filters may reject candidates, so the candidate
        window widens until the limit is met or the index is exhausted.
        """
        if filters.include_archived:
            index = VectorIndex(len(vector))
            for memory_id, blob in sql_vectors.namespace_vectors(conn, namespace, model):
                index.upsert(memory_id, unpack(blob))
        else:
            index = self.index(conn, namespace, model, len(vector))
        plain = filters == SearchFilters(include_archived=filters.include_archived)
        k = limit if plain else max(limit * 4, 50)
        while True:
            ranked = index.search(vector, k)
            found = sql.by_ids(conn, [memory_id for memory_id, _ in ranked])
            hits = [(found[i], c) for i, c in ranked if i in found and filters.admits(found[i])]
            if len(hits) >= limit or len(ranked) < k:
                return hits[:limit]
            k *= 4

    def index(self, conn: Connection, namespace: str, model: str, dim: int) -> VectorIndex:
        """The index for this namespace and model, as of ``conn``'s snapshot."""
        with self._lock:
            entry = self._entries.get((namespace, model))
            if entry is None or entry.index.dim != dim:
                entry = self._build(conn, namespace, model, dim)
                self._entries[(namespace, model)] = entry
            else:
                self._catch_up(conn, entry, namespace, model)
            self._entries.move_to_end((namespace, model))
            self._evict(keep=(namespace, model))
            return entry.index

    def _evict(self, *, keep: tuple[str, str]) -> None:
        """Drop the least recently searched indexes until the rest fit the budget.

        The index just searched is never dropped: alone over the budget, it stays (and
        the log says so once), since the search needs it anyway.
        """
        sizes = {key: entry.index.nbytes for key, entry in self._entries.items()}
        total = sum(sizes.values())
        for key in list(self._entries):
            if total <= self.budget_bytes:
                return
            if key != keep:
                del self._entries[key]
                total -= sizes[key]
        if total > self.budget_bytes and keep not in self._oversized:
            self._oversized.add(keep)
            log.warning(
                "aimem: the vector index of namespace %r (%d MB) is larger than the vector "
                "cache's budget (%d MB); it is kept, every other one dropped. Raise the budget "
                "(?vector_cache_mb= on a PostgreSQL URL), or add pgvector to the server.",
                keep[0],
                total >> 20,
                self.budget_bytes >> 20,
            )

    def _build(self, conn: Connection, namespace: str, model: str, dim: int) -> _Entry:
        # Same snapshot as the vectors read next.
        cursor = sql_vectors.last_event(conn, namespace if self._scoped_cursor else None)
        seen: set[int] = set()
        if self._scoped_cursor:
            seen = {
                i for i, _, _ in sql_vectors.events_since(conn, namespace, max(0, cursor - OVERLAP))
            }
        index = VectorIndex(dim)
        index.reserve(sql_vectors.count_active_vectors(conn, namespace, model))
        for memory_id, blob in sql_vectors.active_vectors(conn, namespace, model):
            index.upsert(memory_id, unpack(blob))
        return _Entry(index, cursor, seen)

    def _catch_up(self, conn: Connection, entry: _Entry, namespace: str, model: str) -> None:
        behind = OVERLAP if self._scoped_cursor else 0
        events = sql_vectors.events_since(conn, namespace, max(0, entry.cursor - behind))
        events = [e for e in events if e[0] not in entry.seen]
        if not events:
            return
        # Whatever happened to a touched memory, its row now says where it stands: drop
        # it, then take back the vector of each one that is active (pins change nothing).
        touched = list(dict.fromkeys(i for _, i, event in events if event in _MOVES))
        for memory_id in touched:
            entry.index.remove(memory_id)
        for memory_id, blob in sql_vectors.active_vectors(conn, namespace, model, touched):
            entry.index.upsert(memory_id, unpack(blob))
        entry.cursor = max(entry.cursor, events[-1][0])
        if self._scoped_cursor:
            floor = entry.cursor - OVERLAP
            entry.seen = {i for i in entry.seen | {e[0] for e in events} if i > floor}
