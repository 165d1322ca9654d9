"""How results look: rich tables in a terminal, HTML in a notebook, and :func:`show`.

``terminal`` draws rich tables, ``notebook`` HTML, ``text`` the pieces both share;
:func:`show` wraps lists, which cannot carry a view of their own.

Importing this package registers one view per result type (``VIEWS`` below) with
``aimem.display``, so a ``Memory``, a ``SearchHit``, a ``PruneReport`` or ``Stats``
shows itself as a table in a terminal (``rich.print(memory)``) and in a notebook (the
last expression of a cell).
"""

from __future__ import annotations

from aimem.display import View, register
from aimem.models import ImportReport, Memory, PruneReport, SaveReport, SearchHit, Stats
from aimem.render.notebook import (
    COMPONENT_COLORS,
    COMPONENT_LABELS,
    hits_html,
    import_report_html,
    memories_html,
    memory_html,
    prune_report_html,
    save_report_html,
    stats_html,
)
from aimem.render.show import Showable, Shown, show
from aimem.render.terminal import (
    archived_table,
    history_table,
    import_report_rich,
    memory_detail,
    memory_list_table,
    memory_table,
    prune_report_rich,
    save_report_rich,
    search_table,
    stats_table,
)

__all__ = [
    "COMPONENT_COLORS",
    "COMPONENT_LABELS",
    "VIEWS",
    "Showable",
    "Shown",
    "archived_table",
    "history_table",
    "hits_html",
    "import_report_html",
    "import_report_rich",
    "memories_html",
    "memory_detail",
    "memory_html",
    "memory_list_table",
    "memory_table",
    "prune_report_html",
    "prune_report_rich",
    "save_report_html",
    "save_report_rich",
    "search_table",
    "show",
    "stats_html",
    "stats_table",
]

#: One type -> its notebook view and its terminal view.
VIEWS: dict[type, View] = {
    Memory: (memory_html, memory_detail),
    SearchHit: (lambda hit: hits_html([hit]), lambda hit: search_table([hit])),
    PruneReport: (prune_report_html, prune_report_rich),
    SaveReport: (save_report_html, save_report_rich),
    ImportReport: (import_report_html, import_report_rich),
    Stats: (stats_html, stats_table),
}
for _kind, (_html, _rich) in VIEWS.items():
    register(_kind, _html, _rich)
