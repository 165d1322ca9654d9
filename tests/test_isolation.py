"""Namespace isolation: no API, CLI or MCP path reads or writes across namespaces.

One store (``store_url``: a SQLite file, or a PostgreSQL database) holds two
namespaces, ``alice`` and ``bob``, each with active, archived,
pinned and pending memories, a core text, idempotency keys and embedding vectors. Every
path is exercised as alice: every public ``MemoryStore`` method, every ``aimem``
subcommand, every MCP tool and resource. Afterwards bob's rows (memories, history, core,
idempotency keys, vectors, the capacity counter) must be byte-identical, and nothing
alice was handed may carry a bob id, bob's text or bob's core.

The cases are keyed by name and checked against the introspected store class, the
argument parser and the server's tool list: a new method, subcommand or tool without an
isolation case fails here.
"""

from __future__ import annotations

import asyncio
import inspect
import io
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _db import Target, reader, rows, scalar, tables
from _judges import FlakyJudge
from _stores import on_postgres, store_url
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

import aimem
from aimem.cli import build_parser, main
from aimem.mcp.server import MAX_ERROR_CHARS
from aimem.testing import FixedJudge, HashEmbedder
from aimem.transfer.aigpt import write_tree

ALICE, BOB, CAROL = "alice", "bob", "carol"
#: In every text field of bob's (content, interpretation, user context, core): a reply
#: holding it carries bob's data. Alice's texts carry her own mark instead.
BOB_MARK = "zorblax"
ALICE_MARK = "quokka"
#: Words both namespaces use, plus bob's mark: any path that looked at bob's rows would
#: find his memories with this query, by keyword and by meaning.
PROBE = f"{BOB_MARK} coffee Rust penicillin Osaka pending notes"

BOB_TEXTS = {
    "active": f"Bob drinks coffee with {BOB_MARK} every morning [score=0.80]",
    "second": f"Bob writes Rust code for the {BOB_MARK} project [score=0.60]",
    "pinned": f"Bob is allergic to penicillin, {BOB_MARK} reminds him [score=0.90]",
    "archived": f"Bob visited Osaka with {BOB_MARK} once [score=0.10]",
    "pending": f"Bob pending notes: {BOB_MARK} coffee Rust penicillin",
}
ALICE_TEXTS = {
    "active": f"Alice drinks coffee by the {ALICE_MARK} enclosure [score=0.70]",
    "second": f"Alice writes Rust with a {ALICE_MARK} sticker on her laptop [score=0.50]",
    "pinned": f"Alice is allergic to penicillin, like her {ALICE_MARK} [score=0.85]",
    "archived": f"Alice visited Osaka to see a {ALICE_MARK} [score=0.10]",
    "pending": f"Alice pending notes: {ALICE_MARK} coffee Rust penicillin",
}
#: Bob's keys; alice later saves new content under "shared-key" and must get her own memory.
KEYS = {BOB: {"active": "shared-key", "second": "bob-key"}, ALICE: {"active": "alice-key"}}
CORES = {
    BOB: f"Bob's core: you assist {BOB_MARK}, keeper of iguanas.",
    ALICE: f"Alice's core: you assist a {ALICE_MARK} photographer.",
}
USER_CONTEXTS = {BOB: f"bob-{BOB_MARK}", ALICE: f"alice-{ALICE_MARK}"}

#: Every table holding namespace data, and how bob's share of it is read. History and
#: idempotency keys are also taken by bob's memory ids, whatever namespace the row names,
#: so an event or key that alice's call attached to a bob memory shows up too.
_BOB_IDS = "SELECT id FROM memories WHERE namespace = :ns"
SNAPSHOT_QUERIES = {
    "memories": "SELECT * FROM memories WHERE namespace = :ns ORDER BY seq",
    "memory_history": f"SELECT * FROM memory_history WHERE namespace = :ns "
    f"OR memory_id IN ({_BOB_IDS}) ORDER BY id",
    "core": "SELECT * FROM core WHERE namespace = :ns",
    "idempotency_keys": f"SELECT * FROM idempotency_keys WHERE namespace = :ns "
    f"OR memory_id IN ({_BOB_IDS}) ORDER BY namespace, key",
    "memory_vectors": "SELECT v.* FROM memory_vectors v JOIN memories m ON m.seq = v.seq "
    "WHERE m.namespace = :ns ORDER BY v.seq",
    "namespace_counts": "SELECT * FROM namespace_counts WHERE namespace = :ns",
    "memory_versions": f"SELECT * FROM memory_versions WHERE namespace = :ns "
    f"OR memory_id IN ({_BOB_IDS}) ORDER BY id",
}
if on_postgres():  # BM25's per-namespace counts: a table of aimem's own on PostgreSQL
    SNAPSHOT_QUERIES["aimem_fts_stats"] = "SELECT * FROM aimem_fts_stats WHERE namespace = :ns"
    # Document counts per term; a term carries its namespace as a prefix (hex, then "q").
    for table in ("aimem_terms", "aimem_postings"):
        SNAPSHOT_QUERIES[table] = (
            f"SELECT * FROM {table} "
            "WHERE term LIKE encode(convert_to(:ns, 'UTF8'), 'hex') || 'q%' ORDER BY 1, 2"
        )
#: Tables without namespace data: the schema version, and SQLite's keyword indexes
#: (external content over ``memories``, so covered by its rows).
NOT_NAMESPACED = re.compile(r"aimem_meta|memories_fts.*|memories_active_fts.*")

Snapshot = dict[str, list[tuple[Any, ...]]]


# -- the shared database and what must not change ----------------------------------------


def snapshot(db: Target, namespace: str) -> Snapshot:
    """Every row of ``namespace`` in every table, in a fixed order."""
    with reader(db) as read:
        return {
            table: [tuple(row) for row in read(sql, {"ns": namespace})]
            for table, sql in SNAPSHOT_QUERIES.items()
        }


def dump(snap: Snapshot) -> bytes:
    return repr(sorted(snap.items())).encode("utf-8")


def _count_if(condition: str) -> str:
    return f"coalesce(sum(CASE WHEN {condition} THEN 1 ELSE 0 END), 0)"


def counts(db: Target, namespace: str) -> dict[str, int]:
    """The ``Stats`` counts of a namespace, straight from the rows."""
    [row] = rows(
        db,
        "SELECT count(*), "
        f"{_count_if('archived_at IS NULL')}, "
        f"{_count_if('archived_at IS NOT NULL')}, "
        f"{_count_if('archived_at IS NULL AND priority_score IS NULL')}, "
        f"{_count_if('archived_at IS NULL AND pinned')} "
        "FROM memories WHERE namespace = ?",
        (namespace,),
    )
    names = ("total", "count", "archived", "pending", "pinned")
    return dict(zip(names, map(int, row), strict=True))


def core_text(db: Target, namespace: str) -> str:
    found = rows(db, "SELECT text FROM core WHERE namespace = ?", (namespace,))
    return "" if not found else str(found[0][0])


def namespaces_in(db: Target) -> set[str]:
    found: set[str] = set()
    with reader(db) as read:
        for table in ("memories", "memory_history", "core", "idempotency_keys"):
            found |= {ns for (ns,) in read(f"SELECT DISTINCT namespace FROM {table}", ())}
    return found


def placed_in(db: Target, ids: Sequence[str]) -> list[tuple[Any, ...]]:
    """The namespaces the memories ``ids`` are in."""
    marks = ",".join("?" * len(ids))
    return rows(db, f"SELECT DISTINCT namespace FROM memories WHERE id IN ({marks})", ids)


@dataclass
class World:
    """The shared store, and the ids of the memories built into each namespace."""

    url: str
    ids: dict[str, dict[str, str]]
    bob_before: Snapshot = field(default_factory=dict)

    @property
    def bob_ids(self) -> list[str]:
        return list(self.ids[BOB].values())

    @property
    def alice(self) -> dict[str, str]:
        return self.ids[ALICE]

    def assert_bob_unchanged(self, after: str) -> None:
        now = snapshot(self.url, BOB)
        assert now == self.bob_before, f"bob's rows changed after {after}"
        assert dump(now) == dump(self.bob_before), f"bob's rows changed after {after}"


def build_world(url: str) -> World:
    """Fill alice and bob with the same kinds of state, their rows interleaved."""
    judges = {ns: FlakyJudge() for ns in (ALICE, BOB)}
    ids: dict[str, dict[str, str]] = {ALICE: {}, BOB: {}}
    texts = {ALICE: ALICE_TEXTS, BOB: BOB_TEXTS}
    stores = {
        ns: aimem.MemoryStore(url, judge=judges[ns], embedder=HashEmbedder(), namespace=ns)
        for ns in (BOB, ALICE)
    }
    try:
        for label in BOB_TEXTS:
            for ns, store in stores.items():
                judges[ns].down = label == "pending"  # the default policy stores it pending
                memory = store.save(
                    texts[ns][label],
                    user_context=USER_CONTEXTS[ns],
                    idempotency_key=KEYS[ns].get(label),
                )
                ids[ns][label] = memory.id
        for ns, store in stores.items():
            store.pin(ids[ns]["pinned"])
            store.set_core(CORES[ns])
            # An edit and its undo: the memory is as it was, its old versions are kept.
            judges[ns].down = False
            store.update(ids[ns]["second"], texts[ns]["second"] + " (edited)")
            store.update(ids[ns]["second"], texts[ns]["second"])
            got = {label: store.get(i) for label, i in ids[ns].items()}
            assert got["archived"].archived_at is not None, "below min_priority_score"
            assert got["pending"].score_source == "pending"
            assert got["pinned"].pinned and got["active"].archived_at is None
    finally:
        for store in stores.values():
            store.close()
    world = World(url, ids)
    assert counts(url, BOB) == {"total": 5, "count": 4, "archived": 1, "pending": 1, "pinned": 1}
    found = tables(url)
    assert {t for t in found if not NOT_NAMESPACED.fullmatch(t)} == set(SNAPSHOT_QUERIES), (
        "a new table: add it to SNAPSHOT_QUERIES (or NOT_NAMESPACED if it holds no namespace data)"
    )
    world.bob_before = snapshot(url, BOB)
    assert all(world.bob_before[t] for t in SNAPSHOT_QUERIES), "bob has rows in every table"
    return world


def foreign_export(tmp_path: Path) -> tuple[Path, list[str]]:
    """An export of an ``alice`` namespace kept in another database.

    Memory ids are unique across a whole database, so an export of the shared store's
    alice cannot be imported back into it under another name; this one can.
    """
    path = tmp_path / "elsewhere.jsonl"
    url = store_url(tmp_path / "elsewhere.db")
    with aimem.MemoryStore(
        url, judge=FixedJudge(), embedder=HashEmbedder(), namespace=ALICE
    ) as other:
        other.set_core(f"Alice's travelling core, {ALICE_MARK} edition.")
        made = [
            other.save(
                f"Alice's travelling note {i} about a {ALICE_MARK} [score=0.6]",
                # Bob's key name: the import binds it in the target namespace only.
                idempotency_key="bob-key" if i == 0 else None,
            )
            for i in range(3)
        ]
        made.append(other.save(f"Alice's faded {ALICE_MARK} note [score=0.1]"))
        other.export_to(path)
    return path, [m.id for m in made]


# -- what alice may be handed ----------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return str(value)


def as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return json.dumps(value, default=_jsonable, ensure_ascii=False)


@dataclass
class Leaks:
    """Checks that what a path returned carries nothing of bob's."""

    world: World

    def check(self, value: object, where: str, *, echo: Sequence[str] | str = ()) -> None:
        """No bob id, text or core in ``value``, apart from ``echo``: what the caller passed in."""
        text = as_text(value)
        for passed in [echo] if isinstance(echo, str) else echo:
            text = text.replace(passed, "<what the caller passed in>")
        for label, bob_id in self.world.ids[BOB].items():
            assert bob_id not in text, f"{where}: bob's {label} id in {text[:400]!r}"
        assert BOB_MARK not in text.lower(), f"{where}: bob's text in {text[:400]!r}"

    def check_ids(self, value: object, where: str) -> None:
        """No bob id in ``value`` (which may hold alice's own copies of bob's text)."""
        text = as_text(value)
        for label, bob_id in self.world.ids[BOB].items():
            assert bob_id not in text, f"{where}: bob's {label} id in {text[:400]!r}"

    def own(self, memory: Any, where: str) -> None:
        """A memory (model or JSON) alice got is hers and not one of bob's."""
        data = memory.model_dump(mode="json") if isinstance(memory, BaseModel) else memory
        assert data["namespace"] == ALICE, f"{where}: {data['namespace']!r} memory"
        assert data["id"] not in self.world.bob_ids, f"{where}: bob's memory returned"


@pytest.fixture
def world(db_url_factory: Callable[[str], str]) -> World:
    return build_world(db_url_factory("shared"))


# -- 1. the Python API ------------------------------------------------------------------------


@dataclass
class Api:
    store: aimem.MemoryStore
    judge: FixedJudge
    world: World
    leaks: Leaks
    tmp: Path

    def bob_not_found(self, call: Callable[[str], object], where: str) -> None:
        """``call`` on each of bob's ids (active, pinned, archived, pending) is NotFound."""
        for label, bob_id in self.world.ids[BOB].items():
            with pytest.raises(aimem.NotFoundError) as info:
                call(bob_id)
            self.leaks.check(str(info.value), f"{where}(bob's {label})", echo=bob_id)
            assert ALICE in str(info.value)

    def fresh_copy(self, memory: aimem.Memory, where: str) -> None:
        """A save of bob's exact text made alice a new memory, not a reinforced one of bob's."""
        self.leaks.own(memory, where)
        assert memory.access_count == 0, f"{where}: not a fresh memory"

    def purge_copies(self) -> None:
        """Delete alice's own copies of bob's texts, so later scans see no bob text."""
        for memory in self.store.list(include_archived=True):
            if BOB_MARK in memory.content:
                self.leaks.own(memory, "purge")
                self.store.delete(memory.id)


ApiCase = Callable[[Api], Iterable[object]]
TRAVEL = f"Alice orders {ALICE_MARK} tea, under a key bob used [score=0.70]"


def _api_get(a: Api) -> Iterable[object]:
    a.bob_not_found(a.store.get, "get")
    return [a.store.get(i) for i in a.world.alice.values()]


def _api_list(a: Api) -> Iterable[object]:
    s = a.store
    listings = [
        s.list(),
        s.list(include_archived=True),
        s.list(order="recent", include_archived=True, limit=1000),
        s.list(min_score=0.0, include_archived=True),
    ]
    assert {m.id for m in listings[1]} == set(a.world.alice.values())
    return listings


def _api_search(a: Api) -> Iterable[object]:
    s = a.store
    results = [
        s.search(PROBE, limit=100, mode=mode, include_archived=archived, explain=True)
        for mode in ("keyword", "semantic", "hybrid")
        for archived in (False, True)
    ]
    assert all(results), "the probe finds alice's own memories on every path"
    assert s.search(BOB_MARK, mode="keyword", include_archived=True) == []
    assert s.search(PROBE, user_context=USER_CONTEXTS[BOB], include_archived=True) == []
    results.append(
        s.search(PROBE, created_after=datetime.now(UTC) - timedelta(days=1), mode="semantic")
    )
    return results


def _api_stats(a: Api) -> Iterable[object]:
    stats = a.store.stats()
    assert stats.namespace == ALICE
    assert stats.model_dump(include={"total", "count", "archived", "pending", "pinned"}) == (
        counts(a.world.url, ALICE)
    )
    return [stats]


def _api_get_core(a: Api) -> Iterable[object]:
    core = a.store.get_core()
    assert core == CORES[ALICE]
    return [core]


def _api_set_core(a: Api) -> Iterable[object]:
    a.store.set_core(f"{CORES[ALICE]} Revised.")
    assert a.store.get_core() == f"{CORES[ALICE]} Revised."
    a.store.set_core(CORES[ALICE])
    return [a.store.get_core()]


def _api_context(a: Api) -> Iterable[object]:
    texts = [
        a.store.context(),
        a.store.context(query=PROBE),
        a.store.context(max_chars=300, query=BOB_MARK),
    ]
    assert all(text.find(CORES[ALICE]) >= 0 for text in texts[:2])
    return texts


def _api_save(a: Api) -> Iterable[object]:
    s = a.store
    fresh = s.save(TRAVEL, idempotency_key="shared-key")
    a.leaks.own(fresh, "save under bob's key")
    assert fresh.content == TRAVEL
    retry = s.save(TRAVEL, idempotency_key="shared-key")
    assert retry.id == fresh.id
    a.fresh_copy(s.save(BOB_TEXTS["second"], idempotency_key="bob-key"), "save under bob-key")
    for label, content in BOB_TEXTS.items():
        if label != "second":
            a.fresh_copy(s.save(content), f"save of bob's {label} text")
    a.purge_copies()
    return [fresh, retry]


def _api_save_with_report(a: Api) -> Iterable[object]:
    s = a.store
    report = s.save_with_report(BOB_TEXTS["pending"])
    assert report.duplicates == []
    a.fresh_copy(report.memories[0], "save_with_report of bob's pending text")
    a.leaks.check_ids(report, "save_with_report")
    a.purge_copies()
    return [s.save_with_report(f"Alice keeps a {ALICE_MARK} diary [score=0.60]")]


def _api_save_many(a: Api) -> Iterable[object]:
    saved = a.store.save_many([f"Alice reads {ALICE_MARK} books [score=0.4]", *BOB_TEXTS.values()])
    for memory in saved[1:]:
        a.fresh_copy(memory, "save_many of bob's texts")
    a.purge_copies()
    return saved[:1]


def _api_save_many_with_report(a: Api) -> Iterable[object]:
    report = a.store.save_many_with_report(
        [BOB_TEXTS["active"], BOB_TEXTS["pinned"], f"Alice hums {ALICE_MARK} songs [score=0.3]"]
    )
    assert report.duplicates == []
    for memory in report.memories[:2]:
        a.fresh_copy(memory, "save_many_with_report of bob's texts")
    a.leaks.check_ids(report, "save_many_with_report")
    a.purge_copies()
    return [m for m in report.memories if BOB_MARK not in m.content]


def _api_update(a: Api) -> Iterable[object]:
    s = a.store
    a.bob_not_found(lambda i: s.update(i, f"Alice's words {ALICE_MARK}"), "update")
    a.bob_not_found(lambda i: s.update(i, f"Alice {ALICE_MARK}", expected_version=1), "update@v")
    return [
        s.update(a.world.alice["second"], f"Alice writes Rust and Go, {ALICE_MARK} [score=0.5]")
    ]


def _api_update_with_report(a: Api) -> Iterable[object]:
    s = a.store
    a.bob_not_found(lambda i: s.update_with_report(i, f"Alice {ALICE_MARK}"), "update_with_report")
    report = s.update_with_report(a.world.alice["second"], f"Alice writes Go, {ALICE_MARK}")
    return [*report.memories, *report.archived]


def _api_history(a: Api) -> Iterable[object]:
    a.bob_not_found(a.store.history, "history")
    s = a.store
    s.update(a.world.alice["second"], f"Alice writes Zig now, {ALICE_MARK} [score=0.5]")
    events = [e for i in a.world.alice.values() for e in s.history(i)]
    assert {e.memory_id for e in events} == set(a.world.alice.values())
    assert any(e.previous for e in events), "an update shows the version it replaced"
    return [e.model_dump_json() for e in events]


def _api_reinterpret_pending(a: Api) -> Iterable[object]:
    judged = a.store.reinterpret_pending()
    assert [m.id for m in judged] == [a.world.alice["pending"]]
    assert judged[0].score_source == "custom"
    return judged


def _api_pin(a: Api) -> Iterable[object]:
    a.bob_not_found(a.store.pin, "pin")
    return [a.store.pin(a.world.alice["active"])]


def _api_unpin(a: Api) -> Iterable[object]:
    a.bob_not_found(a.store.unpin, "unpin")
    return [a.store.unpin(a.world.alice["active"]), a.store.unpin(a.world.alice["pinned"])]


def _api_restore(a: Api) -> Iterable[object]:
    a.bob_not_found(a.store.restore, "restore")
    return [a.store.restore(a.world.alice["archived"])]


def _api_restore_with_report(a: Api) -> Iterable[object]:
    a.bob_not_found(a.store.restore_with_report, "restore_with_report")
    report = a.store.restore_with_report(a.world.alice["archived"])
    return [*report.memories, *report.archived]


def _api_delete(a: Api) -> Iterable[object]:
    a.bob_not_found(a.store.delete, "delete")
    doomed = a.store.save(f"Alice's throwaway {ALICE_MARK} line [score=0.5]")
    a.store.delete(doomed.id)
    with pytest.raises(aimem.NotFoundError):
        a.store.get(doomed.id)
    return [doomed]


def _api_prune(a: Api) -> Iterable[object]:
    # More judged memories than alice's cap of 1, written without the capacity manager.
    with aimem.MemoryStore(
        a.world.url, judge=FixedJudge(), namespace=ALICE, auto_prune=False
    ) as loose:
        for i in range(3):
            loose.save(f"Alice's {ALICE_MARK} errand {i} [score=0.{4 + i}]")
    preview = a.store.prune(dry_run=True)
    done = a.store.prune()
    assert done.archived and [m.id for m in done.archived] == [m.id for m in preview.archived]
    for memory in done.archived:
        a.leaks.own(memory, "prune")
    return [preview, done]


def _api_compress(a: Api) -> Iterable[object]:
    memories = a.store.compress([f"Alice summary: {ALICE_MARK}, coffee, Rust [score=0.9]"])
    assert [m.namespace for m in memories] == [ALICE]
    return memories


def _api_compress_with_report(a: Api) -> Iterable[object]:
    report = a.store.compress_with_report([], allow_empty=True)
    assert report.memories == [] and report.archived
    for memory in report.archived:
        a.leaks.own(memory, "compress(allow_empty=True)")
    left = [m for m in a.store.list() if not m.pinned and m.priority_score is not None]
    assert left == [], "every active unpinned judged memory of alice is archived"
    return [report]


def _api_export_to(a: Api) -> Iterable[object]:
    full, bare = a.tmp / "alice.jsonl", a.tmp / "alice-no-history.jsonl"
    reports = [a.store.export_to(full), a.store.export_to(bare, include_history=False)]
    for path in (full, bare):
        text = path.read_text("utf-8")
        a.leaks.check(text, f"export_to {path.name}")
        assert a.world.alice["active"] in text and CORES[ALICE] in text
    return reports


def _api_import_from(a: Api) -> Iterable[object]:
    db = a.world.url
    mine = a.tmp / "alice-for-carol.jsonl"
    a.store.export_to(mine)
    foreign, foreign_ids = foreign_export(a.tmp)
    alice_before = snapshot(db, ALICE)
    dry = a.store.import_from(foreign, dry_run=True)  # alice's own dry run writes nothing
    with aimem.MemoryStore(a.world.url, judge=FixedJudge(), namespace=CAROL) as carol:
        clash = carol.import_from(mine, dry_run=True)
        assert not clash.ok, "memory ids are unique across the whole database"
        with pytest.raises(aimem.ValidationError):
            carol.import_from(mine)
        assert snapshot(db, CAROL)["memories"] == []
        imported = carol.import_from(foreign)
        assert imported.ok and imported.memories == len(foreign_ids)
        assert {m.id for m in carol.list(include_archived=True)} == set(foreign_ids)
        assert carol.get_core() == f"Alice's travelling core, {ALICE_MARK} edition."
    carol_ids = rows(db, "SELECT id FROM memories WHERE namespace = ? ORDER BY seq", (CAROL,))
    keys = [
        tuple(row)
        for row in rows(
            db, "SELECT namespace, key, memory_id FROM idempotency_keys WHERE key = 'bob-key'"
        )
    ]
    assert [i for (i,) in carol_ids] == foreign_ids
    assert sorted(keys) == sorted(
        [(BOB, "bob-key", a.world.ids[BOB]["second"]), (CAROL, "bob-key", foreign_ids[0])]
    )
    assert snapshot(db, ALICE) == alice_before, "an import into carol wrote alice's rows"
    return [dry, clash, imported]


def _api_reembed(a: Api) -> Iterable[object]:
    # Every vector of alice's, archived ones too; bob's vectors stay as they were.
    done = a.store.reembed()
    assert done == counts(a.world.url, ALICE)["total"]
    return [done]


def _api_backup(a: Api) -> Iterable[object]:
    if on_postgres():  # a server is backed up with its own tools: refused, bob untouched
        with pytest.raises(aimem.StorageError, match="pg_dump") as refused:
            a.store.backup(a.tmp / "backup.db")
        assert not (a.tmp / "backup.db").exists()
        return [str(refused.value)]
    # The whole file, every namespace: that is what a backup is. It must only not change bob.
    target = a.store.backup(a.tmp / "backup.db")
    assert snapshot(target, BOB) == a.world.bob_before
    return [target]


def _api_resolve_id(a: Api) -> Iterable[object]:
    a.bob_not_found(a.store.resolve_id, "resolve_id")
    mine = set(a.world.alice.values())
    for bob_id in a.world.bob_ids:
        for length in (8, 20, 35):  # a prefix of bob's id names one of alice's, or nothing
            try:
                resolved = a.store.resolve_id(bob_id[:length])
            except (aimem.NotFoundError, aimem.AmbiguousIdError) as exc:
                a.leaks.check(str(exc), "resolve_id(a prefix of bob's id)", echo=bob_id[:length])
            else:
                assert resolved in mine, "a prefix resolved to bob's memory"
    return [a.store.resolve_id(i) for i in mine]


def _api_short_ids(a: Api) -> Iterable[object]:
    mine = set(a.world.alice.values())
    short = a.store.short_ids(mine)
    for full, prefix in short.items():
        assert a.store.resolve_id(prefix) == full
    return [short]


def _api_save_conversation(a: Api) -> Iterable[object]:
    memories = a.store.save_conversation(
        [
            {"role": "user", "content": f"Alice keeps a {ALICE_MARK} plush [score=0.8]"},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": BOB_TEXTS["active"]},
        ]
    )
    for memory in memories:
        a.leaks.own(memory, "save_conversation")
    a.purge_copies()
    return [m for m in memories if BOB_MARK not in m.content]


def _api_save_conversation_with_report(a: Api) -> Iterable[object]:
    report = a.store.save_conversation_with_report(
        [{"role": "user", "content": f"Alice sings {ALICE_MARK} songs [score=0.7]"}]
    )
    a.leaks.check_ids(report, "save_conversation_with_report")
    return [report]


#: Every public method of MemoryStore, in the order they run (later ones archive a lot).
API_CASES: dict[str, ApiCase] = {
    "get": _api_get,
    "resolve_id": _api_resolve_id,
    "short_ids": _api_short_ids,
    "list": _api_list,
    "search": _api_search,
    "stats": _api_stats,
    "get_core": _api_get_core,
    "set_core": _api_set_core,
    "context": _api_context,
    "prune": _api_prune,
    "save": _api_save,
    "save_with_report": _api_save_with_report,
    "save_many": _api_save_many,
    "save_many_with_report": _api_save_many_with_report,
    "save_conversation": _api_save_conversation,
    "save_conversation_with_report": _api_save_conversation_with_report,
    "update": _api_update,
    "reinterpret_pending": _api_reinterpret_pending,
    "pin": _api_pin,
    "unpin": _api_unpin,
    "restore": _api_restore,
    "restore_with_report": _api_restore_with_report,
    "update_with_report": _api_update_with_report,
    "history": _api_history,
    "delete": _api_delete,
    "export_to": _api_export_to,
    "import_from": _api_import_from,
    "backup": _api_backup,
    "reembed": _api_reembed,
    "compress": _api_compress,
    "compress_with_report": _api_compress_with_report,
}
API_NOT_A_PATH = {"close"}  # ends the store's own connection; reads and writes no rows


def _api_core_property(a: Api) -> Iterable[object]:
    a.store.core = f"{CORES[ALICE]} Via the property."
    assert core_text(a.world.url, ALICE) == f"{CORES[ALICE]} Via the property."
    return [a.store.core]


#: Public properties that reach stored data; the others describe the store itself.
PROPERTY_CASES: dict[str, ApiCase] = {"core": _api_core_property}
PROPERTIES_NOT_A_PATH = {"settings", "namespace", "judge", "embedder", "database_url", "policy"}


def _public_methods(cls: type) -> set[str]:
    return {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}


def _public_properties(cls: type) -> set[str]:
    return {
        n
        for n, _ in inspect.getmembers(cls, lambda v: isinstance(v, property))
        if not n.startswith("_")
    }


def test_every_public_store_method_and_property_has_an_isolation_case() -> None:
    methods = _public_methods(aimem.MemoryStore)
    assert methods - API_NOT_A_PATH == set(API_CASES), "add an isolation case to API_CASES"
    properties = _public_properties(aimem.MemoryStore)
    assert properties - PROPERTIES_NOT_A_PATH == set(PROPERTY_CASES)
    # MemoryStore forwards every call to AsyncMemoryStore: the same surface, so both are covered.
    assert _public_methods(aimem.AsyncMemoryStore) - {"aclose"} == methods
    assert _public_properties(aimem.AsyncMemoryStore) - PROPERTIES_NOT_A_PATH <= {"core"}


def test_api_paths_stay_in_their_namespace(world: World, tmp_path: Path) -> None:
    judge = FixedJudge()
    leaks = Leaks(world)
    with aimem.MemoryStore(
        world.url, judge=judge, embedder=HashEmbedder(), namespace=ALICE, max_memories=1
    ) as store:
        api = Api(store, judge, world, leaks, tmp_path)
        for name, case in [*API_CASES.items(), *PROPERTY_CASES.items()]:
            for result in case(api):
                leaks.check(result, f"MemoryStore.{name}")
            world.assert_bob_unchanged(f"MemoryStore.{name}")
    related = [i for seen in judge.related_seen for i in seen]
    assert related, "alice's saves had related memories for the judge"
    assert not set(related) & set(world.bob_ids), "bob's memories were shown to alice's judge"
    assert namespaces_in(world.url) == {ALICE, BOB, CAROL}
    world.assert_bob_unchanged("every API path")


# -- 2. the CLI -----------------------------------------------------------------------------


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@dataclass
class Cli:
    world: World
    leaks: Leaks
    tmp: Path
    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch
    runs: int = 0

    def raw(self, *argv: str, stdin: str | None = None) -> Run:
        if stdin is not None:
            self.monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        self.capsys.readouterr()
        code = main(["--database-url", self.world.url, "--namespace", ALICE, *argv])
        captured = self.capsys.readouterr()
        self.runs += 1
        return Run(code, ANSI.sub("", captured.out), ANSI.sub("", captured.err))

    def __call__(self, *argv: str, code: int = 0, stdin: str | None = None) -> Run:
        """Run as alice, expect ``code``, and check nothing of bob's was printed."""
        run = self.raw(*argv, stdin=stdin)
        assert run.code == code, f"aimem {' '.join(argv)}: {run.err}"
        # A query naming bob's mark may be printed back (a table title), nothing else.
        passed = [arg for arg in argv if BOB_MARK in arg]
        self.leaks.check(run.out + run.err, f"aimem {' '.join(argv)}", echo=passed)
        return run

    def bob_not_found(self, *argv: str) -> None:
        """``aimem ARGV BOB_ID`` exits 1 with one 'no memory with id' line, for each bob id."""
        for label, bob_id in self.world.ids[BOB].items():
            run = self.raw(*argv, bob_id)
            where = f"aimem {' '.join(argv)} <bob's {label}>"
            assert run.code == 1, f"{where}: {run.out}"
            assert "Traceback" not in run.err
            errors = [line for line in run.err.splitlines() if line.startswith("error: ")]
            assert len(errors) == 1 and "no memory with id" in errors[0], f"{where}: {run.err}"
            assert f"namespace {ALICE!r}" in errors[0]
            self.leaks.check(run.out + run.err, where, echo=bob_id)

    def copy(self, *argv: str, stdin: str | None = None) -> dict[str, Any]:
        """A ``--json`` save of bob's text: alice's own new memory, never bob's."""
        run = self.raw(*argv, "--json", stdin=stdin)
        assert run.code == 0, run.err
        self.leaks.check_ids(run.out + run.err, f"aimem {argv[0]} of bob's text")
        result: dict[str, Any] = run.json()
        assert result["duplicate"] is False
        self.leaks.own(result["memory"], f"aimem {argv[0]} of bob's text")
        assert result["memory"]["access_count"] == 0
        return result

    def listed(self) -> list[dict[str, Any]]:
        """Every memory of alice's (copies of bob's text included): hers, none of bob's."""
        run = self.raw("list", "--all", "--json")
        assert run.code == 0, run.err
        self.leaks.check_ids(run.out + run.err, "aimem list --all")
        memories: list[dict[str, Any]] = run.json()
        for memory in memories:
            self.leaks.own(memory, "aimem list --all")
        return memories

    def purge_copies(self) -> None:
        """Delete alice's own copies of bob's texts, so later scans see no bob text."""
        for memory in self.listed():
            if BOB_MARK in memory["content"]:
                self("delete", memory["id"], "--yes")


CliCase = Callable[[Cli], None]


def _cli_save(c: Cli) -> None:
    fresh = c("save", TRAVEL, "--idempotency-key", "shared-key", "--json").json()
    c.leaks.own(fresh["memory"], "aimem save under bob's key")
    assert fresh["duplicate"] is False
    again = c("save", TRAVEL, "--idempotency-key", "shared-key", "--json").json()
    assert again["memory"]["id"] == fresh["memory"]["id"]
    c.copy("save", BOB_TEXTS["second"], "--idempotency-key", "bob-key")
    for label, text in BOB_TEXTS.items():
        if label != "second":
            c.copy("save", text)
    c.purge_copies()
    c("save", f"Alice collects {ALICE_MARK} stamps [score=0.5]")


def _cli_save_memory(c: Cli) -> None:
    c.copy("save-memory", "-", stdin=BOB_TEXTS["pending"] + "\n")
    c.purge_copies()
    c("save-memory", f"Alice paints {ALICE_MARK} murals [score=0.6]", "--json")


def _cli_list(c: Cli) -> None:
    listed = c("list", "--all", "--json").json()
    assert {m["id"] for m in listed} == set(c.world.alice.values())
    c("list", "--json")
    c("list", "--all", "--order", "recent")
    c("list", "--min-score", "0", "--limit", "1000")


def _cli_search(c: Cli) -> None:
    for mode in ("hybrid", "keyword"):
        hits = c("search", PROBE, "--all", "--limit", "100", "--mode", mode, "--json").json()
        assert hits, "the probe finds alice's own memories"
    assert c("search", BOB_MARK, "--all", "--json").json() == []
    c("search", PROBE)
    no_embedder = c("search", PROBE, "--mode", "semantic", code=1)  # the CLI has no embedder
    assert "embedder" in no_embedder.err


def _cli_show(c: Cli) -> None:
    c.bob_not_found("show")
    c.bob_not_found("show", "--json")
    shown = c("show", c.world.alice["pending"], "--json").json()
    c.leaks.own(shown, "aimem show")
    c("show", c.world.alice["archived"])


def _cli_pin(c: Cli) -> None:
    c.bob_not_found("pin")
    c("pin", c.world.alice["second"])


def _cli_unpin(c: Cli) -> None:
    c.bob_not_found("unpin")
    c("unpin", c.world.alice["second"])


def _cli_restore(c: Cli) -> None:
    c.bob_not_found("restore")
    c("restore", c.world.alice["archived"])


def _cli_history(c: Cli) -> None:
    c.bob_not_found("history")
    c.bob_not_found("history", "--json")
    for memory_id in c.world.alice.values():
        events = c("history", memory_id, "--json").json()
        assert events and {e["memory_id"] for e in events} == {memory_id}
        c.leaks.check(json.dumps(events), "aimem history")
    c("history", c.world.alice["archived"])


def _cli_update(c: Cli) -> None:
    for bob_id in c.world.ids[BOB].values():
        run = c.raw("update", bob_id, f"Alice's words {ALICE_MARK}")
        assert run.code == 1 and "no memory with id" in run.err, run.err
        c.leaks.check(run.out + run.err, "aimem update <bob's>", echo=bob_id)
    shown = c("update", c.world.alice["second"], f"Alice codes in C, {ALICE_MARK}", "--json")
    c.leaks.own(shown.json()["memory"], "aimem update")


def _cli_delete(c: Cli) -> None:
    c.bob_not_found("delete", "--yes")
    c.bob_not_found("delete")  # looked up before it would ask for confirmation
    doomed = c("save", f"Alice's throwaway {ALICE_MARK} line [score=0.5]", "--json").json()
    c("delete", doomed["memory"]["id"], "--yes")


def _cli_prune(c: Cli) -> None:
    preview = c("prune", "--dry-run", "--json").json()
    done = c("prune", "--json").json()
    for memory in preview["archived"] + done["archived"]:
        c.leaks.own(memory, "aimem prune")
    c("prune")


def _cli_stats(c: Cli) -> None:
    stats = c("stats", "--json").json()
    assert stats["namespace"] == ALICE
    wanted = counts(c.world.url, ALICE)
    assert {k: stats[k] for k in wanted} == wanted
    c("stats")


def _cli_core(c: Cli) -> None:
    assert c("core").out.strip() == CORES[ALICE]
    c("core", "--set", f"{CORES[ALICE]} Set by the CLI.")
    assert c("core").out.strip() == f"{CORES[ALICE]} Set by the CLI."
    c("core", "--set", CORES[ALICE])


def _cli_read_core(c: Cli) -> None:
    assert c("read-core").out.strip() == core_text(c.world.url, ALICE)


def _cli_context(c: Cli) -> None:
    assert CORES[ALICE] in c("context").out
    c("context", "--query", PROBE)
    c("context", "--query", BOB_MARK, "--max-chars", "300")


def _cli_read_memory(c: Cli) -> None:
    for memory in c("read-memory", "--json").json():
        c.leaks.own(memory, "aimem read-memory")
    c("read-memory")


def _cli_ingest(c: Cli) -> None:
    lines = [f"Alice grows {ALICE_MARK} ferns [score=0.4]", BOB_TEXTS["active"]]
    path = c.tmp / "ingest.txt"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    run = c.raw("ingest", str(path))
    assert run.code == 0, run.err
    c.leaks.check_ids(run.out + run.err, "aimem ingest")
    assert "2 saved, 0 duplicates returned" in run.out, "bob's line is no duplicate for alice"
    c.purge_copies()


def _cli_export(c: Cli) -> None:
    path = c.tmp / "cli-alice.jsonl"
    c("export", str(path))
    c("export", str(c.tmp / "cli-alice-bare.jsonl"), "--no-history")
    text = path.read_text("utf-8")
    c.leaks.check(text, "aimem export file")
    assert c.world.alice["active"] in text


def _cli_import(c: Cli) -> None:
    path, ids = foreign_export(c.tmp)
    refused = c.raw("import", str(path), "--dry-run", "--json")
    assert refused.code == 1 and "different core text" in refused.out
    c.raw("core", "--set", "")  # an import never overwrites a core: clear alice's first
    dry = c("import", str(path), "--dry-run", "--json").json()
    assert dry["ok"] is True and dry["dry_run"] is True
    done = c("import", str(path), "--json").json()
    assert done["ok"] is True and done["memories"] == len(ids)
    assert placed_in(c.world.url, ids) == [(ALICE,)]
    c.raw("core", "--set", CORES[ALICE])  # the import set alice's core: put hers back


def _cli_backup(c: Cli) -> None:
    if on_postgres():  # a server is backed up with its own tools: one line, bob untouched
        refused = c("backup", str(c.tmp / "cli-backup.db"), code=1)
        assert "pg_dump" in refused.err and "Traceback" not in refused.err
        assert not (c.tmp / "cli-backup.db").exists()
        return
    # A whole-file copy holds every namespace by design; it must only leave bob unchanged.
    c("backup", str(c.tmp / "cli-backup.db"))


def _cli_reembed(c: Cli) -> None:
    # Re-computes alice's vectors only; bob's stay byte-identical.
    run = c("reembed", "--embedder", "local")
    assert f"{counts(c.world.url, ALICE)['total']} memories" in run.out


def _cli_reinterpret(c: Cli) -> None:
    # Exit 0 only when no pending memory is left: bob's pending one must not be counted.
    run = c("reinterpret")
    assert "0 still pending" in run.out
    assert c("show", c.world.alice["pending"], "--json").json()["score_source"] == "heuristic"


def _cli_export_aigpt(c: Cli) -> None:
    root = c.tmp / "aigpt-out"
    c("export-aigpt", str(root), "--did", "did:plc:alice", "--handle", "alice.test")
    files = [p for p in root.rglob("*") if p.is_file()]
    assert files
    for path in files:
        c.leaks.check(path.read_text("utf-8"), f"aimem export-aigpt {path.name}")


def _cli_import_aigpt(c: Cli) -> None:
    root = c.tmp / "aigpt-in"
    now = datetime.now(UTC)
    write_tree(
        root,
        "did:plc:alice",
        [(BOB_TEXTS["second"], now), (f"Alice sails with a {ALICE_MARK} [score=0.6]", now)],
        f"{CORES[ALICE]} From aigpt.",
    )
    run = c.raw("import-aigpt", str(root))
    assert run.code == 0, run.err
    c.leaks.check_ids(run.out + run.err, "aimem import-aigpt")
    copies = [m for m in c.listed() if BOB_MARK in m["content"]]
    assert len(copies) == 1, "bob's text became a new alice memory"
    assert core_text(c.world.url, ALICE) == f"{CORES[ALICE]} From aigpt."
    c.purge_copies()
    c.raw("core", "--set", CORES[ALICE])


def _cli_status(c: Cli) -> None:
    # `aimem status` is bare `aimem`: alice's counts, never bob's.
    alice = counts(c.world.url, ALICE)
    assert f"{alice['count']} active, {alice['archived']} archived" in c("status").out


def _cli_shell(c: Cli) -> None:
    # One store kept open for many lines: each line is alice's, as the one-shot command.
    bob_id = c.world.ids[BOB]["active"]
    lines = ["list --all --json", f"search '{PROBE}' --all", f"show {bob_id}", "stats", "exit"]
    run = c.raw("shell", stdin="\n".join(lines) + "\n")
    assert run.code == 1, "the failed `show` of bob's id is the shell's exit status"
    assert "no memory with id" in run.err and f"namespace {ALICE!r}" in run.err
    c.leaks.check(run.out + run.err, "aimem shell", echo=[bob_id, PROBE])
    assert all(memory_id in run.out for memory_id in c.world.alice.values())


#: Every subcommand, in the order they run.
CLI_CASES: dict[str, CliCase] = {
    "status": _cli_status,
    "shell": _cli_shell,
    "list": _cli_list,
    "search": _cli_search,
    "show": _cli_show,
    "history": _cli_history,
    "update": _cli_update,
    "stats": _cli_stats,
    "core": _cli_core,
    "read-core": _cli_read_core,
    "context": _cli_context,
    "read-memory": _cli_read_memory,
    "save": _cli_save,
    "save-memory": _cli_save_memory,
    "pin": _cli_pin,
    "unpin": _cli_unpin,
    "restore": _cli_restore,
    "delete": _cli_delete,
    "prune": _cli_prune,
    "ingest": _cli_ingest,
    "reinterpret": _cli_reinterpret,
    "export": _cli_export,
    "import": _cli_import,
    "export-aigpt": _cli_export_aigpt,
    "import-aigpt": _cli_import_aigpt,
    "backup": _cli_backup,
    "reembed": _cli_reembed,
}
CLI_NOT_HERE = {
    # `aimem --namespace alice mcp` is the server test_mcp_paths_stay_in_their_namespace runs.
    "mcp",
    # The demo saves into its own temporary database; --database-url/--namespace are unused.
    "demo",
}


def _subcommands() -> set[str]:
    parser = build_parser()
    [sub] = [a for a in parser._actions if a.dest == "command"]
    assert sub.choices is not None
    return set(sub.choices)


def test_every_cli_subcommand_has_an_isolation_case() -> None:
    assert _subcommands() - CLI_NOT_HERE == set(CLI_CASES), "add an isolation case to CLI_CASES"


def test_cli_paths_stay_in_their_namespace(
    world: World,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("AIMEM_MAX_MEMORIES", "2")  # alice's saves and prunes do archive
    cli = Cli(world, Leaks(world), tmp_path, capsys, monkeypatch)
    # `aimem` with no command: the status line counts alice's memories, not bob's.
    alice = counts(world.url, ALICE)
    status = cli().out.replace("\n", " ")
    assert f"memories ({ALICE} namespace)" in status
    line = (
        f"{alice['count']} active, {alice['archived']} archived, {alice['pinned']} pinned, "
        f"{alice['pending']} pending"
    )
    assert line in status
    for name, case in CLI_CASES.items():
        case(cli)
        world.assert_bob_unchanged(f"aimem {name}")
    assert namespaces_in(world.url) == {ALICE, BOB}
    world.assert_bob_unchanged("every CLI command")


# -- 3. the MCP server ----------------------------------------------------------------------


AIMEM = str(Path(sys.executable).with_name("aimem"))


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    return env | extra


@asynccontextmanager
async def stdio_session(url: str, *args: str, **env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=AIMEM,
        args=["--database-url", url, *args, "mcp"],
        env=_env(**env),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        yield session


def _result(call: Any) -> dict[str, Any]:
    assert not call.is_error, call.content[0].text
    structured = call.structured_content
    assert structured is not None
    assert json.loads(call.content[0].text) == structured
    return dict(structured)


def _tool_error(call: Any) -> str:
    assert call.is_error
    [block] = call.content
    text: str = block.text
    assert "\n" not in text and len(text) <= MAX_ERROR_CHARS
    return text


@dataclass
class Mcp:
    session: ClientSession
    world: World
    leaks: Leaks

    async def __call__(self, tool: str, **arguments: Any) -> dict[str, Any]:
        if tool in DETAILED:  # whole records: own() checks each memory's namespace
            arguments = {"detail": True, **arguments}
        result = _result(await self.session.call_tool(tool, arguments))
        self.leaks.check(result, f"MCP {tool}")
        return result

    async def bob_not_found(self, tool: str, **arguments: Any) -> None:
        for label, bob_id in self.world.ids[BOB].items():
            call = await self.session.call_tool(tool, {"memory_id": bob_id, **arguments})
            message = _tool_error(call)
            assert "No memory with id" in message, message
            self.leaks.check(message, f"MCP {tool}(bob's {label})", echo=bob_id)

    async def copy(self, **arguments: Any) -> None:
        """save_memory of bob's text: alice's own new memory, never bob's."""
        call = await self.session.call_tool("save_memory", {"detail": True, **arguments})
        result = _result(call)
        self.leaks.check_ids(result, "MCP save_memory of bob's text")
        assert result["duplicate"] is False
        self.leaks.own(result["memory"], "MCP save_memory of bob's text")
        assert result["memory"]["access_count"] == 0

    async def purge_copies(self) -> None:
        call = await self.session.call_tool(
            "list_memories", {"include_archived": True, "limit": 1000, "detail": True}
        )
        for memory in _result(call)["memories"]:
            self.leaks.own(memory, "MCP list_memories")
            if BOB_MARK in memory["content"]:
                await self("delete_memory", memory_id=memory["id"])


McpCase = Callable[[Mcp], Awaitable[None]]
#: The tools whose results hold memories (or events): called with detail=true.
DETAILED = {
    "save_memory",
    "save_memories",
    "save_conversation",
    "search_memories",
    "list_memories",
    "get_memory",
    "update_memory",
    "pin_memory",
    "unpin_memory",
    "restore_memory",
    "memory_history",
    "read_memory",
    "compress",
}


async def _mcp_save_memory(m: Mcp) -> None:
    fresh = await m("save_memory", content=TRAVEL, idempotency_key="shared-key")
    m.leaks.own(fresh["memory"], "MCP save_memory under bob's key")
    again = await m("save_memory", content=TRAVEL, idempotency_key="shared-key")
    assert again["memory"]["id"] == fresh["memory"]["id"]
    await m.copy(content=BOB_TEXTS["second"], idempotency_key="bob-key")
    for label, text in BOB_TEXTS.items():
        if label not in ("second", "pinned"):
            await m.copy(content=text)
    await m.copy(
        content=BOB_TEXTS["pinned"],
        interpreted_content=f"{ALICE_MARK}-scored",
        emotional_impact=0.2,
        user_relevance=0.2,
        novelty=0.2,
        utility=0.2,
    )
    await m.purge_copies()


async def _mcp_search_memories(m: Mcp) -> None:
    found = await m("search_memories", query=PROBE, limit=100)
    assert found["hits"], "the probe finds alice's own memories"
    assert (await m("search_memories", query=BOB_MARK, limit=100))["hits"] == []
    await m("search_memories", query=PROBE, min_score=0.0)


async def _mcp_list_memories(m: Mcp) -> None:
    listed = await m("list_memories", include_archived=True, limit=1000, order="recent")
    assert {x["id"] for x in listed["memories"]} >= set(m.world.alice.values())
    await m("list_memories")
    await m("list_memories", min_score=0.0, order="priority")


async def _mcp_get_memory(m: Mcp) -> None:
    await m.bob_not_found("get_memory")
    for memory_id in m.world.alice.values():
        m.leaks.own((await m("get_memory", memory_id=memory_id))["memory"], "MCP get_memory")


async def _mcp_update_memory(m: Mcp) -> None:
    await m.bob_not_found("update_memory", content=f"Alice's words {ALICE_MARK}")
    await m.bob_not_found("update_memory", content=f"Alice {ALICE_MARK}", expected_version=1)
    await m("update_memory", memory_id=m.world.alice["second"], content=f"Alice codes {ALICE_MARK}")


async def _mcp_delete_memory(m: Mcp) -> None:
    await m.bob_not_found("delete_memory")
    doomed = await m("save_memory", content=f"Alice's throwaway {ALICE_MARK} line")
    await m("delete_memory", memory_id=doomed["memory"]["id"])


async def _mcp_pin_memory(m: Mcp) -> None:
    await m.bob_not_found("pin_memory")
    await m("pin_memory", memory_id=m.world.alice["active"])


async def _mcp_unpin_memory(m: Mcp) -> None:
    await m.bob_not_found("unpin_memory")
    await m("unpin_memory", memory_id=m.world.alice["active"])


async def _mcp_restore_memory(m: Mcp) -> None:
    await m.bob_not_found("restore_memory")
    await m("restore_memory", memory_id=m.world.alice["archived"])


async def _mcp_memory_history(m: Mcp) -> None:
    await m.bob_not_found("memory_history")
    for memory_id in m.world.alice.values():
        events = (await m("memory_history", memory_id=memory_id))["events"]
        assert events and {e["memory_id"] for e in events} == {memory_id}
        m.leaks.check(json.dumps(events), "MCP memory_history")


async def _mcp_prune_memories(m: Mcp) -> None:
    for dry_run in (True, False):
        report = await m("prune_memories", dry_run=dry_run)
        assert not set(report["archived"]) & set(m.world.bob_ids), "MCP prune_memories"


async def _mcp_memory_stats(m: Mcp) -> None:
    stats = await m("memory_stats")
    assert stats["namespace"] == ALICE
    wanted = counts(m.world.url, ALICE)
    assert {k: stats[k] for k in wanted} == wanted


async def _mcp_read_core(m: Mcp) -> None:
    assert await m("read_core") == {"core": CORES[ALICE]}


async def _mcp_set_core(m: Mcp) -> None:
    await m("set_core", text=f"{CORES[ALICE]} Set over MCP.")
    assert await m("read_core") == {"core": f"{CORES[ALICE]} Set over MCP."}
    await m("set_core", text=CORES[ALICE])


async def _mcp_save_memories(m: Mcp) -> None:
    texts = [BOB_TEXTS["second"], f"Alice batch {ALICE_MARK} line"]
    for arguments in ({"contents": texts}, {"items": [{"content": t} for t in texts]}):
        call = await m.session.call_tool("save_memories", {"detail": True, **arguments})
        saved = _result(call)
        m.leaks.check_ids(saved, "MCP save_memories of bob's text")
        for memory in saved["memories"]:
            m.leaks.own(memory, "MCP save_memories")
    await m.purge_copies()


async def _mcp_save_conversation(m: Mcp) -> None:
    messages = [{"role": "user", "content": f"I'm allergic to penicillin, {ALICE_MARK}."}]
    saved = await m("save_conversation", messages=messages)
    for memory in saved["memories"]:
        m.leaks.own(memory, "MCP save_conversation")
        await m("delete_memory", memory_id=memory["id"])


async def _mcp_read_memory(m: Mcp) -> None:
    for memory in (await m("read_memory"))["memories"]:
        m.leaks.own(memory, "MCP read_memory")


async def _mcp_compress(m: Mcp) -> None:
    done = await m("compress", items=[f"Alice summary: {ALICE_MARK}, coffee, Rust"])
    emptied = await m("compress", items=[], allow_empty=True)
    ids = done["archived"] + emptied["archived"]
    assert ids and emptied["memories"] == []
    left = scalar(
        m.world.url,
        "SELECT count(*) FROM memories WHERE namespace = ? AND archived_at IS NULL "
        "AND NOT pinned AND priority_score IS NOT NULL",
        (ALICE,),
    )
    assert placed_in(m.world.url, ids) == [(ALICE,)] and left == 0


#: Every tool, in the order they run.
MCP_CASES: dict[str, McpCase] = {
    "get_memory": _mcp_get_memory,
    "list_memories": _mcp_list_memories,
    "search_memories": _mcp_search_memories,
    "memory_stats": _mcp_memory_stats,
    "read_core": _mcp_read_core,
    "set_core": _mcp_set_core,
    "save_memories": _mcp_save_memories,
    "save_conversation": _mcp_save_conversation,
    "read_memory": _mcp_read_memory,
    "save_memory": _mcp_save_memory,
    "update_memory": _mcp_update_memory,
    "pin_memory": _mcp_pin_memory,
    "unpin_memory": _mcp_unpin_memory,
    "restore_memory": _mcp_restore_memory,
    "memory_history": _mcp_memory_history,
    "delete_memory": _mcp_delete_memory,
    "prune_memories": _mcp_prune_memories,
    "compress": _mcp_compress,
}
MCP_RESOURCES = {"memory://core", "memory://memories"}
MCP_RESOURCE_TEMPLATES = {"memory://memories/{memory_id}"}


async def _mcp_resources(m: Mcp) -> None:
    listed = await m.session.list_resources()
    assert {str(r.uri) for r in listed.resources} == MCP_RESOURCES, "add a resource case"
    templates = await m.session.list_resource_templates()
    assert {t.uri_template for t in templates.resource_templates} == MCP_RESOURCE_TEMPLATES
    [core] = (await m.session.read_resource("memory://core")).contents
    assert core.text == CORES[ALICE]
    [listing] = (await m.session.read_resource("memory://memories")).contents
    memories = json.loads(listing.text)
    m.leaks.check(memories, "memory://memories")
    for memory in memories:
        m.leaks.own(memory, "memory://memories")
    for memory_id in m.world.alice.values():
        [one] = (await m.session.read_resource(f"memory://memories/{memory_id}")).contents
        m.leaks.own(json.loads(one.text), "memory://memories/{id}")
        m.leaks.check(one.text, "memory://memories/{id}")
    for label, bob_id in m.world.ids[BOB].items():
        with pytest.raises(MCPError) as info:
            await m.session.read_resource(f"memory://memories/{bob_id}")
        m.leaks.check(str(info.value), f"memory://memories/<bob's {label}>", echo=bob_id)


def test_mcp_paths_stay_in_their_namespace(world: World) -> None:
    leaks = Leaks(world)

    async def scenario() -> None:
        async with stdio_session(
            world.url, "--namespace", ALICE, AIMEM_MAX_MEMORIES="2"
        ) as session:
            init = await session.initialize()
            assert init.instructions is not None and CORES[ALICE] in init.instructions
            leaks.check(init.instructions, "initialize instructions")
            tools = {t.name for t in (await session.list_tools()).tools}
            assert tools == set(MCP_CASES), "add an isolation case to MCP_CASES"
            if init.capabilities.prompts is not None:
                assert (await session.list_prompts()).prompts == [], "add a prompt case"
            mcp = Mcp(session, world, leaks)
            await _mcp_resources(mcp)
            world.assert_bob_unchanged("MCP resources")
            for name, case in MCP_CASES.items():
                await case(mcp)
                world.assert_bob_unchanged(f"MCP {name}")
            await _mcp_resources(mcp)

    asyncio.run(scenario())
    assert namespaces_in(world.url) == {ALICE, BOB}
    world.assert_bob_unchanged("every MCP tool and resource")
