"""Ids a table shows can be typed back: ``store.get`` and the CLI accept them.

Rendered with the store (``show(..., store=store)``), every shown id is the shortest
prefix the whole namespace leaves unique. Without it, a prefix is unique among the shown
ids only: it never names another memory, but the store may find it ambiguous.
The ids here are made in one frozen millisecond, so they share 15 characters or more.
"""

from __future__ import annotations

import contextlib
import html
import itertools
import re
import time
import types
from collections.abc import Iterator

import pytest
from rich.console import Console

import aimem
from aimem.cli import main
from aimem.ids import DISPLAY_PREFIX
from aimem.render import memories_html, memory_table, show

CONTENTS = [
    "I'm allergic to penicillin.",
    "My sister's wedding is on June 3rd.",
    "Never book flights without asking me first.",
    "I'm learning Rust for a work project.",
    "My partner is vegetarian, so book vegetarian restaurants.",
    "lol",
]
#: The HTML tables' id cell: the shown prefix, with the full id on hover.
ID_CELL = re.compile(r'<code title="([0-9a-f-]{36})">([0-9a-f-]+)</code>')


@pytest.fixture
def url(db_url: str) -> str:
    return db_url


@pytest.fixture
def store(url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[aimem.MemoryStore]:
    frozen = time.time_ns()  # every id of this store: the same millisecond
    clock = types.SimpleNamespace(time_ns=lambda: frozen)
    monkeypatch.setattr("aimem.ids.time", clock)
    with aimem.MemoryStore(url, judge=aimem.HeuristicJudge(), max_memories=4) as s:
        s.save_many(CONTENTS)
        yield s


def _shared(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))


def _rich_text(renderable: object) -> str:
    console = Console(record=True, width=200, color_system=None)
    console.print(renderable)
    return console.export_text()


def _html_ids(page: str) -> dict[str, str]:
    found = {full: shown for full, shown in ID_CELL.findall(html.unescape(page))}
    assert found, page
    return found


def _rich_ids(text: str, full_ids: list[str]) -> dict[str, str]:
    """Each full id -> the longest of its prefixes that ``text`` shows as a whole token."""
    found = {}
    for full in full_ids:
        for n in range(len(full), DISPLAY_PREFIX - 1, -1):
            if re.search(rf"(?<![0-9a-f-]){re.escape(full[:n])}(?![0-9a-f-])", text):
                found[full] = full[:n]
                break
    return found


def _assert_typed_back(
    shown: dict[str, str], store: aimem.MemoryStore, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for full, prefix in shown.items():
        assert full.startswith(prefix) and len(prefix) >= DISPLAY_PREFIX, (full, prefix)
        assert store.get(prefix).id == full
        capsys.readouterr()
        assert main(["--database-url", url, "show", prefix]) == 0, capsys.readouterr().err
        assert full in capsys.readouterr().out


def test_the_ids_share_a_long_prefix(store: aimem.MemoryStore) -> None:
    ids = sorted(m.id for m in store.list(include_archived=True))
    assert len(ids) == len(CONTENTS)
    # All share the millisecond (13 characters) and "-7"; a pair may share more.
    assert min(_shared(a, b) for a, b in itertools.pairwise(ids)) >= 15


def test_html_with_the_store_shows_ids_get_and_the_cli_accept(
    store: aimem.MemoryStore, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    everything = store.list(include_archived=True)
    archived = next(m for m in everything if m.archived)
    pages = [  # each checked before the next save: a later id may share a shown prefix
        lambda: show(everything, store=store),
        lambda: show(store.list(limit=1), store=store),  # alone, yet unique in the store
        lambda: show(store.search("penicillin wedding flights", limit=3), store=store),
        lambda: show(store.save_many_with_report(["The weather is nice today."]), store=store),
        lambda: show(store.restore_with_report(archived.id), store=store),  # archives one
    ]
    shown: dict[str, str] = {}
    for page in pages:
        ids = _html_ids(page().html)
        assert all(len(p) >= 16 for p in ids.values())  # past the 15 all share
        _assert_typed_back(ids, store, url, capsys)
        shown.update(ids)
    assert len(shown) > len(CONTENTS)


def test_rich_text_with_the_store_shows_ids_get_and_the_cli_accept(
    store: aimem.MemoryStore, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    everything = store.list(include_archived=True)
    full_ids = [m.id for m in everything]
    text = _rich_text(show(everything, store=store))
    shown = _rich_ids(text, full_ids)
    assert set(shown) == set(full_ids)
    assert all(len(p) < 36 for p in shown.values())  # prefixes, not whole ids
    hits_text = _rich_text(show(store.search("penicillin", limit=1), store=store))
    shown.update(_rich_ids(hits_text, full_ids))
    _assert_typed_back(shown, store, url, capsys)


def test_without_the_store_an_open_store_still_gives_the_prefixes(
    store: aimem.MemoryStore, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    everything = store.list(include_archived=True)
    assert any(m.archived for m in everything), "archived ids share the long prefix too"
    active = store.list()
    for page in (memories_html(active), memories_html(active[:1]), show(active[::2]).html):
        _assert_typed_back(_html_ids(page), store, url, capsys)
    text = _rich_text(show(active))
    _assert_typed_back(_rich_ids(text, [m.id for m in active]), store, url, capsys)


def test_once_the_store_is_closed_a_prefix_is_unique_among_the_shown(url: str) -> None:
    with aimem.MemoryStore(url, judge=aimem.HeuristicJudge(), max_memories=4) as s:
        s.save_many(CONTENTS)
        everything = s.list(include_archived=True)
    # Closed: no store to ask, so the prefixes are unique among the shown ids only.
    alone = _html_ids(memories_html(everything[:1]))
    assert [len(p) for p in alone.values()] == [DISPLAY_PREFIX]
    every = _html_ids(memories_html(everything))
    assert len(set(every.values())) == len(everything)
    with aimem.MemoryStore(url, judge=aimem.HeuristicJudge()) as again:
        for shown in (alone, every):
            for full, prefix in shown.items():
                assert full.startswith(prefix) and len(prefix) >= DISPLAY_PREFIX
                # A memory not shown may share it: then the lookup asks for more characters.
                with contextlib.suppress(aimem.AmbiguousIdError):
                    assert again.get(prefix).id == full  # never another memory
    # Every shown id is a prefix of its memory's id (it once showed the last 8 characters).
    demo = _rich_text(memory_table(everything))
    assert all(_rich_ids(demo, [m.id]) for m in everything)


def test_show_refuses_an_async_store_it_cannot_await(store: aimem.MemoryStore) -> None:
    class AsyncLike:
        async def short_ids(self, ids: object) -> dict[str, str]:
            return {}

    with pytest.raises(TypeError, match=r"ids=await store.short_ids"):
        show(store.list(), store=AsyncLike())  # type: ignore[arg-type]
