"""Pure vector math for semantic search: packing embeddings and an in-memory cosine index.

Vectors are stored unit-length as float32 bytes, so cosine similarity is a dot product
and the whole active set of a namespace is searched with one matrix-vector product.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aimem.exceptions import EmbeddingError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["VectorIndex", "pack", "unit", "units", "unpack"]

if TYPE_CHECKING:
    Vector = npt.NDArray[np.float32]
else:  # numpy is imported on first use: a command that only reads memories never needs it
    Vector = Any


def unit(vector: Sequence[float] | Vector) -> Vector:
    """``vector`` as float32 scaled to length 1 (a zero vector stays zero)."""
    import numpy as np

    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


def units(vectors: Sequence[Sequence[float]], expected: int, embedder: str) -> list[Vector]:
    """An embedder's answer as unit vectors: one per text, one length, finite.

    Raises:
        EmbeddingError: the wrong count, differing or zero lengths, a non-finite value.
    """
    import numpy as np

    if len(vectors) != expected:
        raise EmbeddingError(f"The embedder returned {len(vectors)} vectors for {expected} texts")
    made = [unit(v) for v in vectors]
    lengths = {len(v) for v in made}
    if len(lengths) > 1 or 0 in lengths or not all(np.isfinite(v).all() for v in made):
        raise EmbeddingError(
            f"The embedder {embedder!r} returned vectors of lengths {sorted(lengths)} or "
            "non-finite values: every vector must have one length"
        )
    return made


def pack(vector: Sequence[float] | Vector) -> bytes:
    """Bytes to store: the unit-length float32 vector."""
    return unit(vector).tobytes()


def unpack(blob: bytes) -> Vector:
    """Inverse of ``pack``."""
    import numpy as np

    return np.frombuffer(blob, dtype=np.float32)


class VectorIndex:
    """Memory id -> unit vector, searchable by cosine similarity.

    Rows live in one preallocated matrix (sized once when built, grown by half when
    full); removed rows are masked out and their slots reused, so updates never copy
    the whole set.
    """

    def __init__(self, dim: int) -> None:
        import numpy as np

        self.dim = dim
        self._matrix: Vector = np.zeros((16, dim), dtype=np.float32)
        self._alive = np.zeros(16, dtype=bool)
        self._ids: list[str | None] = [None] * 16
        self._slot: dict[str, int] = {}
        self._free: list[int] = list(range(15, -1, -1))  # popped lowest first
        self._used = 0  # slots below this have been used: the only rows worth scoring

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._slot

    @property
    def nbytes(self) -> int:
        """Roughly what the index holds in memory: the matrix, and about 120 bytes per id.

        An estimate (an id's string and its dict entry), for a cache to weigh indexes by.
        """
        return (
            int(self._matrix.nbytes + self._alive.nbytes)
            + 8 * len(self._ids)
            + 120 * len(self._slot)
        )

    def reserve(self, rows: int) -> None:
        """Make room for ``rows`` vectors in one allocation (a build knows its size)."""
        while len(self._ids) < rows:
            self._grow(rows - len(self._ids))

    def upsert(self, memory_id: str, vector: Vector) -> None:
        """Add or replace one memory's vector."""
        if vector.shape != (self.dim,):
            raise ValueError(f"expected a vector of dimension {self.dim}, got {vector.shape}")
        slot = self._slot.get(memory_id)
        if slot is None:
            if not self._free:
                self._grow()
            slot = self._free.pop()
            self._used = max(self._used, slot + 1)
            self._slot[memory_id] = slot
            self._ids[slot] = memory_id
            self._alive[slot] = True
        self._matrix[slot] = vector

    def remove(self, memory_id: str) -> None:
        """Forget one memory's vector (no error if absent)."""
        slot = self._slot.pop(memory_id, None)
        if slot is not None:
            self._alive[slot] = False
            self._ids[slot] = None
            self._matrix[slot] = 0.0
            self._free.append(slot)

    def search(self, query: Vector, k: int) -> list[tuple[str, float]]:
        """The ``k`` most similar memories as ``(id, cosine)``, best first."""
        import numpy as np

        if k <= 0 or not self._slot:
            return []
        # Scoring reads every row, so it is bound by memory bandwidth: skip unused capacity.
        scores = self._matrix[: self._used] @ unit(query)
        scores[~self._alive[: self._used]] = -np.inf
        k = min(k, len(self._slot))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self._ids[i] or "", float(scores[i])) for i in top]

    def _grow(self, at_least: int = 0) -> None:
        """Add slots: half the current size (or ``at_least``), so growth costs O(1) per row."""
        import numpy as np

        size = len(self._ids)
        extra = max(at_least, size // 2, 16)
        matrix = np.zeros((size + extra, self.dim), dtype=np.float32)
        matrix[:size] = self._matrix
        self._matrix = matrix
        self._alive = np.concatenate([self._alive, np.zeros(extra, dtype=bool)])
        self._ids.extend([None] * extra)
        self._free.extend(range(size + extra - 1, size - 1, -1))
