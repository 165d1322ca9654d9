"""A store's export, import, re-embedding and backup: one namespace in and out of files.

``AsyncMemoryStore`` holds one ``Portability`` and forwards ``export_to``, ``import_from``,
``reembed`` and ``backup`` to it. It gets the store's backend, its way of running a
database call off the event loop, the namespace and the retriever (whose embedder the
vectors must match); it asks the store back only for the capacity policy and to report
what an import archived.
"""

from __future__ import annotations

import builtins
import os
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aimem.capacity import CapacityPolicy
from aimem.exceptions import ValidationError
from aimem.models import ExportReport, ImportReport, Memory
from aimem.reembedding import reembed_namespace
from aimem.transfer import export_file
from aimem.transfer.lines import Header, Trailer

if TYPE_CHECKING:
    from aimem.retrieval.retriever import Retriever
    from aimem.storage.base import Backend

__all__ = ["Portability"]

DbCall = Callable[..., Awaitable[Any]]


class Portability:
    """Export, import, re-embed and back up one namespace of one backend."""

    def __init__(
        self,
        db: Backend,
        db_call: DbCall,
        namespace: str,
        retriever: Retriever,
        policy: Callable[[], CapacityPolicy],
        report: Callable[[builtins.list[Memory]], None],
        max_content_chars: Callable[[], int],
    ) -> None:
        self._db = db
        self._db_call = db_call
        self._namespace = namespace
        self._retriever = retriever
        self._policy = policy
        self._report = report
        self._max_content_chars = max_content_chars

    async def export_to(self, path: str | os.PathLike[str], include_history: bool) -> ExportReport:
        """Write the namespace to a new checksummed JSON Lines file (``export_to``)."""
        target = Path(path)
        if target.exists():
            raise FileExistsError(f"{target} already exists: choose a new file for the export")
        lines = await self._db_call(
            self._db.export_lines, self._namespace, include_history=bool(include_history)
        )
        await self._db_call(export_file.write_new_file, target, "".join(lines).encode("utf-8"))
        trailer = Trailer.model_validate_json(lines[-1])
        counts = Header.model_validate_json(lines[0]).counts
        return ExportReport(
            path=str(target),
            memories=counts.memories,
            history=counts.history,
            sha256=trailer.sha256,
        )

    async def import_from(
        self,
        path: str | os.PathLike[str],
        dry_run: bool,
        progress: Callable[[int, int], object] | None,
    ) -> ImportReport:
        """Check a whole export file, then write it in one transaction (``import_from``)."""
        parsed = await self._db_call(
            export_file.parse_export, Path(path), max_content_chars=self._max_content_chars()
        )
        archived: builtins.list[Memory] = []
        total = len(parsed.memories)
        if progress is not None and not parsed.errors:
            progress(0, total)
        if not parsed.errors:
            _, archived = await self._db_call(
                self._db.import_parsed,
                self._namespace,
                parsed,
                self._policy(),
                dry_run=dry_run,
                embedder=self._embedder_identity(),
            )
        report = ImportReport(
            ok=not parsed.errors,
            dry_run=bool(dry_run),
            errors=parsed.errors,
            memories=len(parsed.memories),
            history=len(parsed.history),
            archived=archived,
            problems=parsed.error_count,
        )
        if progress is not None and not parsed.errors:
            progress(total, total)
        if parsed.errors and not dry_run:
            first, count = parsed.errors[0], report.problems
            where = f"{count} problems, the first: {first}" if count > 1 else first
            raise ValidationError(f"Import refused, nothing was written ({where})")
        self._report(archived)
        return report

    def _embedder_identity(self) -> tuple[str, int | None] | None:
        """``(name, dim)`` of the embedder, for checking an import's vectors against it."""
        embedder = self._retriever.embedder
        return None if embedder is None else (embedder.name, embedder.dim)

    async def reembed(self, batch_size: int, progress: Callable[[int, int], object] | None) -> int:
        """Every vector of the namespace again, in one transaction (``reembed``)."""
        embedder = self._retriever.embedder
        if embedder is None:
            raise ValidationError(
                "reembed needs an embedder: open the store with embedder=aimem.LocalEmbedder() "
                "(or another) and call reembed() again"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValidationError("batch_size must be a positive integer")
        done = await reembed_namespace(
            self._db, self._db_call, self._namespace, embedder, batch_size, progress
        )
        self._retriever.forget_dimension()
        return done

    async def backup(self, path: str | os.PathLike[str]) -> Path:
        """Copy the whole database file with SQLite's online backup API (``backup``)."""
        target = Path(path)
        if target.exists():
            raise FileExistsError(f"{target} already exists: choose a new file for the backup")
        partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.partial")
        try:
            await self._db_call(self._db.backup, partial)
            await self._db_call(export_file.link_new, partial, target)
        finally:
            partial.unlink(missing_ok=True)
        return target
