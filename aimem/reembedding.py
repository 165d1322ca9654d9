"""Re-computing a namespace's vectors with another embedder: the way out of a mismatch.

Vectors are embedded outside any transaction, then all of the namespace's vectors are
replaced in one; memories saved by others meanwhile get theirs in a further round.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from aimem.embeddings import Embedder
from aimem.exceptions import EmbeddingError
from aimem.storage import Backend
from aimem.vectors import Vector, pack, units

__all__ = ["Progress", "reembed_namespace"]

log = logging.getLogger("aimem")

Progress = Callable[[int, int], object]
DbCall = Callable[..., Awaitable[Any]]


async def reembed_namespace(
    db: Backend,
    db_call: DbCall,
    namespace: str,
    embedder: Embedder,
    batch_size: int,
    progress: Progress | None,
) -> int:
    """Embed every memory of ``namespace`` (archived too) again; returns how many.

    The first round replaces all the namespace's vectors (another embedder's too) in one
    transaction; later rounds add those saved meanwhile. A zero vector has no direction,
    so none is stored for it (the memory is found by words).
    """
    import numpy as np

    done = 0
    clear = True
    attempted: set[str] = set()
    while True:
        rows = await db_call(db.contents_to_embed, namespace, embedder.name, missing_only=not clear)
        rows = [row for row in rows if row[0] not in attempted]
        if not rows and not clear:
            break
        attempted.update(i for i, _, _ in rows)
        vectors = await _embed_all(embedder, [c for _, _, c in rows], batch_size, progress)
        await db_call(
            db.replace_vectors,
            namespace,
            embedder.name,
            [(i, seq, pack(v)) for (i, seq, _), v in zip(rows, vectors, strict=True) if np.any(v)],
            clear=clear,
        )
        done += len(rows)
        clear = False
    log.info("aimem: re-embedded %d memories with %s", done, embedder.name)
    return done


async def _embed_all(
    embedder: Embedder, texts: Sequence[str], batch_size: int, progress: Progress | None
) -> list[Vector]:
    """Unit vectors for ``texts``, in batches, all of one finite length."""
    vectors: list[Vector] = []
    for start in range(0, len(texts), batch_size):
        batch = list(texts[start : start + batch_size])
        vectors += units(await embedder.embed(batch), len(batch), embedder.name)
        if progress is not None:
            progress(len(vectors), len(texts))
    if len({len(v) for v in vectors}) > 1:
        raise EmbeddingError(
            f"The embedder {embedder.name!r} changed its vectors' length between batches; "
            "nothing was changed"
        )
    return vectors
