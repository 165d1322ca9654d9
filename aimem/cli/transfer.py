"""``aimem export``, ``import``, ``backup``, ``reinterpret``, ``reembed``: moving and mending.

Thin like the other commands: each calls one store method and reports what it did. The
bulk ones (import, reinterpret, reembed) draw a progress bar on stderr when it is a
terminal.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from aimem.cli.commands import (
    CommandError,
    Session,
    count_of,
    dump,
    memories_table,
    print_json,
    print_problems,
    show_archived,
)
from aimem.embedder_spec import SPEC_HELP, parse_spec
from aimem.exceptions import ValidationError
from aimem.judges.heuristic import HeuristicJudge
from aimem.settings import Settings, default_database_url
from aimem.sync_store import MemoryStore

__all__ = ["backup", "export", "import_", "reembed", "reinterpret"]


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
    """``aimem import PATH``: load an export file, all or nothing (``--dry-run`` checks only).

    A refused import lists its problems (the first few, and how many more); with
    ``--json`` it prints its report instead (``ok`` false, the first problems in
    ``errors``, how many in ``problems``) and exits 1, as a refused dry run does.
    """
    path = Path(args.path)
    try:
        with s.progress("importing") as progress:
            report = s.store.import_from(path, dry_run=args.dry_run, progress=progress)
    except ValidationError:
        # Refused, nothing written: the same checks again as a dry run give the report.
        report = s.store.import_from(path, dry_run=True)
        if report.ok:  # the database changed in between: the refusal stands
            raise
        report = report.model_copy(update={"dry_run": False})
    s.take_archived()  # the report lists them
    if args.json:
        print_json(dump(report))
        return 0 if report.ok else 1
    if not report.ok:
        refusal = (
            "The file would be refused" if report.dry_run else "Import refused, nothing was written"
        )
        if report.problems > 1:
            refusal += f" ({count_of(report.problems, 'problem')})"
        print_problems(s, refusal, report.errors, report.problems)
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
    """``aimem backup PATH``: the whole database file, via SQLite's online backup API.

    A store on a server has no file to copy: that is said before connecting, naming
    the server's tools and this CLI's own way to a file, ``aimem export``.
    """
    url = Settings.load(database_url=s.database_url).database_url or default_database_url()
    if not url.startswith("sqlite"):
        raise CommandError(
            "`aimem backup` copies a SQLite file; a PostgreSQL store is backed up with the "
            "server's tools (pg_dump, or your managed backups), or one namespace at a time "
            "with `aimem export PATH` (and `aimem import PATH` to load it)"
        )
    target = s.store.backup(Path(args.path))
    s.out.print(f"Backed up the database to {target}.")
    return 0


def reinterpret(s: Session, args: argparse.Namespace) -> int:
    """``aimem reinterpret``: judge the memories saved while the judge was failing."""
    with s.progress("judging") as progress:
        judged = s.store.reinterpret_pending(limit=args.limit, progress=progress)
    left = s.store.stats().pending
    if judged:
        memories_table(s, judged, f"Judged ({len(judged)})")
    s.out.print(f"{count_of(len(judged), 'memory', 'memories')} judged, {left} still pending.")
    show_archived(s, "Archived to stay within capacity")
    return 0 if left == 0 else 1


def reembed(s: Session, args: argparse.Namespace) -> int:
    """``aimem reembed``: every memory's vector again, from the given or configured embedder."""
    spec = args.embedder or Settings.load(database_url=s.database_url).embedder
    if parse_spec(spec) is None:  # checks the spec; builds nothing yet
        raise CommandError(
            f"reembed needs an embedder: pass --embedder ({SPEC_HELP}) or set AIMEM_EMBEDDER"
        )
    store = MemoryStore(
        s.database_url, judge=HeuristicJudge(), embedder=spec, namespace=s.namespace
    )
    embedder = store.embedder
    assert embedder is not None
    with store, s.progress("re-embedding") as progress:
        done = store.reembed(batch_size=args.batch, progress=progress)
    s.out.print(
        f"Re-embedded {count_of(done, 'memory', 'memories')} with {embedder.name} "
        f"({embedder.dim} dimensions)."
    )
    return 0
