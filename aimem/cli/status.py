"""``aimem`` with no command (status), and ``aimem demo``: judging and forgetting, offline."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rich.table import Table
from rich.text import Text

from aimem import __version__
from aimem.cli.session import Session
from aimem.embedder_spec import parse_spec
from aimem.judges.heuristic import HeuristicJudge
from aimem.models import Memory
from aimem.render import memory_table
from aimem.render.text import vector_search_text
from aimem.saving.contents import heuristic_by_default
from aimem.settings import Settings, default_database_url, masked_url
from aimem.sync_store import MemoryStore

__all__ = ["DEMO_MEMORIES", "demo", "status"]

DEMO_MEMORIES = (
    "I'm allergic to penicillin.",
    "ok thanks!",
    "My daughter Emma starts primary school in September.",
    "Never schedule meetings before 10am, I do my deep work then.",
    "User prefers pytest over unittest for Python projects.",
    "It's raining today.",
    "My father passed away last month; I'm still struggling with it.",
    "私はベジタリアンです。肉料理は提案しないでください。",
    "User is thinking about a trip to Hokkaido next spring.",
    "I use Neovim with a dark theme.",
    "What is the capital of France?",
    "I live near a big park and go running there on Sundays.",
    "My sister lives in Melbourne.",
    "The thesis defence is on 14 March; if it slips I lose my visa.",
)


def status(s: Session, args: argparse.Namespace) -> int:
    """Where the store is, which judge saves use, and how many memories it holds.

    One row per setting (``rows``): a new one is one more ``rows.append``.
    """
    console = s.out
    settings = Settings.load(database_url=s.database_url)
    url = settings.database_url or default_database_url()
    if heuristic_by_default(settings):
        judge = "HeuristicJudge (offline; set OPENAI_API_KEY or OPENAI_BASE_URL for an LLM judge)"
    else:
        judge = (
            f"OpenAIJudge (model {settings.model}, base_url {settings.openai_base_url or 'OpenAI'})"
        )
    rows: list[tuple[str, str]] = [
        ("database", masked_url(url)),
        ("judge", judge),
        ("embedder", embedder_line(settings.embedder)),
        (
            "capacity",
            f"max_memories={settings.max_memories}, "
            f"min_priority_score={settings.min_priority_score}, "
            f"auto_prune={settings.auto_prune}",
        ),
    ]
    path = url.removeprefix("sqlite:///")
    if url.startswith("sqlite:///") and not Path(path).exists():
        rows.append(("memories", "none yet (the database is created on first save)"))
    else:
        # The status only counts: no judge call, so no need for the configured judge.
        with MemoryStore(url, judge=HeuristicJudge(), namespace=s.namespace) as store:
            stats = store.stats()
        mean = "—" if stats.mean_priority is None else f"{stats.mean_priority:.2f}"
        rows.append(
            (
                f"memories ({s.namespace} namespace)",
                f"{stats.count} active, {stats.archived} archived, {stats.pinned} pinned, "
                f"{stats.pending} pending; mean priority {mean}",
            )
        )
        if stats.embedder is not None and stats.vector_search is not None:
            rows.append(("search by meaning", vector_search_text(stats)))
        if stats.embedded is not None and stats.embedded < stats.count:
            rows.append(
                (
                    "vectors",
                    f"{stats.embedded} of {stats.count} active memories have a vector from "
                    f"{stats.embedder}: run `aimem reembed` so search by meaning finds them all",
                )
            )
    table = Table(title=f"aimem {__version__}", show_header=False)
    table.add_column("setting", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for name, value in rows:
        table.add_row(name, Text(value))
    console.print(table)
    console.print("Try [bold]aimem demo[/bold] to watch it judge and forget.")
    return 0


def embedder_line(spec: str | None) -> str:
    """The configured embedder as the status shows it (nothing is loaded)."""
    parsed = parse_spec(spec)
    if parsed is None:
        return "none: keyword search only (set AIMEM_EMBEDDER=local for search by meaning)"
    kind, argument = parsed
    if kind == "local":
        return f"local ({argument or 'all-MiniLM-L6-v2'}, offline)"
    return f"openai ({argument})"


def demo(s: Session, args: argparse.Namespace) -> int:
    """Save ``DEMO_MEMORIES`` into a temporary store and show what was forgotten."""
    console, max_memories = s.out, args.max_memories
    forgotten: list[Memory] = []
    with tempfile.TemporaryDirectory(prefix="aimem-demo-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'demo.db'}"
        console.print(
            f"Saving {len(DEMO_MEMORIES)} memories into a temporary store with "
            f"max_memories={max_memories}, judged offline by HeuristicJudge.\n"
        )
        with MemoryStore(
            url, judge=HeuristicJudge(), max_memories=max_memories, on_archive=forgotten.extend
        ) as store:
            for content in DEMO_MEMORIES:
                before = len(forgotten)
                memory = store.save(content)
                console.print(f"  saved  {memory.priority_score:.2f}  {content}", highlight=False)
                for gone in forgotten[before:]:
                    console.print(
                        f"         [red]forgot {gone.priority_score:.2f}  {gone.content}[/red]",
                        highlight=False,
                    )
            kept = store.list()
            stats = store.stats()
    console.print()
    console.print(memory_table(kept, title=f"Remembered ({len(kept)} of {max_memories} slots)"))
    table = Table(title=f"Forgotten ({len(forgotten)}), archived not deleted")
    table.add_column("priority", justify="right")
    table.add_column("content")
    table.add_column("why")
    for m in forgotten:
        why = (
            f"below min_priority_score {stats.min_priority_score}"
            if m.archive_reason == "below_min_priority"
            else f"lowest priority once over {max_memories} memories"
        )
        table.add_row(f"{m.priority_score:.2f}", m.content, why)
    console.print(table)
    return 0
