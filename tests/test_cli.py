from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aimem.cli import DEMO_MEMORIES, main


def test_demo_runs_offline_and_shows_what_was_forgotten(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Remembered (8 of 8 slots)" in out
    assert "Forgotten" in out and "archived not deleted" in out
    assert "penicillin" in out
    for column in ("priority", "emo", "rel", "nov", "util", "interpretation"):
        assert column in out


def test_status_before_and_after_first_save(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "HeuristicJudge" in out and "created on first save" in out
    import aimem

    with aimem.MemoryStore(judge=aimem.HeuristicJudge()) as store:
        store.save(DEMO_MEMORIES[0])
    assert main([]) == 0
    assert "1 active" in capsys.readouterr().out.replace("\n", " ")


def test_console_script_is_installed(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("aimem")
    result = subprocess.run(
        [str(exe), "demo", "--max-memories", "4"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "160"},
    )
    assert result.returncode == 0, result.stderr
    assert "Remembered (4 of 4 slots)" in result.stdout
