"""``show()``: any result, ready for a notebook cell or ``rich.print``."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import RenderableType
from rich.text import Text

from ..models import ImportReport, Memory, PruneReport, SaveReport, SearchHit, Stats
from .notebook import (
    _e,
    hits_html,
    import_report_html,
    memories_html,
    memory_html,
    prune_report_html,
    save_report_html,
    stats_html,
)
from .terminal import (
    import_report_rich,
    memory_detail,
    memory_list_table,
    prune_report_rich,
    save_report_rich,
    search_table,
    stats_table,
)

Showable = (
    Memory | SearchHit | PruneReport | SaveReport | ImportReport | Stats
    | Sequence[Memory] | Sequence[SearchHit]
)  # fmt: skip


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


def show(obj: Showable, *, title: str | None = None) -> Shown:
    """Wrap a result for display; mostly for lists, which cannot carry a ``_repr_html_``.

    A notebook renders the returned object as HTML when it is a cell's last expression
    (or with ``IPython.display.display``); in a terminal, ``rich.print(show(...))``.
    ``title`` applies to lists.

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
    if isinstance(obj, SearchHit):
        return Shown(hits_html([obj], title=title), search_table([obj], title=title))
    if isinstance(obj, PruneReport):
        return Shown(prune_report_html(obj), prune_report_rich(obj))
    if isinstance(obj, SaveReport):
        return Shown(save_report_html(obj), save_report_rich(obj))
    if isinstance(obj, ImportReport):
        return Shown(import_report_html(obj), import_report_rich(obj))
    if isinstance(obj, Stats):
        return Shown(stats_html(obj), stats_table(obj))
    items = list(obj)
    if not items:
        label = f"{title}: none" if title else "none"
        return Shown(f"<div>{_e(label)}.</div>", Text(f"{label}."))
    if all(isinstance(i, SearchHit) for i in items):
        hits = [i for i in items if isinstance(i, SearchHit)]
        return Shown(hits_html(hits, title=title), search_table(hits, title=title))
    if all(isinstance(i, Memory) for i in items):
        memories = [i for i in items if isinstance(i, Memory)]
        return Shown(memories_html(memories, title=title), memory_list_table(memories, title=title))
    raise TypeError(
        "show() takes a Memory, SearchHit, PruneReport, SaveReport, ImportReport, Stats, "
        f"or a list of memories or of search hits; got {type(obj).__name__}"
    )
