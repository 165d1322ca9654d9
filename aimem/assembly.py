"""How a store is put together, and the plumbing every operation shares.

``StoreParts`` turns the constructor's arguments into settings, a backend
(``storage.open_backend``), a judge, an embedder and the retriever, closes what it
made, runs database calls on threads of its own (never on an event loop, where a lock
wait would hold up every other store on it), starts afresh in a forked child, and
tells the caller what was archived. ``AsyncMemoryStore`` (``memory.py``) adds the
operations on top.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

from . import display
from .capacity import CapacityPolicy
from .embedder_spec import embedder_from_spec
from .embeddings import Embedder
from .exceptions import AimemError, ValidationError
from .forking import guard, renew_after_fork, renew_if_forked
from .judges.base import Judge
from .judging import Judging, default_judge
from .models import Memory
from .retrieval import Retriever, mismatch_message, other_embedder_message
from .settings import Settings, default_database_url
from .storage import open_backend
from .validation import check_label, check_namespace

__all__ = ["ArchiveCallback", "StoreParts"]

log = logging.getLogger("aimem")

ArchiveCallback = Callable[[list[Memory]], object]
P = ParamSpec("P")
T = TypeVar("T")

#: Database calls one store runs at once; more wait (a pool's connections bound them too).
DB_THREADS = 4


class StoreParts:
    """The parts of one store: settings, backend, judge, embedder, retriever."""

    def __init__(
        self,
        database_url: str | None = None,
        *,
        judge: Judge | None = None,
        embedder: Embedder | str | None = None,
        settings: Settings | None = None,
        namespace: str = "default",
        on_archive: ArchiveCallback | None = None,
        **overrides: Any,
    ) -> None:
        if isinstance(embedder, str):  # a spec such as "local": the setting, given here
            overrides["embedder"] = embedder
            embedder = None
        if embedder is not None and not isinstance(embedder, Embedder):
            raise ValidationError(
                "embedder must have name, dim and an async embed(texts) method, "
                "like aimem.LocalEmbedder or aimem.OpenAIEmbedder, or be a spec such as 'local'"
            )
        if database_url is not None:
            overrides["database_url"] = database_url
        # An explicit Settings object replaces env and file; keyword overrides still win.
        self.settings = (
            settings.with_overrides(**overrides) if settings else Settings.load(overrides)
        )
        # Built from the setting (AIMEM_EMBEDDER), the store owns it and closes it.
        self._owns_embedder = embedder is None
        if embedder is None:
            embedder = embedder_from_spec(self.settings.embedder, self.settings)
        self.namespace = check_namespace(namespace)
        if judge is not None and not hasattr(judge, "interpret"):
            raise ValidationError("judge must have an async interpret(content, ...) method")
        # The database first: a URL it refuses is the error to see, not a judge notice.
        with guard():  # SQLite's C locks: a fork waits (forking.py)
            self._db = open_backend(self.settings.database_url or default_database_url())
        try:
            self.judge: Judge = judge if judge is not None else default_judge(self.settings)
        except BaseException:
            self._db.close()
            raise
        self._owns_judge = judge is None
        self._on_archive = on_archive
        self._retriever = Retriever(
            self._db, self.namespace, embedder, self.settings, self._db_call
        )
        self._judging = Judging(self.judge, self._retriever, self.settings)
        self._closed = False
        self._threads = _db_threads()
        renew_after_fork(self)
        display.track_store(self)
        if embedder is not None:
            self._check_embedder(embedder)

    def _check_embedder(self, embedder: Embedder) -> None:
        """Say at open when the embedder cannot use the stored vectors (saves will refuse)."""
        try:
            check_label(embedder.name, "the embedder's name")
            dim = embedder.dim
            with guard():
                stored = self._db.vector_dim(self.namespace, embedder.name)
                others = self._db.vector_models(self.namespace) if stored is None else {}
        except AimemError:
            self._db.close()
            raise
        if dim is not None and stored is not None and stored != dim:
            log.warning("aimem: %s", mismatch_message(embedder.name, stored, dim))
        elif others:
            log.warning("aimem: %s", other_embedder_message(embedder.name, others))

    # -- lifecycle ------------------------------------------------------------------

    @property
    def policy(self) -> CapacityPolicy:
        """The capacity settings in force."""
        s = self.settings
        return CapacityPolicy(s.max_memories, s.min_priority_score, s.auto_prune)

    @property
    def database_url(self) -> str:
        """Where this store keeps its memories."""
        return self._db.url

    @property
    def embedder(self) -> Embedder | None:
        """The embedder behind semantic search, or None for keyword search only."""
        return self._retriever.embedder

    async def aclose(self) -> None:
        """Close the database and any judge client this store created."""
        if self._closed:
            return
        self._closed = True
        closer = getattr(self.judge, "aclose", None) if self._owns_judge else None
        if closer is not None:
            await closer()
        embedder_closer = getattr(self.embedder, "aclose", None) if self._owns_embedder else None
        if embedder_closer is not None:
            await embedder_closer()
        # Calls still running (lookups of judgements a failed save_many left behind) end
        # first, off the loop, so none hands its connection back to a disposed pool.
        await asyncio.to_thread(self._threads.shutdown)
        with guard():
            self._db.close()

    def _ids_for_views(self) -> list[str] | None:
        """Every id of the namespace, read now on the caller's thread; None once closed.

        For a view given no store (``display.ids_of_open_stores``): a table's id
        prefixes must be ones this store accepts. Display code runs outside the event
        loop, so the read is direct, as ``short_ids`` reads through the store's threads.
        """
        if self._closed:
            return None
        try:
            with guard():
                return self._db.all_ids(self.namespace)
        except AimemError:
            return None

    def _after_fork(self) -> None:
        """In a forked child: new database threads and connections (``forking.py``)."""
        self._threads = _db_threads()  # the parent's have no threads here: work would wait
        self._db.after_fork()

    async def close(self) -> None:
        """Same as ``aclose()``: the async twin of ``MemoryStore.close()``."""
        await self.aclose()

    async def _db_call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a database call on this store's own threads, never on the event loop.

        A call may wait seconds for a lock (another writer of its namespace, or of the
        SQLite file). Inline on aimem's private loop, which every sync store shares, it
        would stall all of them. On a user's loop, the default executor is shared with
        the rest of the app, which a few blocked writers could fill. A hop costs about
        0.1 ms (an offline save makes three), little beside an LLM's reply. The caller's
        context variables go along, as with ``asyncio.to_thread`` (tracing).
        """
        if self._closed:
            raise AimemError("This memory store is closed: open a new one")
        renew_if_forked()
        context = contextvars.copy_context()

        def call() -> T:
            with guard():  # no fork in the middle of it (forking.py)
                return context.run(fn, *args, **kwargs)

        return await asyncio.get_running_loop().run_in_executor(self._threads, call)

    def _report(self, archived: list[Memory]) -> None:
        """Tell the caller what was forgotten: a log line and the on_archive callback."""
        if not archived:
            return
        for m in archived:
            log.info(
                "aimem archived %s (priority %s, %s) in namespace %s",
                m.id,
                m.priority_score,
                m.archive_reason,
                m.namespace,
            )
        if self._on_archive is not None:
            try:
                self._on_archive(archived)
            except Exception:  # the save is committed; a failing callback must not undo that
                log.exception("aimem: on_archive callback raised")


def _db_threads() -> ThreadPoolExecutor:
    """A store's database threads: started on first use, so an idle store costs none."""
    return ThreadPoolExecutor(max_workers=DB_THREADS, thread_name_prefix="aimem-db")
