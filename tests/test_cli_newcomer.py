"""What a newcomer found (issue 26), fixed: README's ``aimem status`` exists, messages wrap
at words in an 80-column terminal, a refused import lists the problems it counts, and
``aimem backup`` on PostgreSQL names the CLI's own way out.

Real parts: the CLI through ``main`` and the installed script (a pipe, and a real
pseudo-terminal from ``_pty.py``), SQLite files, and the PostgreSQL server of
``AIMEM_TEST_DATABASE_URL`` where one is configured.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from _cli import AIMEM, COLS, cli_env, imported_modules
from _pty import display_width, run_in_pty
from _stores import on_postgres, store_url

import aimem
from aimem.cli import main
from aimem.cli.commands import MAX_PROBLEMS_SHOWN
from aimem.saving.contents import HEURISTIC_NOTICE


def _run(url: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AIMEM, *argv], env=cli_env(url), capture_output=True, text=True, timeout=120
    )


# -- aimem status --------------------------------------------------------------------------


def test_status_is_the_bare_commands_alias(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        store.save("I'm allergic to penicillin.")
    assert main(["--database-url", db_url]) == 0
    bare = capsys.readouterr().out
    assert main(["status", "--database-url", db_url]) == 0
    assert capsys.readouterr().out == bare
    assert "1 active" in " ".join(bare.split())
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "status" in capsys.readouterr().out


# -- a faster start -------------------------------------------------------------------------


def test_commands_that_open_a_store_import_no_orm(db_url: str) -> None:
    """The tables are SQLAlchemy Core: no sqlmodel, no ORM (about 0.07 s of every start)."""
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        store.save("I'm allergic to penicillin.")
    for argv in (["list"], ["search", "penicillin"], ["stats"]):
        modules = imported_modules(cli_env(db_url), *argv)
        assert "sqlalchemy.engine" in modules
        heavy = [m for m in modules if m.startswith(("sqlmodel", "sqlalchemy.orm", "openai"))]
        assert heavy == [], (argv, heavy)


# -- wrapping at words ---------------------------------------------------------------------


def _words_intact(message: str, printed: str) -> None:
    """Every word of ``message`` is printed whole, on lines no wider than the terminal."""
    lines = [line for line in printed.splitlines() if line.strip()]
    assert lines and all(display_width(line.rstrip()) <= COLS for line in lines), printed
    shown = printed.split()
    for word in message.split():
        assert word in shown, f"{word!r} split across lines:\n{printed}"


def test_the_judge_notice_is_one_line_of_an_80_column_terminal(db_url: str) -> None:
    assert len(HEURISTIC_NOTICE) < COLS
    run = run_in_pty([AIMEM, "save", "I live in Porto."], cli_env(db_url), cols=COLS)
    assert run.code == 0, run.describe()
    [notice] = [line for line in run.err_lines if "HeuristicJudge" in line]
    assert notice.strip() == HEURISTIC_NOTICE, run.describe()


def test_common_id_errors_fit_one_line_of_an_80_column_terminal(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), min_priority_score=0) as store:
        ids = [m.id for m in store.save_many([f"I keep plant {n} on the balcony" for n in "ABC"])]
    shared = os.path.commonprefix(ids)  # noqa: RUF071 (ids are strings, not paths)
    assert len(shared) >= 4, ids
    for argv, says in (
        (["show", shared], "matches"),
        (["show", shared[:2]], "at least 4 characters"),
        (["pin", "ffff0000"], "no memory with id 'ffff0000'"),
        (["--namespace", "bob", "history", "ffff0000"], "in namespace 'bob'"),
    ):
        run = run_in_pty([AIMEM, *argv], cli_env(db_url), cols=COLS)
        assert run.code == 1 and len(run.err_lines) == 1, run.describe()
        assert run.err_lines[0].startswith("error: ") and says in run.err_lines[0]
        assert len(run.err_lines[0].rstrip()) <= COLS, run.describe()


def test_a_long_error_wraps_at_words_on_a_terminal_and_is_one_line_in_a_pipe(
    tmp_path: Path,
) -> None:
    url = "postgresql://agent@127.0.0.1:1/memories"
    run = run_in_pty([AIMEM, "backup", str(tmp_path / "copy.db")], cli_env(url), cols=COLS)
    assert run.code == 1, run.describe()
    assert run.err.startswith("error: ") and len(run.err_lines) >= 2
    _words_intact(run.err.replace("\n", " "), run.err)
    piped = _run(url, "backup", str(tmp_path / "copy.db"))
    assert piped.returncode == 1
    assert len(piped.stderr.strip().splitlines()) == 1, "scripts grep one line"
    assert " ".join(run.err.split()) == piped.stderr.strip()


# -- a refused import lists what it counts -----------------------------------------------


def _exported(url: str, path: Path, n: int) -> None:
    with aimem.MemoryStore(url, judge=aimem.HeuristicJudge(), max_memories=1000) as store:
        store.save_many([f"Reminder {i}: water plant number {i}" for i in range(n)])
        store.export_to(path)


@pytest.mark.parametrize("n", [30, 2])
def test_a_refused_import_lists_the_problems_it_counts(db_url: str, tmp_path: Path, n: int) -> None:
    path = tmp_path / "x.jsonl"
    _exported(db_url, path, n)  # importing it again: every id clashes
    report = json.loads(_run(db_url, "import", str(path), "--json").stdout)
    assert report["ok"] is False and report["problems"] >= n
    assert len(report["errors"]) == min(report["problems"], 20)
    for argv in (["import", str(path)], ["import", str(path), "--dry-run"]):
        done = _run(db_url, *argv)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        head, *listed = done.stderr.strip().splitlines()
        assert head.startswith("error: ") and head.endswith(f"({report['problems']} problems):")
        more = [line for line in listed if line.strip().startswith("…")]
        shown = [line for line in listed if line not in more]
        assert len(shown) == min(report["problems"], MAX_PROBLEMS_SHOWN)
        assert [s.strip() for s in shown] == report["errors"][: len(shown)]
        if report["problems"] > MAX_PROBLEMS_SHOWN:
            [line] = more
            assert line.strip() == f"… and {report['problems'] - len(shown)} more"
        else:
            assert more == []
    refused = rf"\({report['problems']} problems, the first: "
    store = aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge())
    with store, pytest.raises(aimem.ValidationError, match=refused):
        store.import_from(path)


def test_one_problem_is_one_line(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    _exported(store_url(tmp_path / "other.db"), path, 1)
    path.write_text(path.read_text().replace("plant", "fern"))
    done = _run(db_url, "import", str(path))
    [line] = done.stderr.strip().splitlines()
    assert re.match(r"error: Import refused, nothing was written: checksum mismatch", line)


# -- aimem backup on PostgreSQL ------------------------------------------------------------


def _refuses_backup(url: str, target: Path) -> None:
    done = _run(url, "backup", str(target))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "`aimem export PATH`" in line and "pg_dump" in line
    assert "export_to" not in line, "a CLI user is pointed to the CLI"
    assert not target.exists()


def test_backup_of_a_postgresql_url_points_to_aimem_export(tmp_path: Path) -> None:
    # Said before connecting: this server does not exist.
    _refuses_backup("postgresql://agent@127.0.0.1:1/memories", tmp_path / "copy.db")


@pytest.mark.skipif(not on_postgres(), reason="needs AIMEM_TEST_DATABASE_URL (PostgreSQL)")
def test_backup_of_a_real_postgresql_store_points_to_aimem_export(tmp_path: Path) -> None:
    url = store_url(tmp_path / "pg.db")
    with aimem.MemoryStore(url, judge=aimem.HeuristicJudge()) as store:
        store.save("I'm allergic to penicillin.")
    _refuses_backup(url, tmp_path / "copy.db")
    exported = _run(url, "export", str(tmp_path / "x.jsonl"))
    assert exported.returncode == 0 and "Exported 1 memory" in exported.stdout
