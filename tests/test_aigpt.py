"""aigpt trees: TIDs, reading, writing, and the import -> export -> import round trip."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from _stores import store_url

import aimem
from aimem.transfer import aigpt
from aimem.transfer.aigpt import (
    export_tree,
    import_tree,
    is_tid,
    new_tid,
    read_tree,
    write_tree,
)

DID = "did:plc:uqzpqmrjnptsxezjx4xuh2mn"
ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def decode(tid: str) -> int:
    value = 0
    for char in tid:
        value = value * 32 + ALPHABET.index(char)
    return value


def open_store(tmp_path: Path, name: str = "m.db", **overrides: Any) -> aimem.MemoryStore:
    return aimem.MemoryStore(
        store_url(tmp_path / name),
        judge=aimem.HeuristicJudge(),
        max_memories=1000,
        min_priority_score=0.0,
        **overrides,
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[aimem.MemoryStore]:
    with open_store(tmp_path) as s:
        yield s


def record(did: str, collection: str, rkey: str, text: Any, created: str) -> dict[str, Any]:
    """A record exactly as aigpt's docs show it."""
    value: dict[str, Any] = {"$type": collection, "did": did}
    if collection == "ai.syui.gpt.core":
        value["handle"] = "ai.syui.ai"
    value["content"] = {"$type": f"{collection}#markdown", "text": text}
    value["createdAt"] = created
    return {"uri": f"at://{did}/{collection}/{rkey}", "value": value}


def put(root: Path, did: str, collection: str, rkey: str, body: Any) -> Path:
    file = root / did / collection / f"{rkey}.json"
    file.parent.mkdir(parents=True, exist_ok=True)
    if not isinstance(body, str | bytes):
        body = json.dumps(body, ensure_ascii=False)
    file.write_bytes(body.encode() if isinstance(body, str) else body)
    return file


def put_record(root: Path, collection: str, rkey: str, text: Any, created: str) -> Path:
    return put(root, DID, collection, rkey, record(DID, collection, rkey, text, created))


MEMORIES = [
    ("3lfqxcu2ybk2a", "syuiはRustを好む", "2026-03-01T12:00:00Z"),
    ("3lfqxcu2ybk2b", "ATProto設計に詳しい", "2026-03-01T12:00:01Z"),
    ("3lfqxd4p5ij2c", "原神プレイヤー", "2026-03-02T09:30:00Z"),
    ("3lfqxe7k2wq2d", "User is allergic to penicillin.", "2026-03-03T08:00:00+09:00"),
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A hand-written aigpt tree in the documented format, files written out of order."""
    root = tmp_path / "content"
    core = "あなたは syui のアシスタント。簡潔に答える。"
    put_record(root, "ai.syui.gpt.core", "self", core, "2025-01-01T00:00:00Z")
    for rkey, text, created in reversed(MEMORIES):
        put_record(root, "ai.syui.gpt.memory", rkey, text, created)
    (root / DID / "ai.syui.gpt.memory" / "README.md").write_text("not a record")
    (root / DID / "ai.syui.gpt.memory" / ".partial.tmp").write_text("{")
    return root


# -- TIDs ------------------------------------------------------------------------------


def test_tid_has_atproto_syntax_and_a_zero_top_bit() -> None:
    tid = new_tid()
    assert len(tid) == 13
    assert set(tid) <= set(ALPHABET)
    assert is_tid(tid)
    assert decode(tid) < 1 << 63


def test_tids_strictly_increase_even_within_one_microsecond() -> None:
    now = datetime.now(UTC)
    same = [new_tid(now=now) for _ in range(50)]
    fresh = [new_tid() for _ in range(500)]
    tids = same + fresh
    assert tids == sorted(tids)
    assert len(set(tids)) == len(tids)
    values = [decode(t) for t in same]
    assert values == list(range(values[0], values[0] + 50))  # bumped by exactly one


def test_tid_decodes_to_its_timestamp_and_clock_id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aigpt, "_last", 0)
    when = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
    value = decode(new_tid(now=when, clock_id=517))
    assert value >> 63 == 0
    assert value & 1023 == 517
    assert datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=value >> 10) == when
    # Any timezone: the instant is what counts.
    monkeypatch.setattr(aigpt, "_last", 0)
    tokyo = when.astimezone(timezone(timedelta(hours=9)))
    assert decode(new_tid(now=tokyo, clock_id=517)) == value


def test_tid_alphabet_edges(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aigpt, "_last", -1)
    assert new_tid(now=datetime(1970, 1, 1, tzinfo=UTC), clock_id=0) == "2222222222222"
    monkeypatch.setattr(aigpt, "_last", 0)
    latest = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=(1 << 53) - 1)
    assert new_tid(now=latest, clock_id=1023) == "bzzzzzzzzzzzz"  # 2**63 - 1


@pytest.mark.parametrize(
    ("now", "clock_id"),
    [
        (datetime(2026, 3, 1, 12, 0), None),  # naive: local or UTC?
        (datetime(1969, 12, 31, tzinfo=UTC), None),
        (None, 1024),
        (None, -1),
        (None, True),
    ],
)
def test_new_tid_refuses_bad_input(now: datetime | None, clock_id: int | None) -> None:
    with pytest.raises(aimem.ValidationError):
        new_tid(now=now, clock_id=clock_id)


@pytest.mark.parametrize("tid", ["3jzfcijpj2z2a", "2222222222222", "jzzzzzzzzzzzz"])
def test_is_tid_accepts(tid: str) -> None:
    assert is_tid(tid)


@pytest.mark.parametrize(
    "tid",
    [
        "",
        "3jzfcijpj2z2",
        "3jzfcijpj2z2aa",
        "kzzzzzzzzzzzz",
        "3JZFCIJPJ2Z2A",
        "3jzfcijpj2z1a",
        "3jzfcijpj2z8a",
        "3jzfcijpj2z2a\n",
        "3jzfcijpj-z2a",
        12345,
    ],
)
def test_is_tid_rejects(tid: Any) -> None:
    assert not is_tid(tid)


# -- reading ---------------------------------------------------------------------------


def test_read_tree_in_the_documented_format(tree: Path) -> None:
    result = read_tree(tree)
    assert result.did == DID
    assert result.handle == "ai.syui.ai"
    assert result.core == "あなたは syui のアシスタント。簡潔に答える。"
    assert [(m.rkey, m.text) for m in result.memories] == [(r, t) for r, t, _ in MEMORIES]
    assert result.memories[0].created_at == datetime(2026, 3, 1, 12, tzinfo=UTC)
    assert result.memories[3].created_at == datetime(2026, 3, 2, 23, tzinfo=UTC)
    assert read_tree(tree, did=DID) == result


DOC_CORE = """{
  "uri": "at://did:plc:xxx/ai.syui.gpt.core/self",
  "value": {
    "$type": "ai.syui.gpt.core",
    "did": "did:plc:xxx",
    "handle": "ai.syui.ai",
    "content": {
      "$type": "ai.syui.gpt.core#markdown",
      "text": "personality and instructions"
    },
    "createdAt": "2025-01-01T00:00:00Z"
  }
}"""
DOC_MEMORY = """{
  "uri": "at://did:plc:xxx/ai.syui.gpt.memory/{tid}",
  "value": {
    "$type": "ai.syui.gpt.memory",
    "did": "did:plc:xxx",
    "content": {
      "$type": "ai.syui.gpt.memory#markdown",
      "text": "syuiはRustを好む"
    },
    "createdAt": "2026-03-01T12:00:00Z"
  }
}"""


def test_read_tree_accepts_the_doc_examples_verbatim(tmp_path: Path) -> None:
    put(tmp_path, "did:plc:xxx", "ai.syui.gpt.core", "self", DOC_CORE)
    put(tmp_path, "did:plc:xxx", "ai.syui.gpt.memory", "3lfqxcu2ybk2a", DOC_MEMORY)
    result = read_tree(tmp_path)
    assert (result.did, result.handle, result.core) == (
        "did:plc:xxx",
        "ai.syui.ai",
        "personality and instructions",
    )
    assert result.memories == [
        aigpt.AigptMemory("3lfqxcu2ybk2a", "syuiはRustを好む", datetime(2026, 3, 1, 12, tzinfo=UTC))
    ]


def test_read_tree_without_core_or_memories(tmp_path: Path) -> None:
    (tmp_path / DID).mkdir()
    empty = read_tree(tmp_path)
    assert (empty.core, empty.handle, empty.memories) == (None, None, [])
    body = record(DID, "ai.syui.gpt.memory", "3lfqxcu2ybk2a", "fact", "2026-03-01T12:00:00Z")
    del body["value"]["createdAt"]
    put(tmp_path, DID, "ai.syui.gpt.memory", "3lfqxcu2ybk2a", body)
    assert read_tree(tmp_path).memories == [aigpt.AigptMemory("3lfqxcu2ybk2a", "fact", None)]


def test_read_tree_picks_the_did_or_asks_for_one(tree: Path) -> None:
    (tree / "did:web:example.com").mkdir()
    with pytest.raises(aimem.ValidationError, match=r"several dids.*pass --did"):
        read_tree(tree)
    assert read_tree(tree, did=DID).did == DID
    assert read_tree(tree, did="did:web:example.com").memories == []


def test_read_tree_with_no_did_directory(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    with pytest.raises(aimem.ValidationError, match=r"no did:\* directory.*pass --did"):
        read_tree(tmp_path)


@pytest.mark.parametrize("did", ["did:plc:missing", "..", "did:plc:x/../y", ""])
def test_read_tree_refuses_an_unknown_did(tree: Path, did: str) -> None:
    with pytest.raises(aimem.ValidationError, match="check --did"):
        read_tree(tree, did=did)


def test_read_tree_refuses_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(aimem.ValidationError, match="not a directory"):
        read_tree(tmp_path / "nowhere")


def _with_text(text: Any) -> dict[str, Any]:
    return record(DID, "ai.syui.gpt.memory", "3lfqxzzzzzz2a", text, "2026-03-04T00:00:00Z")


def _created(created: Any) -> dict[str, Any]:
    body = _with_text("fact")
    body["value"]["createdAt"] = created
    return body


def _without(*keys: str) -> dict[str, Any]:
    body = _with_text("fact")
    target = body
    for key in keys[:-1]:
        target = target[key]
    del target[keys[-1]]
    return body


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ('{"uri": "at://x", "value": ', "not readable JSON"),
        (b"\xff\xfe{}", "not readable JSON"),
        ("[1, 2]", "value.content.text is missing"),
        (_without("value"), "value.content.text is missing"),
        (_without("value", "content"), "value.content.text is missing"),
        (_without("value", "content", "text"), "value.content.text is missing"),
        (_with_text(42), "value.content.text is a int, not a string"),
        (_with_text(None), "value.content.text is a NoneType, not a string"),
        (_with_text(""), "value.content.text is empty"),
        (_with_text(" \n\t"), "value.content.text is empty"),
        (_created("yesterday"), "createdAt 'yesterday' is not an ISO time"),
        (_created(1700000000), "createdAt 1700000000 is not an ISO time"),
        (_created("2026-03-01T12:00:00"), "is not an ISO time with a timezone"),
    ],
)
def test_read_tree_names_the_bad_file(tree: Path, body: Any, problem: str) -> None:
    put(tree, DID, "ai.syui.gpt.memory", "3lfqxzzzzzz2a", body)
    with pytest.raises(aimem.ValidationError) as caught:
        read_tree(tree)
    message = str(caught.value)
    assert message.startswith(f"{DID}/ai.syui.gpt.memory/3lfqxzzzzzz2a.json: ")
    assert problem in message
    assert str(tree) not in message  # relative to PATH, not absolute


def test_read_tree_checks_the_core_record_too(tree: Path) -> None:
    body = record(DID, "ai.syui.gpt.core", "self", "", "2025-01-01T00:00:00Z")
    put(tree, DID, "ai.syui.gpt.core", "self", body)
    with pytest.raises(aimem.ValidationError, match=r"^did:plc:\w+/ai\.syui\.gpt\.core/self\.json"):
        read_tree(tree)
    body = record(DID, "ai.syui.gpt.core", "self", "core", "2025-01-01T00:00:00Z")
    body["value"]["handle"] = 7
    put(tree, DID, "ai.syui.gpt.core", "self", body)
    with pytest.raises(aimem.ValidationError, match=r"value\.handle is not a string"):
        read_tree(tree)


# -- writing ---------------------------------------------------------------------------


def assert_valid_records(root: Path, did: str) -> list[dict[str, Any]]:
    """Every memory file is a well-formed ATProto record; returns them in rkey order."""
    records = []
    for file in sorted((root / did / "ai.syui.gpt.memory").iterdir()):
        assert file.suffix == ".json"
        rkey = file.stem
        assert is_tid(rkey)
        body = json.loads(file.read_text(encoding="utf-8"))
        assert set(body) == {"uri", "value"}
        assert body["uri"] == f"at://{did}/ai.syui.gpt.memory/{rkey}"
        value = body["value"]
        assert list(value) == ["$type", "did", "content", "createdAt"]
        assert value["$type"] == "ai.syui.gpt.memory"
        assert value["did"] == did
        assert value["content"]["$type"] == "ai.syui.gpt.memory#markdown"
        assert STAMP.fullmatch(value["createdAt"])
        records.append(body)
    return records


def test_write_tree_writes_the_documented_layout(tmp_path: Path) -> None:
    t0 = datetime(2026, 3, 1, 12, 0, 0, 250000, tzinfo=UTC)
    tokyo = timezone(timedelta(hours=9))
    memories = [("syuiはRustを好む", t0), ("原神プレイヤー", t0.astimezone(tokyo))]
    paths = write_tree(tmp_path, DID, memories, "コア", handle="ai.syui.ai")
    core_file = tmp_path / DID / "ai.syui.gpt.core" / "self.json"
    assert paths[0] == core_file
    assert [p.parent for p in paths[1:]] == [tmp_path / DID / "ai.syui.gpt.memory"] * 2
    assert [p.stem for p in paths[1:]] == sorted(p.stem for p in paths[1:])
    records = assert_valid_records(tmp_path, DID)
    assert [r["value"]["content"]["text"] for r in records] == [
        "syuiはRustを好む",
        "原神プレイヤー",
    ]
    assert [r["value"]["createdAt"] for r in records] == ["2026-03-01T12:00:00.250Z"] * 2
    raw = core_file.read_text(encoding="utf-8")
    assert "コア" in raw  # ensure_ascii=False
    core = json.loads(raw)
    assert core["uri"] == f"at://{DID}/ai.syui.gpt.core/self"
    assert list(core["value"]) == ["$type", "did", "handle", "content", "createdAt"]
    assert core["value"]["$type"] == "ai.syui.gpt.core"
    assert core["value"]["handle"] == "ai.syui.ai"
    assert core["value"]["content"] == {"$type": "ai.syui.gpt.core#markdown", "text": "コア"}
    assert STAMP.fullmatch(core["value"]["createdAt"])
    assert raw == json.dumps(core, ensure_ascii=False, indent=2)
    leftovers = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".json"]
    assert leftovers == []
    back = read_tree(tmp_path)
    assert (back.core, back.handle) == ("コア", "ai.syui.ai")
    assert [m.created_at for m in back.memories] == [t0.replace(microsecond=250000)] * 2


def test_write_tree_without_core_or_handle(tmp_path: Path) -> None:
    assert write_tree(tmp_path, DID, [], None) == []
    assert (tmp_path / DID / "ai.syui.gpt.memory").is_dir()
    assert not (tmp_path / DID / "ai.syui.gpt.core").exists()
    [path] = write_tree(tmp_path / "b", DID, [], "core")
    assert "handle" not in json.loads(path.read_text())["value"]


@pytest.mark.parametrize(
    "did",
    [
        "plc:abc",
        "did:plc:a/b",
        "did:PLC:abc",
        "did:plc:",
        "did:plc:abc:",
        "did:plc:a b",
        "did::abc",
        "../did:plc:abc",
        "",
        None,
    ],
)
def test_write_tree_refuses_a_bad_did(tmp_path: Path, did: Any) -> None:
    with pytest.raises(aimem.ValidationError, match="is not a did"):
        write_tree(tmp_path, did, [("fact", datetime.now(UTC))], None)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "memories",
    [
        [("fact", datetime(2026, 3, 1))],  # naive
        [("fact", datetime.now(UTC)), ("", datetime.now(UTC))],
        [("  ", datetime.now(UTC))],
        [(7, datetime.now(UTC))],
    ],
)
def test_write_tree_checks_everything_before_writing(tmp_path: Path, memories: Any) -> None:
    with pytest.raises(aimem.ValidationError):
        write_tree(tmp_path, DID, memories, "core")
    assert list(tmp_path.iterdir()) == []


def test_write_tree_refuses_a_target_holding_records(tree: Path) -> None:
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    with pytest.raises(aimem.ValidationError, match="already holds aigpt records; choose an empty"):
        write_tree(tree, DID, [("new", datetime.now(UTC))], None)
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before


def test_write_tree_refuses_to_overwrite_a_core(tmp_path: Path) -> None:
    write_tree(tmp_path, DID, [], "old core")
    with pytest.raises(aimem.ValidationError, match="already holds aigpt records"):
        write_tree(tmp_path, DID, [("fact", datetime.now(UTC))], "new core")
    assert read_tree(tmp_path).core == "old core"


# -- store round trip ------------------------------------------------------------------


def test_import_export_import_round_trip(tree: Path, tmp_path: Path) -> None:
    original = read_tree(tree)
    texts = [m.text for m in original.memories]
    with open_store(tmp_path, "first.db") as first:
        report = import_tree(first, tree)
        assert report.did == DID
        assert report.core_imported
        assert [m.content for m in report.memories] == texts
        assert all(not m.archived for m in report.memories)
        assert first.get_core() == original.core
        paths = export_tree(first, tmp_path / "out", DID, handle=original.handle)
    assert len(paths) == 1 + len(texts)
    records = assert_valid_records(tmp_path / "out", DID)
    assert [r["value"]["content"]["text"] for r in records] == texts
    exported = read_tree(tmp_path / "out")
    assert (exported.did, exported.handle, exported.core) == (DID, "ai.syui.ai", original.core)
    with open_store(tmp_path, "second.db") as second:
        again = import_tree(second, tmp_path / "out")
        assert again.core_imported
        assert second.get_core() == original.core
        stored = [m.content for m in reversed(second.list(order="recent"))]
    assert stored == texts
    assert set(stored) == set(texts)


def test_export_uses_raw_content_creation_time_and_active_memories_only(
    store: aimem.MemoryStore, tmp_path: Path
) -> None:
    for text in ("I moved to Osaka in 2024.", "ok thanks", "妹の誕生日は5月3日"):
        store.save(text)
    # compress archives everything and saves the kept items anew, in this order.
    kept = store.compress(["I moved to Osaka in 2024.", "妹の誕生日は5月3日"])
    assert len(store.list(include_archived=True)) == 5
    export_tree(store, tmp_path / "out", DID)
    records = assert_valid_records(tmp_path / "out", DID)
    assert [r["value"]["content"]["text"] for r in records] == [m.content for m in kept]
    assert [m.content for m in kept] != [m.interpreted_content for m in kept]  # raw, not restated
    stamps = [m.created_at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z" for m in kept]
    assert [r["value"]["createdAt"] for r in records] == stamps
    assert not (tmp_path / "out" / DID / "ai.syui.gpt.core").exists()  # no core set


def test_export_refuses_a_non_empty_target(store: aimem.MemoryStore, tree: Path) -> None:
    store.save("I moved to Osaka in 2024.")
    before = sorted(p.name for p in (tree / DID / "ai.syui.gpt.memory").iterdir())
    with pytest.raises(aimem.ValidationError, match="already holds aigpt records"):
        export_tree(store, tree, DID)
    assert sorted(p.name for p in (tree / DID / "ai.syui.gpt.memory").iterdir()) == before


def test_import_returns_existing_memory_for_exact_duplicates(
    store: aimem.MemoryStore, tmp_path: Path
) -> None:
    known = store.save("syuiはRustを好む")
    t = datetime(2026, 3, 1, tzinfo=UTC)
    write_tree(tmp_path / "t", DID, [("syuiはRustを好む", t), ("原神プレイヤー", t)], None)
    report = import_tree(store, tmp_path / "t")
    assert not report.core_imported
    assert report.memories[0].id == known.id
    assert store.stats().count == 2
    assert store.get_core() == ""


def test_import_validates_the_whole_tree_before_touching_the_store(
    store: aimem.MemoryStore, tree: Path
) -> None:
    store.set_core("existing core")
    put(tree, DID, "ai.syui.gpt.memory", "3lfqxzzzzzz2a", "{broken")
    with pytest.raises(aimem.ValidationError, match=r"3lfqxzzzzzz2a\.json"):
        import_tree(store, tree)
    assert store.list() == []
    assert store.get_core() == "existing core"


def test_import_refuses_texts_the_store_cannot_hold(tmp_path: Path, tree: Path) -> None:
    put_record(tree, "ai.syui.gpt.memory", "3lfqxzzzzzz2a", "x" * 51, "2026-03-04T00:00:00Z")
    with open_store(tmp_path, "small.db", max_content_chars=50) as small:
        with pytest.raises(
            aimem.ValidationError,
            match=rf"^{DID}/ai\.syui\.gpt\.memory/3lfqxzzzzzz2a\.json is over",
        ):
            import_tree(small, tree)
        assert small.list() == []
        assert small.get_core() == ""


def test_aigpt_is_not_part_of_the_top_level_api() -> None:
    assert "aigpt" not in aimem.__all__
