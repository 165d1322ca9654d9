"""Export and import: the checksummed JSON Lines file, its checks, a store's transfers, aigpt trees.

``export_file`` is the format (and writes and links files: it does I/O); ``checks`` what
a file must satisfy; ``portability`` a store's export, import and backup; ``aigpt`` the
seed system's memory trees in and out. The SQL half lives behind the storage seam
(``storage/sql_transfer.py``). The names of the former ``aimem/transfer.py`` are
served here on first use, so ``from aimem.transfer import parse_export`` keeps working.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ExportData",
    "ParsedExport",
    "VersionLine",
    "export_lines",
    "link_new",
    "parse_export",
    "restored_last",
    "write_new_file",
]


def __getattr__(name: str) -> Any:
    """The former module's names, imported on first use (its submodules import this package)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("aimem.transfer.export_file"), name)
