"""JSON that Python's parser cannot build (nested too deeply, a number past the int-string
limit) is a one-line error and writes nothing: in ``aimem ingest``, ``ingest --chat`` and
``import`` (the installed command, in a subprocess), and a typed error in the library.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _stores import store_url

import aimem
from aimem.cli.chat import read_chat
from aimem.validation import parse_json

AIMEM = str(Path(sys.executable).with_name("aimem"))
DEEP_LIST = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
BIG = "7" * 5000
NESTED, TOO_LONG = "nested too deeply to read", "a number of more than 4300 digits"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    return env | {"COLUMNS": "200"}


class Db:
    """A store holding one memory (so that "nothing written" can be seen), and a folder."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.url = folder, store_url(folder / "m.db")
        with self.store() as store:
            store.save("I'm allergic to penicillin.")

    def store(self) -> aimem.MemoryStore:
        return aimem.MemoryStore(self.url, judge=aimem.HeuristicJudge())

    def snapshot(self) -> list[tuple[str, str, int]]:
        with self.store() as store:
            return [(m.id, m.content, m.version) for m in store.list(include_archived=True)]


@pytest.fixture
def db(tmp_path: Path) -> Db:
    return Db(tmp_path)


def _refused(db: Db, *argv: str) -> list[str]:
    """Run ``aimem ARGV``: exit 1, no traceback, nothing on stdout, the store unchanged."""
    before = db.snapshot()
    result = subprocess.run(
        [AIMEM, "--database-url", db.url, *argv],
        env=_env(),
        cwd=db.folder,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == "", result.stderr
    assert db.snapshot() == before
    lines = result.stderr.splitlines()
    assert sum(line.startswith("error: ") for line in lines) == 1 and lines[0].startswith("error:")
    return lines


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("deep.json", DEEP_LIST, f"deep.json: not valid JSON ({NESTED})"),
        ("deep.jsonl", DEEP_OBJECT + "\n", f"deep.jsonl: line 1: not valid JSON ({NESTED})"),
        (
            "big.json",
            json.dumps([{"role": "user", "content": "hi"}])[:-1] + f", {BIG}]",
            f"big.json: not valid JSON ({TOO_LONG})",
        ),
        (
            "big.jsonl",
            '{"role": "user", "content": "hi"}\n{"role": "user", "content": "x", "n": ' + BIG + "}",
            f"big.jsonl: line 2: not valid JSON ({TOO_LONG})",
        ),
    ],
)
def test_ingest_chat(db: Db, name: str, text: str, message: str) -> None:
    (db.folder / name).write_text(text, encoding="utf-8")
    assert _refused(db, "ingest", "--chat", name) == [f"error: {message}"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [(DEEP_LIST, NESTED), ('{"content": "hi", "n": ' + BIG + "}", TOO_LONG)],
)
def test_ingest_json_lines(db: Db, line: str, problem: str) -> None:
    """Ingest's usual report: one error line, then the bad line by number."""
    path = db.folder / "notes.jsonl"
    path.write_text(json.dumps({"content": "I like tea."}) + "\n" + line + "\n", encoding="utf-8")
    assert _refused(db, "ingest", str(path)) == [
        "error: " + f"{path}: 1 bad line(s); nothing was saved",
        f"  line 2: not valid JSON ({problem})",
    ]


def _tampered(db: Db, how: str) -> tuple[Path, int]:
    """An export of ``db`` with one bad line (added, or a history detail replaced), checksummed
    anew so that only that line is wrong; and the line's number."""
    source = db.folder / "source.jsonl"
    with db.store() as store:
        store.export_to(source)
    body = source.read_text(encoding="utf-8").split("\n")[:-2]  # without the trailer
    if how == "detail":
        number = next(n for n, b in enumerate(body, 1) if json.loads(b)["kind"] == "history")
        event = json.loads(body[number - 1])
        body[number - 1] = json.dumps({**event, "detail": "[" * 4000 + "]" * 4000})
    else:
        body.append(DEEP_LIST if how == "deep" else '{"kind": "memory", "x": ' + BIG + "}")
        number = len(body)
    data = "".join(f"{b}\n" for b in body)
    digest = hashlib.sha256(data.encode()).hexdigest()
    trailer = json.dumps({"kind": "trailer", "lines": len(body), "sha256": digest})
    target = db.folder / "tampered.jsonl"
    target.write_text(data + trailer + "\n", encoding="utf-8")
    return target, number


@pytest.mark.parametrize(
    ("how", "problem"),
    [
        ("deep", f"not valid JSON ({NESTED})"),
        ("big", f"not valid JSON ({TOO_LONG})"),
        ("detail", "(history): detail is not JSON"),  # parsed by export_checks
    ],
)
def test_import(db: Db, how: str, problem: str) -> None:
    path, number = _tampered(db, how)
    [error] = _refused(db, "import", str(path))
    assert error.startswith("error: Import refused, nothing was written")
    assert f"line {number}: {problem}" in error or f"line {number} {problem}" in error
    with db.store() as store:
        with pytest.raises(aimem.ValidationError, match="nothing was written"):
            store.import_from(path)
        assert problem in store.import_from(path, dry_run=True).errors[0]


@pytest.mark.parametrize(
    ("text", "message"), [(DEEP_LIST, NESTED), (DEEP_OBJECT, NESTED), (f"[{BIG}]", TOO_LONG)]
)
def test_the_library_raises_a_typed_error(text: str, message: str) -> None:
    with pytest.raises(aimem.ValidationError, match=message):
        parse_json(text)
    with pytest.raises(aimem.ValidationError, match=message):
        read_chat(text, name="chat.json", jsonl=False, max_chars=16_000)


def test_ordinary_json_errors_are_unchanged() -> None:
    with pytest.raises(json.JSONDecodeError):
        parse_json("{not json")
    with pytest.raises(UnicodeDecodeError):
        parse_json(b"\xff")
    assert parse_json(b'{"n": 12}') == {"n": 12}
