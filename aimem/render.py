"""How memories look: a system-prompt context block, rich tables for terminals, HTML for notebooks.

The models' ``__rich__`` and ``_repr_html_`` methods delegate here, so a ``Memory``, a
``SearchHit``, a ``PruneReport`` or ``Stats`` shows itself as a table in a terminal
(``rich.print(memory)``) and in a notebook (the last expression of a cell). Lists are
plain lists: wrap them with :func:`show`, or call :func:`memories_html` / :func:`hits_html`.
All user text in HTML goes through ``html.escape``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .models import ImportReport, Memory, PruneReport, SaveReport, SearchHit, Stats
from .scoring import COMPONENT_MAX, COMPONENTS
from .validation import shown

__all__ = [
    "COMPONENT_COLORS",
    "COMPONENT_LABELS",
    "Shown",
    "archived_table",
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
    "render_context",
    "save_report_html",
    "save_report_rich",
    "search_table",
    "show",
    "stats_html",
    "stats_table",
]

_ELLIPSIS = "…"


def _line(memory: Memory) -> str:
    score = "pending" if memory.priority_score is None else f"{memory.priority_score:.2f}"
    text = " ".join(memory.interpreted_content.split())
    return f"- [{score}] {text}"


def render_context(core: str, memories: Sequence[Memory], max_chars: int) -> str:
    """Core text, then memories in the given order, one line each, within ``max_chars``.

    Memories that do not fit whole are left out rather than cut mid-sentence; core
    text longer than the whole budget is cut with an ellipsis, since it comes first.
    """
    parts: list[str] = []
    if core.strip():
        parts.append("## Core\n" + core.strip())
    header = "## Memories (most important first)"
    body = "\n\n".join(parts)
    if len(body) > max_chars:
        return body[: max(0, max_chars - 1)] + _ELLIPSIS
    # Length of everything so far plus the header and its separator, grown line by line.
    used = len(body) + (2 if body else 0) + len(header)
    lines: list[str] = []
    for memory in memories:
        line = _line(memory)
        if used + 1 + len(line) > max_chars:
            break
        lines.append(line)
        used += 1 + len(line)
    if lines:
        parts.append("\n".join([header, *lines]))
    return shown("\n\n".join(parts))


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def memory_table(memories: Sequence[Memory], *, title: str | None = None) -> Table:
    """A rich table: id, priority, the four components, interpretation and state."""
    table = Table(title=title, show_lines=False, expand=False)
    table.add_column("id", style="dim", no_wrap=True)
    table.add_column("priority", justify="right", style="bold")
    for name in ("emo", "rel", "nov", "util"):
        table.add_column(name, justify="right")
    table.add_column("interpretation", overflow="fold", ratio=1)
    table.add_column("state", no_wrap=True)
    for m in memories:
        state = "pinned" if m.pinned else ""
        if m.archived_at is not None:
            state = f"archived: {m.archive_reason}"
        table.add_row(
            m.id[-8:],
            _fmt(m.priority_score),
            _fmt(m.emotional_impact),
            _fmt(m.user_relevance),
            _fmt(m.novelty),
            _fmt(m.utility),
            Text(m.interpreted_content),
            state,
        )
    return table


# -- CLI renderers: full ids, and user text shown literally (never read as rich markup) ----


def _state(memory: Memory) -> str:
    if memory.archived_at is not None:
        return f"archived: {memory.archive_reason}"
    if memory.pinned:
        return "pinned"
    return "pending" if memory.pending else "active"


def _component_columns(table: Table) -> None:
    table.add_column("priority", justify="right", style="bold")
    for name in ("emo", "rel", "nov", "util"):
        table.add_column(name, justify="right")


def _component_cells(memory: Memory) -> tuple[str, ...]:
    return tuple(
        _fmt(v)
        for v in (
            memory.priority_score,
            memory.emotional_impact,
            memory.user_relevance,
            memory.novelty,
            memory.utility,
        )
    )


def memory_list_table(memories: Sequence[Memory], *, title: str | None = None) -> Table:
    """Like ``memory_table`` but with full ids, to copy into ``aimem show/pin ID``.

    Text is shown literally: brackets in a memory are never read as rich markup.
    """
    table = Table(title=title, expand=False)
    table.add_column("id", style="dim", no_wrap=True)
    _component_columns(table)
    table.add_column("interpretation", overflow="fold", ratio=1)
    table.add_column("state", no_wrap=True)
    for m in memories:
        table.add_row(m.id, *_component_cells(m), Text(m.interpreted_content), _state(m))
    return table


def search_table(hits: Sequence[SearchHit], *, title: str | None = None) -> Table:
    """Search hits, best first: score, full id, priority, components and interpretation."""
    table = Table(title=title, expand=False)
    table.add_column("score", justify="right")
    table.add_column("id", style="dim", no_wrap=True)
    _component_columns(table)
    table.add_column("interpretation", overflow="fold", ratio=1)
    table.add_column("state", no_wrap=True)
    for hit in hits:
        m = hit.memory
        table.add_row(
            f"{hit.score:.4f}",
            m.id,
            *_component_cells(m),
            Text(m.interpreted_content),
            _state(m),
        )
    return table


def archived_table(memories: Sequence[Memory], *, title: str | None = None) -> Table:
    """Memories the capacity manager archived (or would archive), in red, with the reason."""
    table = Table(title=title, style="red", title_style="bold red", expand=False)
    table.add_column("id", no_wrap=True)
    table.add_column("priority", justify="right")
    table.add_column("reason", no_wrap=True)
    table.add_column("interpretation", overflow="fold", ratio=1)
    for m in memories:
        table.add_row(
            Text(m.id, style="red"),
            Text(_fmt(m.priority_score), style="red"),
            Text(m.archive_reason or "", style="red"),
            Text(m.interpreted_content, style="red"),
        )
    return table


def _when(value: datetime | None) -> str:
    return "—" if value is None else value.isoformat(timespec="seconds")


def memory_detail(memory: Memory) -> Table:
    """Every field of one memory as a two-column table (``aimem show``)."""
    m = memory
    table = Table(title=f"memory {m.id}", show_header=False, expand=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    rows: list[tuple[str, str]] = [
        ("id", m.id),
        ("namespace", m.namespace),
        ("state", _state(m)),
        ("priority", _fmt(m.priority_score)),
        ("emotional impact", _fmt(m.emotional_impact)),
        ("user relevance", _fmt(m.user_relevance)),
        ("novelty", _fmt(m.novelty)),
        ("utility", _fmt(m.utility)),
        ("interpretation", m.interpreted_content),
        ("content", m.content),
        ("rationale", m.rationale or "—"),
        ("user context", m.user_context or "—"),
        (
            "scored by",
            f"{m.score_source} (model {m.model or '—'}, prompt {m.prompt_version or '—'})",
        ),
        ("tokens", f"{m.prompt_tokens} prompt + {m.completion_tokens} completion"),
        ("created", _when(m.created_at)),
        ("updated", _when(m.updated_at)),
        ("last accessed", f"{_when(m.last_accessed_at)} ({m.access_count} accesses)"),
        ("version", str(m.version)),
    ]
    if m.archived_at is not None:
        rows.append(("archived", f"{_when(m.archived_at)} ({m.archive_reason})"))
    for name, value in rows:
        table.add_row(name, Text(value))
    return table


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
        ("mean priority", _fmt(stats.mean_priority)),
        ("prompt tokens", str(stats.prompt_tokens)),
        ("completion tokens", str(stats.completion_tokens)),
        ("max memories", str(stats.max_memories)),
        ("min priority score", f"{stats.min_priority_score:.2f}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


# -- Reports in a terminal ------------------------------------------------------------------


def prune_report_rich(report: PruneReport) -> RenderableType:
    """What a capacity run archived (or would), then where the namespace stands."""
    verb = "Would archive" if report.dry_run else "Archived"
    head: RenderableType = (
        archived_table(report.archived, title=f"{verb} ({len(report.archived)})")
        if report.archived
        else Text("Nothing to archive.")
    )
    return Group(head, Text(_prune_summary(report)))


def save_report_rich(report: SaveReport) -> RenderableType:
    """The memories a save wrote, and in red what the capacity manager archived for them."""
    parts: list[RenderableType] = [
        memory_list_table(report.memories, title=f"Saved ({len(report.memories)})")
    ]
    if report.archived:
        parts.append(archived_table(report.archived, title=f"Archived ({len(report.archived)})"))
    return Group(*parts)


def import_report_rich(report: ImportReport) -> RenderableType:
    """Whether an import was valid, what it wrote (or would) and what it archived."""
    parts: list[RenderableType] = [Text(_import_summary(report))]
    parts.extend(Text(f"  - {error}", style="red") for error in report.errors)
    if report.archived:
        parts.append(archived_table(report.archived, title=f"Archived ({len(report.archived)})"))
    return Group(*parts)


def _prune_summary(report: PruneReport) -> str:
    count = "would count" if report.dry_run else "count"
    return (
        f"{report.active_after} active memories {count} toward the cap "
        f"(max_memories {report.max_memories}, min_priority_score "
        f"{report.min_priority_score:.2f}); pinned and pending ones do not."
    )


def _import_summary(report: ImportReport) -> str:
    if not report.ok:
        return f"Import refused: {len(report.errors)} problem(s); nothing was written."
    verb = "Would import" if report.dry_run else "Imported"
    return f"{verb} {report.memories} memories and {report.history} history events."


# -- HTML for notebooks -----------------------------------------------------------------------
# Inline styles only: a notebook page has no stylesheet of ours, and a <style> block would
# leak into the rest of the page. Colours are few and work on light and dark themes.

#: One colour per component, shared by the HTML bars and the notebooks' plots.
COMPONENT_COLORS: dict[str, str] = {
    "emotional_impact": "#e15759",
    "user_relevance": "#4e79a7",
    "novelty": "#f28e2b",
    "utility": "#59a14f",
}
#: Readable names of the components, in ``COMPONENTS`` order.
COMPONENT_LABELS: dict[str, str] = {
    "emotional_impact": "emotional impact",
    "user_relevance": "user relevance",
    "novelty": "novelty",
    "utility": "utility",
}
_SHORT = {"emotional_impact": "emo", "user_relevance": "rel", "novelty": "nov", "utility": "util"}
_TABLE = 'style="border-collapse:collapse;font-size:0.9em;text-align:left"'
_CELL = "padding:2px 8px;vertical-align:top;border-bottom:1px solid rgba(128,128,128,0.3)"
_MUTED = "color:#888;font-size:0.85em"
_ARCHIVED = "color:#c0392b"
_BAR_PX = 100  # a priority of 1.0 fills the bar


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _components(memory: Memory) -> dict[str, float | None]:
    return {name: getattr(memory, name) for name in COMPONENTS}


def _bar(memory: Memory) -> str:
    """The priority as a bar of four coloured segments, one per component."""
    if memory.pending:
        return f'<span style="{_MUTED}">pending</span>'
    segments = "".join(
        f'<span title="{_e(COMPONENT_LABELS[name])} {value:.2f}" style="display:inline-block;'
        f'height:10px;width:{value * _BAR_PX:.1f}px;background:{COMPONENT_COLORS[name]}"></span>'
        for name, value in _components(memory).items()
        if value
    )
    return (
        f'<span style="display:inline-block;width:{_BAR_PX}px;white-space:nowrap;'
        f'background:rgba(128,128,128,0.15);line-height:0">{segments}</span>'
    )


def _th(*names: str) -> str:
    return "<tr>" + "".join(f'<th style="{_CELL}">{_e(n)}</th>' for n in names) + "</tr>"


def _td(content: str, style: str = "") -> str:
    return f'<td style="{_CELL};{style}">{content}</td>'


def _caption(title: str | None) -> str:
    return (
        f'<caption style="font-weight:bold;text-align:left">{_e(title)}</caption>' if title else ""
    )


def _short_id(memory: Memory) -> str:
    return f'<code title="{_e(memory.id)}">{_e(memory.id[-8:])}</code>'


def _interpretation(memory: Memory) -> str:
    """Interpretation, with the raw content as a tooltip and the judge's rationale below."""
    text = f'<span title="{_e(memory.content)}">{_e(memory.interpreted_content)}</span>'
    if memory.rationale:
        text += f'<br><span style="{_MUTED}">{_e(memory.rationale)}</span>'
    return text


def _memory_cells(memory: Memory) -> str:
    cells = [
        _td(_short_id(memory)),
        _td(f"<b>{_fmt(memory.priority_score)}</b> {_bar(memory)}", "white-space:nowrap"),
        *(_td(_fmt(v), "text-align:right") for v in _components(memory).values()),
        _td(_interpretation(memory)),
        _td(_e(_state(memory)), _ARCHIVED if memory.archived else ""),
    ]
    return "".join(cells)


_MEMORY_HEADERS = ("id", "priority", *(_SHORT[n] for n in COMPONENTS), "interpretation", "state")


def _legend() -> str:
    items = "".join(
        f'<span style="display:inline-block;width:10px;height:10px;margin:0 3px 0 10px;'
        f'background:{COMPONENT_COLORS[n]}"></span>{_e(COMPONENT_LABELS[n])}'
        for n in COMPONENTS
    )
    return (
        f'<div style="{_MUTED}">priority = sum of the four components (0–0.25 each):{items}</div>'
    )


def memories_html(memories: Sequence[Memory], *, title: str | None = None) -> str:
    """A table of memories: short id (full id on hover), priority bar, components, state.

    Hover over an interpretation to see the raw content; the judge's rationale is below it.
    """
    if not memories:
        return f"<div>{_e(title) + ': ' if title else ''}no memories.</div>"
    rows = "".join(f"<tr>{_memory_cells(m)}</tr>" for m in memories)
    return (
        f"<div><table {_TABLE}>{_caption(title)}{_th(*_MEMORY_HEADERS)}{rows}</table>"
        f"{_legend()}</div>"
    )


def hits_html(hits: Sequence[SearchHit], *, title: str | None = None) -> str:
    """Search hits, best first: the hit's score, then the memory as in :func:`memories_html`.

    With ``explain=True`` hits, an extra column lists each part of the score.
    """
    if not hits:
        return f"<div>{_e(title) + ': ' if title else ''}no hits.</div>"
    explained = any(h.explanation for h in hits)
    headers = ("score", *_MEMORY_HEADERS, *(("explanation",) if explained else ()))
    rows = []
    for hit in hits:
        cells = _td(f"{hit.score:.4f}", "text-align:right") + _memory_cells(hit.memory)
        if explained:
            parts = ", ".join(f"{_e(k)} {v:.4g}" for k, v in (hit.explanation or {}).items())
            cells += _td(f'<span style="{_MUTED}">{parts}</span>')
        rows.append(f"<tr>{cells}</tr>")
    return (
        f"<div><table {_TABLE}>{_caption(title)}{_th(*headers)}{''.join(rows)}</table>"
        f"{_legend()}</div>"
    )


def _fields_html(rows: Sequence[tuple[str, str]], title: str | None = None) -> str:
    """A two-column table; values are HTML already (escape them before)."""
    body = "".join(
        f'<tr><th style="{_CELL};white-space:nowrap">{_e(k)}</th>{_td(v)}</tr>' for k, v in rows
    )
    return f"<table {_TABLE}>{_caption(title)}{body}</table>"


def memory_html(memory: Memory) -> str:
    """Every field of one memory, with each component drawn as a bar (``Memory._repr_html_``)."""
    m = memory
    state = _e(_state(m))
    if m.archived:
        state = f'<span style="{_ARCHIVED}">{state} ({_e(_when(m.archived_at))})</span>'
    component_rows = [
        (
            COMPONENT_LABELS[name],
            f"{_fmt(value)} "
            + (
                ""
                if value is None
                else f'<span style="display:inline-block;height:8px;'
                f"width:{value / COMPONENT_MAX * _BAR_PX:.1f}px;"
                f'background:{COMPONENT_COLORS[name]}"></span>'
            ),
        )
        for name, value in _components(m).items()
    ]
    rows: list[tuple[str, str]] = [
        ("interpretation", f"<b>{_e(m.interpreted_content)}</b>"),
        ("content", _e(m.content)),
        ("priority", f"<b>{_fmt(m.priority_score)}</b> {_bar(m)}"),
        *component_rows,
        ("rationale", _e(m.rationale or "—")),
        ("user context", _e(m.user_context or "—")),
        ("state", state),
        (
            "scored by",
            _e(f"{m.score_source} (model {m.model or '—'}, prompt {m.prompt_version or '—'})"),
        ),
        ("created", _e(_when(m.created_at))),
        ("last accessed", _e(f"{_when(m.last_accessed_at)} ({m.access_count} accesses)")),
        ("namespace / version", _e(f"{m.namespace} / v{m.version}")),
    ]
    return f"<div>{_fields_html(rows, title=f'memory {m.id}')}</div>"


def _archived_html(memories: Sequence[Memory], title: str) -> str:
    rows = "".join(
        f'<tr style="{_ARCHIVED}">{_td(_short_id(m))}{_td(_fmt(m.priority_score))}'
        f"{_td(_e(m.archive_reason or ''))}{_td(_interpretation(m))}</tr>"
        for m in memories
    )
    head = _th("id", "priority", "reason", "interpretation")
    return f"<table {_TABLE}>{_caption(title)}{head}{rows}</table>"


def prune_report_html(report: PruneReport) -> str:
    """What a capacity run archived (or, for a dry run, would archive), with the reasons."""
    verb = "Would archive" if report.dry_run else "Archived"
    head = (
        _archived_html(report.archived, f"{verb} ({len(report.archived)})")
        if report.archived
        else "<div>Nothing to archive.</div>"
    )
    return f'<div>{head}<div style="{_MUTED}">{_e(_prune_summary(report))}</div></div>'


def save_report_html(report: SaveReport) -> str:
    """The memories a save wrote, then what the capacity manager archived to make room."""
    parts = [memories_html(report.memories, title=f"Saved ({len(report.memories)})")]
    if report.archived:
        parts.append(_archived_html(report.archived, f"Archived ({len(report.archived)})"))
    return "<div>" + "".join(parts) + "</div>"


def import_report_html(report: ImportReport) -> str:
    """Whether an import was valid, what it wrote (or would) and what it archived."""
    parts = [f"<div><b>{_e(_import_summary(report))}</b></div>"]
    if report.errors:
        items = "".join(f"<li>{_e(error)}</li>" for error in report.errors)
        parts.append(f'<ul style="{_ARCHIVED}">{items}</ul>')
    if report.archived:
        parts.append(_archived_html(report.archived, f"Archived ({len(report.archived)})"))
    return "<div>" + "".join(parts) + "</div>"


def stats_html(stats: Stats) -> str:
    """Counts, mean priority, tokens used and capacity settings of one namespace."""
    rows = [
        ("active", f"{stats.count} of {stats.max_memories}"),
        ("archived", str(stats.archived)),
        ("pinned", str(stats.pinned)),
        ("pending", str(stats.pending)),
        ("total", str(stats.total)),
        ("mean priority", _fmt(stats.mean_priority)),
        ("tokens", f"{stats.prompt_tokens} prompt + {stats.completion_tokens} completion"),
        ("min priority score", f"{stats.min_priority_score:.2f}"),
    ]
    return f"<div>{_fields_html(rows, title=f'namespace {stats.namespace}')}</div>"


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
