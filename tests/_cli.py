"""Helpers for the tests that run the ``aimem`` command as a user would.

:func:`cli_env` is the environment such a run gets (no ambient OpenAI or aimem settings,
a fixed terminal width); :func:`imported_modules` runs one command in a fresh
interpreter and answers which modules it imported, for the start-up tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: The console script installed beside this interpreter.
AIMEM = str(Path(sys.executable).with_name("aimem"))
#: The terminal width the runs are given.
COLS = 80

_PROBE = """
import contextlib, io, json, sys
from aimem.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def cli_env(url: str, **extra: str) -> dict[str, str]:
    """This process's environment without OpenAI/aimem settings, on the store ``url``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "AIMEM_", "COLUMNS", "LINES"))
    }
    return env | {"AIMEM_DATABASE_URL": url, "COLUMNS": str(COLS), "TERM": "xterm"} | extra


def imported_modules(env: dict[str, str], *argv: str) -> list[str]:
    """Every module ``aimem <argv>`` imported (sorted), run in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    return modules
