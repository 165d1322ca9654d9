"""A store's data in and out: export, import, re-embedding, backup.

The operations of ``AsyncMemoryStore`` that move a namespace's data as a whole (and
the vectors' re-computation), kept apart from the everyday save/search/edit ones in
``memory.py``. They share the store's parts and plumbing (``assembly.StoreParts``).
"""

from __future__ import annotations

import builtins
import os
import uuid
from collections.abc import Callable
from pathlib import Path

from . import transfer
from .assembly import StoreParts
from .exceptions import ValidationError
from .models import ExportReport, ImportReport, Memory
from .reembedding import reembed_namespace

__all__ = ["Portability"]


class Portability(StoreParts):
    """Export, import, re-embed and back up one namespace (see the module docstring)."""

    # -- export, import, backup ----------------------------------------------------------

    async def export_to(
        self, path: str | os.PathLike[str], *, include_history: bool = True
    ) -> ExportReport:
        """Write this namespace to a checksummed JSON Lines file (archived memories too).

        Lossless: every field of every memory (with its vector and idempotency keys),
        the core and, by default, the history. The file appears complete or not at all.

        Raises:
            FileExistsError: ``path`` exists; an export never overwrites anything.
        """
        target = Path(path)
        if target.exists():
            raise FileExistsError(f"{target} already exists: choose a new file for the export")
        lines = await self._db_call(
            self._db.export_lines, self.namespace, include_history=bool(include_history)
        )
        await self._db_call(transfer.write_new_file, target, "".join(lines).encode("utf-8"))
        trailer = transfer.Trailer.model_validate_json(lines[-1])
        counts = transfer.Header.model_validate_json(lines[0]).counts
        return ExportReport(
            path=str(target),
            memories=counts.memories,
            history=counts.history,
            sha256=trailer.sha256,
        )

    async def import_from(
        self,
        path: str | os.PathLike[str],
        dry_run: bool = False,
        *,
        progress: Callable[[int, int], object] | None = None,
    ) -> ImportReport:
        """Load an ``export_to`` file into this namespace, all or nothing.

        The whole file is validated first (checksum, schema, bounds, counts) and checked
        against the database (ids, keys and active duplicates must be new); only then is
        it written, in one transaction, after which the capacity manager runs. With
        ``dry_run=True`` nothing is written and the report says what was found.
        ``progress(done, total)`` (memories) is called once the file is read and checked
        (0 of them), and again when the transaction is done (all of them).

        Raises:
            ValidationError: the file is damaged, tampered or clashes (not in a dry run,
                where the problems are in the report); nothing was written.
        """
        parsed = await self._db_call(
            transfer.parse_export, Path(path), max_content_chars=self.settings.max_content_chars
        )
        archived: builtins.list[Memory] = []
        total = len(parsed.memories)
        if progress is not None and not parsed.errors:
            progress(0, total)
        if not parsed.errors:
            _, archived = await self._db_call(
                self._db.import_parsed,
                self.namespace,
                parsed,
                self.policy,
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

    async def reembed(
        self,
        *,
        batch_size: int = 64,
        progress: Callable[[int, int], object] | None = None,
    ) -> int:
        """Re-compute every memory's vector (archived ones too) with this store's embedder.

        The way out after changing embedders (another model, or the same name with
        another dimension): all vectors of the namespace are replaced in one transaction,
        so search never mixes the two. ``progress(done, total)`` is called after each
        batch. Returns how many memories were embedded.

        Raises:
            ValidationError: the store has no embedder, or a bad ``batch_size``.
            EmbeddingError: the embedder failed; the stored vectors are unchanged.
        """
        embedder = self._retriever.embedder
        if embedder is None:
            raise ValidationError(
                "reembed needs an embedder: open the store with embedder=aimem.LocalEmbedder() "
                "(or another) and call reembed() again"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValidationError("batch_size must be a positive integer")
        done = await reembed_namespace(
            self._db, self._db_call, self.namespace, embedder, batch_size, progress
        )
        self._retriever.forget_dimension()
        return done

    async def backup(self, path: str | os.PathLike[str]) -> Path:
        """Copy the whole database file (every namespace) with SQLite's online backup API.

        Safe while other threads and processes write: never a copy of a live file.

        Raises:
            FileExistsError: ``path`` exists.
        """
        target = Path(path)
        if target.exists():
            raise FileExistsError(f"{target} already exists: choose a new file for the backup")
        partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.partial")
        try:
            await self._db_call(self._db.backup, partial)
            await self._db_call(transfer.link_new, partial, target)
        finally:
            partial.unlink(missing_ok=True)
        return target
