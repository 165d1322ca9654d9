"""Vectors' SQL: reading a namespace's vectors, replacing them, and the change cursor.

The in-memory index (``vector_cache.py``) is built from these and kept in step with
the history log through ``events_since``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sqlalchemy import Connection, func, select
from sqlalchemy import delete as sql_delete

from aimem.storage.schema import utcnow
from aimem.storage.sql import (
    HISTORY,
    MEMORIES,
    VECTORS,
    insert_vector_statement,
    m,
    of_namespace,
    record,
)


def active_vectors(
    conn: Connection, namespace: str, model: str, ids: Sequence[str] | None = None
) -> Iterator[tuple[str, bytes]]:
    """``(memory id, packed vector)`` of active memories embedded by ``model``, streamed.

    Streamed rather than listed: a 100k-memory namespace's vectors are 150 MB, and a
    list would hold a second copy while the index is built.
    """
    query = (
        select(m.id, VECTORS.c.vector)
        .join_from(MEMORIES, VECTORS, VECTORS.c.seq == m.seq)
        .where(m.archived_at.is_(None), VECTORS.c.model == model)
    )
    if ids is None:
        query = query.where(m.namespace == namespace)
    else:
        query = query.where(m.id.in_(list(ids)), of_namespace(namespace))
    for memory_id, blob in conn.execute(query):
        yield memory_id, bytes(blob)


def count_active_vectors(conn: Connection, namespace: str, model: str) -> int:
    """How many active memories of a namespace have a vector from ``model``."""
    query = (
        select(func.count())
        .select_from(MEMORIES)
        .join(VECTORS, VECTORS.c.seq == m.seq)
        .where(m.namespace == namespace, m.archived_at.is_(None), VECTORS.c.model == model)
    )
    return int(conn.execute(query).scalar_one())


def vector_models(conn: Connection, namespace: str) -> dict[str, int]:
    """How many active memories of a namespace have a vector, per embedder name."""
    query = (
        select(VECTORS.c.model, func.count())
        .join_from(MEMORIES, VECTORS, VECTORS.c.seq == m.seq)
        .where(m.namespace == namespace, m.archived_at.is_(None))
        .group_by(VECTORS.c.model)
    )
    return {str(model): int(n) for model, n in conn.execute(query)}


def vector_dim(conn: Connection, namespace: str, model: str) -> int | None:
    """The dimension of the namespace's vectors from ``model`` (all share one), if any."""
    query = (
        select(VECTORS.c.dim)
        .join_from(MEMORIES, VECTORS, VECTORS.c.seq == m.seq)
        .where(m.namespace == namespace, VECTORS.c.model == model)
        .limit(1)
    )
    found = conn.execute(query).scalar_one_or_none()
    return None if found is None else int(found)


def contents_to_embed(
    conn: Connection, namespace: str, model: str, *, missing_only: bool
) -> list[tuple[str, int, str]]:
    """``(id, seq, content)`` of all memories (archived too), or only those lacking one."""
    query = select(m.id, m.seq, m.content).where(m.namespace == namespace).order_by(m.seq)
    if missing_only:
        has = select(VECTORS.c.seq).where(VECTORS.c.seq == m.seq, VECTORS.c.model == model)
        query = query.where(~has.exists())
    return [(str(i), int(seq), str(c)) for i, seq, c in conn.execute(query)]


def replace_vectors(
    conn: Connection,
    namespace: str,
    model: str,
    vectors: Sequence[tuple[str, int, bytes]],
    *,
    clear: bool,
) -> int:
    """Store ``(id, seq, packed vector)`` as the memories' vectors from ``model``.

    With ``clear``, every vector of the namespace goes first (another model's too), so
    afterwards the namespace holds vectors of one embedder only. Each memory gets a
    ``reembed`` history event, so other processes' vector indexes catch up.
    """
    if clear:
        conn.execute(
            sql_delete(VECTORS).where(
                VECTORS.c.seq.in_(select(m.seq).where(m.namespace == namespace))
            )
        )
    else:
        seqs = [seq for _, seq, _ in vectors]
        for start in range(0, len(seqs), 500):
            conn.execute(sql_delete(VECTORS).where(VECTORS.c.seq.in_(seqs[start : start + 500])))
    if vectors:
        conn.execute(
            insert_vector_statement,
            [
                {"seq": seq, "model": model, "dim": len(blob) // 4, "vector": blob}
                for _, seq, blob in vectors
            ],
        )
        ids = [i for i, _, _ in vectors]
        now = utcnow()
        for start in range(0, len(ids), 500):
            rows = conn.execute(
                select(m.id, m.version).where(m.id.in_(ids[start : start + 500]))
            ).all()
            record(conn, namespace, [(str(i), int(v)) for i, v in rows], "reembed", now)
    return len(vectors)


def namespace_vectors(conn: Connection, namespace: str, model: str) -> list[tuple[str, bytes]]:
    """``(memory id, packed vector)`` of every memory of a namespace, archived ones too."""
    query = (
        select(m.id, VECTORS.c.vector)
        .join_from(MEMORIES, VECTORS, VECTORS.c.seq == m.seq)
        .where(m.namespace == namespace, VECTORS.c.model == model)
    )
    return [(i, bytes(v)) for i, v in conn.execute(query)]


def last_event(conn: Connection, namespace: str | None = None) -> int:
    """Id of the newest history event (0 for none): a cursor into what changed since.

    With ``namespace``, the newest of that namespace's events only (see ``vector_cache``).
    """
    query = select(func.max(HISTORY.c.id))
    if namespace is not None:
        query = query.where(HISTORY.c.namespace == namespace)
    return int(conn.execute(query).scalar_one_or_none() or 0)


def events_since(conn: Connection, namespace: str, after: int) -> list[tuple[int, str, str]]:
    """``(event id, memory id, event)`` of a namespace after event ``after``, oldest first."""
    query = (
        select(HISTORY.c.id, HISTORY.c.memory_id, HISTORY.c.event)
        .where(HISTORY.c.id > after, HISTORY.c.namespace == namespace)
        .order_by(HISTORY.c.id)
    )
    return [(int(i), str(mid), str(e)) for i, mid, e in conn.execute(query)]
