"""aimem: long-term memory for AI agents that interprets, prioritises and forgets.

Every public name is imported on first use (PEP 562 ``__getattr__``), so ``import
aimem`` and the ``aimem`` command start fast: the openai SDK, for one, costs most of
a second and only an ``OpenAIJudge`` or ``OpenAIEmbedder`` needs it.

Example:
    >>> import aimem
    >>> store = aimem.MemoryStore("sqlite:///agent.db")   # doctest: +SKIP
    >>> store.save("User prefers Rust for systems work")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import typing

from aimem.old_paths import install as _install_old_paths

_install_old_paths()  # import aimem.memory, aimem.mcp_server... of earlier releases still work

if typing.TYPE_CHECKING:  # what type checkers and IDEs see; at run time, __getattr__
    from aimem.embeddings import Embedder, LocalEmbedder, MultilingualEmbedder, OpenAIEmbedder
    from aimem.exceptions import (
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
    from aimem.judges.base import Judge
    from aimem.judges.heuristic import HeuristicJudge
    from aimem.judges.openai import OpenAIJudge
    from aimem.models import (
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
    from aimem.settings import Settings
    from aimem.store import AsyncMemoryStore
    from aimem.sync_store import MemoryStore

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
    "MultilingualEmbedder",
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

#: Public name -> the submodule that defines it.
_SOURCES = {
    **dict.fromkeys(
        ("Embedder", "LocalEmbedder", "MultilingualEmbedder", "OpenAIEmbedder"), ".embeddings"
    ),
    **dict.fromkeys(
        (
            "AimemError",
            "AmbiguousIdError",
            "ConflictError",
            "EmbedderMismatchError",
            "EmbeddingError",
            "JudgeError",
            "NotFoundError",
            "StorageError",
            "ValidationError",
        ),
        ".exceptions",
    ),
    "Judge": ".judges.base",
    "HeuristicJudge": ".judges.heuristic",
    "OpenAIJudge": ".judges.openai",
    "AsyncMemoryStore": ".store",
    **dict.fromkeys(
        (
            "ExportReport",
            "HistoryEvent",
            "ImportReport",
            "Interpretation",
            "Memory",
            "PruneReport",
            "RelatedMemory",
            "SaveReport",
            "SearchHit",
            "Stats",
            "Usage",
        ),
        ".models",
    ),
    "Settings": ".settings",
    "MemoryStore": ".sync_store",
}


def __getattr__(name: str) -> typing.Any:
    """Import a public name's module on first use, and keep the name here after that."""
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module 'aimem' has no attribute {name!r}")
    value = getattr(importlib.import_module(source, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def open(database_url: str | None = None, **kwargs: typing.Any) -> MemoryStore:
    """Shortcut for ``aimem.MemoryStore(database_url, **kwargs)``."""
    from aimem.sync_store import MemoryStore

    return MemoryStore(database_url, **kwargs)
