"""One command's surroundings: its consoles, its store (opened on first use), how it shows ids.

Also where the CLI keeps what it prints around a command's own output: the offline-judge
notice (printed once, after the output of a command that succeeded), progress bars (on
stderr, only when stderr is a terminal, so scripts and ``--json`` stay clean), and how a
message line is printed (``print_line``: wrapped at words on a terminal, one line in a pipe).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

from rich.console import Console
from rich.text import Text

from aimem.models import Interpretation, Memory
from aimem.saving.contents import HEURISTIC_NOTICE, heuristic_by_default
from aimem.settings import Settings
from aimem.sync_store import MemoryStore

if TYPE_CHECKING:
    from aimem.judges.base import Judge

__all__ = ["Progress", "Session", "StoreSource", "print_line"]

#: ``progress(done, total)``, as the store's bulk methods call it.
Progress = Callable[[int, int], None]

#: The offline-judge notice is printed once per process (as the library logs it).
_noticed = False


class StoreSource(Protocol):
    """Stores kept open across commands (``aimem shell``'s ``StorePool``)."""

    def open(
        self, database_url: str | None, namespace: str, session: Session
    ) -> tuple[MemoryStore, bool]:
        """The store for ``database_url`` and ``namespace``, and whether its judge is offline."""
        ...


def print_line(console: Console, text: Text) -> None:
    """A message (an error, a notice): wrapped at words on a terminal, one line elsewhere.

    A terminal would cut a long line mid-word at its edge, so rich wraps it at word
    boundaries to the terminal's width; in a pipe or a file it stays one line, which
    scripts can grep.
    """
    console.print(text, soft_wrap=not console.is_terminal)


class Session:
    """Consoles for one command, and a store opened on first use and closed by ``close()``.

    Memories archived by any call are collected in ``archived`` (the store's
    ``on_archive`` callback), so a command can show what it made the store forget.
    ``wide`` (``--wide``) shows full ids and every column.
    """

    def __init__(
        self,
        database_url: str | None,
        namespace: str,
        out: Console,
        err: Console,
        *,
        judges: bool = True,
        wide: bool = False,
        pool: StoreSource | None = None,
    ):
        self.database_url = database_url
        self.namespace = namespace
        self.out = out
        self.err = err
        self.wide = wide
        self.archived: list[Memory] = []
        self.archived_total = 0
        #: False keeps only the count (a large ingest need not hold every archived memory).
        self.keep_archived = True
        #: Printed by ``finish`` after a successful command (the offline-judge notice).
        self.notice: str | None = None
        self._judges = judges
        self._pool = pool
        self._store: MemoryStore | None = None

    @property
    def store(self) -> MemoryStore:
        """The store for ``--database-url``/``--namespace``, with its default judge.

        Commands that never judge get the offline judge, so that reading memories does
        not build a client for a judge it never calls. When a judging command falls back
        to the offline judge, the notice saying so waits for ``finish`` instead of being
        logged ahead of the command's output (or of its error). In ``aimem shell`` the
        store comes from the shell's pool, open already after its first command.
        """
        if self._store is None and self._pool is not None:
            self._store, offline = self._pool.open(self.database_url, self.namespace, self)
            self.notice = HEURISTIC_NOTICE if self._judges and offline else None
        if self._store is None:
            judge: Judge | None = OfflineOnUse()
            notice = None
            if self._judges:
                settings = Settings.load(database_url=self.database_url)
                if heuristic_by_default(settings):
                    from aimem.judges.heuristic import HeuristicJudge  # a judging command: now

                    judge, notice = HeuristicJudge(), HEURISTIC_NOTICE
                else:
                    judge = None  # the store builds (and closes) the configured LLM judge
            self._store = MemoryStore(
                self.database_url,
                judge=judge,
                namespace=self.namespace,
                on_archive=self.on_archive,
            )
            self.notice = notice
        return self._store

    def on_archive(self, memories: list[Memory]) -> None:
        """Collect what the store archived (its ``on_archive`` callback)."""
        self.archived_total += len(memories)
        if self.keep_archived:
            self.archived.extend(memories)

    def take_archived(self) -> list[Memory]:
        """The memories archived since the last call."""
        taken, self.archived = self.archived, []
        return taken

    def ids(self, memory_ids: Iterable[str]) -> dict[str, str]:
        """Full id -> what to show: its short unique prefix, or itself with ``--wide``."""
        wanted = list(dict.fromkeys(memory_ids))
        if self.wide or not wanted:
            return {i: i for i in wanted}
        return self.store.short_ids(wanted)

    def short(self, memory_id: str) -> str:
        """One id as the tables show it."""
        return self.ids([memory_id])[memory_id]

    @contextmanager
    def progress(self, label: str, total: int | None = None) -> Iterator[Progress]:
        """A progress bar on stderr (a terminal only) and the callback that moves it."""
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as Bar

        columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        hidden = not self.err.is_terminal
        with Bar(*columns, console=self.err, transient=True, disable=hidden) as bar:
            task = bar.add_task(label, total=total)

            def update(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            yield update

    def finish(self, code: int) -> None:
        """After the command: the notice, on stderr, when it succeeded (never before an error).

        Once per process: a process that runs several commands (a test, a script calling
        ``main``) is told once.
        """
        global _noticed
        if code == 0 and self.notice is not None and not _noticed:
            _noticed = True
            self.out.file.flush()  # the output first, also when both streams share one pipe
            print_line(self.err, Text(self.notice, style="dim"))
        self.notice = None

    def close(self) -> None:
        """Close the store if a command opened it (a shell's pool keeps its own open)."""
        if self._store is not None and self._pool is None:
            self._store.close()
        self._store = None


class OfflineOnUse:
    """The offline judge, imported only if a command asks it for a judgement.

    Commands that only read never do, and they need not pay the heuristic's import.
    """

    source = "heuristic"

    async def interpret(
        self, content: str, *, user_context: str | None = None, related: Sequence[Memory] = ()
    ) -> Interpretation:
        """The heuristic judge's interpretation (imported on this first call)."""
        from aimem.judges.heuristic import HeuristicJudge

        return await HeuristicJudge().interpret(content, user_context=user_context, related=related)
