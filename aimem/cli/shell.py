"""``aimem shell``: many commands against stores kept open, read one a line.

Every ``aimem`` command is a new process: Python starts, the store's modules load, the
store opens and, with ``AIMEM_EMBEDDER=local``, a search loads torch and the model
(seconds of CPU and half a gigabyte each time). The shell pays that once. It reads
commands as ``aimem`` takes them (``search tea --limit 3``), one a line, from a terminal
(with a prompt and line editing) or from a pipe or file, and runs each one as the
one-shot command would, printing the same output and the same one-line errors. Stores
stay open between lines, one per database and namespace, and share one embedder.

Not inside the shell: ``shell`` and ``mcp`` (they run until stopped), and ``-`` for
stdin (the shell's own input). ``help`` lists the commands; ``exit``, ``quit`` or
end of input leaves. The exit status is that of the last command that failed (0 if
none did), so a script of commands fails when one of them does.
"""

from __future__ import annotations

import argparse
import io
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from rich.text import Text

from aimem import __version__
from aimem.cli.main import run
from aimem.cli.parser import JUDGING_COMMANDS, build_parser
from aimem.cli.session import Session, print_line
from aimem.embedder_spec import embedder_from_spec
from aimem.loop import run_sync
from aimem.models import Memory
from aimem.saving.contents import heuristic_by_default
from aimem.settings import Settings, default_database_url, masked_url
from aimem.sync_store import MemoryStore

if TYPE_CHECKING:
    from aimem.embeddings import Embedder

__all__ = ["StorePool", "shell"]

PROMPT = "aimem> "
EXIT_WORDS = frozenset({"exit", "quit"})
#: Commands that run until stopped: each needs a process of its own.
NOT_HERE = frozenset({"shell", "mcp"})
#: Arguments where ``-`` means stdin, which is where the shell reads its commands.
STDIN_ARGS = ("text", "file", "set")


class StorePool:
    """The stores a shell keeps open: one per (database URL, namespace), one embedder.

    Each store has the judge saves use (the configured LLM judge, or the offline one
    when none is configured) and the embedder its settings name, built once per spec
    and shared, so a second namespace does not load the model again. Memories a store
    archives go to the session of the command that is running.
    """

    def __init__(self) -> None:
        self._stores: dict[tuple[str | None, str], tuple[MemoryStore, bool]] = {}
        self._embedders: dict[str, Embedder | None] = {}
        self._session: Session | None = None

    def open(
        self, database_url: str | None, namespace: str, session: Session
    ) -> tuple[MemoryStore, bool]:
        """The store for ``database_url`` and ``namespace``, and whether its judge is offline."""
        self._session = session
        key = (database_url, namespace)
        if key not in self._stores:
            settings = Settings.load(database_url=database_url)
            offline = heuristic_by_default(settings)
            judge = None
            if offline:
                from aimem.judges.heuristic import HeuristicJudge

                judge = HeuristicJudge()
            store = MemoryStore(
                database_url,
                judge=judge,
                embedder=self._embedder(settings),
                namespace=namespace,
                on_archive=self._on_archive,
            )
            self._stores[key] = (store, offline)
        return self._stores[key]

    def _embedder(self, settings: Settings) -> Embedder | None:
        spec = settings.embedder
        if spec is None:
            return None
        if spec not in self._embedders:
            self._embedders[spec] = embedder_from_spec(spec, settings)
        return self._embedders[spec]

    def _on_archive(self, memories: list[Memory]) -> None:
        if self._session is not None:
            self._session.on_archive(memories)

    def close(self) -> None:
        """Close every store, then the embedders (the stores do not own them)."""
        for store, _ in self._stores.values():
            store.close()
        self._stores.clear()
        for embedder in self._embedders.values():
            closer = getattr(embedder, "aclose", None)
            if closer is not None:
                run_sync(closer())
        self._embedders.clear()


def shell(s: Session, args: argparse.Namespace) -> int:
    """``aimem shell``: run commands read line by line against stores kept open."""
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if interactive:
        _line_editing()
        url = s.database_url or Settings.load().database_url or default_database_url()
        banner = (
            f"aimem {__version__} shell on {masked_url(url)} (namespace {s.namespace!r}): "
            "commands as after `aimem`, e.g. `search tea`; `help` lists them, `exit` or "
            "Ctrl-D leaves. The store and embedder stay loaded between commands."
        )
        print_line(s.err, Text(banner, style="dim"))
    pool = StorePool()
    status = 0
    try:
        for line in _lines(interactive):
            words = _words(s, line)
            if words is None:
                status = 2
                continue
            if not words:
                continue
            if words[0] in EXIT_WORDS:
                break
            code = _one(s, pool, words, interactive)
            if code != 0:
                status = code
    finally:
        pool.close()
    return status


def _lines(interactive: bool) -> Iterator[str]:
    """Lines of input: prompted on a terminal (Ctrl-C drops the line), else stdin's."""
    if not interactive:
        yield from sys.stdin
        return
    while True:
        try:
            yield input(PROMPT)
        except KeyboardInterrupt:
            print()
        except EOFError:
            print()
            return


def _words(s: Session, line: str) -> list[str] | None:
    """A line split as a POSIX shell would (``#`` starts a comment); None if it cannot be."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError as exc:  # an unclosed quote
        print_line(s.err, Text.assemble(("error: ", "bold red"), f"{exc}: {line.strip()}"))
        return None
    if words[:1] == ["help"]:
        return [*words[1:2], "--help"]
    return words


def _one(s: Session, pool: StorePool, words: list[str], interactive: bool) -> int:
    """Parse and run one line's command, as ``aimem WORDS`` would with the shell's options."""
    given = ["--namespace", s.namespace]
    if s.database_url is not None:
        given = ["--database-url", s.database_url, *given]
    try:
        args = build_parser().parse_args([*given, *words])
    except SystemExit as exc:  # a usage error (already printed), or --help
        return exc.code if isinstance(exc.code, int) else 2
    refusal = _refusal(args)
    if refusal:
        print_line(s.err, Text.assemble(("error: ", "bold red"), refusal))
        return 1
    session = Session(
        args.database_url,
        args.namespace,
        s.out,
        s.err,
        judges=args.command in JUDGING_COMMANDS,
        wide=getattr(args, "wide", False),
        pool=pool,
    )
    with _no_stdin(interactive):
        return run(session, args)


def _refusal(args: argparse.Namespace) -> str | None:
    if args.command in NOT_HERE:
        return f"`aimem {args.command}` runs on its own, not inside `aimem shell`"
    for name in STDIN_ARGS:
        if getattr(args, name, None) == "-":
            return "inside `aimem shell`, '-' (stdin) is the shell's input: give the text itself"
    return None


@contextmanager
def _no_stdin(interactive: bool) -> Iterator[None]:
    """Piped commands cannot read the rest of the script as their own input."""
    if interactive:  # a terminal: a command may ask (delete's confirmation)
        yield
        return
    stdin, sys.stdin = sys.stdin, io.StringIO()
    try:
        yield
    finally:
        sys.stdin = stdin


def _line_editing() -> None:
    """Arrow keys and history for ``input()``, where the platform has readline."""
    with suppress(ImportError):  # Windows has none
        import readline  # noqa: F401
