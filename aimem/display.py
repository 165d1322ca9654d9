"""Where a result's notebook and terminal views come from, without models importing them.

``models`` asks here (``_repr_html_``, ``__rich__``); ``render`` registers one view of
each type when it is imported, which ``import aimem`` does. So the data shapes never
import the code that draws them, and the two cannot form an import cycle.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = ["html_of", "ids_of_open_stores", "register", "rich_of", "track_store"]


class IdReader(Protocol):
    """An open store, as a view sees it: every id of its namespace, or None once closed."""

    def _ids_for_views(self) -> list[str] | None: ...


#: The stores open in this process (weakly: a collected store drops out), so a view of
#: memories given no store still shows id prefixes the store they came from accepts.
_OPEN_STORES: weakref.WeakSet[Any] = weakref.WeakSet()

View = tuple[Callable[[Any], str], Callable[[Any], "RenderableType"]]
_VIEWS: dict[type, View] = {}


def register(kind: type, html: Callable[[Any], str], rich: Callable[[Any], RenderableType]) -> None:
    """Say how ``kind`` looks: ``html`` for a notebook, ``rich`` for a terminal."""
    _VIEWS[kind] = (html, rich)


def _view(obj: object) -> View:
    for kind in type(obj).__mro__:
        if kind in _VIEWS:
            return _VIEWS[kind]
    raise TypeError(f"no view registered for {type(obj).__name__}: import aimem.render")


def html_of(obj: object) -> str:
    """The notebook view of ``obj``."""
    return _view(obj)[0](obj)


def rich_of(obj: object) -> RenderableType:
    """The terminal view of ``obj`` (a rich renderable)."""
    return _view(obj)[1](obj)


def track_store(store: IdReader) -> None:
    """Remember an open store for ``ids_of_open_stores`` (called as each store opens)."""
    _OPEN_STORES.add(store)


def ids_of_open_stores(shown: Collection[str]) -> list[str] | None:
    """Every id of the open stores that hold all of ``shown``; None when none does.

    Ids are unique across stores, so a store holding them all is where they came from
    (two handles on one database give the same ids). A prefix unique among these is
    one ``store.get`` and the CLI accept, archived memories included.
    """
    wanted = set(shown)
    found: set[str] = set()
    for store in list(_OPEN_STORES):
        known = store._ids_for_views()
        if known is not None and wanted <= (held := set(known)):
            found |= held
    return sorted(found) if found else None
