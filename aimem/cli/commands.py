"""What each ``aimem`` command does: call one public store method, then render the result.

``main.py`` owns the error handling and ``parser.py`` the arguments; every function here
takes the parsed arguments and a ``Session`` (consoles, a store opened on first use, and
the short ids tables show).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.prompt import Confirm
from rich.text import Text

from aimem.cli.ingest import parse_lines, save_in_batches
from aimem.cli.session import Session, print_line
from aimem.exceptions import AimemError
from aimem.models import Memory, SearchHit
from aimem.render import (
    archived_table,
    history_table,
    memory_detail,
    memory_list_table,
    search_table,
    stats_table,
)
from aimem.render.terminal import MAX_LINES
from aimem.render.text import shown_text
from aimem.settings import Settings

__all__ = [
    "CommandError",
    "Session",
    "count_of",
    "dump",
    "memories_table",
    "print_json",
    "print_problems",
    "show_archived",
]

log = logging.getLogger("aimem.cli")

#: Problems (bad lines of an ingest or import file) listed one by one; the rest are counted.
MAX_PROBLEMS_SHOWN = 20


class CommandError(Exception):
    """A user error the CLI finds itself (a refused confirmation, an unusable input file)."""


# -- helpers -----------------------------------------------------------------------------


def print_json(data: Any) -> None:
    """Print JSON plainly: rich would wrap long lines and break it."""
    print(json.dumps(data, indent=2, ensure_ascii=False))


def dump(model: BaseModel) -> dict[str, Any]:
    """A model as JSON-ready data (datetimes as ISO strings)."""
    return model.model_dump(mode="json")


def _text_arg(text: str) -> str:
    """The argument itself, or stdin for ``-`` (without the newline a shell pipe adds)."""
    return sys.stdin.read().rstrip("\r\n") if text == "-" else text


def count_of(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 memory"`` / ``"3 memories"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


def print_problems(s: Session, refusal: str, problems: list[str], count: int) -> None:
    """A refusal as an error line, then its problems: the first few, and how many more.

    ``count`` is how many there are, ``problems`` (the first of) them; one problem
    fits on the error line itself.
    """
    error = ("error: ", "bold red")
    if count == 1 and problems:
        print_line(s.err, Text.assemble(error, f"{refusal}: {problems[0]}"))
        return
    print_line(s.err, Text.assemble(error, f"{refusal}:"))
    shown = problems[:MAX_PROBLEMS_SHOWN]
    for problem in shown:
        print_line(s.err, Text(f"  {problem}", "red"))
    if count > len(shown):
        print_line(s.err, Text(f"  … and {count - len(shown)} more"))


def _priority(memory: Memory) -> str:
    return "pending" if memory.priority_score is None else f"{memory.priority_score:.2f}"


def show_archived(s: Session, why: str) -> None:
    """Print, in red, what the command's calls made the store archive (if anything).

    Memories a newer one made out of date come first, under their own title: they were
    not forgotten for room.
    """
    archived = s.take_archived()
    superseded = [m for m in archived if m.archive_reason == "superseded"]
    others = [m for m in archived if m.archive_reason != "superseded"]
    ids = s.ids(m.id for m in archived)
    if superseded:
        title = f"Superseded: out of date now, kept in the archive ({len(superseded)})"
        s.out.print(archived_table(superseded, title=title, ids=ids, wide=s.wide))
    if others:
        s.out.print(archived_table(others, title=f"{why} ({len(others)})", ids=ids, wide=s.wide))


def memories_table(
    s: Session, memories: list[Memory], title: str, *, max_lines: int | None = MAX_LINES
) -> None:
    """Print memories as a table fitted to the terminal, with the session's ids."""
    ids = s.ids(m.id for m in memories)
    s.out.print(memory_list_table(memories, title=title, ids=ids, wide=s.wide, max_lines=max_lines))


def _one_line(s: Session, verb: str, memory: Memory) -> None:
    s.out.print(
        Text.assemble(
            (verb, "bold green"),
            f" {s.short(memory.id)}  priority {_priority(memory)}  ",
            shown_text(memory),
        )
    )


def _memories(s: Session, memories: list[Memory], title: str, as_json: bool) -> int:
    if as_json:
        print_json([dump(m) for m in memories])
    elif not memories:
        s.out.print("No memories yet: save one with [bold]aimem save TEXT[/bold].")
    else:
        memories_table(s, memories, title)
    return 0


# -- commands ----------------------------------------------------------------------------


def save(s: Session, args: argparse.Namespace) -> int:
    """``aimem save TEXT``: judge and store one memory; show it and what it archived."""
    report = s.store.save_with_report(
        _text_arg(args.text),
        user_context=args.user_context,
        idempotency_key=getattr(args, "idempotency_key", None),
    )
    [memory] = report.memories
    duplicate = bool(report.duplicates)
    if args.json:
        archived = [dump(m) for m in s.take_archived()]
        print_json({"memory": dump(memory), "duplicate": duplicate, "archived": archived})
        return 0
    title = "Already remembered (exact duplicate, reinforced)" if duplicate else "Saved"
    memories_table(s, [memory], title, max_lines=None)
    if memory.rationale:
        s.out.print(Text.assemble(("why: ", "bold"), memory.rationale))
    show_archived(s, "Archived to stay within capacity")
    return 0


def list_memories(s: Session, args: argparse.Namespace) -> int:
    """``aimem list``: memories by priority or recency, optionally with archived ones."""
    memories = s.store.list(
        min_score=args.min_score,
        limit=args.limit,
        order=args.order,
        include_archived=args.all,
    )
    title = f"{count_of(len(memories), 'memory', 'memories')} in {s.namespace!r}, by {args.order}"
    return _memories(s, memories, title, args.json)


def read_memory(s: Session, args: argparse.Namespace) -> int:
    """``aimem read-memory``: every active memory, highest priority first (aigpt)."""
    memories = s.store.list(order="priority")
    title = f"{count_of(len(memories), 'memory', 'memories')} in {s.namespace!r}, by priority"
    return _memories(s, memories, title, args.json)


def search(s: Session, args: argparse.Namespace) -> int:
    """``aimem search QUERY``: best matches first."""
    hits = s.store.search(
        args.query,
        limit=args.limit,
        min_score=args.min_score,
        include_archived=args.all,
        mode=args.mode,
        min_relevance=args.min_relevance,
    )
    if args.json:
        print_json([dump(hit) for hit in hits])
    elif not hits:
        s.out.print(Text(f"No memory matches {args.query!r}."))
    else:
        _hits_table(s, hits, f"{count_of(len(hits), 'match', 'matches')} for {args.query!r}")
    return 0


def _hits_table(s: Session, hits: list[SearchHit], title: str) -> None:
    ids = s.ids(
        [*(hit.memory.id for hit in hits), *(h.conflicts_with for h in hits if h.conflicts_with)]
    )
    s.out.print(search_table(hits, title=title, ids=ids, wide=s.wide))


def show(s: Session, args: argparse.Namespace) -> int:
    """``aimem show ID``: every field of one memory, archived ones included."""
    memory = s.store.get(args.memory_id)
    if args.json:
        print_json(dump(memory))
    else:
        s.out.print(memory_detail(memory))
    return 0


def history(s: Session, args: argparse.Namespace) -> int:
    """``aimem history ID``: a memory's events, with what each update replaced."""
    events = s.store.history(args.memory_id)
    if args.json:
        print_json([dump(e) for e in events])
        return 0
    ids = s.ids(
        [*(e.memory_id for e in events), *(e.superseded_by for e in events if e.superseded_by)]
    )
    title = f"history of {ids[events[0].memory_id]}" if events else f"history of {args.memory_id}"
    s.out.print(history_table(events, title=title, ids=ids, wide=s.wide))
    return 0


def update(s: Session, args: argparse.Namespace) -> int:
    """``aimem update ID TEXT``: replace a memory's content; it is judged again."""
    report = s.store.update_with_report(
        args.memory_id, _text_arg(args.text), user_context=args.user_context
    )
    if args.json:
        archived = [dump(m) for m in s.take_archived()]
        print_json({"memory": dump(report.memories[0]), "archived": archived})
        return 0
    _one_line(s, f"updated (version {report.memories[0].version})", report.memories[0])
    show_archived(s, "Archived to stay within capacity")
    return 0


def pin(s: Session, args: argparse.Namespace) -> int:
    """``aimem pin ID``: never archive this memory."""
    _one_line(s, "pinned", s.store.pin(args.memory_id))
    return 0


def unpin(s: Session, args: argparse.Namespace) -> int:
    """``aimem unpin ID``: count it toward the cap again (which may archive something)."""
    _one_line(s, "unpinned", s.store.unpin(args.memory_id))
    show_archived(s, "Archived to stay within capacity")
    return 0


def restore(s: Session, args: argparse.Namespace) -> int:
    """``aimem restore ID``: un-archive a memory (which may archive the next lowest)."""
    _one_line(s, "restored", s.store.restore(args.memory_id))
    show_archived(s, "Archived to make room")
    return 0


def delete(s: Session, args: argparse.Namespace) -> int:
    """``aimem delete ID``: delete one memory for good, after confirmation."""
    memory = s.store.get(args.memory_id)
    shown = s.short(memory.id)
    if not args.yes:
        if not sys.stdin.isatty():
            raise CommandError(
                f"not deleting {shown} without confirmation: pass --yes to delete it"
            )
        question = Text.assemble(f"Delete {shown} for good? ", (memory.content, "bold"))
        try:
            confirmed = Confirm.ask(question, console=s.err, default=False)
        except EOFError:
            confirmed = False
        if not confirmed:
            s.err.print("Not deleted.")
            return 1
    s.store.delete(memory.id)
    s.out.print(Text.assemble(("deleted", "bold red"), f" {shown}"))
    return 0


def prune(s: Session, args: argparse.Namespace) -> int:
    """``aimem prune``: apply the capacity rules now, or preview them with ``--dry-run``."""
    report = s.store.prune(dry_run=args.dry_run)
    s.take_archived()  # the report lists them
    if args.json:
        print_json(dump(report))
        return 0
    if report.archived:
        verb = "Would archive" if report.dry_run else "Archived"
        title = f"{verb} ({len(report.archived)})"
        ids = s.ids(m.id for m in report.archived)
        s.out.print(archived_table(report.archived, title=title, ids=ids, wide=s.wide))
    else:
        s.out.print("Nothing to archive.")
    count = "would count" if report.dry_run else "count"
    s.out.print(
        f"{count_of(report.active_after, 'memory', 'memories')} {count} toward the cap "
        f"(max_memories {report.max_memories}, min_priority_score {report.min_priority_score}); "
        "pinned and pending ones do not."
    )
    return 0


def stats(s: Session, args: argparse.Namespace) -> int:
    """``aimem stats``: counts, mean priority and tokens used."""
    result = s.store.stats()
    if args.json:
        print_json(dump(result))
    else:
        s.out.print(stats_table(result))
    return 0


def core(s: Session, args: argparse.Namespace) -> int:
    """``aimem core [--set TEXT]``: print the core text, or replace it."""
    if args.set is not None:
        text = _text_arg(args.set)
        s.store.set_core(text)
        s.err.print(f"Core text set ({len(text)} characters).")
        return 0
    text = s.store.get_core()
    if text:
        print(text)
    else:
        s.err.print("No core text yet: set one with [bold]aimem core --set TEXT[/bold].")
    return 0


def context(s: Session, args: argparse.Namespace) -> int:
    """``aimem context``: core text and top memories, as an agent's system prompt gets them."""
    print(s.store.context(max_chars=args.max_chars, query=args.query))
    return 0


def ingest(s: Session, args: argparse.Namespace) -> int:
    """``aimem ingest FILE``: check the whole file, then save it in batches (or as a chat)."""
    name = "stdin" if args.file == "-" else args.file
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"{name} is not UTF-8 text: {exc}") from None
    # Checked against the same settings the store will use, before the store is opened.
    settings = Settings.load(database_url=s.database_url)
    if args.chat:
        return _ingest_chat(s, args, text, name, settings.max_content_chars)
    if args.batch > settings.max_batch_items:  # each batch is one save_many
        raise CommandError(
            f"--batch {args.batch} is over max_batch_items ({settings.max_batch_items}): "
            "pass a smaller --batch; nothing was saved"
        )
    items, problems = parse_lines(
        text,
        fmt=args.format,
        jsonl_name=name.endswith(".jsonl"),
        user_context=args.user_context,
        max_chars=settings.max_content_chars,
    )
    if problems:
        print_line(
            s.err, Text(f"error: {name}: {len(problems)} bad line(s); nothing was saved", "red")
        )
        for problem in problems[:MAX_PROBLEMS_SHOWN]:
            print_line(s.err, Text(f"  {problem}"))
        if len(problems) > MAX_PROBLEMS_SHOWN:
            print_line(s.err, Text(f"  … and {len(problems) - MAX_PROBLEMS_SHOWN} more"))
        return 1
    if not items:
        s.err.print(Text(f"Nothing to ingest: {name} has no non-empty lines."))
        return 0
    s.keep_archived = False
    with s.progress("saving", len(items)) as progress:
        summary = save_in_batches(
            s.store, items, batch=args.batch, archived=lambda: s.archived_total, progress=progress
        )
    s.out.print(
        Text.assemble(
            f"Ingested {count_of(summary.lines, 'line')} from {name}: ",
            (f"{summary.saved} saved", "bold green"),
            f", {count_of(summary.duplicates, 'duplicate')} returned, ",
            (f"{summary.archived} archived", "red" if summary.archived else ""),
            ".",
        )
    )
    return 0


def _ingest_chat(s: Session, args: argparse.Namespace, text: str, name: str, limit: int) -> int:
    """``aimem ingest --chat FILE``: the facts worth keeping from a conversation."""
    from aimem.cli.chat import read_chat

    if args.format == "text":
        raise CommandError("--chat reads JSON or JSON Lines messages: drop --format text")
    jsonl = args.format == "jsonl"
    messages = read_chat(text, name=name, jsonl=jsonl, max_chars=limit)
    with s.progress("judging the conversation"):
        report = s.store.save_conversation_with_report(messages, user_context=args.user_context)
    kept = report.memories
    if not kept:
        s.out.print(
            Text(f"Nothing worth keeping in {name} ({count_of(len(messages), 'message')}).")
        )
    else:
        known = len(report.duplicates)
        title = (
            f"From {name} ({count_of(len(messages), 'message')}): "
            f"{count_of(len(kept), 'memory', 'memories')}, {known} already remembered"
        )
        memories_table(s, kept, title)
    show_archived(s, "Archived to stay within capacity")
    return 0


def mcp(s: Session, args: argparse.Namespace) -> int:
    """``aimem mcp``: serve the store to MCP clients over stdio or streamable HTTP.

    Its store is opened inside the server's event loop, so a failure there arrives
    here: an ``AimemError`` is reported as any command's, anything else as a one-line
    internal error (traceback at debug level), never as a traceback.
    """
    try:  # imported on use: only this command needs the MCP SDK
        from aimem.mcp.server import run_server
    except ImportError as exc:
        raise CommandError(
            f"the MCP server needs the MCP SDK ({exc}): pip install 'aimem[mcp]'"
        ) from None
    try:
        run_server(
            database_url=s.database_url,
            namespace=s.namespace,
            transport=args.transport,
            host=args.host,
            port=args.port,
            ready=_announce,
        )
    except AimemError:
        raise
    except Exception as exc:
        cause = _sole_cause(exc)
        if isinstance(cause, AimemError):  # raised inside a task group
            raise cause from None
        log.debug("aimem mcp failed", exc_info=exc)
        detail = " ".join(f"{type(cause).__name__}: {cause}".split())[:200]
        raise CommandError(f"aimem mcp stopped on an internal error ({detail})") from None
    return 0


def _announce(url: str) -> None:
    # The one stdout line of the HTTP server, flushed: supervisors and scripts wait for it.
    print(f"aimem MCP server listening on {url}", flush=True)


def _sole_cause(exc: BaseException) -> BaseException:
    """The one exception inside (nested) single-member exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def import_aigpt(s: Session, args: argparse.Namespace) -> int:
    """``aimem import-aigpt PATH``: judge and save the memories of an aigpt record tree."""
    from aimem.transfer.aigpt import import_tree  # imported on use: only this command needs it

    report = import_tree(s.store, Path(args.path), did=args.did)
    core_state = "core text imported" if report.core_imported else "no core text imported"
    s.out.print(Text(f"Imported {len(report.memories)} memories from {report.did} ({core_state})."))
    show_archived(s, "Archived to stay within capacity")
    return 0


def export_aigpt(s: Session, args: argparse.Namespace) -> int:
    """``aimem export-aigpt PATH --did DID``: write the store as an aigpt record tree."""
    from aimem.transfer.aigpt import export_tree

    paths = export_tree(s.store, Path(args.path), args.did, handle=args.handle)
    s.out.print(Text(f"Wrote {len(paths)} aigpt records under {args.path}."))
    return 0
