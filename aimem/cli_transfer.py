"""``aimem export``, ``import``, ``backup`` and ``reinterpret``: moving and mending a store.

Thin like the other commands: each calls one store method and reports what it did.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from .cli_commands import Session, count_of, dump, print_json, show_archived
from .render import memory_list_table

__all__ = ["backup", "export", "import_", "reinterpret"]


def export(s: Session, args: argparse.Namespace) -> int:
    """``aimem export PATH``: this namespace as a checksummed JSON Lines file."""
    report = s.store.export_to(Path(args.path), include_history=not args.no_history)
    s.out.print(
        f"Exported {count_of(report.memories, 'memory', 'memories')} and "
        f"{count_of(report.history, 'history event')} to {report.path} "
        f"(sha256 {report.sha256[:16]}…)."
    )
    return 0


def import_(s: Session, args: argparse.Namespace) -> int:
    """``aimem import PATH``: load an export file, all or nothing (``--dry-run`` checks only)."""
    report = s.store.import_from(Path(args.path), dry_run=args.dry_run)
    s.take_archived()  # the report lists them
    if args.json:
        print_json(dump(report))
        return 0 if report.ok else 1
    if not report.ok:
        for problem in report.errors:
            s.err.print(Text(f"  {problem}", style="red"), soft_wrap=True)
        s.err.print(f"The file would be refused: {count_of(len(report.errors), 'problem')}.")
        return 1
    verb = "Would import" if report.dry_run else "Imported"
    s.out.print(
        f"{verb} {count_of(report.memories, 'memory', 'memories')} and "
        f"{count_of(report.history, 'history event')}."
    )
    if report.archived:
        archived = count_of(len(report.archived), "memory", "memories")
        s.out.print(f"The capacity manager then archived {archived}.")
    return 0


def backup(s: Session, args: argparse.Namespace) -> int:
    """``aimem backup PATH``: the whole database file, via SQLite's online backup API."""
    target = s.store.backup(Path(args.path))
    s.out.print(f"Backed up the database to {target}.")
    return 0


def reinterpret(s: Session, args: argparse.Namespace) -> int:
    """``aimem reinterpret``: judge the memories saved while the judge was failing."""
    judged = s.store.reinterpret_pending(limit=args.limit)
    left = s.store.stats().pending
    if judged:
        s.out.print(memory_list_table(judged, title=f"Judged ({len(judged)})"))
    s.out.print(f"{count_of(len(judged), 'memory', 'memories')} judged, {left} still pending.")
    show_archived(s, "Archived to stay within capacity")
    return 0 if left == 0 else 1
