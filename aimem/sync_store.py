"""``MemoryStore``: the synchronous twin of ``AsyncMemoryStore``.

Every method forwards to the async store on aimem's private background loop
(``loop.py``), so it works in scripts and inside a running event loop (Jupyter), and
both twins share every decision; a parity test compares their signatures.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from aimem.embeddings import Embedder
from aimem.ids import DISPLAY_PREFIX
from aimem.judges.base import Judge
from aimem.loop import on_sync_loop, run_sync
from aimem.models import (
    ExportReport,
    HistoryEvent,
    ImportReport,
    Interpretation,
    Memory,
    PruneReport,
    SaveReport,
    SearchHit,
    Stats,
)
from aimem.retrieval.retriever import Mode
from aimem.saving.messages import Messages
from aimem.settings import Settings
from aimem.storage import Order
from aimem.store import ArchiveCallback, AsyncMemoryStore

__all__ = ["MemoryStore", "on_sync_loop", "run_sync"]


class MemoryStore:
    """Long-term memory that interprets, scores and forgets (synchronous API).

    Works in scripts and inside a running event loop (Jupyter): calls run on
    aimem's own background loop.

    Example:
        >>> import aimem, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "agent.db")
        >>> with aimem.MemoryStore(f"sqlite:///{path}", judge=aimem.HeuristicJudge(),
        ...                        max_memories=100) as store:
        ...     m = store.save("User prefers Rust for systems work", user_context="syui")
        ...     [hit.memory.id for hit in store.search("Rust")] == [m.id]
        True
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        judge: Judge | None = None,
        embedder: Embedder | str | None = None,
        settings: Settings | None = None,
        namespace: str = "default",
        on_archive: ArchiveCallback | None = None,
        **overrides: Any,
    ) -> None:
        self._async = AsyncMemoryStore(
            database_url,
            judge=judge,
            embedder=embedder,
            settings=settings,
            namespace=namespace,
            on_archive=on_archive,
            **overrides,
        )

    @property
    def settings(self) -> Settings:
        """The settings in force."""
        return self._async.settings

    @property
    def namespace(self) -> str:
        """The namespace every call is scoped to."""
        return self._async.namespace

    @property
    def judge(self) -> Judge:
        """The judge that interprets saves."""
        return self._async.judge

    @property
    def embedder(self) -> Embedder | None:
        """The embedder behind semantic search, or None for keyword search only."""
        return self._async.embedder

    @property
    def database_url(self) -> str:
        """Where this store keeps its memories."""
        return self._async.database_url

    @property
    def core(self) -> str:
        """The core text (read and assign)."""
        return self.get_core()

    @core.setter
    def core(self, text: str) -> None:
        self.set_core(text)

    def close(self) -> None:
        """Close the database and any judge client this store created."""
        run_sync(self._async.aclose())

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def save(  # noqa: D102
        self,
        content: str,
        *,
        user_context: str | None = None,
        interpretation: Interpretation | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
        return run_sync(
            self._async.save(
                content,
                user_context=user_context,
                interpretation=interpretation,
                idempotency_key=idempotency_key,
            )
        )

    def save_with_report(  # noqa: D102
        self,
        content: str,
        *,
        user_context: str | None = None,
        interpretation: Interpretation | None = None,
        idempotency_key: str | None = None,
    ) -> SaveReport:
        return run_sync(
            self._async.save_with_report(
                content,
                user_context=user_context,
                interpretation=interpretation,
                idempotency_key=idempotency_key,
            )
        )

    def save_many(  # noqa: D102
        self, contents: Sequence[str], *, user_context: str | None = None
    ) -> list[Memory]:
        return run_sync(self._async.save_many(contents, user_context=user_context))

    def save_many_with_report(  # noqa: D102
        self, contents: Sequence[str], *, user_context: str | None = None
    ) -> SaveReport:
        return run_sync(self._async.save_many_with_report(contents, user_context=user_context))

    def save_conversation(  # noqa: D102
        self, messages: Messages, *, user_context: str | None = None
    ) -> list[Memory]:
        return run_sync(self._async.save_conversation(messages, user_context=user_context))

    def save_conversation_with_report(  # noqa: D102
        self, messages: Messages, *, user_context: str | None = None
    ) -> SaveReport:
        return run_sync(
            self._async.save_conversation_with_report(messages, user_context=user_context)
        )

    def update(  # noqa: D102
        self,
        memory_id: str,
        content: str,
        *,
        user_context: str | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        return run_sync(
            self._async.update(
                memory_id, content, user_context=user_context, expected_version=expected_version
            )
        )

    def update_with_report(  # noqa: D102
        self,
        memory_id: str,
        content: str,
        *,
        user_context: str | None = None,
        expected_version: int | None = None,
    ) -> SaveReport:
        return run_sync(
            self._async.update_with_report(
                memory_id, content, user_context=user_context, expected_version=expected_version
            )
        )

    def reinterpret_pending(  # noqa: D102
        self,
        limit: int | None = None,
        *,
        progress: Callable[[int, int], object] | None = None,
    ) -> builtins.list[Memory]:
        return run_sync(self._async.reinterpret_pending(limit, progress=progress))

    def compress(self, items: Sequence[str], *, allow_empty: bool = False) -> list[Memory]:  # noqa: D102
        return run_sync(self._async.compress(items, allow_empty=allow_empty))

    def compress_with_report(  # noqa: D102
        self, items: Sequence[str], *, allow_empty: bool = False
    ) -> SaveReport:
        return run_sync(self._async.compress_with_report(items, allow_empty=allow_empty))

    def get(self, memory_id: str) -> Memory:  # noqa: D102
        return run_sync(self._async.get(memory_id))

    def resolve_id(self, memory_id: str) -> str:  # noqa: D102
        return run_sync(self._async.resolve_id(memory_id))

    def short_ids(  # noqa: D102
        self, ids: Iterable[str], *, min_length: int = DISPLAY_PREFIX
    ) -> dict[str, str]:
        return run_sync(self._async.short_ids(ids, min_length=min_length))

    def list(  # noqa: D102
        self,
        min_score: float | None = None,
        limit: int | None = None,
        order: Order = "priority",
        include_archived: bool = False,
    ) -> list[Memory]:
        return run_sync(self._async.list(min_score, limit, order, include_archived))

    def search(  # noqa: D102
        self,
        query: str,
        limit: int = 10,
        min_score: float | None = None,
        explain: bool = False,
        include_archived: bool = False,
        *,
        mode: Mode = "hybrid",
        user_context: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        min_relevance: float | None = None,
    ) -> builtins.list[SearchHit]:
        return run_sync(
            self._async.search(
                query,
                limit,
                min_score,
                explain,
                include_archived,
                mode=mode,
                user_context=user_context,
                created_after=created_after,
                created_before=created_before,
                min_relevance=min_relevance,
            )
        )

    def stats(self) -> Stats:  # noqa: D102
        return run_sync(self._async.stats())

    def get_core(self) -> str:  # noqa: D102
        return run_sync(self._async.get_core())

    def set_core(self, text: str) -> None:  # noqa: D102
        run_sync(self._async.set_core(text))

    def context(self, max_chars: int = 4000, query: str | None = None) -> str:  # noqa: D102
        return run_sync(self._async.context(max_chars, query))

    def delete(self, memory_id: str) -> None:  # noqa: D102
        run_sync(self._async.delete(memory_id))

    def pin(self, memory_id: str) -> Memory:  # noqa: D102
        return run_sync(self._async.pin(memory_id))

    def unpin(self, memory_id: str) -> Memory:  # noqa: D102
        return run_sync(self._async.unpin(memory_id))

    def prune(self, dry_run: bool = False) -> PruneReport:  # noqa: D102
        return run_sync(self._async.prune(dry_run))

    def restore(self, memory_id: str) -> Memory:  # noqa: D102
        return run_sync(self._async.restore(memory_id))

    def restore_with_report(self, memory_id: str) -> SaveReport:  # noqa: D102
        return run_sync(self._async.restore_with_report(memory_id))

    def history(self, memory_id: str) -> builtins.list[HistoryEvent]:  # noqa: D102
        return run_sync(self._async.history(memory_id))

    def export_to(  # noqa: D102
        self, path: str | os.PathLike[str], *, include_history: bool = True
    ) -> ExportReport:
        return run_sync(self._async.export_to(path, include_history=include_history))

    def import_from(  # noqa: D102
        self,
        path: str | os.PathLike[str],
        dry_run: bool = False,
        *,
        progress: Callable[[int, int], object] | None = None,
    ) -> ImportReport:
        return run_sync(self._async.import_from(path, dry_run, progress=progress))

    def reembed(  # noqa: D102
        self,
        *,
        batch_size: int = 64,
        progress: Callable[[int, int], object] | None = None,
    ) -> int:
        return run_sync(self._async.reembed(batch_size=batch_size, progress=progress))

    def backup(self, path: str | os.PathLike[str]) -> Path:  # noqa: D102
        return run_sync(self._async.backup(path))


# The sync twin shares its docs with the async one: one text, kept in one place.
for _name in (
    "save",
    "save_with_report",
    "save_many",
    "save_many_with_report",
    "save_conversation",
    "save_conversation_with_report",
    "update",
    "reinterpret_pending",
    "compress",
    "compress_with_report",
    "get",
    "list",
    "search",
    "stats",
    "get_core",
    "set_core",
    "context",
    "delete",
    "pin",
    "unpin",
    "prune",
    "restore",
    "export_to",
    "import_from",
    "reembed",
    "backup",
):
    getattr(MemoryStore, _name).__doc__ = getattr(AsyncMemoryStore, _name).__doc__
del _name
