"""How results look in a terminal: rich tables and reports (the CLI's and ``__rich__``).

Every table is fitted to the width it is drawn at (``FittedTable``): short columns keep
their natural width, optional ones (the four components) appear only when the
interpretation still gets room, and the interpretation takes what is left, wrapped at
word boundaries and cut with an ellipsis after ``max_lines``. ``wide=True`` asks for
full ids, every column and whole interpretations; when even that cannot fit, each row
becomes a short block of lines instead. Nothing is drawn wider than the console.

User text is always a ``Text`` (shown literally, never read as rich markup).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.console import (
    Console,
    ConsoleOptions,
    Group,
    JustifyMethod,
    RenderableType,
    RenderResult,
)
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from aimem.models import (
    HistoryEvent,
    ImportReport,
    Memory,
    PruneReport,
    SaveReport,
    SearchHit,
    Stats,
)
from aimem.render.text import (
    IdMap,
    fmt_score,
    id_labels,
    import_summary,
    prune_summary,
    shown_text,
    state,
    vector_search_text,
    when,
)

__all__ = [
    "Column",
    "FittedTable",
    "archived_table",
    "history_table",
    "import_report_rich",
    "memory_detail",
    "memory_list_table",
    "memory_table",
    "prune_report_rich",
    "save_report_rich",
    "search_table",
    "stats_table",
]

#: Columns an optional group adds must leave the interpretation at least this wide.
ROOM = 40
#: Below this, a --wide table is drawn as blocks of lines instead.
WIDE_MIN = 24
#: Lines of interpretation a row shows before the ellipsis (not with wide=True).
MAX_LINES = 3
#: Each column costs its padding (2) and one rule; the table one more rule.
_PER_COLUMN, _EDGES = 3, 1


@dataclass
class Column:
    """One table column: a header, one cell per row, and how it may give way.

    ``group`` 0 is always shown; groups 1, 2, ... are added in order while the flexible
    column keeps ``ROOM``. ``wrap`` lets a column wrap its words at that width (or its
    longest word) instead of growing (states such as "archived: superseded").
    ``compact`` cells replace ``cells`` when the flexible column would otherwise get
    less than ``ROOM``.
    """

    header: str
    cells: list[Text]
    justify: JustifyMethod = "left"
    group: int = 0
    wrap: int | None = None
    style: str | None = None
    compact: list[Text] | None = None

    def width(self, compact: bool = False) -> int:
        """Its natural width: the widest header or cell line (capped by ``wrap``)."""
        cells = self.compact if compact and self.compact is not None else self.cells
        natural = max([cell_len(self.header), *(_widest(c) for c in cells)])
        if self.wrap is None:
            return natural
        longest_word = max((cell_len(w) for c in cells for w in c.plain.split()), default=1)
        return min(natural, max(self.wrap, longest_word))


def _widest(text: Text) -> int:
    return max((cell_len(line) for line in text.plain.split("\n")), default=0)


@dataclass
class FittedTable:
    """A table whose columns fit the console width it is drawn at (see the module doc).

    ``flex`` is the one column that takes the remaining width (the interpretation).
    """

    columns: list[Column]
    flex: Column
    flex_at: int
    title: str | None = None
    wide: bool = False
    max_lines: int | None = MAX_LINES
    style: str | None = None
    title_style: str | None = None
    _rows: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._rows = len(self.flex.cells)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        shown, compact = self._choose(width)
        room = self._room(width, shown, compact)
        if self.wide and room < WIDE_MIN:
            yield self._blocks(shown, width)
            return
        yield self._table(console, shown, compact, max(room, 1))

    def _room(self, width: int, shown: Sequence[Column], compact: bool) -> int:
        used = sum(c.width(compact) for c in shown)
        return width - used - _PER_COLUMN * (len(shown) + 1) - _EDGES

    def _choose(self, width: int) -> tuple[list[Column], bool]:
        """The columns to show and whether ids go compact, widest first while there is room."""
        groups = sorted({c.group for c in self.columns} - {0})
        if self.wide:
            return list(self.columns), False
        shown = [c for c in self.columns if c.group == 0]
        compact = self._room(width, shown, False) < ROOM
        for group in groups:
            candidate = [c for c in self.columns if c.group == 0 or c.group <= group]
            if self._room(width, candidate, compact) < ROOM:
                break
            shown = candidate
        return shown, compact

    def _table(self, console: Console, shown: list[Column], compact: bool, room: int) -> Table:
        flex_width = min(room, max(self.flex.width(), 1))
        texts = [self._fit(console, t, flex_width) for t in self.flex.cells]
        table = Table(
            title=self.title,
            expand=False,
            style=self.style or "",
            title_style=self.title_style or "",
            show_lines=any("\n" in t.plain for t in texts),
        )
        ordered = list(shown)
        ordered.insert(min(self.flex_at, len(ordered)), self.flex)
        for column in ordered:
            if column is self.flex:
                table.add_column(column.header, width=flex_width, overflow="fold")
                continue
            table.add_column(
                column.header,
                justify=column.justify,
                style=column.style or "",
                width=column.width(compact),
                no_wrap=column.wrap is None,
                overflow="fold",
            )
        for row in range(self._rows):
            cells: list[RenderableType] = []
            for column in ordered:
                if column is self.flex:
                    cells.append(texts[row])
                elif compact and column.compact is not None:
                    cells.append(column.compact[row])
                else:
                    cells.append(column.cells[row])
            table.add_row(*cells)
        return table

    def _fit(self, console: Console, text: Text, width: int) -> Text:
        """``text`` wrapped at words to ``width``, cut after ``max_lines`` with an ellipsis."""
        lines = list(text.wrap(console, width))
        for line in lines:
            line.rstrip()
        limit = None if self.wide else self.max_lines
        if limit is not None and len(lines) > limit:
            lines = lines[:limit]
            last = lines[-1]
            if cell_len(last.plain) + 1 > width:
                last.truncate(width - 1)
                last.rstrip()
            last.append("…")
        return Text("\n", style=text.style).join(lines)

    def _blocks(self, shown: list[Column], width: int) -> RenderableType:
        """Each row as lines (fields, then the indented interpretation): --wide, narrow screen.

        Fields wrap as wholes (``emo 0.25`` never splits); the interpretation wraps at words.
        """
        parts: list[RenderableType] = []
        if self.title:
            parts.append(Text(self.title, style=self.title_style or "bold"))
        for row in range(self._rows):
            lines = [Text(style=self.style or "")]
            for column in shown:
                cell = column.cells[row]
                if not cell.plain:
                    continue
                field = Text()
                if column.header not in ("id", ""):
                    field.append(f"{column.header} ", style="dim")
                field.append_text(cell)
                line = lines[-1]
                if line.plain and cell_len(line.plain) + 2 + cell_len(field.plain) > width:
                    line = Text("  ", style=self.style or "")
                    lines.append(line)
                elif line.plain:
                    line.append("  ")
                line.append_text(field)
            parts.extend(lines)
            parts.append(Padding(self.flex.cells[row], (0, 0, 0, 2), expand=False))
        return Group(*parts)


# -- ids -------------------------------------------------------------------------------------


def _id_cells(
    ids: Iterable[str], short: IdMap | None, wide: bool, style: str | None = None
) -> tuple[list[Text], list[Text] | None]:
    """Id cells: full ids with ``wide``; the given short ids; else full with a compact fallback.

    Without a mapping (a library ``rich.print``), short prefixes stand in when full ids
    leave too little room: the open store's, or unique among the shown ids when no open
    store holds them (``text.id_labels`` says what each guarantees).
    """
    ids = list(ids)
    if wide:
        return [Text(i, style=style or "") for i in ids], None
    if short is not None:
        return [Text(short.get(i, i), style=style or "") for i in ids], None
    local = id_labels(ids)
    return [Text(i, style=style or "") for i in ids], [
        Text(local[i], style=style or "") for i in ids
    ]


def _id_column(
    ids: Iterable[str], short: IdMap | None, wide: bool, style: str | None = "dim"
) -> Column:
    cells, compact = _id_cells(ids, short, wide, style)
    return Column("id", cells, compact=compact)


def _short(memory_id: str | None, short: IdMap | None) -> str:
    if memory_id is None:
        return ""
    return memory_id if short is None else short.get(memory_id, memory_id)


# -- memory tables ---------------------------------------------------------------------------

_COMPONENTS = ("emo", "rel", "nov", "util")


def _score_columns(memories: Sequence[Memory], *, group: int = 1) -> list[Column]:
    values = [(m.emotional_impact, m.user_relevance, m.novelty, m.utility) for m in memories]
    return [
        Column(name, [Text(fmt_score(v[i])) for v in values], justify="right", group=group)
        for i, name in enumerate(_COMPONENTS)
    ]


def _priority_column(memories: Sequence[Memory], style: str | None = "bold") -> Column:
    return Column(
        "priority",
        [Text(fmt_score(m.priority_score)) for m in memories],
        justify="right",
        style=style,
    )


def _interpretations(memories: Sequence[Memory]) -> Column:
    """The interpretation, or the content where it only repeats it (``text.shown_text``)."""
    return Column("memory", [Text(shown_text(m)) for m in memories])


def memory_list_table(
    memories: Sequence[Memory],
    *,
    title: str | None = None,
    ids: IdMap | None = None,
    wide: bool = False,
    max_lines: int | None = MAX_LINES,
) -> FittedTable:
    """Memories with id, priority, (components), interpretation and state.

    ``ids`` maps full ids to the short prefixes to show (``store.short_ids``), which
    ``aimem show/pin ID`` accept; ``wide`` shows full ids and every column.
    Text is shown literally: brackets in a memory are never read as rich markup.
    """
    columns = [
        _id_column((m.id for m in memories), ids, wide),
        _priority_column(memories),
        *_score_columns(memories),
        Column("state", [Text(state(m)) for m in memories], wrap=10),
    ]
    return FittedTable(
        columns, _interpretations(memories), flex_at=6, title=title, wide=wide, max_lines=max_lines
    )


def memory_table(memories: Sequence[Memory], *, title: str | None = None) -> FittedTable:
    """The demo's table: priority and the four components first; id and state when room.

    Ids are prefixes unique among the shown ones (``text.id_labels``).
    """
    labels = id_labels(m.id for m in memories)
    columns = [
        Column("id", [Text(labels[m.id]) for m in memories], style="dim", group=1),
        _priority_column(memories),
        *_score_columns(memories, group=0),
        Column("state", [Text("pinned" if m.pinned else "") for m in memories], group=2),
    ]
    return FittedTable(columns, _interpretations(memories), flex_at=6, title=title)


def search_table(
    hits: Sequence[SearchHit],
    *,
    title: str | None = None,
    ids: IdMap | None = None,
    wide: bool = False,
    max_lines: int | None = MAX_LINES,
) -> FittedTable:
    """Search hits, best first: relevance, id, priority, (components), memory, state.

    ``match`` is the hit's absolute relevance (0..1); a hit a newer one may replace says
    so in its state ("older than" the newer's id).
    """
    memories = [hit.memory for hit in hits]
    columns = [
        Column("match", [Text(f"{hit.relevance:.2f}") for hit in hits], justify="right"),
        _id_column((m.id for m in memories), ids, wide),
        _priority_column(memories),
        *_score_columns(memories),
        Column("state", [Text(_hit_state(hit, ids)) for hit in hits], wrap=10),
    ]
    return FittedTable(
        columns, _interpretations(memories), flex_at=7, title=title, wide=wide, max_lines=max_lines
    )


def _hit_state(hit: SearchHit, ids: IdMap | None) -> str:
    if hit.conflicts_with is None:
        return state(hit.memory)
    return f"older than {_short(hit.conflicts_with, ids)}"


def archived_table(
    memories: Sequence[Memory],
    *,
    title: str | None = None,
    ids: IdMap | None = None,
    wide: bool = False,
) -> FittedTable:
    """Memories the capacity manager archived (or would archive), in red, with the reason."""
    red = "red"
    columns = [
        _id_column((m.id for m in memories), ids, wide, style=red),
        Column(
            "priority",
            [Text(fmt_score(m.priority_score), style=red) for m in memories],
            justify="right",
        ),
        Column("reason", [Text(m.archive_reason or "", style=red) for m in memories], wrap=18),
    ]
    flex = Column("memory", [Text(shown_text(m), style=red) for m in memories])
    return FittedTable(
        columns, flex, flex_at=3, title=title, wide=wide, style=red, title_style="bold red"
    )


def memory_detail(memory: Memory) -> Table:
    """Every field of one memory as a two-column table (``aimem show``), full ids included."""
    m = memory
    table = Table(title=f"memory {m.id}", show_header=False, expand=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    rows: list[tuple[str, str]] = [
        ("id", m.id),
        ("namespace", m.namespace),
        ("state", state(m)),
        ("priority", fmt_score(m.priority_score)),
        ("emotional impact", fmt_score(m.emotional_impact)),
        ("user relevance", fmt_score(m.user_relevance)),
        ("novelty", fmt_score(m.novelty)),
        ("utility", fmt_score(m.utility)),
        ("interpretation", m.interpreted_content),
        ("content", m.content),
        ("rationale", m.rationale or "—"),
        ("user context", m.user_context or "—"),
        (
            "scored by",
            f"{m.score_source} (model {m.model or '—'}, prompt {m.prompt_version or '—'})",
        ),
        ("tokens", f"{m.prompt_tokens} prompt + {m.completion_tokens} completion"),
        ("created", when(m.created_at)),
        ("updated", when(m.updated_at)),
        ("last accessed", f"{when(m.last_accessed_at)} ({m.access_count} accesses)"),
        ("version", str(m.version)),
    ]
    if m.archived_at is not None:
        rows.append(("archived", f"{when(m.archived_at)} ({m.archive_reason})"))
    if m.superseded_by is not None:
        rows.append(("superseded by", m.superseded_by))
    if m.restored_at is not None:
        rows.append(("restored", when(m.restored_at)))
    if m.contested_by is not None:
        rows.append(("newer fact", f"{m.contested_by} may replace it"))
    for name, value in rows:
        table.add_row(name, Text(value))
    return table


def history_table(
    events: Sequence[HistoryEvent],
    *,
    title: str | None = None,
    ids: IdMap | None = None,
    wide: bool = False,
) -> FittedTable:
    """A memory's events, oldest first; an update shows the content it replaced.

    The memory that superseded this one is named by its short id (``ids``) unless ``wide``.
    """
    details = []
    for e in events:
        parts = []
        if e.reason:
            parts.append(e.reason)
        if e.superseded_by:
            parts.append(f"by {e.superseded_by if wide else _short(e.superseded_by, ids)}")
        if e.explanation:
            parts.append(f"({e.explanation})")
        if e.previous is not None:
            parts.append(f"was: {e.previous.get('content')}")
        details.append(Text(" ".join(parts)))
    columns = [
        Column(
            "when",
            [Text(when(e.at)) for e in events],
            compact=[Text(when(e.at, short=True)) for e in events],
        ),
        Column("event", [Text(e.event) for e in events]),
        Column("version", [Text(str(e.version)) for e in events], justify="right"),
    ]
    return FittedTable(
        columns, Column("detail", details), flex_at=3, title=title, wide=wide, max_lines=None
    )


def stats_table(stats: Stats) -> Table:
    """Counts, mean priority, tokens used and capacity settings of one namespace."""
    table = Table(title=f"namespace {stats.namespace}", show_header=False)
    table.add_column("stat", style="bold", no_wrap=True)
    table.add_column("value", justify="right")
    rows = [
        ("active", str(stats.count)),
        ("archived", str(stats.archived)),
        ("pinned", str(stats.pinned)),
        ("pending", str(stats.pending)),
        ("total", str(stats.total)),
        ("mean priority", fmt_score(stats.mean_priority)),
        ("prompt tokens", str(stats.prompt_tokens)),
        ("completion tokens", str(stats.completion_tokens)),
        ("max memories", str(stats.max_memories)),
        ("min priority score", f"{stats.min_priority_score:.2f}"),
    ]
    if stats.vector_search is not None:
        rows.append(("search by meaning", vector_search_text(stats)))
    for name, value in rows:
        table.add_row(name, value)
    return table


# -- Reports in a terminal ------------------------------------------------------------------


def prune_report_rich(report: PruneReport, *, ids: IdMap | None = None) -> RenderableType:
    """What a capacity run archived (or would), then where the namespace stands.

    ``ids``: the short ids to show (``store.short_ids``); without, full ids.
    """
    verb = "Would archive" if report.dry_run else "Archived"
    head: RenderableType = (
        archived_table(report.archived, title=f"{verb} ({len(report.archived)})", ids=ids)
        if report.archived
        else Text("Nothing to archive.")
    )
    return Group(head, Text(prune_summary(report)))


def save_report_rich(report: SaveReport, *, ids: IdMap | None = None) -> RenderableType:
    """The memories a save wrote, and in red what the capacity manager archived for them.

    ``ids``: the short ids to show (``store.short_ids``); without, full ids.
    """
    parts: list[RenderableType] = [
        memory_list_table(report.memories, title=f"Saved ({len(report.memories)})", ids=ids)
    ]
    if report.archived:
        title = f"Archived ({len(report.archived)})"
        parts.append(archived_table(report.archived, title=title, ids=ids))
    return Group(*parts)


def import_report_rich(report: ImportReport, *, ids: IdMap | None = None) -> RenderableType:
    """Whether an import was valid, what it wrote (or would) and what it archived."""
    parts: list[RenderableType] = [Text(import_summary(report))]
    parts.extend(Text(f"  - {error}", style="red") for error in report.errors)
    if report.archived:
        title = f"Archived ({len(report.archived)})"
        parts.append(archived_table(report.archived, title=title, ids=ids))
    return Group(*parts)
