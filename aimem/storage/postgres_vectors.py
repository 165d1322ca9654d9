"""Search by meaning on the PostgreSQL server, through pgvector's HNSW indexes.

Where the server has pgvector 0.8 or newer (or lets aimem create it), a search no longer
loads a namespace's vectors into each process (``vector_cache.py``): the server finds the
nearest ones itself, and every process and host shares one index.

* ``memory_vectors.embedding vector`` (no typmod: dimensions vary by embedder) mirrors
  the packed float32 ``vector`` bytes. A ``BEFORE INSERT OR UPDATE OF vector`` trigger
  decodes them in SQL (``aimem_embedding``: little-endian IEEE 754, exact), so every
  writer fills it without knowing: a save, an update, an import, a re-embed, and an older
  aimem or a process opened with ``?vectors=memory`` writing to the same database. A
  vector that cannot be decoded is left without one (found by words, and by the
  in-process index) rather than failing a save. Writes pay for it: per 384-float vector
  about 0.3-0.7 ms to decode and 1.5 ms to insert into the HNSW graph (2 loaded cores),
  where the in-process mode pays at search time instead (a namespace's first search
  reads all its vectors, in every process).
* One HNSW index per dimension, a partial expression index
  ``((embedding::vector(384)) vector_cosine_ops) WHERE dim = 384``, made at open for the
  dimensions stored, and after the write that first stores a new one: the trigger raises
  a notice naming an unindexed dimension (it rides back with the statement's answer), and
  once that write commits ``written()``'s upkeep builds the index in a transaction of its
  own, under the schema lock (a re-embed's first batch builds it, later ones add to it).
  Until then, searches of that dimension run exactly on the server. HNSW stops at
  2,000 dimensions: larger vectors are searched exactly, on the server.
* A search joins ``memories`` for the namespace, model, active set and filters, with
  iterative index scans (``hnsw.iterative_scan = relaxed_order``): other namespaces
  share each index, and the scan goes on past what the filters reject. The rows come
  back by distance, then ``seq`` (a stable order for ties), re-sorted after the scan
  since relaxed order may swap near neighbours. Fewer hits than asked for (a small
  namespace among big ones, the scan's tuple cap) means an exact scan instead, so a
  result is never short of what the namespace holds.

``prepare()`` decides at open: ``?vectors=auto`` (the default) uses the extension when
it is installed or can be created, in a savepoint, falling back to the in-process index
on any failure; ``server`` fails the open instead; ``memory`` never touches it. The DDL
runs under the schema's advisory lock, once per database (stamped ``pgvector`` in
``aimem_meta``), and back-fills the vectors stored before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy import BindParameter, Connection, Engine, Float, bindparam, column, event, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError

from aimem.exceptions import StorageError
from aimem.models import Memory
from aimem.storage.postgres_schema import SCHEMA_LOCK
from aimem.storage.schema import UTCDateTime
from aimem.storage.sql import MEMORIES, SearchFilters, memory_of
from aimem.vectors import Vector, unit

__all__ = [
    "MODES",
    "MODE_OPTION",
    "SESSION_SETTINGS",
    "ServerVectors",
    "index_name",
    "mode_of",
    "prepare",
    "watch_notices",
]

log = logging.getLogger("aimem")

#: ``?vectors=``: where search by meaning runs.
MODE_OPTION = "vectors"
MODES = ("auto", "server", "memory")
#: Iterative index scans came with pgvector 0.8.
MIN_VERSION = (0, 8)
#: HNSW indexes ``vector`` columns of up to this many dimensions.
HNSW_MAX_DIM = 2000
#: The stamp of this module's DDL in ``aimem_meta``; bumped when it changes.
REVISION = 2  # 2: the trigger raises a notice (1 set a transaction setting)
_REVISION_KEY = "pgvector"
#: The notice the trigger raises for a dimension lacking an index (then the dimension).
_UNINDEXED_NOTICE = "aimem: no index yet for dimension "
#: Where a pooled connection's record keeps the dimensions its notices named.
_UNINDEXED = "aimem_unindexed_dims"

#: Packed float32 (little-endian) ``{b}`` -> vector, exactly: each word's sign, exponent
#: and mantissa rebuilt in float8 (exact for every float32, subnormals too), then float4.
_DECODING = """ARRAY(
    SELECT CASE WHEN w & 2139095040 = 0 THEN (w & 8388607) * 1.401298464324817e-45::float8
                ELSE ((w & 8388607) | 8388608) * 2.0::float8 ^ (((w >> 23) & 255) - 150) END
           * (1 - 2 * (w >> 31))
    FROM (SELECT get_byte({b}, i) | (get_byte({b}, i + 1) << 8) | (get_byte({b}, i + 2) << 16)
                 | (get_byte({b}, i + 3)::int8 << 24) AS w
          FROM generate_series(0, length({b}) - 4, 4) AS i) AS words)::float4[]::vector"""
#: For the back-fill, one statement over every row.
_DECODE = f"""
CREATE OR REPLACE FUNCTION aimem_embedding(b bytea) RETURNS vector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT {_DECODING.format(b="b")}
$$
"""

_TRIGGER_FUNCTION = f"""
CREATE OR REPLACE FUNCTION aimem_vector_embedding() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    -- Inline, not aimem_embedding(): plpgsql keeps this query's plan for the session,
    -- where a SQL function called per row would be planned again on every call.
    NEW.embedding := {_DECODING.format(b="NEW.vector")};
  EXCEPTION WHEN OTHERS THEN
    -- Not a finite float32 vector (or the extension was dropped): the save still
    -- goes through; the memory is found by words, and by the in-process index.
    RETURN NEW;
  END;
  IF NEW.dim <= {HNSW_MAX_DIM} AND to_regclass(quote_ident(TG_TABLE_SCHEMA) || '.'
      || quote_ident('ix_memory_vectors_hnsw_' || NEW.dim)) IS NULL THEN
    -- Rides back with the statement's answer: the writer learns it at no extra trip.
    -- (USING MESSAGE: a percent sign would read as a driver placeholder.)
    RAISE NOTICE USING MESSAGE = '{_UNINDEXED_NOTICE}' || NEW.dim;
  END IF;
  RETURN NEW;
END $$
"""

_DDL = (
    "ALTER TABLE memory_vectors ADD COLUMN IF NOT EXISTS embedding vector",
    _DECODE,
    _TRIGGER_FUNCTION,
    "DROP TRIGGER IF EXISTS memory_vectors_embedding ON memory_vectors",
    "CREATE TRIGGER memory_vectors_embedding BEFORE INSERT OR UPDATE OF vector "
    "ON memory_vectors FOR EACH ROW EXECUTE FUNCTION aimem_vector_embedding()",
)

#: Whether this database already has this revision's column, function and trigger.
_READY = text(
    "SELECT (SELECT value FROM aimem_meta WHERE key = :key) = :revision "
    "AND to_regprocedure('aimem_embedding(bytea)') IS NOT NULL "
    "AND EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'memory_vectors_embedding' "
    "            AND tgrelid = to_regclass('memory_vectors')) "
    "AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('memory_vectors') "
    "            AND attname = 'embedding' AND NOT attisdropped)"
)
_STAMP = text(
    "INSERT INTO aimem_meta (key, value) VALUES (:key, :revision) "
    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
)
#: What each connection's session runs searches with (``postgres.py`` passes them at
#: connect, so a search needs no ``SET LOCAL`` and no transaction): iterative index scans,
#: which go on past rows the filters (or other namespaces) reject until the page is full,
#: and candidates per step of the scan.
SESSION_SETTINGS = {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": "100"}
_SEARCH = """
SELECT h.distance AS aimem_distance, {columns} FROM (
  SELECT m.seq, {embedding} <=> CAST(:q AS vector({dim})) AS distance
  FROM memory_vectors v JOIN memories m ON m.seq = v.seq
  WHERE v.dim = {dim} AND v.model = :model AND m.namespace = :ns{conditions}
  ORDER BY distance LIMIT :k) AS h
JOIN memories ON memories.seq = h.seq
ORDER BY h.distance, h.seq
"""
_COLUMNS = ", ".join(f"memories.{column.name}" for column in MEMORIES.c)


def watch_notices(engine: Engine) -> None:
    """Keep, on each new connection's record, the dimensions the trigger's notices name."""

    @event.listens_for(engine, "connect")
    def watch(dbapi_connection: Any, record: Any) -> None:
        noted: set[int] = set()
        record.info[_UNINDEXED] = noted

        def heard(notice: Any) -> None:
            message = str(getattr(notice, "message_primary", "") or "")
            if message.startswith(_UNINDEXED_NOTICE):
                tail = message.removeprefix(_UNINDEXED_NOTICE)
                if tail.isdigit():
                    noted.add(int(tail))

        dbapi_connection.add_notice_handler(heard)


def mode_of(parsed: URL) -> tuple[URL, str]:
    """``?vectors=`` off the URL (``auto`` when absent), and the URL without it.

    Raises:
        StorageError: a value other than auto, server or memory.
    """
    raw = parsed.query.get(MODE_OPTION)
    value = (raw[-1] if isinstance(raw, tuple) else raw or "auto").strip().lower()
    if value not in MODES:
        raise StorageError(
            f"?{MODE_OPTION}={value[:20]} in the database URL: use auto, server or memory"
        )
    return parsed.difference_update_query([MODE_OPTION]), value


def index_name(dim: int) -> str:
    """The HNSW index of the vectors with ``dim`` dimensions."""
    return f"ix_memory_vectors_hnsw_{dim}"


def prepare(conn: Connection, mode: str) -> bool:
    """Whether searches run on the server, after making it ready to (in ``conn``'s write).

    ``auto`` turns any failure (no extension, no right to create it, an old version)
    into False and a line in the log, never a failed open.

    Raises:
        StorageError: ``mode`` is ``server`` and the server cannot search.
    """
    if mode == "memory":
        return False
    try:
        with conn.begin_nested():  # a failure leaves the open's transaction usable
            _enable(conn)
    except (DBAPIError, StorageError) as exc:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:160]
        if mode == "server":
            raise StorageError(
                f"?vectors=server needs pgvector {'.'.join(map(str, MIN_VERSION))} or newer "
                f"in the database, and aimem could not use it: {reason}"
            ) from None
        log.info("aimem: searching by meaning in process (pgvector unavailable: %s)", reason)
        return False
    return True


def _enable(conn: Connection) -> None:
    """The extension, then (once per database) the column, trigger, back-fill and indexes."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK})
    version = _version(conn)
    if version is None:
        conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS vector")
        version = _version(conn)
    if version is None or version < MIN_VERSION:
        raise StorageError(f"the vector extension is {version or 'missing'}, 0.8 is needed")
    if conn.execute(text("SELECT to_regtype('vector')")).scalar() is None:
        raise StorageError("the vector extension's schema is not on the search_path")
    params = {"key": _REVISION_KEY, "revision": str(REVISION)}
    if conn.execute(_READY, params).scalar():
        return
    # The back-fill and index builds take as long as the table is big: no timeout.
    conn.exec_driver_sql("SET LOCAL statement_timeout = 0")
    for ddl in _DDL:
        conn.exec_driver_sql(ddl)
    conn.exec_driver_sql(
        "UPDATE memory_vectors SET embedding = aimem_embedding(vector) WHERE embedding IS NULL"
    )
    dims = conn.execute(
        text("SELECT DISTINCT dim FROM memory_vectors WHERE dim <= :top AND embedding IS NOT NULL"),
        {"top": HNSW_MAX_DIM},
    ).scalars()
    for dim in list(dims):
        _create_index(conn, int(dim))
    conn.exec_driver_sql("ANALYZE memory_vectors")  # the planner's estimates, for the index
    conn.execute(_STAMP, params)


def _version(conn: Connection) -> tuple[int, ...] | None:
    found = conn.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'"))
    value = found.scalar()
    if value is None:
        return None
    return tuple(int(part) for part in str(value).split(".")[:2] if part.isdigit())


def _create_indexes(conn: Connection, dims: list[int]) -> None:
    """Indexes for ``dims`` no one built yet, under the schema lock (one builder at a time)."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK})
    conn.exec_driver_sql("SET LOCAL statement_timeout = 0")  # a re-embed's whole batch
    for dim in dims:
        _create_index(conn, dim)  # IF NOT EXISTS: another writer may have built it


def _create_index(conn: Connection, dim: int) -> None:
    """The HNSW index for ``dim``, if no one made it yet (under the schema lock)."""
    conn.exec_driver_sql(
        f"CREATE INDEX IF NOT EXISTS {index_name(dim)} ON memory_vectors "
        f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WHERE dim = {dim}"
    )


class ServerVectors:
    """What ``Backend`` asks of its vector search, answered by the server (pgvector)."""

    #: One statement per search, its settings the session's: no transaction needed.
    needs_snapshot = False

    def forget(self) -> None:
        """Nothing to drop after a fork: every index lives on the server."""

    def report(self) -> dict[str, Any]:
        """How semantic search runs, for ``Stats``."""
        return {"vector_search": "pgvector (HNSW)"}

    def written(self, conn: Connection) -> Callable[[Connection], None] | None:
        """The indexes to build for dimensions this write stored first, or None.

        The trigger said so in notices, which ``watch_notices`` kept on the connection: a
        write of indexed dimensions only costs nothing here. The build runs after the
        write commits, in a transaction of its own (``Backend._run_upkeep``): inside the
        write it waited for other writers' rows while they waited for its lock.
        """
        noted: set[int] = conn.connection.info.get(_UNINDEXED) or set()
        if not noted:
            return None
        dims = sorted(noted)
        noted.clear()
        return lambda upkeep: _create_indexes(upkeep, dims)

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

        Best first, as the in-process index ranks them (cosine = 1 - cosine distance;
        pgvector computes it in float4, so scores may differ in the seventh decimal).
        """
        if limit <= 0:
            return []
        dim = len(vector)
        params: dict[str, Any] = {
            "q": "[" + ",".join(repr(float(x)) for x in unit(vector).tolist()) + "]",
            "model": model,
            "ns": namespace,
            "k": limit,
        }
        hits: list[tuple[Memory, float]] = []
        if dim <= HNSW_MAX_DIM:
            hits = _ranked(conn, f"v.embedding::vector({dim})", dim, filters, params)
        if len(hits) < limit:  # no index, or too few found through it: exactly, on the server
            hits = _ranked(conn, "v.embedding", dim, filters, params)
        return hits


def _ranked(
    conn: Connection, embedding: str, dim: int, filters: SearchFilters, params: dict[str, Any]
) -> list[tuple[Memory, float]]:
    """One search; ``embedding`` cast to ``vector(dim)`` matches the index, bare it cannot."""
    conditions, binds = _conditions(filters)
    query = (
        text(_SEARCH.format(embedding=embedding, dim=dim, conditions=conditions, columns=_COLUMNS))
        .bindparams(*binds)
        .columns(column("aimem_distance", Float), *MEMORIES.c)  # typed: aware timestamps
    )
    hits = []
    for row in conn.execute(query, params).mappings():
        memory, distance = memory_of(row), float(row["aimem_distance"])
        if filters.admits(memory):
            # A zero vector has no direction: pgvector's distance is NaN, in process 0.
            hits.append((memory, 0.0 if distance != distance else 1.0 - distance))
    return hits


def _conditions(filters: SearchFilters) -> tuple[str, list[BindParameter[Any]]]:
    """``filters`` as SQL on ``memories m``, so the index scan goes on past what they reject.

    The same test as ``SearchFilters.admits``, which every hit passes again.
    """
    parts: list[str] = []
    binds: list[BindParameter[Any]] = []
    if not filters.include_archived:
        parts.append("m.archived_at IS NULL")
    if filters.min_score is not None:
        parts.append("m.priority_score >= :min_score")
        binds.append(bindparam("min_score", filters.min_score))
    if filters.user_context is not None:
        parts.append("m.user_context = :user_context")
        binds.append(bindparam("user_context", filters.user_context))
    if filters.created_after is not None:
        parts.append("m.created_at >= :created_after")
        binds.append(bindparam("created_after", filters.created_after, type_=UTCDateTime()))
    if filters.created_before is not None:
        parts.append("m.created_at < :created_before")
        binds.append(bindparam("created_before", filters.created_before, type_=UTCDateTime()))
    return "".join(f" AND {part}" for part in parts), binds
