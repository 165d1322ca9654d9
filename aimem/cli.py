"""The ``aimem`` command: status with no arguments, and ``aimem demo``.

A thin shell: it parses arguments, calls the public API and renders with ``render.py``.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from . import __version__
from .exceptions import AimemError
from .heuristic import HeuristicJudge
from .memory import MemoryStore
from .models import Memory
from .render import memory_table
from .settings import Settings, default_database_url

__all__ = ["main"]

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


def _status(console: Console) -> int:
    settings = Settings.load()
    url = settings.database_url or default_database_url()
    if settings.openai_api_key is not None or settings.openai_base_url:
        judge = (
            f"OpenAIJudge (model {settings.model}, base_url {settings.openai_base_url or 'OpenAI'})"
        )
    else:
        judge = "HeuristicJudge (offline; set OPENAI_API_KEY or OPENAI_BASE_URL for an LLM judge)"
    table = Table(title=f"aimem {__version__}", show_header=False)
    table.add_column("setting", style="bold")
    table.add_column("value")
    table.add_row("database", url)
    table.add_row("judge", judge)
    table.add_row(
        "capacity",
        f"max_memories={settings.max_memories}, min_priority_score={settings.min_priority_score}, "
        f"auto_prune={settings.auto_prune}",
    )
    path = url.removeprefix("sqlite:///")
    if url.startswith("sqlite:///") and not Path(path).exists():
        table.add_row("memories", "none yet (the database is created on first save)")
    else:
        with MemoryStore(url, judge=HeuristicJudge()) as store:
            stats = store.stats()
        mean = "—" if stats.mean_priority is None else f"{stats.mean_priority:.2f}"
        table.add_row(
            "memories (default namespace)",
            f"{stats.count} active, {stats.archived} archived, {stats.pinned} pinned, "
            f"{stats.pending} pending; mean priority {mean}",
        )
    console.print(table)
    console.print("Try [bold]aimem demo[/bold] to watch it judge and forget.")
    return 0


def _demo(console: Console, max_memories: int) -> int:
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aimem", description="Long-term memory for AI agents. With no command: status."
    )
    parser.add_argument("--version", action="version", version=f"aimem {__version__}")
    commands = parser.add_subparsers(dest="command")
    demo = commands.add_parser(
        "demo", help="offline demo: judge a dozen memories and forget the least important"
    )
    demo.add_argument("--max-memories", type=int, default=8)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aimem`` command."""
    args = _parser().parse_args(argv)
    console = Console()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    try:
        if args.command == "demo":
            return _demo(console, args.max_memories)
        return _status(console)
    except AimemError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
