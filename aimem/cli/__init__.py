"""The ``aimem`` command line: a thin shell over the public API.

``main`` parses (``parser``), runs one command and turns errors into one line;
``session`` holds one command's consoles and store, ``commands`` what each command
does, ``ingest`` and ``chat`` the file readers behind ``aimem ingest``, ``status``
the status screen and the demo, ``transfer`` export, import, backup, reinterpret
and reembed, ``shell`` many commands against stores kept open. Nothing but ``main``
and ``parser`` is imported until a command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aimem.cli.main import main
from aimem.cli.parser import build_parser

if TYPE_CHECKING:
    from aimem.cli.status import DEMO_MEMORIES

__all__ = ["DEMO_MEMORIES", "build_parser", "main"]


def __getattr__(name: str) -> Any:
    if name == "DEMO_MEMORIES":  # with the demo, which imports the store
        from aimem.cli.status import DEMO_MEMORIES

        return DEMO_MEMORIES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
