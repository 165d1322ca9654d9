"""Storage: the only package that touches a database.

``open_backend(url)`` picks the backend by the URL's scheme. ``base.Backend`` is the
seam: every unit of work, written once over the portable statements (``schema``,
``sql``, ``sql_capacity``, ``sql_vectors``, ``sql_transfer``); a dialect fills only
its hooks (``sqlite`` with ``sqlite_file``, ``sqlite_schema`` and ``sqlite_search``;
``postgres`` with ``postgres_schema`` and ``postgres_search``).
``vector_cache`` keeps each process's in-memory vector index in step with the history.
"""

from __future__ import annotations

from aimem.storage.base import Backend, NewMemory, Order, SearchFilters, check_version, content_hash

__all__ = [
    "Backend",
    "NewMemory",
    "Order",
    "SearchFilters",
    "check_version",
    "content_hash",
    "open_backend",
]


def open_backend(url: str) -> Backend:
    """The backend for ``url``, opened; nothing is written until the first write.

    Raises:
        StorageError: a URL no backend serves, or a database aimem must not touch.
    """
    # Each backend is imported when a URL asks for it (psycopg only for PostgreSQL).
    scheme = url.partition("://")[0].lower() if isinstance(url, str) else ""
    if scheme in ("postgresql", "postgresql+psycopg", "postgres"):
        from aimem.storage.postgres import PostgresBackend

        return PostgresBackend(url)
    from aimem.storage.sqlite import SQLiteBackend

    return SQLiteBackend(url)
