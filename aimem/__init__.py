"""aimem: long-term memory for AI agents that interprets, prioritises and forgets.

Example:
    >>> import aimem
    >>> store = aimem.MemoryStore("sqlite:///agent.db")   # doctest: +SKIP
    >>> store.save("User prefers Rust for systems work")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from .embeddings import Embedder, LocalEmbedder, OpenAIEmbedder
from .exceptions import (
    AimemError,
    AmbiguousIdError,
    ConflictError,
    EmbedderMismatchError,
    EmbeddingError,
    JudgeError,
    NotFoundError,
    StorageError,
    ValidationError,
)
from .judges.base import Judge
from .judges.heuristic import HeuristicJudge
from .judges.openai import OpenAIJudge
from .memory import AsyncMemoryStore
from .models import (
    ExportReport,
    HistoryEvent,
    ImportReport,
    Interpretation,
    Memory,
    PruneReport,
    RelatedMemory,
    SaveReport,
    SearchHit,
    Stats,
    Usage,
)
from .settings import Settings
from .sync import MemoryStore

__version__ = "0.1.0"

__all__ = [
    "AimemError",
    "AmbiguousIdError",
    "AsyncMemoryStore",
    "ConflictError",
    "Embedder",
    "EmbedderMismatchError",
    "EmbeddingError",
    "ExportReport",
    "HeuristicJudge",
    "HistoryEvent",
    "ImportReport",
    "Interpretation",
    "Judge",
    "JudgeError",
    "LocalEmbedder",
    "Memory",
    "MemoryStore",
    "NotFoundError",
    "OpenAIEmbedder",
    "OpenAIJudge",
    "PruneReport",
    "RelatedMemory",
    "SaveReport",
    "SearchHit",
    "Settings",
    "Stats",
    "StorageError",
    "Usage",
    "ValidationError",
    "__version__",
    "open",
]


def open(database_url: str | None = None, **kwargs: Any) -> MemoryStore:
    """Shortcut for ``aimem.MemoryStore(database_url, **kwargs)``."""
    return MemoryStore(database_url, **kwargs)
