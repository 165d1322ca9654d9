"""The ``aimem`` argument parser: global options, then one subcommand each with its handler.

Handlers are named, not imported (``"commands:save"``): ``aimem --help``, ``--version``
and a typo never import the store, and ``main`` imports one command's module to run it.
``--database-url`` and ``--namespace`` are accepted before the subcommand and after it
(the later one wins), since MCP configs and scripts put them either way.
"""

from __future__ import annotations

import argparse

from aimem import __version__
from aimem.embedder_spec import SPEC_HELP

__all__ = ["JUDGING_COMMANDS", "STATUS", "build_parser"]

#: Commands that judge content; the others never call a judge (see ``Session.store``).
JUDGING_COMMANDS = frozenset(
    {"save", "save-memory", "update", "ingest", "import-aigpt", "reinterpret"}
)
#: The handler of ``aimem`` with no command.
STATUS = "status:status"
_DATABASE_HELP = (
    "SQLAlchemy URL of the store, e.g. sqlite:///agent.db "
    "(default: AIMEM_DATABASE_URL, the config file, or the platform data dir)"
)
_NAMESPACE_HELP = "namespace (user or agent) every command is scoped to (default: default)"


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return number


def _store_options(parser: argparse.ArgumentParser, *, after: bool) -> None:
    """``--database-url`` and ``--namespace``: after the subcommand, unset unless given.

    ``argparse.SUPPRESS`` keeps a subcommand's unset option from overwriting the value
    given before the subcommand; one given after it wins.
    """
    group = parser.add_argument_group("store options")
    unset = argparse.SUPPRESS
    group.add_argument(
        "--database-url", metavar="URL", default=unset if after else None, help=_DATABASE_HELP
    )
    group.add_argument(
        "--namespace", metavar="NS", default=unset if after else "default", help=_NAMESPACE_HELP
    )


def _command(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    handler: str,
    help: str,
    description: str | None = None,
) -> argparse.ArgumentParser:
    """A subcommand; ``handler`` is ``"module:function"`` in this package, imported to run."""
    parser = subparsers.add_parser(name, help=help, description=description or help)
    parser.set_defaults(handler=handler)
    _store_options(parser, after=True)
    return parser


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print JSON (the Memory fields) instead of a table"
    )


def _wide_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wide",
        action="store_true",
        help="full ids and every column (for wide terminals and copy-paste)",
    )


def _id_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "memory_id",
        metavar="ID",
        help="a memory id, or a unique prefix of one (4+ characters) as `aimem list` shows",
    )


def _save_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", metavar="TEXT", help="what to remember; '-' reads it from stdin")
    parser.add_argument("--user-context", metavar="S", help="who or what the memory concerns")
    parser.add_argument(
        "--idempotency-key",
        metavar="K",
        help="name this save: re-running it with the same K returns the same memory",
    )
    _json_flag(parser)
    _wide_flag(parser)


def _filters(parser: argparse.ArgumentParser, limit_default: int | None) -> None:
    default = "all" if limit_default is None else str(limit_default)
    parser.add_argument(
        "--limit",
        type=int,
        default=limit_default,
        metavar="N",
        help=f"at most N (default {default})",
    )
    parser.add_argument(
        "--min-score", type=float, metavar="X", help="only memories with priority >= X (0 to 1)"
    )
    parser.add_argument("--all", action="store_true", help="include archived memories")


def build_parser() -> argparse.ArgumentParser:
    """The ``aimem`` argument parser: global options, then one subcommand."""
    parser = argparse.ArgumentParser(
        prog="aimem",
        description=(
            "Long-term memory for AI agents. With no command: status (as `aimem status`)."
        ),
        epilog="Run `aimem COMMAND --help` for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"aimem {__version__}")
    _store_options(parser, after=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    _command(
        sub,
        "status",
        STATUS,
        "show the store, judge, embedder and counts (also `aimem` alone)",
        "Show where the store is, which judge saves use, the embedder, the capacity "
        "settings and how many memories the namespace holds. The same as `aimem` alone.",
    )

    p = _command(
        sub,
        "save",
        "commands:save",
        "judge and save one memory",
        "Judge TEXT (interpretation and four scores) and save it. Shows the memory, and in "
        "red whatever the capacity manager archived to make room.",
    )
    _save_args(p)

    p = _command(sub, "list", "commands:list_memories", "list memories with their scores")
    _filters(p, None)
    p.add_argument(
        "--order",
        choices=("priority", "recent"),
        default="priority",
        help="highest priority first, or newest first (default: %(default)s)",
    )
    _json_flag(p)
    _wide_flag(p)

    p = _command(sub, "search", "commands:search", "find memories by words (and meaning)")
    p.add_argument("query", metavar="QUERY", help="what to look for")
    _filters(p, 10)
    p.add_argument(
        "--mode",
        choices=("hybrid", "keyword", "semantic"),
        default="hybrid",
        help="ranking: hybrid is keyword-only without an embedder (default: %(default)s)",
    )
    p.add_argument(
        "--min-relevance",
        type=float,
        metavar="X",
        help="only hits at least this relevant, 0 to 1 (default 0.05: anything related)",
    )
    _json_flag(p)
    _wide_flag(p)

    p = _command(sub, "show", "commands:show", "show every field of one memory")
    _id_arg(p)
    _json_flag(p)

    p = _command(
        sub,
        "history",
        "commands:history",
        "show a memory's history",
        "Show a memory's events, oldest first: saved, judged, updated (with the content it "
        "replaced), archived (why, and by which memory when superseded), restored, pinned.",
    )
    _id_arg(p)
    _json_flag(p)
    _wide_flag(p)

    p = _command(
        sub,
        "update",
        "commands:update",
        "replace a memory's content (judged again)",
        "Replace the content of memory ID with TEXT ('-' reads stdin). It is judged again "
        "against the other memories; its id stays, its version rises, and the previous "
        "version stays readable with `aimem history ID`.",
    )
    _id_arg(p)
    p.add_argument("text", metavar="TEXT", help="the new content ('-' reads stdin)")
    p.add_argument("--user-context", metavar="TEXT", help="who or what it concerns")
    _json_flag(p)
    _wide_flag(p)
    for name, handler, text in (
        ("pin", "commands:pin", "pin a memory: it is never archived"),
        ("unpin", "commands:unpin", "unpin a memory: it counts toward the cap again"),
        ("restore", "commands:restore", "un-archive a memory (may archive the next lowest)"),
    ):
        p = _command(sub, name, handler, text)
        _id_arg(p)
        _wide_flag(p)

    p = _command(
        sub,
        "delete",
        "commands:delete",
        "delete one memory for good",
        "Delete one memory for good (archiving is the reversible way to forget). Asks for "
        "confirmation on a terminal; elsewhere --yes is required.",
    )
    _id_arg(p)
    p.add_argument("--yes", "-y", action="store_true", help="delete without asking")
    _wide_flag(p)

    p = _command(
        sub,
        "prune",
        "commands:prune",
        "apply the capacity rules now",
        "Archive memories below min_priority_score, then the lowest until at most "
        "max_memories remain (pinned ones are never archived).",
    )
    p.add_argument("--dry-run", action="store_true", help="show what would go; change nothing")
    _json_flag(p)
    _wide_flag(p)

    _json_flag(_command(sub, "stats", "commands:stats", "counts, mean priority and tokens used"))

    p = _command(
        sub,
        "core",
        "commands:core",
        "print or set the core text",
        "Print the core text (identity and personality; never pruned). "
        "With --set TEXT, replace it instead ('-' reads stdin, '' clears it).",
    )
    p.add_argument("--set", metavar="TEXT", help="replace the core text with TEXT")

    p = _command(
        sub,
        "context",
        "commands:context",
        "print the system-prompt context",
        "Print the core text and the top memories as an agent's system prompt gets them.",
    )
    p.add_argument(
        "--max-chars",
        type=int,
        default=4000,
        metavar="N",
        help="length budget (default: %(default)s)",
    )
    p.add_argument("--query", metavar="Q", help="pick memories relevant to Q, not by priority")

    p = _command(
        sub,
        "ingest",
        "commands:ingest",
        "save every line of a text or JSON Lines file, or a chat transcript",
        "Save a file of memories. Plain text: one memory per non-empty line. JSON Lines "
        '(a .jsonl name, or every line a JSON object): {"content": ..., "user_context": ...} '
        "per line. With --chat, FILE is a conversation: a JSON list of "
        '{"role": ..., "content": ...} messages as OpenAI\'s chat API takes them (or an '
        'object with a "messages" list), or JSON Lines of messages; the facts worth keeping '
        "become memories. The whole file is checked first: with any bad line nothing is saved.",
    )
    p.add_argument("file", metavar="FILE", help="the file to read; '-' reads stdin")
    p.add_argument(
        "--chat",
        action="store_true",
        help="FILE is a chat transcript (role/content messages), not one memory per line",
    )
    p.add_argument(
        "--user-context", metavar="S", help="user context for lines that do not give one"
    )
    p.add_argument(
        "--batch",
        type=_positive_int,
        default=32,
        metavar="N",
        help="lines judged and written together (default: %(default)s)",
    )
    p.add_argument(
        "--format",
        choices=("auto", "text", "jsonl"),
        default="auto",
        help="how to read FILE (default: %(default)s, decided as described above)",
    )

    p = _command(
        sub,
        "export",
        "transfer:export",
        "write this namespace to a checksummed JSON Lines file",
        "Write every memory of the namespace (archived ones too, with vectors and keys), the "
        "core and the history to PATH, sealed by a SHA-256 trailer. Never overwrites a file.",
    )
    p.add_argument("path", metavar="PATH", help="the new file to write")
    p.add_argument("--no-history", action="store_true", help="leave the history log out")

    p = _command(
        sub,
        "import",
        "transfer:import_",
        "load an export file into this namespace",
        "Validate the whole file (checksum, schema, bounds, clashes with this database) and "
        "only then write it, in one transaction. Exit 1 if it is refused.",
    )
    p.add_argument("path", metavar="PATH", help="a file written by `aimem export`")
    p.add_argument("--dry-run", action="store_true", help="check the file; write nothing")
    _json_flag(p)

    p = _command(
        sub,
        "backup",
        "transfer:backup",
        "copy the whole database with SQLite's online backup API",
        "Copy the database file (every namespace) to PATH while others may be writing; "
        "never a copy of a live file. Refuses an existing PATH.",
    )
    p.add_argument("path", metavar="PATH", help="the new file to write")

    p = _command(
        sub,
        "reinterpret",
        "transfer:reinterpret",
        "judge the memories saved while the judge was failing",
        "Judge pending memories (saved unscored when the judge failed), oldest first. Exit 1 "
        "if some are still pending.",
    )
    p.add_argument("--limit", type=_positive_int, metavar="N", help="judge at most N")
    _wide_flag(p)

    p = _command(
        sub,
        "reembed",
        "transfer:reembed",
        "re-compute every memory's vector with an embedder",
        "Re-compute the vector of every memory of the namespace (archived ones too) with the "
        "embedder given here or by AIMEM_EMBEDDER, replacing all stored vectors in one "
        "transaction: the way out after changing embedders or their dimension.",
    )
    p.add_argument(
        "--embedder",
        metavar="SPEC",
        help=f"{SPEC_HELP} (default: AIMEM_EMBEDDER or the config file)",
    )
    p.add_argument(
        "--batch", type=_positive_int, default=64, metavar="N", help="texts per embedder call"
    )

    p = _command(
        sub,
        "mcp",
        "commands:mcp",
        "run the MCP server",
        "Serve this store to MCP clients: stdio, or streamable HTTP at /mcp. Binding a "
        "non-loopback host requires AIMEM_MCP_TOKEN; requests must name this host and port "
        "in Host (AIMEM_MCP_ALLOWED_HOSTS adds names).",
    )
    p.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="default: %(default)s"
    )
    p.add_argument("--host", default="127.0.0.1", help="HTTP host (default: %(default)s)")
    p.add_argument(
        "--port", type=int, default=8765, help="HTTP port, 1-65535 (default: %(default)s)"
    )

    _command(
        sub,
        "shell",
        "shell:shell",
        "run many commands against a store kept open (the embedder loads once)",
        "Read commands as `aimem` takes them (`search tea --limit 3`), one a line, from a "
        "terminal or a pipe, and run each against a store kept open between them: Python, "
        "the store and an embedder (AIMEM_EMBEDDER=local loads torch and a model) load once "
        "instead of once per command. `help` lists the commands; `exit` or end of input "
        "leaves. Exit status: the last failed command's, else 0.",
    )

    p = _command(
        sub,
        "import-aigpt",
        "commands:import_aigpt",
        "import an aigpt record tree",
        "Import aigpt's core and memory records from PATH/{did}/ai.syui.gpt.*/; every memory "
        "is judged like a save.",
    )
    p.add_argument("path", metavar="PATH", help="the aigpt content directory")
    p.add_argument("--did", metavar="DID", help="which DID to import (default: the only one)")

    p = _command(
        sub,
        "export-aigpt",
        "commands:export_aigpt",
        "export as an aigpt record tree",
        "Write the core text and active memories as aigpt records under PATH/DID/.",
    )
    p.add_argument("path", metavar="PATH", help="the aigpt content directory")
    p.add_argument("--did", metavar="DID", required=True, help="the DID the records belong to")
    p.add_argument("--handle", metavar="H", help="handle written into the core record")

    # aigpt-compatible names.
    _command(sub, "read-core", "commands:core", "aigpt alias: print the core text").set_defaults(
        set=None
    )
    p = _command(
        sub,
        "read-memory",
        "commands:read_memory",
        "aigpt alias: every active memory, highest priority first",
    )
    _json_flag(p)
    _wide_flag(p)
    _save_args(_command(sub, "save-memory", "commands:save", "aigpt alias of `save`"))

    p = _command(
        sub,
        "demo",
        "status:demo",
        "offline demo: judge varied memories, then forget the least important",
    )
    p.add_argument(
        "--max-memories",
        type=int,
        default=8,
        help="capacity of the demo's temporary store (default: %(default)s)",
    )
    return parser
