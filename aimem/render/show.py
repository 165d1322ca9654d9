"""``show()``: any result, ready for a notebook cell or ``rich.print``."""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from typing import Protocol

from rich.console import RenderableType
from rich.text import Text

from aimem.models import ImportReport, Memory, PruneReport, SaveReport, SearchHit, Stats
from aimem.render.notebook import (
    _e,
    hits_html,
    import_report_html,
    memories_html,
    memory_html,
    prune_report_html,
    save_report_html,
    stats_html,
)
from aimem.render.terminal import (
    import_report_rich,
    memory_detail,
    memory_list_table,
    prune_report_rich,
    save_report_rich,
    search_table,
    stats_table,
)
from aimem.render.text import IdMap

Showable = (
    Memory | SearchHit | PruneReport | SaveReport | ImportReport | Stats
    | Sequence[Memory] | Sequence[SearchHit]
)  # fmt: skip


class IdSource(Protocol):
    """Where the short ids come from: a ``MemoryStore`` (its ``short_ids``)."""

    def short_ids(self, ids: Iterable[str]) -> dict[str, str]:
        """Each id -> its shortest prefix no other memory of the store shares."""
        ...


class Shown:
    """Anything aimem returns, ready to display: HTML in a notebook, a rich table in a terminal.

    Made by :func:`show`; also has ``.html`` (the HTML string) and ``.rich`` (the renderable).
    """

    def __init__(self, html_text: str, renderable: RenderableType) -> None:
        self.html = html_text
        self.rich = renderable

    def _repr_html_(self) -> str:
        return self.html

    def __rich__(self) -> RenderableType:
        return self.rich

    def __repr__(self) -> str:
        return "<aimem.render.Shown: display it in a notebook, or rich.print() it>"


def show(
    obj: Showable,
    *,
    title: str | None = None,
    store: IdSource | None = None,
    ids: IdMap | None = None,
) -> Shown:
    """Wrap a result for display; mostly for lists, which cannot carry a ``_repr_html_``.

    A notebook renders the returned object as HTML when it is a cell's last expression
    (or with ``IPython.display.display``); in a terminal, ``rich.print(show(...))``.
    ``title`` applies to lists.

    Ids you can type back: each id is shown as the shortest prefix (8 characters or
    more) no other memory of its namespace shares, archived ones included, so
    ``store.get(prefix)`` and every CLI command on that store accept it, until a memory
    saved later shares it (an id starts with its creation time: one saved within the
    same minute may). The store is the one given (``store``, or ``ids`` as a ready
    mapping, e.g. ``ids=await async_store.short_ids(...)``), else the store open in this
    process that holds every shown id. With neither (the store closed), a prefix is
    unique only among the shown ids: never another shown memory's, but a memory not
    shown may share it, and a lookup then raises ``AmbiguousIdError`` rather than
    return the wrong memory. The HTML has each full id on hover.

    Example:
        ```python
        import rich
        import aimem
        from aimem.render import show

        store = aimem.MemoryStore("sqlite:///:memory:", judge=aimem.HeuristicJudge())
        store.save("I drink green tea every morning.")
        show(store.search("tea"), title="tea")        # last line of a notebook cell
        rich.print(show(store.list(limit=5)))         # in a terminal
        ```
    """
    if isinstance(obj, Memory):
        return Shown(memory_html(obj), memory_detail(obj))
    if isinstance(obj, Stats):
        return Shown(stats_html(obj), stats_table(obj))
    items: list[object] = []  # a report's memories are its own
    if isinstance(obj, SearchHit):
        items = [obj]
    elif not isinstance(obj, PruneReport | SaveReport | ImportReport):
        items = list(obj)
    if store is not None and ids is None:
        ids = _store_ids(store, _ids_of(obj, items))
    if isinstance(obj, PruneReport):
        return Shown(prune_report_html(obj, ids=ids), prune_report_rich(obj, ids=ids))
    if isinstance(obj, SaveReport):
        return Shown(save_report_html(obj, ids=ids), save_report_rich(obj, ids=ids))
    if isinstance(obj, ImportReport):
        return Shown(import_report_html(obj, ids=ids), import_report_rich(obj, ids=ids))
    if not items:
        label = f"{title}: none" if title else "none"
        return Shown(f"<div>{_e(label)}.</div>", Text(f"{label}."))
    if all(isinstance(i, SearchHit) for i in items):
        hits = [i for i in items if isinstance(i, SearchHit)]
        return Shown(
            hits_html(hits, title=title, ids=ids), search_table(hits, title=title, ids=ids)
        )
    if all(isinstance(i, Memory) for i in items):
        memories = [i for i in items if isinstance(i, Memory)]
        return Shown(
            memories_html(memories, title=title, ids=ids),
            memory_list_table(memories, title=title, ids=ids),
        )
    raise TypeError(
        "show() takes a Memory, SearchHit, PruneReport, SaveReport, ImportReport, Stats, "
        f"or a list of memories or of search hits; got {type(obj).__name__}"
    )


def _ids_of(obj: object, items: Sequence[object]) -> list[str]:
    """Every memory id ``show`` may draw for ``obj`` (a newer hit's too)."""
    memories: list[Memory] = []
    newer: list[str] = []
    if isinstance(obj, SaveReport):
        memories = [*obj.memories, *obj.archived]
    elif isinstance(obj, PruneReport | ImportReport):
        memories = list(obj.archived)
    for item in items:
        if isinstance(item, Memory):
            memories.append(item)
        elif isinstance(item, SearchHit):
            memories.append(item.memory)
            newer.extend([item.conflicts_with] if item.conflicts_with else [])
    return [*(m.id for m in memories), *newer]


def _store_ids(store: IdSource, wanted: list[str]) -> IdMap:
    """``store.short_ids(wanted)``; an ``AsyncMemoryStore``'s cannot be awaited here."""
    if not wanted:
        return {}
    found = store.short_ids(wanted)
    if inspect.isawaitable(found):
        close = getattr(found, "close", None)
        if close is not None:
            close()  # never awaited: no "coroutine was never awaited" warning
        raise TypeError(
            "show(store=...) takes a MemoryStore; with an AsyncMemoryStore, pass "
            "ids=await store.short_ids(...) instead"
        )
    return found
