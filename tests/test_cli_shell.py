"""``aimem shell``: many commands against stores kept open, from a pipe and from a terminal.

Real parts: the installed console script in subprocesses (a pipe) and in a real
pseudo-terminal (``_pty.py``, typed input), SQLite files from ``db_url``, and an
OpenAI-compatible stub on 127.0.0.1 as the embedder where one must be shared.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _pty import display_width, run_in_pty
from rich.console import Console

import aimem
from aimem.cli.session import Session
from aimem.cli.shell import StorePool
from aimem.testing import OpenAIStub

AIMEM = str(Path(sys.executable).with_name("aimem"))
ALLERGY = "I'm allergic to penicillin."
PORTO = "I live in Porto."


def _env(url: str, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "AIMEM_", "COLUMNS", "LINES"))
    }
    return env | {"AIMEM_DATABASE_URL": url, "COLUMNS": "80", "TERM": "xterm"} | extra


def _shell(url: str, script: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AIMEM, *argv, "shell"],
        input=script,
        env=_env(url),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_piped_commands_run_in_order_against_one_store(db_url: str) -> None:
    script = f"""
        # a comment, then a blank line

        save "{ALLERGY}" --json
        save '{PORTO}'
        search penicillin --json
        list --json --order recent
        stats --json
        """
    done = _shell(db_url, script)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    saved = json.loads(done.stdout[: done.stdout.index("\n}\n") + 2])
    assert saved["memory"]["content"] == ALLERGY
    assert done.stdout.count("HeuristicJudge") == 0, "the notice goes to stderr"
    assert done.stderr.count("HeuristicJudge") == 1, "once, after the first save"
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        assert {m.content for m in store.list()} == {ALLERGY, PORTO}
    assert '"total": 2' in done.stdout
    assert done.stdout.index('"content": "I\'m allergic') < done.stdout.index('"total": 2')


def test_failures_are_one_line_each_and_the_shell_goes_on(db_url: str) -> None:
    script = f"""
        show 0123abcd
        search "unclosed
        save -
        mcp
        shell
        lsit
        save "{PORTO}"
        """
    done = _shell(db_url, script)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 5, done.stderr
    assert "no memory with id '0123abcd'" in errors[0]
    assert "No closing quotation" in errors[1]
    assert "'-' (stdin) is the shell's input" in errors[2]
    assert "`aimem mcp` runs on its own" in errors[3]
    assert "`aimem shell` runs on its own" in errors[4]
    assert "invalid choice: 'lsit'" in done.stderr  # argparse's usage error
    assert "Saved" in done.stdout, "the commands after the failures ran"
    assert done.returncode == 2, "the status of the last failure: lsit, a usage error"
    assert "Traceback" not in done.stderr


def test_exit_stops_reading_and_options_reach_each_command(db_url: str) -> None:
    script = f'save "{ALLERGY}"\nsave "{PORTO}" --namespace bob\nexit\nsave "never"\n'
    done = _shell(db_url, script, "--namespace", "alice")
    assert done.returncode == 0, done.stderr
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), namespace="alice") as store:
        assert [m.content for m in store.list()] == [ALLERGY]
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), namespace="bob") as store:
        assert [m.content for m in store.list()] == [PORTO]


def test_help_lists_the_commands_and_a_commands_options(db_url: str) -> None:
    done = _shell(db_url, "help\nhelp search\n")
    assert done.returncode == 0
    assert "usage: aimem [-h]" in done.stdout and "shell" in done.stdout
    assert "usage: aimem search" in done.stdout and "--min-relevance" in done.stdout


def test_interactive_in_a_terminal_with_a_prompt(db_url: str) -> None:
    typed = [f'save "{ALLERGY}"\n', "list\n", "search penicillin\n", "\x04"]  # then Ctrl-D
    run = run_in_pty([AIMEM, "shell"], _env(db_url), cols=80, typed=typed, prompt="aimem> ")
    assert run.code == 0, run.describe()
    assert "shell on" in run.err and db_url.split(":")[0] in run.err and "Ctrl-D" in run.err
    assert run.out.count("aimem> ") >= 4, run.describe()
    assert "Saved" in run.out and "1 memory in 'default'" in run.out
    assert "1 match for 'penicillin'" in run.out
    assert not run.wider_than(80), run.describe()
    assert all(display_width(line) <= 80 for line in run.err_lines), run.describe()


def test_the_pool_keeps_one_store_per_namespace_and_one_embedder(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OpenAIStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("AIMEM_EMBEDDER", "openai:stub-embed")
        pool = StorePool()
        session = Session(db_url, "a", Console(file=io.StringIO()), Console(file=io.StringIO()))
        try:
            first, offline = pool.open(db_url, "a", session)
            again, _ = pool.open(db_url, "a", session)
            other, _ = pool.open(db_url, "b", session)
            assert first is again and other is not first
            assert first.embedder is not None and first.embedder is other.embedder
            assert not offline, "OPENAI_BASE_URL configures the LLM judge"
        finally:
            pool.close()
        with pytest.raises(aimem.AimemError, match="closed"):
            first.list()
