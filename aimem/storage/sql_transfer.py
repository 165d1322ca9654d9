"""The export format's SQL: reading a namespace to export, and checking and writing an import.

``transfer.py`` owns the format (pure); this module is what touches the tables.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, insert, select

from aimem.storage import sql, sql_vectors
from aimem.storage.schema import SCHEMA_VERSION, utcnow
from aimem.storage.sql_history import VERSION_FIELDS
from aimem.text.keywords import memory_terms
from aimem.transfer.export_file import ExportData, ParsedExport

__all__ = ["conflicts", "export_data", "write_import"]


def export_data(conn: Connection, namespace: str, *, include_history: bool) -> ExportData:
    """Everything ``transfer.export_lines`` writes for a namespace, from one snapshot."""
    memories = sql.memories(
        conn, sql.select_memories().where(sql.m.namespace == namespace).order_by(sql.m.seq)
    )
    vectors = {
        memory_id: (model, dim, bytes(blob))
        for memory_id, model, dim, blob in conn.execute(
            select(sql.m.id, sql.VECTORS.c.model, sql.VECTORS.c.dim, sql.VECTORS.c.vector)
            .join(sql.MEMORIES, sql.VECTORS.c.seq == sql.m.seq)
            .where(sql.m.namespace == namespace)
        )
    }
    keys: dict[str, list[Any]] = {}
    k = sql.KEYS.c
    for memory_id, key, digest, at in conn.execute(
        select(k.memory_id, k.key, k.content_hash, k.created_at)
        .where(k.namespace == namespace)
        .order_by(k.key)
    ):
        keys.setdefault(memory_id, []).append((key, digest, at))
    versions: dict[str, list[Any]] = {}
    v = sql.VERSIONS.c
    for row in conn.execute(
        select(sql.VERSIONS).where(v.namespace == namespace).order_by(v.memory_id, v.version, v.id)
    ).mappings():
        versions.setdefault(row["memory_id"], []).append(
            {"version": row["version"], **{k: row[k] for k in VERSION_FIELDS}}
            | {"replaced_at": row["replaced_at"]}
        )
    h = sql.HISTORY.c
    history = (
        [
            (memory_id, event, int(version), at, detail)
            for memory_id, event, version, at, detail in conn.execute(
                select(h.memory_id, h.event, h.version, h.at, h.detail)
                .where(h.namespace == namespace)
                .order_by(h.id)
            )
        ]
        if include_history
        else []
    )
    core = conn.execute(
        select(sql.CORE.c.text, sql.CORE.c.updated_at).where(sql.CORE.c.namespace == namespace)
    ).first()
    return ExportData(
        namespace=namespace,
        include_history=include_history,
        schema_version=SCHEMA_VERSION,
        memories=memories,
        vectors=vectors,
        keys=keys,
        versions=versions,
        history=history,
        core_text="" if core is None else core[0],
        core_updated_at=None if core is None else core[1],
    )


def conflicts(
    conn: Connection,
    namespace: str,
    parsed: ParsedExport,
    embedder: tuple[str, int | None] | None = None,
) -> list[str]:
    """What in the database would clash with the file: ids, keys, duplicates, dimensions.

    ``embedder`` is the importing store's ``(name, dim)``: vectors of that name must have
    its dimension, as must vectors of a model the namespace already holds.
    """
    problems: list[str] = []
    ids = [m.id for m in parsed.memories]
    for start in range(0, len(ids), 500):
        taken = conn.execute(select(sql.m.id).where(sql.m.id.in_(ids[start : start + 500])))
        problems += [f"memory {i} already exists in this database" for (i,) in taken]
    keys = [k.key for m in parsed.memories for k in m.idempotency_keys]
    for start in range(0, len(keys), 500):
        taken = conn.execute(
            select(sql.KEYS.c.key).where(
                sql.KEYS.c.namespace == namespace, sql.KEYS.c.key.in_(keys[start : start + 500])
            )
        )
        problems += [f"idempotency key {k!r} is already used here" for (k,) in taken]
    incoming = {sql.content_hash(m.content): m.id for m in parsed.memories if m.archived_at is None}
    for digest in sql.active_hashes(conn, namespace, list(incoming)):
        problems.append(f"memory {incoming[digest]}: an active memory with the same content exists")
    dims = {m.vector.model: m.vector.dim for m in parsed.memories if m.vector is not None}
    for model, dim in dims.items():
        stored = sql_vectors.vector_dim(conn, namespace, model)
        configured = embedder[1] if embedder is not None and embedder[0] == model else None
        for expected in (stored, configured):
            if expected is not None and expected != dim:
                problems.append(
                    f"the file's vectors from embedder {model!r} have {dim} dimensions, this "
                    f"store's have {expected}: import into a store with that embedder, or "
                    "re-embed one side (aimem reembed) first"
                )
                break
    current_core = sql.get_core(conn, namespace)
    if parsed.core is not None and current_core and current_core != parsed.core.text:
        problems.append("this namespace already has a different core text; clear it first")
    return problems


# -- import: write ---------------------------------------------------------------------


#: Memories per INSERT statement on import.
_BATCH = 500


def _insert_batch(conn: Connection, namespace: str, memories: Sequence[Any]) -> None:
    """Insert memories and their vectors, a few statements for the whole batch.

    One statement per memory fired PostgreSQL's per-statement triggers once per memory,
    each updating the same counter rows again inside one transaction: every update walks
    the row's earlier versions, so a 100,000-memory import slowed to a crawl (quadratic).
    """
    rows = [
        {
            **m.model_dump(exclude={"kind", "vector", "idempotency_keys", "previous_versions"}),
            "namespace": namespace,
            "content_hash": sql.content_hash(m.content),
            "terms": memory_terms(m.content, m.interpreted_content, m.recall_terms, m.user_context),
        }
        for m in memories
    ]
    seqs = conn.execute(
        insert(sql.MEMORIES).returning(sql.m.seq, sort_by_parameter_order=True), rows
    ).scalars()
    vectors = [
        {
            "seq": seq,
            "model": m.vector.model,
            "dim": m.vector.dim,
            "vector": base64.b64decode(m.vector.data),
        }
        for m, seq in zip(memories, list(seqs), strict=True)
        if m.vector is not None
    ]
    if vectors:
        conn.execute(insert(sql.VECTORS), vectors)


def write_import(conn: Connection, namespace: str, parsed: ParsedExport) -> list[str]:
    """Write a validated export into ``namespace``; returns the imported memory ids.

    Inside the caller's transaction. With no history in the file, each memory gets
    one ``import`` event, so other processes' caches still see it arrive.
    """
    assert parsed.core is not None and not parsed.errors
    if parsed.core.text or parsed.core.updated_at is not None:
        sql.set_core(conn, namespace, parsed.core.text)
        if parsed.core.updated_at is not None:
            conn.execute(
                sql.CORE.update()
                .where(sql.CORE.c.namespace == namespace)
                .values(updated_at=parsed.core.updated_at)
            )
    ids: list[str] = []
    for start in range(0, len(parsed.memories), _BATCH):
        _insert_batch(conn, namespace, parsed.memories[start : start + _BATCH])
    for m in parsed.memories:
        if m.previous_versions:
            conn.execute(
                insert(sql.VERSIONS),
                [
                    {**v.model_dump(), "memory_id": m.id, "namespace": namespace}
                    for v in m.previous_versions
                ],
            )
        for key in m.idempotency_keys:
            conn.execute(
                insert(sql.KEYS),
                {
                    "namespace": namespace,
                    "key": key.key,
                    "memory_id": m.id,
                    "content_hash": key.content_hash,
                    "created_at": key.created_at,
                },
            )
        ids.append(m.id)
    events: Sequence[dict[str, Any]] = [
        {**e.model_dump(exclude={"kind"}), "namespace": namespace} for e in parsed.history
    ]
    if not parsed.history and ids:
        now = utcnow()
        events = [
            {"memory_id": m.id, "namespace": namespace, "event": "import", "version": m.version}
            | {"at": now, "detail": "{}"}
            for m in parsed.memories
        ]
    if events:
        conn.execute(insert(sql.HISTORY), list(events))
    return ids
