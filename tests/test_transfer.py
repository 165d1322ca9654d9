"""Export, import and backup: lossless, checksummed, all-or-nothing, never overwriting."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from _stores import store_url

import aimem
from aimem.testing import FixedJudge, HashEmbedder


def _store(path: Path, **kwargs: Any) -> aimem.MemoryStore:
    options: dict[str, Any] = {"judge": FixedJudge(), "embedder": HashEmbedder()} | kwargs
    return aimem.MemoryStore(store_url(path), **options)


def _varied(store: aimem.MemoryStore) -> None:
    """Every kind of state a memory can be in, with the fields export must keep."""
    store.set_core("You are Ai.\nBe kind. 日本語も。")
    for i in range(6):
        store.save(f"memory {i} of many [score=0.{i + 3}]", idempotency_key=f"key-{i}")
    store.save("Allergic to penicillin — 大事 [score=0.9]", user_context="syui")
    pinned = store.list()[-1]
    store.pin(pinned.id)
    store.search("memory")  # access counts and last_accessed_at
    with aimem.MemoryStore(store.database_url, judge=_Broken(), namespace=store.namespace) as down:
        down.save("saved while the judge was down")  # pending
    store.save("to be deleted [score=0.5]")
    store.delete(store.list(order="recent")[0].id)


class _Broken:
    async def interpret(self, content: str, **_: object) -> aimem.Interpretation:
        raise RuntimeError("down")


def _rewrite(path: Path, edit: Any) -> None:
    """Change the file's lines and re-seal the trailer, as a careful forger would."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]
    lines = edit(lines)
    body = "".join(lines).encode()
    trailer = {"kind": "trailer", "lines": len(lines), "sha256": hashlib.sha256(body).hexdigest()}
    path.write_text("".join(lines) + json.dumps(trailer) + "\n", encoding="utf-8")


def test_export_import_export_is_byte_identical(tmp_path: Path) -> None:
    with _store(tmp_path / "a.db", max_memories=4) as source:
        _varied(source)
        first = source.export_to(tmp_path / "one.jsonl")
        before = source.stats()
    assert first.memories == 8 and first.history > first.memories
    with _store(tmp_path / "b.db", max_memories=4) as target:
        assert target.import_from(tmp_path / "one.jsonl").ok
        target.export_to(tmp_path / "two.jsonl")
        after = target.stats()
        assert target.get_core() == "You are Ai.\nBe kind. 日本語も。"
        # Imported memories work: search, idempotency keys, the pending queue.
        assert target.search("penicillin")[0].memory.user_context == "syui"
        assert target.search("memory 5", mode="semantic")
        assert target.save("memory 1 of many [score=0.4]", idempotency_key="key-1").version >= 1
        assert target.stats().total == after.total
        assert target.stats().pending == 1
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()
    assert (before.count, before.archived, before.pinned, before.pending, before.total) == (
        after.count,
        after.archived,
        after.pinned,
        after.pending,
        after.total,
    )


def test_export_file_shape(tmp_path: Path) -> None:
    with _store(tmp_path / "a.db", max_memories=4) as store:
        _varied(store)
        store.export_to(tmp_path / "x.jsonl", include_history=False)
    lines = [json.loads(line) for line in (tmp_path / "x.jsonl").read_text().splitlines()]
    header, core, *memories, trailer = lines
    assert header["format"] == "aimem-export" and header["format_version"] == 1
    assert header["history"] is False and header["counts"] == {"memories": 8, "history": 0}
    assert core["kind"] == "core"
    assert {m["kind"] for m in memories} == {"memory"}
    assert set(aimem.Memory.model_fields) <= set(memories[0])
    archived = [m for m in memories if m["archived_at"] is not None]
    pending = [m for m in memories if m["score_source"] == "pending"]
    assert archived and pending and pending[0]["priority_score"] is None
    assert memories[0]["idempotency_keys"][0]["key"] == "key-0"
    assert memories[0]["vector"]["dim"] == 256
    assert trailer["kind"] == "trailer" and trailer["lines"] == len(lines) - 1


def test_export_never_overwrites(tmp_path: Path) -> None:
    existing = tmp_path / "taken.jsonl"
    existing.write_text("precious")
    with _store(tmp_path / "a.db") as store:
        store.save("x [score=0.5]")
        with pytest.raises(FileExistsError):
            store.export_to(existing)
        with pytest.raises(FileExistsError):
            store.backup(existing)
    assert existing.read_text() == "precious"
    leftovers = {p.name for p in tmp_path.iterdir()} - {"a.db", "a.db-shm", "a.db-wal"}
    assert leftovers == {"taken.jsonl"}


def _exported(tmp_path: Path) -> Path:
    with _store(tmp_path / "a.db", max_memories=4) as store:
        _varied(store)
        store.export_to(tmp_path / "x.jsonl")
    return tmp_path / "x.jsonl"


def _raise_or_report(tmp_path: Path, path: Path, expected: str) -> None:
    with _store(tmp_path / "fresh.db") as target:
        report = target.import_from(path, dry_run=True)
        assert not report.ok and any(expected in e for e in report.errors), report.errors
        with pytest.raises(aimem.ValidationError, match="nothing was written"):
            target.import_from(path)
        assert target.stats().total == 0 and target.get_core() == ""


def test_a_flipped_byte_is_caught_by_the_checksum(tmp_path: Path) -> None:
    path = _exported(tmp_path)
    data = bytearray(path.read_bytes())
    data[data.index(b"penicillin")] = ord("P")
    path.write_bytes(bytes(data))
    _raise_or_report(tmp_path, path, "checksum mismatch")


@pytest.mark.parametrize("cut", [1, 50, 2000])
def test_a_truncated_file_is_refused(tmp_path: Path, cut: int) -> None:
    path = _exported(tmp_path)
    path.write_bytes(path.read_bytes()[:-cut])
    _raise_or_report(tmp_path, path, "truncated")


FORGERIES = {
    "score above the rubric": (
        lambda m: m | {"utility": 0.9, "priority_score": m["priority_score"] + 0.65},
        "[0, 0.25]",
    ),
    "priority not the sum": (lambda m: m | {"priority_score": 1.0}, "not the sum"),
    "unknown field": (lambda m: m | {"admin": True}, "Extra inputs are not permitted"),
    "wrong type": (lambda m: m | {"access_count": "3"}, "access_count"),
    "control character": (lambda m: m | {"content": "bell\u0007"}, "control character"),
    "other namespace": (lambda m: m | {"namespace": "mallory"}, "differs from the header"),
    "half archived": (lambda m: m | {"archive_reason": "over_capacity"}, "archived_at"),
    "bad vector": (lambda m: m | {"vector": m["vector"] | {"dim": 3}}, "expected 12"),
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_resealed_forgeries_fail_validation(tmp_path: Path, name: str) -> None:
    path = _exported(tmp_path)
    change, expected = FORGERIES[name]

    def edit(lines: list[str]) -> list[str]:
        for i, line in enumerate(lines):
            record = json.loads(line)
            if record["kind"] == "memory" and record["archived_at"] is None and record["vector"]:
                lines[i] = json.dumps(change(record), ensure_ascii=False) + "\n"
                return lines
        raise AssertionError("no active memory with a vector")

    _rewrite(path, edit)
    _raise_or_report(tmp_path, path, expected)


def test_header_counts_must_match(tmp_path: Path) -> None:
    path = _exported(tmp_path)
    _rewrite(path, lambda lines: [lines[0], lines[1], *lines[3:]])  # drop one memory
    _raise_or_report(tmp_path, path, "header counts")


def test_clashes_with_the_database_are_refused_before_writing(tmp_path: Path) -> None:
    path = _exported(tmp_path)
    with _store(tmp_path / "a.db") as same:
        report = same.import_from(path, dry_run=True)
        assert not report.ok and any("already exists" in e for e in report.errors)
        with pytest.raises(aimem.ValidationError):
            same.import_from(path)
    with _store(tmp_path / "b.db") as other:
        other.save("Allergic to penicillin — 大事 [score=0.9]")
        report = other.import_from(path, dry_run=True)
        assert any("same content" in e for e in report.errors)
        assert other.stats().total == 1
    with _store(tmp_path / "c.db") as cored:
        cored.set_core("Someone else entirely.")
        report = cored.import_from(path, dry_run=True)
        assert report.errors == ["this namespace already has a different core text; clear it first"]
        with pytest.raises(aimem.ValidationError, match="core text"):
            cored.import_from(path)
        assert cored.get_core() == "Someone else entirely." and cored.stats().total == 0


@pytest.mark.sqlite_only
def test_import_without_history_and_into_a_smaller_store(tmp_path: Path) -> None:
    with _store(tmp_path / "a.db", max_memories=10, min_priority_score=0.0) as store:
        for i in range(6):
            store.save(f"note {i} [score=0.{i + 2}]")
        store.export_to(tmp_path / "x.jsonl", include_history=False)
    told: list[list[aimem.Memory]] = []
    with _store(tmp_path / "b.db", max_memories=3, on_archive=told.append) as small:
        report = small.import_from(tmp_path / "x.jsonl")
        assert report.ok and report.memories == 6 and report.history == 0
        expected = [f"note {i} [score=0.{i + 2}]" for i in range(3)]
        assert [m.content for m in report.archived] == expected
        assert told == [report.archived]
        assert small.stats().count == 3
        con = sqlite3.connect(tmp_path / "b.db")
        events = {row[0] for row in con.execute("SELECT event FROM memory_history")}
        con.close()
        assert "import" in events


def test_import_goes_into_this_stores_namespace_only(tmp_path: Path) -> None:
    path = _exported(tmp_path)
    with (
        _store(tmp_path / "b.db", namespace="bob") as bob,
        _store(tmp_path / "b.db", namespace="carol") as carol,
    ):
        assert bob.import_from(path).ok
        assert {m.namespace for m in bob.list(include_archived=True)} == {"bob"}
        assert carol.stats().total == 0 and carol.get_core() == ""


@pytest.mark.sqlite_only
def test_backup_is_a_consistent_copy_taken_while_writing(tmp_path: Path) -> None:
    with _store(tmp_path / "live.db", max_memories=50) as store:
        store.set_core("core")
        for i in range(40):
            store.save(f"before {i} [score=0.5]")
        stop = threading.Event()

        def keep_writing() -> None:
            with _store(tmp_path / "live.db", max_memories=50) as writer:
                i = 0
                while not stop.is_set():
                    writer.save(f"during {i} [score=0.6]")
                    i += 1

        thread = threading.Thread(target=keep_writing)
        thread.start()
        try:
            copies = [store.backup(tmp_path / f"copy{n}.db") for n in range(3)]
        finally:
            stop.set()
            thread.join()
    for copy in copies:
        con = sqlite3.connect(copy)
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        con.close()
        with _store(copy) as restored:
            assert restored.get_core() == "core"
            assert restored.stats().total >= 40
            assert restored.stats().count <= 50
    assert not list(tmp_path.glob(".*partial"))
