"""The CLI fits a terminal: 80-column tables with short ids, store options before or after
the subcommand, a judge notice that never precedes an error, a start-up that imports no
LLM SDK, progress bars on terminals only, ``import --json`` on refusal, ``ingest --chat``.

Real parts throughout: a store file from the ``db_url`` fixture, rich consoles of a fixed
width, the installed console script in subprocesses (``COLUMNS=80``) and in a real
pseudo-terminal (``_pty.py``), an OpenAI-compatible stub on 127.0.0.1 for embeddings.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from _cli import AIMEM, COLS, cli_env, imported_modules
from _pty import display_width, run_in_pty
from rich.console import Console

import aimem
from aimem.cli import DEMO_MEMORIES, build_parser, main
from aimem.render import (
    archived_table,
    history_table,
    memory_list_table,
    memory_table,
    search_table,
)
from aimem.testing import OpenAIStub

LONG = (
    "My grandmother's recipe for plum dumplings needs quark, semolina, butter, breadcrumbs, "
    "cinnamon sugar and ripe Zwetschgen plums, and she always insisted on resting the dough "
    "for exactly forty minutes in a cool pantry before shaping it around each stoned plum."
)
TRANSCRIPT = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "I just moved to Lisbon for a new job at a robotics startup."},
    {"role": "assistant", "content": "Congratulations! How is Lisbon so far?"},
    {"role": "user", "content": [{"type": "text", "text": "I'm allergic to penicillin."}]},
    {"role": "user", "content": "thanks!"},
]


# -- helpers -------------------------------------------------------------------------------


def _run(
    url: str, *argv: str, merged: bool = False, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AIMEM, *argv],
        env=cli_env(url, **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
        timeout=120,
    )


def _text(renderable: object, width: int = COLS) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def _fits(text: str, width: int = COLS) -> None:
    wide = [line for line in text.splitlines() if display_width(line.rstrip()) > width]
    assert not wide, f"{len(wide)} lines wider than {width}:\n" + "\n".join(wide[:5])


def _ids_in(text: str) -> set[str]:
    return set(re.findall(r"(?<![0-9a-f-])[0-9a-f]{8}(?:-[0-9a-f-]{1,27})?(?![0-9a-f-])", text))


def _one_error(result: subprocess.CompletedProcess[str] | Any) -> str:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return str(lines[0])


@pytest.fixture
def store(db_url: str) -> Any:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), max_memories=8) as s:
        for text in DEMO_MEMORIES:
            s.save(text)
        yield s


# -- 1. tables at 80 columns ---------------------------------------------------------------


def test_every_table_fits_80_columns_with_readable_scores(store: aimem.MemoryStore) -> None:
    memories = store.list(include_archived=True)
    archived = [m for m in memories if m.archived_at is not None]
    assert archived, "the demo's texts overflow max_memories=8"
    ids = store.short_ids(m.id for m in memories)
    listing = _text(memory_list_table(memories, title="all", ids=ids))
    pages = [
        listing,
        _text(search_table(store.search("school"), ids=ids)),
        _text(archived_table(archived, title="archived", ids=ids)),
        _text(history_table(store.history(archived[0].id), ids=ids)),
        _text(memory_table(memories)),
        _text(store.prune(dry_run=True)),
        _text(store.stats()),
    ]
    for page in pages:
        _fits(page)
        assert "0…" not in page
    for m in memories:
        assert f"{m.priority_score:.2f}" in listing
        assert ids[m.id] in listing and m.id not in listing
    assert " emo " not in listing  # no room for the components at 80 columns
    wide = _text(memory_list_table(memories, ids=ids), width=160)
    assert all(name in wide for name in (" emo ", " rel ", " nov ", " util "))
    _fits(wide, 160)


def test_interpretations_wrap_at_words_and_stop_after_three_lines(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as s:
        memory = s.save(LONG)
        ids = s.short_ids([memory.id])
    page = _text(memory_list_table([memory], ids=ids))
    _fits(page)
    rows = [line for line in page.splitlines() if line.startswith("│")]
    cells = [line.rsplit("│", 2)[-2].strip() for line in rows]
    assert len(cells) == 3 and cells[-1].endswith("…"), page
    # the offline interpretation only retells the content: the table shows the content
    assert memory.interpreted_content != memory.content
    words = set(memory.content.split())
    shown = " ".join(cells).removesuffix("…").split()
    assert all(word in words for word in shown[:-1]), "a word was split across lines"
    whole = _text(memory_list_table([memory], ids=ids, max_lines=None))
    assert "…" not in whole and "forty minutes" in " ".join(whole.split())


def test_wide_shows_full_ids_and_every_field_and_still_fits(store: aimem.MemoryStore) -> None:
    memories = store.list()
    for width in (COLS, 200):
        page = _text(memory_list_table(memories, wide=True), width=width)
        _fits(page, width)
        assert all(m.id in page for m in memories)
        assert all(name in page for name in ("emo", "rel", "nov", "util", "priority"))
    hits = store.search("school")
    page = _text(search_table(hits, wide=True))
    _fits(page)
    assert hits[0].memory.id in page


def test_ids_of_the_same_millisecond_still_have_short_unique_prefixes(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), max_memories=100) as s:
        memories = s.save_many([f"My friend number {i} is called Name{i}." for i in range(30)])
        short = s.short_ids(m.id for m in memories)
        assert len(set(short.values())) == 30
        assert max(len(p) for p in short.values()) <= 18, short
        for m in memories:
            assert s.resolve_id(short[m.id]) == m.id


# -- 1b. the CLI at 80 columns: the same short ids everywhere, prefixes taken ----------------


def test_cli_output_fits_80_columns_and_shows_one_short_id_per_memory(db_url: str) -> None:
    for text in DEMO_MEMORIES[:4]:
        assert _run(db_url, "save", text).returncode == 0
    saved = _run(db_url, "save", LONG)  # the last: its prefix is still the shortest unique
    assert saved.returncode == 0, saved.stderr
    listed = json.loads(_run(db_url, "list", "--json").stdout)
    runs = [saved, _run(db_url, "list"), _run(db_url, "search", "penicillin")]
    for run in runs:
        assert run.returncode == 0, run.stderr
        _fits(run.stdout)
        assert "0…" not in run.stdout
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as s:
        short = s.short_ids(m["id"] for m in listed)
    assert _ids_in(runs[1].stdout) == set(short.values())  # list: every id, short
    target = next(m for m in listed if "penicillin" in m["content"])
    assert short[target["id"]] in runs[2].stdout  # search: the same prefix
    long = next(m for m in listed if m["content"] == LONG)
    assert short[long["id"]] in saved.stdout  # the save result: the same prefix
    show = _run(db_url, "show", short[target["id"]])
    assert show.returncode == 0 and target["id"] in show.stdout
    history = _run(db_url, "history", short[target["id"]], "--wide")
    assert history.returncode == 0 and "save" in history.stdout
    pinned = _run(db_url, "pin", short[target["id"]])
    assert pinned.stdout.startswith(f"pinned {short[target['id']]} ")
    wide = _run(db_url, "list", "--wide")
    _fits(wide.stdout)
    assert all(m["id"] in wide.stdout for m in listed)


def test_an_ambiguous_or_unknown_prefix_is_one_line_naming_what_was_typed(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as s:
        a, b = s.save_many(["I live in Porto.", "My dog is called Rex."])
    common = next(a.id[:n] for n in range(len(a.id), 0, -1) if b.id.startswith(a.id[:n]))
    assert len(common) >= 8
    cases = [(common, r"\d"), ("ffff0000", "'ffff0000'"), ("ab", "at least 4")]
    for typed, fragment in cases:
        for command in (["show", typed], ["pin", typed], ["history", typed]):
            capsys.readouterr()
            code = main(["--database-url", db_url, *command])
            err = capsys.readouterr().err
            lines = [line for line in err.splitlines() if line.strip()]
            assert code == 1 and len(lines) == 1 and lines[0].startswith("error: "), err
            assert re.search(fragment, lines[0]), lines[0]


# -- 2. --database-url and --namespace before or after any subcommand ------------------------


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    [sub] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _minimal_argv(name: str, parser: argparse.ArgumentParser) -> list[str]:
    argv = [name]
    for action in parser._actions:
        if not action.option_strings and action.dest != "help":
            argv.append("x")
        elif action.required:
            argv += [action.option_strings[0], "x"]
    return argv


@pytest.mark.parametrize("name", sorted(_subparsers()))
def test_store_options_work_before_and_after_every_subcommand(name: str) -> None:
    argv = _minimal_argv(name, _subparsers()[name])
    parse = build_parser().parse_args
    before = parse(["--database-url", "sqlite:///b.db", "--namespace", "b", *argv])
    after = parse([*argv, "--database-url", "sqlite:///a.db", "--namespace", "a"])
    both = parse(["--namespace", "b", *argv, "--namespace", "a"])
    neither = parse(argv)
    assert (before.database_url, before.namespace) == ("sqlite:///b.db", "b")
    assert (after.database_url, after.namespace) == ("sqlite:///a.db", "a")
    assert both.namespace == "a", "the value after the subcommand wins"
    assert (neither.database_url, neither.namespace) == (None, "default")


def test_options_after_the_subcommand_reach_the_store(
    db_url_factory: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    here, there = db_url_factory("here"), db_url_factory("there")
    assert (
        main(["save", "I'm allergic to penicillin.", "--namespace", "work", "--database-url", here])
        == 0
    )
    assert main(["--database-url", there, "save", "The spare key is under the pot."]) == 0
    capsys.readouterr()
    assert main(["list", "--json", "--database-url", here, "--namespace", "work"]) == 0
    assert [m["content"] for m in json.loads(capsys.readouterr().out)] == [
        "I'm allergic to penicillin."
    ]
    assert main(["--namespace", "work", "list", "--json", "--database-url", there]) == 0
    assert json.loads(capsys.readouterr().out) == []


# -- 3. the offline-judge notice -------------------------------------------------------------


def _notices(text: str) -> list[str]:
    return [line for line in text.splitlines() if "HeuristicJudge" in line]


def test_the_judge_notice_never_comes_with_an_error(db_url: str) -> None:
    assert _notices(_one_error(_run(db_url, "save", ""))) == []
    bad = _run(db_url, "save", "I live in Porto.", "--database-url", "not a url")
    assert "HeuristicJudge" not in _one_error(bad)
    assert _run(db_url, "list", "--json").stdout.strip() == "[]"


def test_the_judge_notice_comes_once_after_the_output(db_url: str, tmp_path: Path) -> None:
    saved = _run(db_url, "save", "I'm allergic to penicillin.", merged=True)
    assert saved.returncode == 0
    [notice] = _notices(saved.stdout)
    assert saved.stdout.rstrip().endswith(notice.rstrip()), "after the table"
    lines = tmp_path / "notes.txt"
    lines.write_text("I live in Porto.\nMy dog is called Rex.\nI play the cello.\n")
    ingested = _run(db_url, "ingest", str(lines), "--batch", "1", merged=True)
    assert ingested.returncode == 0 and len(_notices(ingested.stdout)) == 1
    assert _notices(_run(db_url, "list", merged=True).stdout) == []  # no judging, no notice
    with OpenAIStub() as stub:
        judged = _run(
            db_url, "save", "I play the oboe.", merged=True, OPENAI_BASE_URL=stub.base_url
        )
    assert judged.returncode == 0 and _notices(judged.stdout) == []


# -- 4. start-up: nothing heavy before it is needed ------------------------------------------


def _imported(url: str, *argv: str) -> set[str]:
    """The top-level packages ``aimem <argv>`` imported."""
    return {m.split(".")[0] for m in imported_modules(cli_env(url), *argv)}


def test_help_version_and_list_import_no_llm_sdk_or_mcp(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as s:
        s.save("I'm allergic to penicillin.")
    never = {"openai", "httpx", "mcp", "sentence_transformers", "torch", "tenacity"}
    for argv in (["--help"], ["--version"], ["list"], ["list", "--help"]):
        modules = _imported(db_url, *argv)
        assert not modules & never, (argv, modules & never)
        if argv != ["list"]:
            assert not modules & {"sqlalchemy", "pydantic", "rich", "numpy"}, (argv, modules)
    assert {"sqlalchemy", "rich"} <= _imported(db_url, "list")


def test_public_names_are_imported_on_first_use() -> None:
    script = """
import sys
import aimem
assert "openai" not in sys.modules and "aimem.sync_store" not in sys.modules
store = aimem.MemoryStore("sqlite:///:memory:", judge=aimem.HeuristicJudge())
store.save("I'm allergic to penicillin.")
assert "openai" not in sys.modules, "a store with the offline judge needs no SDK"
from aimem import OpenAIJudge, OpenAIEmbedder
assert "openai" in sys.modules
assert all(getattr(aimem, name) is not None for name in aimem.__all__)
assert set(aimem.__all__) <= set(dir(aimem))
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr


# -- 5. progress bars: on a terminal, never in a pipe ----------------------------------------


class _FailingJudge:
    """A judge whose every call fails: saves stay pending, for ``reinterpret``."""

    async def interpret(self, content: str, **kwargs: object) -> aimem.Interpretation:
        raise aimem.JudgeError("the judge is down")


def test_bulk_commands_draw_progress_on_a_terminal_and_not_in_a_pipe(
    db_url_factory: Callable[[str], str], tmp_path: Path
) -> None:
    url = db_url_factory("bulk")
    with aimem.MemoryStore(url, judge=_FailingJudge(), on_judge_error="pending") as s:
        s.save_many(["I live in Porto.", "My dog is called Rex."])
    notes = tmp_path / "notes.txt"
    notes.write_text("I play the cello.\nMy sister lives in Melbourne.\n")
    export = tmp_path / "export.jsonl"
    with OpenAIStub() as stub:
        stub_env = {"OPENAI_BASE_URL": stub.base_url}
        commands: list[tuple[Sequence[str], str, dict[str, str]]] = [
            (["reinterpret"], "judging", {}),
            (["ingest", str(notes)], "saving", {}),
            (["reembed", "--embedder", "openai:stub-model"], "re-embedding", stub_env),
            (["export", str(export)], "", {}),
            (["import", str(export), "--database-url", db_url_factory("copy")], "importing", {}),
        ]
        for argv, label, extra in commands:
            run = run_in_pty([AIMEM, *argv], cli_env(url, **extra), cols=COLS)
            assert run.code == 0, run.describe()
            if label:
                assert label in run.err and "━" in run.err, run.describe()
        piped = _run(db_url_factory("piped"), "ingest", str(notes))
        assert piped.returncode == 0 and "━" not in piped.stderr and "saving" not in piped.stderr


def test_bulk_store_methods_report_their_progress(
    db_url: str, db_url_factory: Callable[[str], str], tmp_path: Path
) -> None:
    calls: list[tuple[int, int]] = []
    with aimem.MemoryStore(db_url, judge=_FailingJudge(), on_judge_error="pending") as s:
        s.save_many(["I live in Porto.", "My dog is called Rex.", "I play the cello."])
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as s:
        assert len(s.reinterpret_pending(progress=lambda d, t: calls.append((d, t)))) == 3
        assert calls[-1] == (3, 3) and [t for _, t in calls] == [3] * len(calls)
        s.export_to(tmp_path / "e.jsonl")
    calls.clear()
    with aimem.MemoryStore(db_url_factory("copy"), judge=aimem.HeuristicJudge()) as s:
        s.import_from(tmp_path / "e.jsonl", progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 3), (3, 3)]


# -- 6. import --json, also when refused -----------------------------------------------------


def test_import_json_prints_the_report_also_when_refused(
    db_url: str, db_url_factory: Callable[[str], str], tmp_path: Path
) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as s:
        s.save_many(["I live in Porto.", "My dog is called Rex."])
        s.export_to(tmp_path / "good.jsonl")
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text((tmp_path / "good.jsonl").read_text().replace("Porto", "Paris"))
    for path, namespace in ((tampered, "other"), (tmp_path / "good.jsonl", "default")):
        run = _run(db_url, "import", str(path), "--json", "--namespace", namespace)
        assert run.returncode == 1, run.stderr
        report = json.loads(run.stdout)
        assert report["ok"] is False and report["dry_run"] is False and report["errors"]
        assert report["archived"] == []
    assert _run(db_url, "list", "--json", "--namespace", "other").stdout.strip() == "[]"
    elsewhere = db_url_factory("elsewhere")  # memory ids are unique across a database
    ok = json.loads(_run(elsewhere, "import", str(tmp_path / "good.jsonl"), "--json").stdout)
    assert ok["ok"] is True and ok["memories"] == 2
    assert "refused" in _one_error(_run(db_url, "import", str(tampered), "--namespace", "x"))


# -- 7. ingest --chat ------------------------------------------------------------------------


def _chat_files(tmp_path: Path) -> dict[str, Path]:
    files = {
        "list.json": json.dumps(TRANSCRIPT, indent=2),
        "object.json": json.dumps({"model": "gpt-4o", "messages": TRANSCRIPT}),
        "chat.jsonl": "\n".join(json.dumps(m) for m in TRANSCRIPT) + "\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return {name: tmp_path / name for name in files}


@pytest.mark.parametrize("name", ["list.json", "object.json", "chat.jsonl"])
def test_ingest_chat_saves_what_the_user_said(db_url: str, tmp_path: Path, name: str) -> None:
    path = _chat_files(tmp_path)[name]
    run = _run(db_url, "ingest", "--chat", str(path), "--user-context", "syui")
    assert run.returncode == 0, run.stderr
    _fits(run.stdout)
    memories = json.loads(_run(db_url, "list", "--json").stdout)
    contents = " ".join(m["content"] for m in memories)
    assert "penicillin" in contents and "Lisbon" in contents
    assert "Congratulations" not in contents and "helpful assistant" not in contents
    assert {m["user_context"] for m in memories} == {"syui"}
    again = _run(db_url, "ingest", "--chat", str(path))
    assert again.returncode == 0 and "already remembered" in again.stdout


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"role": "user", "content": "hi there"}\n{not json\n', "line 2"),
        (
            '{"role": "user", "content": "I live in Porto."}\n\n'
            '{"role": "wizard", "content": "x"}\n',
            "line 3",
        ),
        (json.dumps([TRANSCRIPT[1], {"role": "wizard", "content": "x"}]), r"messages\[1\]"),
        ('[\n  {"role": "user", "content": "I live in Porto."},\n  oops\n]', "line 3"),
        ("42", "list of"),
        ('[{"role": "assistant", "content": "Hello!"}]', "no user turn"),
        ("  \n", "empty"),
    ],
)
def test_a_bad_chat_file_is_one_line_naming_where_and_writes_nothing(
    db_url: str, tmp_path: Path, text: str, fragment: str
) -> None:
    path = tmp_path / "chat.txt"
    path.write_text(text, encoding="utf-8")
    line = _one_error(_run(db_url, "ingest", "--chat", str(path)))
    assert str(path) in line and re.search(fragment, line), line
    assert _run(db_url, "list", "--all", "--json").stdout.strip() == "[]"
