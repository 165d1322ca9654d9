"""Plain-text pieces both views share: scores, states, times, report summaries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from aimem.display import ids_of_open_stores
from aimem.ids import DISPLAY_PREFIX, shortest_unique_prefixes
from aimem.models import ImportReport, Memory, PruneReport, Stats
from aimem.text.restatement import restate

__all__ = [
    "IdMap",
    "fmt_score",
    "id_labels",
    "import_summary",
    "prune_summary",
    "shown_text",
    "state",
    "vector_search_text",
    "when",
]

#: Full id -> the prefix to show for it (``MemoryStore.short_ids``).
IdMap = Mapping[str, str]


def id_labels(ids: Iterable[str], given: IdMap | None = None) -> dict[str, str]:
    """Each id -> what a table shows for it: ``given``'s prefix, else one unique among ``ids``.

    ``given`` comes from the store (``MemoryStore.short_ids``): those prefixes are unique
    in the whole namespace, archived memories included, so ``store.get`` and every CLI
    command accept them. Without it, the store still open in this process that holds
    every shown id gives the same (``display.ids_of_open_stores``). Only when none does
    (the store closed, memories unpickled elsewhere) is a prefix (``DISPLAY_PREFIX``
    characters or more) unique just among the ids shown: it never names another shown
    memory, but one not shown may share it, and a lookup then asks for more characters
    (``AmbiguousIdError``) rather than return the wrong memory.
    """
    wanted = list(dict.fromkeys(ids))
    universe = wanted if given is not None or not wanted else ids_of_open_stores(wanted)
    labels = shortest_unique_prefixes(wanted, universe or wanted, DISPLAY_PREFIX)
    if given is not None:
        labels.update((i, given[i]) for i in wanted if i in given)
    return labels


def fmt_score(value: float | None) -> str:
    """A score with two decimals, or a dash for none (pending)."""
    return "—" if value is None else f"{value:.2f}"


def shown_text(memory: Memory) -> str:
    """What a one-line view shows: the interpretation, or the content where it only repeats it.

    The offline judge's interpretation is the content told in the third person; in a
    table the user's own words say the same in fewer characters.
    """
    interpretation = " ".join(memory.interpreted_content.split())
    content = " ".join(memory.content.split())
    if interpretation in (content, restate(memory.content)):
        return memory.content
    return memory.interpreted_content


def state(memory: Memory) -> str:
    """Archived (and why), pinned, pending or active."""
    if memory.archived_at is not None:
        return f"archived: {memory.archive_reason}"
    if memory.pinned:
        return "pinned"
    return "pending" if memory.pending else "active"


def when(value: datetime | None, *, short: bool = False) -> str:
    """A time to the second (ISO 8601), or a dash; ``short``: ``2025-01-31 09:30 UTC``."""
    if value is None:
        return "—"
    if short:
        utc = value.astimezone(UTC) if value.tzinfo else value
        return utc.strftime("%Y-%m-%d %H:%M UTC")
    return value.isoformat(timespec="seconds")


def prune_summary(report: PruneReport) -> str:
    """One sentence on what counts toward the cap after a prune."""
    count = "would count" if report.dry_run else "count"
    return (
        f"{report.active_after} active memories {count} toward the cap "
        f"(max_memories {report.max_memories}, min_priority_score "
        f"{report.min_priority_score:.2f}); pinned and pending ones do not."
    )


def import_summary(report: ImportReport) -> str:
    """One sentence on what an import did or would do."""
    if not report.ok:
        listed = (
            ""
            if report.problems <= len(report.errors)
            else f", the first {len(report.errors)} listed"
        )
        return f"Import refused: {report.problems} problem(s){listed}; nothing was written."
    verb = "Would import" if report.dry_run else "Imported"
    return f"{verb} {report.memories} memories and {report.history} history events."


def vector_search_text(stats: Stats) -> str:
    """Where search by meaning runs; in process, what its indexes hold of their budget."""
    line = str(stats.vector_search)
    used, budget = stats.vector_cache_bytes, stats.vector_cache_budget_bytes
    if used is not None and budget is not None:
        line += f", {used / 2**20:.1f} of {budget / 2**20:.0f} MB in this process"
    return line
