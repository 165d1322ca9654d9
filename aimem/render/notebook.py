"""How results look in a notebook: self-contained HTML (``_repr_html_``).

Inline styles only: a notebook page has no stylesheet of ours, and a <style> block would
leak into the rest of the page. All user text goes through ``html.escape``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from aimem.models import ImportReport, Memory, PruneReport, SaveReport, SearchHit, Stats
from aimem.render.text import (
    IdMap,
    fmt_score,
    id_labels,
    import_summary,
    prune_summary,
    state,
    vector_search_text,
    when,
)
from aimem.scoring import COMPONENT_MAX, COMPONENTS

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


def _short_id(memory_id: str, labels: IdMap) -> str:
    """The id's shown prefix (see :func:`aimem.render.text.id_labels`), the full id on hover."""
    return f'<code title="{_e(memory_id)}">{_e(labels.get(memory_id, memory_id))}</code>'


def _interpretation(memory: Memory) -> str:
    """Interpretation, with the raw content as a tooltip and the judge's rationale below."""
    text = f'<span title="{_e(memory.content)}">{_e(memory.interpreted_content)}</span>'
    if memory.rationale:
        text += f'<br><span style="{_MUTED}">{_e(memory.rationale)}</span>'
    return text


def _memory_cells(memory: Memory, labels: IdMap) -> str:
    cells = [
        _td(_short_id(memory.id, labels)),
        _td(f"<b>{fmt_score(memory.priority_score)}</b> {_bar(memory)}", "white-space:nowrap"),
        *(_td(fmt_score(v), "text-align:right") for v in _components(memory).values()),
        _td(_interpretation(memory)),
        _td(_e(state(memory)), _ARCHIVED if memory.archived else ""),
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


def memories_html(
    memories: Sequence[Memory], *, title: str | None = None, ids: IdMap | None = None
) -> str:
    """A table of memories: short id (full id on hover), priority bar, components, state.

    Hover over an interpretation to see the raw content; the judge's rationale is below it.
    ``ids`` maps full ids to the prefixes to show (``store.short_ids``), which the store's
    lookups and the CLI accept; without it, each prefix is unique among the shown ids
    only (see :func:`aimem.render.text.id_labels`).
    """
    if not memories:
        return f"<div>{_e(title) + ': ' if title else ''}no memories.</div>"
    labels = id_labels((m.id for m in memories), ids)
    rows = "".join(f"<tr>{_memory_cells(m, labels)}</tr>" for m in memories)
    return (
        f"<div><table {_TABLE}>{_caption(title)}{_th(*_MEMORY_HEADERS)}{rows}</table>"
        f"{_legend()}</div>"
    )


def hits_html(
    hits: Sequence[SearchHit], *, title: str | None = None, ids: IdMap | None = None
) -> str:
    """Search hits, best first: score, relevance (``match``), then the memory.

    The memory is shown as in :func:`memories_html` (``ids`` likewise); a hit a newer one
    likely replaces says so under its relevance.

    With ``explain=True`` hits, an extra column lists each part of the score.
    """
    if not hits:
        return f"<div>{_e(title) + ': ' if title else ''}no hits.</div>"
    explained = any(h.explanation for h in hits)
    newer = (h.conflicts_with for h in hits if h.conflicts_with)
    labels = id_labels([*(h.memory.id for h in hits), *newer], ids)
    headers = ("score", "match", *_MEMORY_HEADERS, *(("explanation",) if explained else ()))
    rows = []
    for hit in hits:
        match = f"{hit.relevance:.2f}"
        if hit.conflicts_with:  # a newer hit likely replaces it
            newer_id = _short_id(hit.conflicts_with, labels)
            match += f'<br><span style="{_MUTED}">older than {newer_id}</span>'
        cells = _td(f"{hit.score:.4f}", "text-align:right") + _td(match, "text-align:right")
        cells += _memory_cells(hit.memory, labels)
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
    shown_state = _e(state(m))
    if m.archived:
        shown_state = f'<span style="{_ARCHIVED}">{shown_state} ({_e(when(m.archived_at))})</span>'
    component_rows = [
        (
            COMPONENT_LABELS[name],
            f"{fmt_score(value)} "
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
        ("priority", f"<b>{fmt_score(m.priority_score)}</b> {_bar(m)}"),
        *component_rows,
        ("rationale", _e(m.rationale or "—")),
        ("user context", _e(m.user_context or "—")),
        ("state", shown_state),
        (
            "scored by",
            _e(f"{m.score_source} (model {m.model or '—'}, prompt {m.prompt_version or '—'})"),
        ),
        ("created", _e(when(m.created_at))),
        ("last accessed", _e(f"{when(m.last_accessed_at)} ({m.access_count} accesses)")),
        ("namespace / version", _e(f"{m.namespace} / v{m.version}")),
    ]
    return f"<div>{_fields_html(rows, title=f'memory {m.id}')}</div>"


def _archived_html(memories: Sequence[Memory], title: str, labels: IdMap) -> str:
    rows = "".join(
        f'<tr style="{_ARCHIVED}">{_td(_short_id(m.id, labels))}{_td(fmt_score(m.priority_score))}'
        f"{_td(_e(m.archive_reason or ''))}{_td(_interpretation(m))}</tr>"
        for m in memories
    )
    head = _th("id", "priority", "reason", "interpretation")
    return f"<table {_TABLE}>{_caption(title)}{head}{rows}</table>"


def prune_report_html(report: PruneReport, *, ids: IdMap | None = None) -> str:
    """What a capacity run archived (or, for a dry run, would archive), with the reasons."""
    verb = "Would archive" if report.dry_run else "Archived"
    labels = id_labels((m.id for m in report.archived), ids)
    head = (
        _archived_html(report.archived, f"{verb} ({len(report.archived)})", labels)
        if report.archived
        else "<div>Nothing to archive.</div>"
    )
    return f'<div>{head}<div style="{_MUTED}">{_e(prune_summary(report))}</div></div>'


def save_report_html(report: SaveReport, *, ids: IdMap | None = None) -> str:
    """The memories a save wrote, then what the capacity manager archived to make room."""
    labels = id_labels((m.id for m in [*report.memories, *report.archived]), ids)
    parts = [memories_html(report.memories, title=f"Saved ({len(report.memories)})", ids=labels)]
    if report.archived:
        parts.append(_archived_html(report.archived, f"Archived ({len(report.archived)})", labels))
    return "<div>" + "".join(parts) + "</div>"


def import_report_html(report: ImportReport, *, ids: IdMap | None = None) -> str:
    """Whether an import was valid, what it wrote (or would) and what it archived."""
    parts = [f"<div><b>{_e(import_summary(report))}</b></div>"]
    if report.errors:
        items = "".join(f"<li>{_e(error)}</li>" for error in report.errors)
        parts.append(f'<ul style="{_ARCHIVED}">{items}</ul>')
    if report.archived:
        labels = id_labels((m.id for m in report.archived), ids)
        parts.append(_archived_html(report.archived, f"Archived ({len(report.archived)})", labels))
    return "<div>" + "".join(parts) + "</div>"


def stats_html(stats: Stats) -> str:
    """Counts, mean priority, tokens used and capacity settings of one namespace."""
    rows = [
        ("active", f"{stats.count} of {stats.max_memories}"),
        ("archived", str(stats.archived)),
        ("pinned", str(stats.pinned)),
        ("pending", str(stats.pending)),
        ("total", str(stats.total)),
        ("mean priority", fmt_score(stats.mean_priority)),
        ("tokens", f"{stats.prompt_tokens} prompt + {stats.completion_tokens} completion"),
        ("min priority score", f"{stats.min_priority_score:.2f}"),
    ]
    if stats.vector_search is not None:
        rows.append(("search by meaning", vector_search_text(stats)))
    return f"<div>{_fields_html(rows, title=f'namespace {stats.namespace}')}</div>"
