"""README's shell commands exist: every ``aimem`` it runs or names, checked against the parser.

The commands come from README's ``bash``/``sh``/``console`` blocks (each line, split at
``&&``, ``;``, ``|`` and a ``--`` that starts another command) and from its inline code
(`` `aimem list --json` ``, the CLI table's synopses, `` `claude mcp add ... -- aimem mcp` ``).
Each ``aimem`` invocation must name a real subcommand, and every option it shows must be
one of that subcommand's (with its choices); one that shows no placeholders (``TEXT``,
``[--limit N]``, ``a\\|b``, ``...``) must also parse as written. Also tied to the code:
the demo's count, and the lines ``.ci/run`` runs as README's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from aimem.cli import DEMO_MEMORIES, build_parser

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
CI = ROOT / ".ci" / "run"
SHELL_BLOCKS = {"bash", "sh", "console", "shell", "shell-session"}
#: Inline code that starts with ``aimem`` but is output, not a command.
NOT_COMMANDS = ("aimem MCP server listening on",)
#: Stands for a table cell's ``\\|`` (alternatives), so it is not read as a pipe.
ALT = "\N{BROKEN BAR}"
_PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*$")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SEPARATORS = {"&&", "||", ";", "|", "&", "--"}


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _shell_lines(text: str) -> list[str]:
    """Every line of README's shell code blocks, ``$ `` prompts removed."""
    lines: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        if line.startswith("```"):
            fence = (line[3:].strip() or "plain") if fence is None else None
            continue
        if fence in SHELL_BLOCKS:
            lines.append(line.removeprefix("$ "))
    return lines


def _inline_spans(text: str) -> list[str]:
    """Inline code spans outside code blocks that mention ``aimem`` as a word."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    spans = re.findall(r"`([^`\n]+)`", prose)
    return [s for s in spans if re.search(r"(^|\s|/)aimem(\s|$)", s)]


def _invocations(line: str) -> list[list[str]]:
    """The argument lists of each ``aimem`` command in a shell line (nothing else)."""
    line = re.sub(r"\$\([^)]*\)", "SUBST", line.replace("\\|", ALT))
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    segments: list[list[str]] = [[]]
    for token in lexer:
        if token in _SEPARATORS:
            segments.append([])
        else:
            segments[-1].append(token)
    found = []
    for words in segments:
        while words and _ENV.match(words[0]):  # VAR=value before the command
            words = words[1:]
        if words and Path(words[0]).name == "aimem":
            found.append(words[1:])
    return found


def _commands() -> list[tuple[str, list[str]]]:
    text = _readme()
    commands = []
    for line in _shell_lines(text):
        commands += [(line.strip(), argv) for argv in _invocations(line)]
    for span in _inline_spans(text):
        if span.startswith(NOT_COMMANDS):
            continue
        commands += [(f"`{span}`", argv) for argv in _invocations(span)]
    return commands


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _problems(argv: list[str]) -> list[str]:
    """What is wrong with ``aimem ARGV`` as README shows it (empty if nothing)."""
    parser = build_parser()
    words = [w.strip("[]") for w in argv if w.strip("[]")]
    synopsis = any(
        _PLACEHOLDER.match(w) or ALT in w or "..." in w or "[" in raw
        for w, raw in zip(words, [a for a in argv if a.strip("[]")], strict=True)
    )
    problems: list[str] = []
    i, options = 0, parser._option_string_actions
    while i < len(words) and words[i].startswith("-"):  # options before the command
        name = words[i].split("=")[0]
        if name not in options:
            return [f"no global option {name}"]
        i += 1 if options[name].nargs == 0 or "=" in words[i] else 2
    if i < len(words):
        command = words[i]
        commands = _subparsers(parser)
        if command not in commands:
            return [f"no command {command!r} (commands: {', '.join(sorted(commands))})"]
        options = commands[command]._option_string_actions
    for at, word in enumerate(words[i + 1 :], start=i + 1):
        if not word.startswith("-") or word == "-" or ALT in word:
            continue
        name = word.split("=")[0]
        action = options.get(name)
        if action is None:
            problems.append(f"no option {name}")
            continue
        value = words[at + 1] if at + 1 < len(words) else ""
        if action.choices is not None and action.nargs != 0 and not _PLACEHOLDER.match(value):
            wrong = [v for v in value.split(ALT) if v not in action.choices]
            if wrong:
                problems.append(f"{name} takes {sorted(action.choices)}, not {wrong}")
    if not problems and not synopsis:
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            try:
                parser.parse_args(words)
            except SystemExit as exc:
                if exc.code:
                    problems.append(errors.getvalue().strip().splitlines()[-1])
    return problems


def test_readme_shows_many_commands() -> None:
    commands = _commands()
    assert len(commands) > 40
    assert any(argv[:1] == ["status"] for _, argv in commands)
    assert any(argv[:1] == ["mcp"] and where.startswith("`claude") for where, argv in commands)


@pytest.mark.parametrize(("where", "argv"), _commands())
def test_every_readme_command_exists(where: str, argv: list[str]) -> None:
    assert not _problems(argv), f"README shows {where}: {_problems(argv)}"


@pytest.mark.parametrize(
    "argv",
    [
        ["stauts"],
        ["list", "--limt", "3"],
        ["search", "QUERY", "[--mode", f"hybrid{ALT}fuzzy]"],
        ["list", "--order", "oldest"],
        ["ingest", "--batch"],
        ["--namespace"],
    ],
)
def test_a_command_that_does_not_exist_is_caught(argv: list[str]) -> None:
    assert _problems(argv)


def test_shell_lines_are_split_into_their_commands() -> None:
    line = "AIMEM_MCP_TOKEN=$(openssl rand -hex 32) aimem mcp --port 1 && .venv/bin/aimem list"
    assert _invocations(line) == [["mcp", "--port", "1"], ["list"]]
    assert _invocations("claude mcp add aimem -e AIMEM_EMBEDDER=local -- aimem mcp") == [["mcp"]]
    assert _invocations("aimem list --order priority\\|recent  # comment") == [
        ["list", "--order", f"priority{ALT}recent"]
    ]
    assert _invocations("pip install 'aimem[local]'") == []


def test_readme_states_the_demos_true_count() -> None:
    counts = re.findall(r"`aimem demo` saves (\w+)", _readme())
    assert counts == [str(len(DEMO_MEMORIES))]


def _normal(line: str) -> str:
    """A command line as words: comments, quoting and ``$(...)`` bodies set aside."""
    return " ".join(shlex.split(re.sub(r"\$\([^)]*\)", "SUBST", line), comments=True))


def test_ci_runs_readmes_commands_as_written() -> None:
    """What .ci/run runs under a ``# README: ...`` comment is what README shows."""
    readme = {_normal(line) for line in _shell_lines(_readme()) if line.strip()}
    tied: list[str] = []
    block = False
    for line in CI.read_text(encoding="utf-8").splitlines():
        block = line.startswith("# README:") or (block and bool(line.strip()))
        if block and (".venv/bin/" in line or "python3 -m venv" in line):
            tied.append(line)
    assert len(tied) >= 5
    for line in tied:
        command = re.sub(r"^env( -u \w+)+ ", "", line.strip())  # CI clears the judge's keys
        assert _normal(command) in readme, line


def test_quick_start_installs_cpu_torch_first() -> None:
    text = _readme()
    start = text.index("## Quick start")
    quick = text[start : text.index("\n## ", start + 1)]
    cpu = quick.find("--index-url https://download.pytorch.org/whl/cpu")
    install = quick.find('pip install -e ".[dev]"')
    assert 0 <= cpu < install, "the CPU torch line comes before the install line"
