"""aigpt trees from untrusted places: all-or-nothing imports that stay inside the tree.

An import validates every record with the store's own rules before anything is saved,
names the bad file relative to PATH, and never follows a symlink or reads a FIFO,
device or oversized file. Export never writes through a symlinked folder.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from _stores import store_url

import aimem
from aimem.cli import main
from aimem.transfer.aigpt import export_tree, import_tree, read_tree, write_tree

DID = "did:plc:uqzpqmrjnptsxezjx4xuh2mn"
CORE = "ai.syui.gpt.core"
MEMORY = "ai.syui.gpt.memory"
CORE_FILE = f"{DID}/{CORE}/self.json"
RKEY = "3lfqxzzzzzz2a"
MEMORY_FILE = f"{DID}/{MEMORY}/{RKEY}.json"

needs_symlinks = pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges")
needs_fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def open_store(tmp_path: Path, name: str = "a.db", **overrides: Any) -> aimem.MemoryStore:
    return aimem.MemoryStore(store_url(tmp_path / name), judge=aimem.HeuristicJudge(), **overrides)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[aimem.MemoryStore]:
    with open_store(tmp_path) as s:
        yield s


def body(collection: str, rkey: str, text: Any, did: str = DID) -> str:
    value: dict[str, Any] = {"$type": collection, "did": did}
    value["content"] = {"$type": f"{collection}#markdown", "text": text}
    value["createdAt"] = "2026-03-01T12:00:00Z"
    return json.dumps({"uri": f"at://{did}/{collection}/{rkey}", "value": value})


def put(root: Path, collection: str, rkey: str, text: Any, did: str = DID) -> Path:
    file = root / did / collection / f"{rkey}.json"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(body(collection, rkey, text, did), encoding="utf-8")
    return file


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A valid tree: a core and two memories."""
    root = tmp_path / "content"
    put(root, CORE, "self", "あなたは syui のアシスタント。")
    put(root, MEMORY, "3lfqxcu2ybk2a", "syuiはRustを好む")
    put(root, MEMORY, "3lfqxcu2ybk2b", "User is allergic to penicillin.")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the tree, holding records an import must never read."""
    elsewhere = tmp_path / "elsewhere"
    put(elsewhere, CORE, "self", "SECRET core from outside")
    put(elsewhere, MEMORY, RKEY, "SECRET memory from outside")
    return elsewhere


def assert_untouched(store: aimem.MemoryStore, core: str = "") -> None:
    assert store.stats().total == 0
    assert store.get_core() == core


def refused(call: Callable[[], object]) -> str:
    with pytest.raises(aimem.ValidationError) as caught:
        call()
    message = str(caught.value)
    assert "SECRET" not in message
    return message


# -- record texts follow the store's rules -------------------------------------------------


def test_a_core_with_nul_writes_nothing_and_names_self_json(
    store: aimem.MemoryStore, tree: Path
) -> None:
    store.set_core("existing core")
    put(tree, CORE, "self", "I am Ai.\x00 ignore the rest")
    message = refused(lambda: import_tree(store, tree))
    assert message.startswith(f"{CORE_FILE}: ")
    assert "U+0000" in message
    assert str(tree) not in message
    assert_untouched(store, core="existing core")


def test_a_memory_with_esc_writes_nothing_and_names_its_file(
    store: aimem.MemoryStore, tree: Path
) -> None:
    put(tree, MEMORY, RKEY, "fact \x1b[31mred")
    message = refused(lambda: import_tree(store, tree))
    assert message.startswith(f"{MEMORY_FILE}: ")
    assert "U+001B" in message
    assert_untouched(store)


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\ud800"])
def test_read_tree_refuses_what_the_store_refuses(tree: Path, char: str) -> None:
    put(tree, MEMORY, RKEY, f"fact{char}")
    message = refused(lambda: read_tree(tree))
    assert message.startswith(f"{MEMORY_FILE}: ")
    assert f"U+{ord(char):04X}" in message
    with pytest.raises(aimem.ValidationError):
        aimem.validation.check_content(f"fact{char}", 100)  # the same rule, not a copy


def test_tabs_and_line_breaks_are_accepted_as_the_store_accepts_them(
    store: aimem.MemoryStore, tree: Path
) -> None:
    put(tree, CORE, "self", "line one\r\nline\ttwo")
    put(tree, MEMORY, RKEY, "first\r\nsecond\rthird")
    report = import_tree(store, tree)
    assert store.get_core() == "line one\nline\ttwo"
    assert report.memories[-1].content == "first\nsecond\nthird"


def test_an_over_long_core_is_refused_before_any_memory_is_saved(
    tmp_path: Path, tree: Path
) -> None:
    put(tree, CORE, "self", "x" * 51)
    with open_store(tmp_path, "small.db", max_content_chars=50) as small:
        message = refused(lambda: import_tree(small, tree))
        assert message.startswith(CORE_FILE)
        assert_untouched(small)


# -- staying inside the tree ---------------------------------------------------------------


@needs_symlinks
def test_a_symlinked_record_file_pointing_outside_is_refused(
    store: aimem.MemoryStore, tree: Path, outside: Path
) -> None:
    (tree / MEMORY_FILE).symlink_to(outside / MEMORY_FILE)
    message = refused(lambda: import_tree(store, tree))
    assert message.startswith(f"{MEMORY_FILE}: ")
    assert "symlink" in message
    assert_untouched(store)


@needs_symlinks
def test_a_symlinked_core_file_pointing_outside_is_refused(
    store: aimem.MemoryStore, tree: Path, outside: Path
) -> None:
    (tree / CORE_FILE).unlink()
    (tree / CORE_FILE).symlink_to(outside / CORE_FILE)
    message = refused(lambda: import_tree(store, tree))
    assert message.startswith(f"{CORE_FILE}: ")
    assert_untouched(store)


@needs_symlinks
def test_a_symlinked_did_folder_pointing_outside_is_refused(
    store: aimem.MemoryStore, tmp_path: Path, outside: Path
) -> None:
    root = tmp_path / "content"
    root.mkdir()
    (root / DID).symlink_to(outside / DID, target_is_directory=True)
    for did in (None, DID):  # found by itself, or named with --did
        with pytest.raises(aimem.ValidationError) as caught:
            import_tree(store, root, did=did)
        message = str(caught.value)
        assert message.startswith(f"{DID}: ")
        assert "symlink" in message
        assert str(outside) not in message
    assert_untouched(store)


@needs_symlinks
def test_a_symlinked_did_folder_beside_the_chosen_one_is_not_read(
    store: aimem.MemoryStore, tree: Path, outside: Path
) -> None:
    (tree / "did:plc:other").symlink_to(outside / DID, target_is_directory=True)
    with pytest.raises(aimem.ValidationError, match=r"^did:plc:other: .*symlink"):
        import_tree(store, tree)  # it would have been a candidate: refused, not skipped
    report = import_tree(store, tree, did=DID)  # named explicitly: the link is never opened
    assert len(report.memories) == 2


@needs_symlinks
def test_a_symlinked_collection_folder_pointing_outside_is_refused(
    store: aimem.MemoryStore, tmp_path: Path, outside: Path
) -> None:
    root = tmp_path / "content"
    (root / DID).mkdir(parents=True)
    (root / DID / MEMORY).symlink_to(outside / DID / MEMORY, target_is_directory=True)
    message = refused(lambda: import_tree(store, root))
    assert message.startswith(f"{DID}/{MEMORY}: ")
    assert_untouched(store)


@needs_symlinks
def test_a_symlink_pointing_inside_the_tree_is_refused_too(
    store: aimem.MemoryStore, tree: Path
) -> None:
    """Symlinks are never followed: an inside one would import the same record twice."""
    (tree / MEMORY_FILE).symlink_to(tree / DID / MEMORY / "3lfqxcu2ybk2a.json")
    message = refused(lambda: import_tree(store, tree))
    assert message.startswith(f"{MEMORY_FILE}: ")
    assert "symlinks are not followed" in message
    assert_untouched(store)


@needs_symlinks
def test_a_symlinked_root_is_the_callers_choice_and_is_followed(
    store: aimem.MemoryStore, tree: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link-to-content"
    link.symlink_to(tree, target_is_directory=True)
    assert len(import_tree(store, link).memories) == 2


@needs_fifos
def test_a_fifo_record_is_refused_without_hanging(store: aimem.MemoryStore, tree: Path) -> None:
    os.mkfifo(tree / MEMORY_FILE)
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            import_tree(store, tree)
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():  # blocked opening the FIFO: unblock it, then fail
        with open(tree / MEMORY_FILE, "w"):
            pass
        worker.join(timeout=10)
        pytest.fail("import_tree blocked on a FIFO")
    [error] = outcome
    assert isinstance(error, aimem.ValidationError)
    assert str(error).startswith(f"{MEMORY_FILE}: ")
    assert "not a regular file" in str(error)
    assert_untouched(store)


def test_an_oversized_record_is_refused_before_it_is_read(
    store: aimem.MemoryStore, tree: Path
) -> None:
    with open(tree / MEMORY_FILE, "wb") as big:
        big.truncate(17 * 1024 * 1024)  # sparse: costs no disk, and is not valid JSON
    message = refused(lambda: import_tree(store, tree))
    assert message.startswith(f"{MEMORY_FILE}: ")
    assert "16 MB" in message
    assert_untouched(store)


def test_a_file_where_a_collection_folder_belongs_is_refused(
    store: aimem.MemoryStore, tree: Path
) -> None:
    put(tree, CORE, "self", "core", did="did:plc:other")
    (tree / "did:plc:other" / MEMORY).write_text("not a folder")
    message = refused(lambda: import_tree(store, tree, did="did:plc:other"))
    assert message.startswith(f"did:plc:other/{MEMORY}: ")
    assert_untouched(store)


def test_a_file_name_with_control_characters_is_quoted_in_the_message(tree: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("such names are not allowed")
    bad = tree / DID / MEMORY / "3lfqx\x1b[31m.json"
    bad.write_text("{broken", encoding="utf-8")
    message = refused(lambda: read_tree(tree))
    assert "\x1b" not in message
    assert "\\x1b" in message


# -- the CLI -------------------------------------------------------------------------------


def test_cli_import_gives_one_error_line_exit_1_and_writes_nothing(
    tmp_path: Path, tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")  # a narrow terminal must not wrap the message
    put(tree, CORE, "self", "I am Ai.\x00")
    url = store_url(tmp_path / "cli.db")
    capsys.readouterr()
    code = main(["--database-url", url, "import-aigpt", str(tree)])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in err
    lines = err.splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, err
    assert errors[0].startswith(f"error: {CORE_FILE}: ")
    assert "U+0000" in errors[0]
    with aimem.MemoryStore(url, judge=aimem.HeuristicJudge()) as after:
        assert_untouched(after)


@needs_symlinks
def test_cli_import_refuses_a_symlinked_did_folder(
    tmp_path: Path, outside: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "content"
    root.mkdir()
    (root / DID).symlink_to(outside / DID, target_is_directory=True)
    url = store_url(tmp_path / "cli.db")
    capsys.readouterr()
    assert main(["--database-url", url, "import-aigpt", str(root)]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "symlink" in errors[0] and "SECRET" not in errors[0]
    with aimem.MemoryStore(url, judge=aimem.HeuristicJudge()) as after:
        assert_untouched(after)


# -- writing stays inside the target -------------------------------------------------------


def now() -> datetime:
    return datetime.now(UTC)


@needs_symlinks
def test_write_tree_refuses_a_symlinked_did_folder(tmp_path: Path) -> None:
    target, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    target.mkdir()
    elsewhere.mkdir()
    (target / DID).symlink_to(elsewhere, target_is_directory=True)
    message = refused(lambda: write_tree(target, DID, [("fact", now())], "core"))
    assert message.startswith(f"{DID}: ")
    assert "symlink" in message
    assert list(elsewhere.iterdir()) == []


@needs_symlinks
@pytest.mark.parametrize("collection", [CORE, MEMORY])
def test_write_tree_refuses_a_symlinked_collection_folder(tmp_path: Path, collection: str) -> None:
    target, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    (target / DID).mkdir(parents=True)
    elsewhere.mkdir()
    (target / DID / collection).symlink_to(elsewhere, target_is_directory=True)
    message = refused(lambda: write_tree(target, DID, [("fact", now())], "core"))
    assert message.startswith(f"{DID}/{collection}: ")
    assert list(elsewhere.iterdir()) == []
    assert not (target / DID / CORE / "self.json").exists()


@needs_symlinks
def test_write_tree_treats_a_dangling_core_symlink_as_an_existing_record(tmp_path: Path) -> None:
    target = tmp_path / "out"
    (target / DID / CORE).mkdir(parents=True)
    (target / DID / CORE / "self.json").symlink_to(tmp_path / "missing.json")
    refused(lambda: write_tree(target, DID, [], "core"))
    assert not (tmp_path / "missing.json").exists()


@needs_symlinks
def test_export_tree_refuses_a_symlinked_did_folder(
    store: aimem.MemoryStore, tmp_path: Path
) -> None:
    store.save("I moved to Osaka in 2024.")
    target, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    target.mkdir()
    elsewhere.mkdir()
    (target / DID).symlink_to(elsewhere, target_is_directory=True)
    refused(lambda: export_tree(store, target, DID))
    assert list(elsewhere.iterdir()) == []


def test_export_then_import_still_round_trips(store: aimem.MemoryStore, tmp_path: Path) -> None:
    store.set_core("I am Ai.")
    store.save("I moved to Osaka in 2024.")
    export_tree(store, tmp_path / "out", DID)
    with open_store(tmp_path, "b.db") as second:
        report = import_tree(second, tmp_path / "out")
        assert report.core_imported and second.get_core() == "I am Ai."
        assert [m.content for m in report.memories] == ["I moved to Osaka in 2024."]
