"""Finding memories: search and related lookups, relevance, fusion, the current truth first.

``retriever`` runs searches and related lookups over a backend; ``relevance`` puts a
hit's relevance on an absolute 0..1 scale; ``ranking`` fuses keyword and semantic
lists; ``siblings`` puts the current fact first among memories of one subject. The
names of the former ``aimem/retrieval.py`` are served here on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["CANDIDATES", "Mode", "Retriever", "mismatch_message", "other_embedder_message"]


def __getattr__(name: str) -> Any:
    """The former module's names, imported on first use (its submodules import this package)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("aimem.retrieval.retriever"), name)
