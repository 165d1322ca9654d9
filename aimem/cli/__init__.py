"""The ``aimem`` command line: a thin shell over the public API.

``main`` parses (``parser``), runs one command and turns errors into one line;
``commands`` holds what each command does, ``ingest`` the file reader behind
``aimem ingest``, ``status`` the status screen and the demo, ``transfer`` export,
import, backup, reinterpret and reembed.
"""

from __future__ import annotations

from .main import main
from .parser import build_parser
from .status import DEMO_MEMORIES

__all__ = ["DEMO_MEMORIES", "build_parser", "main"]
