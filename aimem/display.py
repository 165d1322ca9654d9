"""Where a result's notebook and terminal views come from, without models importing them.

``models`` asks here (``_repr_html_``, ``__rich__``); ``render`` registers one view of
each type when it is imported, which ``import aimem`` does. So the data shapes never
import the code that draws them, and the two cannot form an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = ["html_of", "register", "rich_of"]

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
