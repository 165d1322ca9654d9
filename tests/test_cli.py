"""The ``aimem`` command, run through ``main(argv)`` against a real SQLite file."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _stores import store_url

from aimem.cli import DEMO_MEMORIES, build_parser, main


def test_demo_runs_offline_and_shows_what_was_forgotten(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Remembered (8 of 8 slots)" in out
    assert "Forgotten" in out and "archived not deleted" in out
    assert "penicillin" in out
    for column in ("priority", "emo", "rel", "nov", "util", "memory"):
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


# -- the full CLI, through main(argv) against a real SQLite file ---------------------------

ALLERGY = "I'm allergic to penicillin."
RAIN = "It's raining today."
SISTER = "My sister lives in Melbourne."
RUST = "User prefers Rust for systems work"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Cli = Callable[..., Run]


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    monkeypatch.setenv("COLUMNS", "200")
    url = store_url(tmp_path / "m.db")
    capsys.readouterr()

    def run(*argv: str, stdin: str | None = None, url: str = url) -> Run:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(["--database-url", url, *argv])
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def _save(cli: Cli, text: str, *args: str) -> dict[str, Any]:
    run = cli("save", text, "--json", *args)
    assert run.code == 0, run.err
    memory: dict[str, Any] = run.json()["memory"]
    return memory


def _shown_id(full: str, out: str) -> str:
    """The short prefix of ``full`` that ``out`` shows (8+ characters, as a whole token)."""
    for n in range(len(full) - 1, 7, -1):
        if re.search(rf"(?<![0-9a-f-]){re.escape(full[:n])}(?![0-9a-f-])", out):
            return full[:n]
    raise AssertionError(f"no short id of {full} in:\n{out}")


def _assert_one_line_error(run: Run, *fragments: str) -> None:
    assert run.code == 1
    assert "Traceback" not in run.err
    errors = [line for line in run.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, run.err
    for fragment in fragments:
        assert fragment in errors[0]


def test_save_then_list_shows_it_with_its_priority_and_short_id(cli: Cli) -> None:
    run = cli("save", ALLERGY, "--user-context", "syui")
    assert run.code == 0, run.err
    assert "Saved" in run.out and "penicillin" in run.out and "why:" in run.out
    for column in ("priority", "emo", "rel", "nov", "util", "memory", "state"):
        assert column in run.out
    [memory] = cli("list", "--json").json()
    assert memory["user_context"] == "syui" and memory["score_source"] == "heuristic"
    listing = cli("list")
    prefix = _shown_id(memory["id"], listing.out)  # a short id, ready to paste into show/pin
    assert cli("show", prefix, "--json").json()["id"] == memory["id"]
    assert memory["id"] in cli("list", "--wide").out  # --wide: the full id
    assert f"{memory['priority_score']:.2f}" in listing.out
    assert "1 memory in 'default', by priority" in listing.out


def test_save_reads_stdin_and_reports_exact_duplicates(cli: Cli) -> None:
    first = cli("save", "-", "--json", stdin=SISTER + "\n").json()
    assert first["memory"]["content"] == SISTER and first["duplicate"] is False
    again = cli("save", SISTER)
    assert "Already remembered (exact duplicate" in again.out
    assert len(cli("list", "--json").json()) == 1


def test_save_shows_what_it_archived_in_red(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIMEM_MAX_MEMORIES", "1")
    kept = _save(cli, ALLERGY)
    monkeypatch.setenv("FORCE_COLOR", "1")
    run = cli("save", RAIN)
    monkeypatch.delenv("FORCE_COLOR")
    plain = ANSI.sub("", run.out)
    assert "Archived to stay within capacity (1)" in plain
    archived_section = run.out[run.out.index("Archived") :]
    assert "\x1b[31m" in archived_section or "\x1b[1;31m" in archived_section  # red
    assert [m["id"] for m in cli("list", "--json").json()] == [kept["id"]]


def test_save_json_lists_archived_memories(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIMEM_MAX_MEMORIES", "1")
    _save(cli, ALLERGY)
    result = cli("save", RAIN, "--json").json()
    assert set(result) == {"memory", "duplicate", "archived"}
    [gone] = result["archived"]
    assert gone["content"] == RAIN and gone["archive_reason"] is not None


def test_list_options_and_json_fields(cli: Cli) -> None:
    for text in (ALLERGY, RUST, SISTER):
        _save(cli, text)
    memories = cli("list", "--json").json()
    assert len(memories) == 3
    assert set(memories[0]) >= {
        "id", "content", "interpreted_content", "priority_score", "emotional_impact",
        "user_relevance", "novelty", "utility", "score_source", "pinned", "archived_at",
    }  # fmt: skip
    assert [m["content"] for m in cli("list", "--order", "recent", "--json").json()] == [
        SISTER,
        RUST,
        ALLERGY,
    ]
    assert len(cli("list", "--limit", "2", "--json").json()) == 2
    top = max(m["priority_score"] for m in memories)
    high = cli("list", "--min-score", str(top), "--json").json()
    assert [m["priority_score"] for m in high] == [top]


def test_list_all_includes_archived(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIMEM_MAX_MEMORIES", "1")
    _save(cli, ALLERGY)
    _save(cli, RAIN)
    assert len(cli("list", "--json").json()) == 1
    everything = cli("list", "--all")
    assert "archived: " in everything.out and "2 memories" in everything.out


def test_list_of_an_empty_store_says_so(cli: Cli) -> None:
    run = cli("list")
    assert run.code == 0 and "No memories yet" in run.out
    assert cli("list", "--json").json() == []


def test_text_is_shown_literally_not_as_markup(cli: Cli) -> None:
    _save(cli, "User writes [bold]docs[/bold] in Markdown")
    assert "[bold]docs[/bold]" in cli("list").out


def test_search_finds_it(cli: Cli) -> None:
    memory = _save(cli, RUST)
    _save(cli, SISTER)
    run = cli("search", "Rust")
    assert run.code == 0 and _shown_id(memory["id"], run.out) and "1 match for 'Rust'" in run.out
    [hit] = cli("search", "Rust", "--mode", "keyword", "--json").json()
    assert hit["memory"]["id"] == memory["id"] and hit["score"] > 0
    assert cli("search", "Rust", "--min-score", "1.0", "--json").json() == []
    assert "No memory matches 'volcano'" in cli("search", "volcano").out


def test_show_prints_every_field(cli: Cli) -> None:
    memory = _save(cli, ALLERGY, "--user-context", "syui")
    run = cli("show", memory["id"])
    assert run.code == 0
    for text in (memory["id"], ALLERGY, memory["rationale"], "syui", "heuristic", "version"):
        assert text in run.out
    assert cli("show", memory["id"], "--json").json() == memory


def test_pin_and_unpin(cli: Cli) -> None:
    memory = _save(cli, ALLERGY)
    run = cli("pin", memory["id"])
    assert run.code == 0 and run.out.startswith(f"pinned {_shown_id(memory['id'], run.out)}")
    assert cli("show", memory["id"], "--json").json()["pinned"] is True
    assert "pinned" in cli("list").out
    run = cli("unpin", memory["id"][:13])  # a unique prefix names it too
    assert run.out.startswith(f"unpinned {_shown_id(memory['id'], run.out)}")
    assert cli("show", memory["id"], "--json").json()["pinned"] is False


def test_restore_shows_what_made_room(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIMEM_MAX_MEMORIES", "1")
    kept = _save(cli, ALLERGY)
    gone = _save(cli, SISTER)
    assert cli("show", gone["id"], "--json").json()["archived_at"] is not None
    run = cli("restore", gone["id"])
    assert run.code == 0 and run.out.startswith(f"restored {_shown_id(gone['id'], run.out)}")
    assert "Archived to make room (1)" in run.out and _shown_id(kept["id"], run.out)
    assert [m["id"] for m in cli("list", "--json").json()] == [gone["id"]]


def test_a_superseded_memory_is_shown_apart_and_its_history_readable(cli: Cli) -> None:
    old = _save(cli, "I live in Sendai.")
    run = cli("save", "We moved to Sapporo last month.")
    assert run.code == 0 and "Superseded: out of date now, kept in the archive (1)" in run.out
    assert _shown_id(old["id"], run.out) and "Archived to stay within capacity" not in run.out
    events = cli("history", old["id"], "--json").json()
    assert [e["event"] for e in events] == ["save", "archive"]
    assert events[-1]["reason"] == "superseded"
    shown = cli("history", old["id"])
    assert shown.code == 0 and "superseded by" in shown.out


def test_update_keeps_the_previous_version_in_the_history(cli: Cli) -> None:
    memory = _save(cli, "I take 50 mg of sertraline.")
    run = cli("update", memory["id"], "I take 100 mg of sertraline.", "--json")
    assert run.code == 0 and run.json()["memory"]["version"] == 2
    [_, update] = cli("history", memory["id"], "--json").json()
    assert update["event"] == "update"
    assert update["previous"]["content"] == "I take 50 mg of sertraline."
    assert cli("update", memory["id"], "").code != 0  # empty content: refused


def test_delete_needs_yes_without_a_terminal(cli: Cli) -> None:
    memory = _save(cli, ALLERGY)
    run = cli("delete", memory["id"], stdin="")
    _assert_one_line_error(run, "pass --yes")
    assert cli("show", memory["id"]).code == 0  # still there
    run = cli("delete", memory["id"], "--yes")
    assert run.code == 0 and run.out.startswith(f"deleted {_shown_id(memory['id'], run.out)}")
    _assert_one_line_error(cli("show", memory["id"]), "no memory with id")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("answer", "code", "remains"), [("y\n", 0, False), ("n\n", 1, True)])
def test_delete_asks_on_a_terminal(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, answer: str, code: int, remains: bool
) -> None:
    memory = _save(cli, ALLERGY)
    monkeypatch.setattr(sys, "stdin", _Terminal(answer))
    run = cli("delete", memory["id"])
    assert run.code == code
    assert "for good?" in run.err + run.out
    assert (cli("show", memory["id"]).code == 0) is remains


def test_prune_dry_run_writes_nothing(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    for text in (ALLERGY, SISTER, RUST):
        _save(cli, text)
    monkeypatch.setenv("AIMEM_MAX_MEMORIES", "1")
    preview = cli("prune", "--dry-run")
    assert "Would archive (2)" in preview.out and "would count toward the cap" in preview.out
    report = cli("prune", "--dry-run", "--json").json()
    assert report["dry_run"] is True and len(report["archived"]) == 2
    assert len(cli("list", "--json").json()) == 3  # nothing written
    done = cli("prune")
    assert "Archived (2)" in done.out
    assert len(cli("list", "--json").json()) == 1
    assert "Nothing to archive." in cli("prune").out


def test_stats(cli: Cli) -> None:
    _save(cli, ALLERGY)
    run = cli("stats")
    assert run.code == 0 and "active" in run.out and "mean priority" in run.out
    stats = cli("stats", "--json").json()
    assert stats["count"] == 1 and stats["namespace"] == "default"


def test_core_set_then_read_core(cli: Cli) -> None:
    empty = cli("read-core")
    assert empty.code == 0 and empty.out == "" and "No core text yet" in empty.err
    assert cli("core", "--set", "I am a helpful [bold]agent[/bold].").code == 0
    assert cli("read-core").out == "I am a helpful [bold]agent[/bold].\n"
    assert cli("core", "--set", "-", stdin="From stdin.\n").code == 0
    assert cli("core").out == "From stdin.\n"


def test_context_prints_core_and_memories(cli: Cli) -> None:
    cli("core", "--set", "You are Ai.")
    _save(cli, ALLERGY)
    out = cli("context").out
    assert "## Core\nYou are Ai." in out and "penicillin" in out
    assert "penicillin" in cli("context", "--query", "penicillin", "--max-chars", "500").out
    _assert_one_line_error(cli("context", "--max-chars", "0"), "max_chars")


def test_read_memory_is_in_priority_order(cli: Cli) -> None:
    for text in (RAIN, ALLERGY, SISTER, RUST):
        _save(cli, text)
    memories = cli("read-memory", "--json").json()
    scores = [m["priority_score"] for m in memories]
    assert scores == sorted(scores, reverse=True) and len(scores) >= 3
    table = cli("read-memory", "--wide").out
    positions = [table.index(m["id"]) for m in memories]
    assert positions == sorted(positions)


def test_save_memory_alias(cli: Cli) -> None:
    run = cli("save-memory", SISTER)
    assert run.code == 0 and "Saved" in run.out
    assert [m["content"] for m in cli("read-memory", "--json").json()] == [SISTER]


def test_namespace_and_database_url_options(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIMEM_DATABASE_URL", store_url(tmp_path / "env.db"))
    assert cli("--namespace", "alice", "save", ALLERGY).code == 0  # after --database-url
    assert cli("list", "--json").json() == []
    assert len(cli("--namespace", "alice", "list", "--json").json()) == 1
    assert not (tmp_path / "env.db").exists()  # --database-url beat the environment
    _assert_one_line_error(cli("--namespace", "bad ns", "list"), "Invalid namespace")


def test_status_honours_the_global_options(cli: Cli, tmp_path: Path) -> None:
    cli("--namespace", "alice", "save", ALLERGY)
    run = cli("--namespace", "alice")
    # The store's name: the file, or on PostgreSQL the test's database.
    where = store_url(tmp_path / "m.db").rsplit("/", 1)[-1].split("?")[0]
    assert where in run.out and "1 active" in run.out and "alice" in run.out


# -- ingest ------------------------------------------------------------------------------


def test_ingest_plain_text(cli: Cli, tmp_path: Path) -> None:
    _save(cli, SISTER)
    path = tmp_path / "notes.txt"
    path.write_text(f"{ALLERGY}\n\n  {RAIN}  \n{SISTER}\n{ALLERGY}\n", encoding="utf-8")
    run = cli("ingest", str(path), "--user-context", "syui", "--batch", "2")
    assert run.code == 0, run.err
    assert "Ingested 4 lines" in run.out and "2 saved" in run.out
    assert "2 duplicates returned" in run.out and "archived" in run.out
    # No progress bar noise without a terminal: at most the offline-judge notice.
    assert all("HeuristicJudge" in line for line in run.err.splitlines()), run.err
    memories = {m["content"]: m for m in cli("list", "--all", "--json").json()}
    assert set(memories) == {ALLERGY, RAIN, SISTER}
    assert memories[ALLERGY]["user_context"] == "syui"
    assert memories[SISTER]["user_context"] is None  # the earlier save was returned as is


def test_ingest_jsonl_groups_user_context(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "memories.jsonl"
    lines = [
        {"content": ALLERGY, "user_context": "alice"},
        {"content": SISTER},
        {"content": RUST, "user_context": "bob"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    run = cli("ingest", str(path), "--user-context", "default-person")
    assert run.code == 0 and "3 saved" in run.out and "0 duplicates" in run.out
    contexts = {m["content"]: m["user_context"] for m in cli("list", "--all", "--json").json()}
    assert contexts == {
        ALLERGY: "alice",
        SISTER: "default-person",
        RUST: "bob",
    }


def test_ingest_detects_json_lines_without_the_extension(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "export.txt"
    path.write_text(json.dumps({"content": ALLERGY}) + "\n", encoding="utf-8")
    assert cli("ingest", str(path)).code == 0
    assert [m["content"] for m in cli("list", "--json").json()] == [ALLERGY]
    plain = tmp_path / "plain.txt"
    plain.write_text(json.dumps({"content": SISTER}) + "\n", encoding="utf-8")
    assert cli("ingest", str(plain), "--format", "text").code == 0
    assert json.dumps({"content": SISTER}) in [m["content"] for m in cli("list", "--json").json()]


def test_ingest_reports_bad_lines_and_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "memories.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"content": ALLERGY}),
                "",
                "{not json",
                json.dumps({"content": "   "}),
                json.dumps({"text": SISTER}),
                json.dumps(["a list"]),
            ]
        ),
        encoding="utf-8",
    )
    run = cli("ingest", str(path))
    assert run.code == 1 and "Traceback" not in run.err
    assert "4 bad line(s); nothing was saved" in run.err
    for n in (3, 4, 5, 6):
        assert f"line {n}: " in run.err
    assert "line 1:" not in run.err
    assert cli("list", "--all", "--json").json() == []


def test_ingest_stdin_and_empty_input(cli: Cli) -> None:
    run = cli("ingest", "-", stdin=f"{ALLERGY}\n{SISTER}\n")
    assert run.code == 0 and "Ingested 2 lines from stdin: 2 saved" in run.out
    empty = cli("ingest", "-", stdin="\n\n")
    assert empty.code == 0 and "Nothing to ingest" in empty.err


def test_ingest_progress_bar_on_a_terminal(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich then treats the captured streams as terminals
    path = tmp_path / "notes.txt"
    path.write_text(f"{ALLERGY}\n{SISTER}\n{RAIN}\n", encoding="utf-8")
    run = cli("ingest", str(path), "--batch", "1")
    assert run.code == 0
    assert "Ingested 3 lines" in ANSI.sub("", run.out)


def test_ingest_file_errors(cli: Cli, tmp_path: Path) -> None:
    _assert_one_line_error(cli("ingest", str(tmp_path / "missing.txt")), "missing.txt")
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00bad")
    _assert_one_line_error(cli("ingest", str(binary)), "not UTF-8")
    with pytest.raises(SystemExit) as exc:
        cli("ingest", str(binary), "--batch", "0")
    assert exc.value.code == 2


# -- errors and help -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "nope"],
        ["pin", "nope"],
        ["unpin", "nope"],
        ["restore", "nope"],
        ["delete", "nope", "--yes"],
    ],
)
def test_unknown_id_is_a_one_line_error(cli: Cli, argv: list[str]) -> None:
    _assert_one_line_error(cli(*argv), "no memory with id 'nope'", "aimem list --all")


def test_bad_values_are_one_line_errors(cli: Cli) -> None:
    _assert_one_line_error(cli("list", "--limit", "0"), "limit")
    _assert_one_line_error(cli("search", "x", "--min-score", "2"), "min_score")
    _assert_one_line_error(cli("save", "   "), "empty")


def test_usage_errors_exit_2(cli: Cli, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["list", "--order", "bogus"], ["frobnicate"], ["show"]):
        with pytest.raises(SystemExit) as exc:
            cli(*argv)
        assert exc.value.code == 2
        assert "usage: aimem" in capsys.readouterr().err


def _subcommands() -> argparse._SubParsersAction[argparse.ArgumentParser]:
    [sub] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return sub


def _command_names() -> list[str]:
    return sorted(_subcommands().choices)


def test_every_command_is_there() -> None:
    assert set(_command_names()) >= {
        "save", "list", "search", "show", "pin", "unpin", "restore", "delete", "prune", "stats",
        "core", "context", "read-core", "read-memory", "save-memory", "ingest", "mcp",
        "import-aigpt", "export-aigpt", "demo",
    }  # fmt: skip


@pytest.mark.parametrize("name", _command_names())
def test_every_command_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([name, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: aimem {name}")
    description = _subcommands().choices[name].description
    assert description and "-h, --help" in out
    assert " ".join(description.split()) in " ".join(out.split())


def test_top_level_help_lists_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--database-url" in out and "--namespace" in out
    for name in _command_names():
        assert name in out


# -- aigpt trees -------------------------------------------------------------------------


def _aigpt_tree(root: Path) -> None:
    did = "did:plc:abc"
    core = root / did / "ai.syui.gpt.core"
    memory = root / did / "ai.syui.gpt.memory"
    core.mkdir(parents=True)
    memory.mkdir(parents=True)
    (core / "self.json").write_text(
        json.dumps(
            {
                "uri": f"at://{did}/ai.syui.gpt.core/self",
                "value": {
                    "$type": "ai.syui.gpt.core",
                    "did": did,
                    "handle": "ai.syui.ai",
                    "content": {"$type": "ai.syui.gpt.core#markdown", "text": "I am Ai."},
                    "createdAt": "2025-01-01T00:00:00Z",
                },
            }
        ),
        encoding="utf-8",
    )
    for tid, text in (("3lbfbd2e3vc2a", "syuiはRustを好む"), ("3lbfbd2e3vc2b", ALLERGY)):
        (memory / f"{tid}.json").write_text(
            json.dumps(
                {
                    "uri": f"at://{did}/ai.syui.gpt.memory/{tid}",
                    "value": {
                        "$type": "ai.syui.gpt.memory",
                        "did": did,
                        "content": {"$type": "ai.syui.gpt.memory#markdown", "text": text},
                        "createdAt": "2026-03-01T12:00:00Z",
                    },
                }
            ),
            encoding="utf-8",
        )


def test_import_aigpt(cli: Cli, tmp_path: Path) -> None:
    _aigpt_tree(tmp_path / "content")
    run = cli("import-aigpt", str(tmp_path / "content"))
    assert run.code == 0, run.err
    assert "Imported 2 memories from did:plc:abc (core text imported)" in run.out
    assert cli("read-core").out == "I am Ai.\n"
    contents = {m["content"] for m in cli("list", "--all", "--json").json()}
    assert contents == {"syuiはRustを好む", ALLERGY}
    _assert_one_line_error(cli("import-aigpt", str(tmp_path / "nowhere")), "not a directory")


def test_export_aigpt(cli: Cli, tmp_path: Path) -> None:
    cli("core", "--set", "I am Ai.")
    _save(cli, ALLERGY)
    out = tmp_path / "out"
    run = cli("export-aigpt", str(out), "--did", "did:plc:xyz", "--handle", "ai.syui.ai")
    assert run.code == 0, run.err
    assert "Wrote 2 aigpt records" in run.out
    core = json.loads((out / "did:plc:xyz/ai.syui.gpt.core/self.json").read_text("utf-8"))
    assert core["value"]["content"]["text"] == "I am Ai."
    [record] = (out / "did:plc:xyz/ai.syui.gpt.memory").glob("*.json")
    assert json.loads(record.read_text("utf-8"))["value"]["content"]["text"] == ALLERGY
    again = cli("export-aigpt", str(out), "--did", "did:plc:xyz")
    _assert_one_line_error(again, "already holds aigpt records")
    with pytest.raises(SystemExit):
        cli("export-aigpt", str(out))  # --did is required


# -- export, import, backup, reinterpret, idempotency keys --------------------------------


def test_export_import_round_trip_and_refusals(cli: Cli, tmp_path: Path) -> None:
    _save(cli, ALLERGY)
    _save(cli, SISTER)
    assert cli("core", "--set", "You are Ai.").code == 0
    exported = cli("export", str(tmp_path / "x.jsonl"))
    assert exported.code == 0 and "Exported 2 memories" in exported.out
    again = cli("export", str(tmp_path / "x.jsonl"))
    _assert_one_line_error(again, "already exists")

    other = store_url(tmp_path / "other.db")
    dry = cli("import", str(tmp_path / "x.jsonl"), "--dry-run", "--json", url=other)
    assert dry.code == 0 and dry.json()["ok"] is True and dry.json()["dry_run"] is True
    assert cli("stats", "--json", url=other).json()["total"] == 0, "a dry run writes nothing"
    done = cli("import", str(tmp_path / "x.jsonl"), url=other)
    assert done.code == 0 and "Imported 2 memories" in done.out
    assert cli("read-core", url=other).out.strip() == "You are Ai."
    assert cli("export", str(tmp_path / "y.jsonl"), url=other).code == 0
    assert (tmp_path / "x.jsonl").read_bytes() == (tmp_path / "y.jsonl").read_bytes()

    clash = cli("import", str(tmp_path / "x.jsonl"), url=other)
    _assert_one_line_error(clash, "nothing was written (4 problems):")
    problems = [line for line in clash.err.splitlines() if line.startswith("  ")]
    assert len(problems) == 4 and "already exists in this database" in problems[0]
    listed = cli("import", str(tmp_path / "x.jsonl"), "--dry-run", url=other)
    assert listed.code == 1 and "would be refused (4 problems):" in listed.err
    assert [line for line in listed.err.splitlines() if line.startswith("  ")] == problems


def test_import_of_a_tampered_file_is_refused(cli: Cli, tmp_path: Path) -> None:
    _save(cli, ALLERGY)
    path = tmp_path / "x.jsonl"
    cli("export", str(path))
    path.write_text(path.read_text().replace("penicillin", "aspirin"))
    run = cli("import", str(path), url=store_url(tmp_path / "other.db"))
    assert run.code == 1 and "checksum mismatch" in run.err


@pytest.mark.sqlite_only  # copies the SQLite file; PostgreSQL refuses (test_postgres.py)
def test_backup_writes_a_working_copy_and_never_overwrites(cli: Cli, tmp_path: Path) -> None:
    memory = _save(cli, ALLERGY)
    run = cli("backup", str(tmp_path / "copy.db"))
    assert run.code == 0 and "copy.db" in run.out
    shown = cli("show", memory["id"], "--json", url=store_url(tmp_path / "copy.db"))
    assert shown.json()["content"] == ALLERGY
    _assert_one_line_error(cli("backup", str(tmp_path / "copy.db")), "already exists")


def test_reinterpret_judges_pending_memories(cli: Cli, tmp_path: Path) -> None:
    import aimem

    class Down:
        async def interpret(self, content: str, **_: object) -> aimem.Interpretation:
            raise RuntimeError("endpoint down")

    with aimem.MemoryStore(store_url(tmp_path / "m.db"), judge=Down()) as store:  # type: ignore[arg-type]
        pending = store.save(ALLERGY)
    assert pending.score_source == "pending"
    listed = cli("list")
    assert "pending" in listed.out
    run = cli("reinterpret")
    assert run.code == 0 and "1 memory judged, 0 still pending" in run.out
    assert cli("show", pending.id, "--json").json()["score_source"] == "heuristic"


def test_save_with_an_idempotency_key(cli: Cli) -> None:
    first = _save(cli, ALLERGY, "--idempotency-key", "req-1")
    again = cli("save", ALLERGY, "--idempotency-key", "req-1", "--json")
    assert again.json()["memory"]["id"] == first["id"] and again.json()["duplicate"] is True
    _assert_one_line_error(
        cli("save", SISTER, "--idempotency-key", "req-1"), "already used for different content"
    )
