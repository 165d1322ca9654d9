"""``AsyncMemoryStore``: the one implementation of a store, in one class.

A save flows: validate -> exact-duplicate check (no LLM call) -> related memories ->
judge (one LLM call, outside any transaction) -> one transaction that inserts, logs
history and runs the capacity manager. The store turns its arguments into settings, a
backend, a judge, an embedder and a retriever, and runs every database call on threads
of its own (never on an event loop, where a lock wait would hold up every other store
on it). What is heavy is a collaborator it holds: ``saving.contents.Judging`` (contents
to memories ready to write) and ``transfer.portability.Portability`` (export, import,
re-embedding, backup). ``MemoryStore`` (``sync_store.py``) forwards each call to it on
aimem's background loop, so both share every decision.
"""

from __future__ import annotations

import asyncio
import builtins
import contextvars
import dataclasses
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from aimem.capacity import CapacityPolicy
from aimem.context import render_context
from aimem.display import track_store
from aimem.embedder_spec import embedder_from_spec
from aimem.embeddings import Embedder
from aimem.exceptions import (
    AimemError,
    AmbiguousIdError,
    JudgeError,
    NotFoundError,
    ValidationError,
)
from aimem.forking import guard, renew_after_fork, renew_if_forked
from aimem.ids import DISPLAY_PREFIX, MIN_PREFIX, id_prefix, shortest_unique_prefixes
from aimem.judges.base import Judge
from aimem.judges.reading import reading_for
from aimem.models import (
    ExportReport,
    HistoryEvent,
    ImportReport,
    Interpretation,
    Memory,
    PruneReport,
    SaveReport,
    SearchHit,
    Stats,
)
from aimem.retrieval.retriever import Mode, Retriever, mismatch_message, other_embedder_message
from aimem.saving.contents import Judging, default_judge
from aimem.saving.messages import Messages, check_messages
from aimem.settings import Settings, default_database_url
from aimem.storage import Order, SearchFilters, check_version, content_hash, open_backend
from aimem.transfer.portability import Portability
from aimem.validation import (
    check_compress,
    check_content,
    check_contents,
    check_core_text,
    check_idempotency_key,
    check_label,
    check_limit,
    check_memory_id,
    check_min_score,
    check_namespace,
    check_user_context,
    check_version_number,
    check_when,
)

__all__ = ["ArchiveCallback", "AsyncMemoryStore"]

log = logging.getLogger("aimem")

ArchiveCallback = Callable[[list[Memory]], object]
P = ParamSpec("P")
T = TypeVar("T")

#: Database calls one store runs at once; more wait (a pool's connections bound them too).
DB_THREADS = 4


class AsyncMemoryStore:
    """Long-term memory that interprets, scores and forgets (async API).

    Example:
        >>> import aimem, asyncio, tempfile, os
        >>> async def main(path):
        ...     async with aimem.AsyncMemoryStore(f"sqlite:///{path}",
        ...                                       judge=aimem.HeuristicJudge()) as store:
        ...         memory = await store.save("I am allergic to penicillin.")
        ...         return memory.priority_score > 0.3
        >>> asyncio.run(main(os.path.join(tempfile.mkdtemp(), "a.db")))
        True
    """

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
            self._db,
            self.namespace,
            embedder,
            self.settings,
            self._db_call,
            reading_for(self.judge),
        )
        self._judging = Judging(self.judge, self._retriever, self.settings)
        self._transfers = Portability(
            self._db,
            self._db_call,
            self.namespace,
            self._retriever,
            policy=lambda: self.policy,
            report=self._report,
            max_content_chars=lambda: self.settings.max_content_chars,
        )
        self._closed = False
        self._threads = _db_threads()
        renew_after_fork(self)
        track_store(self)
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

    def _ids_for_views(self) -> builtins.list[str] | None:
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

    def _report(self, archived: builtins.list[Memory]) -> None:
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

    async def __aenter__(self) -> AsyncMemoryStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- saving ---------------------------------------------------------------------

    async def save(
        self,
        content: str,
        *,
        user_context: str | None = None,
        interpretation: Interpretation | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
        """Interpret, score and store ``content``; may archive the least important memories.

        An exact duplicate of an active memory makes no LLM call: the existing memory is
        returned, reinforced. Pass ``interpretation`` to supply the scores yourself (an
        agent acting as its own judge): it is stored with ``score_source="client"`` and
        no LLM call. A retried save with the same ``idempotency_key`` returns the memory
        the first one made (even if archived since), with no LLM call and no new row.
        If the judge fails, the default ``on_judge_error="pending"`` stores the content
        unscored (``score_source="pending"``, logged as a warning) for
        ``reinterpret_pending()``. What the save archived goes to ``on_archive``;
        ``save_with_report`` returns it instead.

        Raises:
            ValidationError: empty, non-string or oversized content, a bad user_context
                or key; nothing was written.
            ConflictError: the idempotency key was used for different content.
            JudgeError: the judge failed and ``on_judge_error="raise"``; nothing was written.
        """
        report = await self.save_with_report(
            content,
            user_context=user_context,
            interpretation=interpretation,
            idempotency_key=idempotency_key,
        )
        return report.memories[0]

    async def save_with_report(
        self,
        content: str,
        *,
        user_context: str | None = None,
        interpretation: Interpretation | None = None,
        idempotency_key: str | None = None,
    ) -> SaveReport:
        """Like ``save``, but also returns what the capacity manager archived to make room."""
        content = check_content(content, self.settings.max_content_chars)
        user_context = check_user_context(user_context)
        key = check_idempotency_key(idempotency_key)
        if interpretation is not None and not isinstance(interpretation, Interpretation):
            raise ValidationError(
                "interpretation must be an aimem.Interpretation, "
                f"got {type(interpretation).__name__}"
            )
        digest = content_hash(content)
        existing = None
        if key is not None:
            existing = await self._db_call(self._db.find_by_key, self.namespace, key, digest)
        if existing is None:
            existing = await self._db_call(
                self._db.find_active_duplicate, self.namespace, digest, key
            )
        if existing is not None:
            return SaveReport(memories=[existing], archived=[], duplicates=[existing.id])
        if interpretation is None:
            [item] = await self._judging.judge_all([content], user_context)
        else:
            vectors = await self._retriever.embed([content])
            vector = None if vectors is None else vectors[0]
            item = self._judging.new_memory(content, interpretation, "client", user_context, vector)
        if key is not None:
            item = dataclasses.replace(item, idempotency_key=key)
        [memory], archived = await self._db_call(
            self._db.insert, self.namespace, [item], self.policy
        )
        self._report(archived)
        return SaveReport(memories=[memory], archived=archived)

    async def save_many(
        self, contents: Sequence[str], *, user_context: str | None = None
    ) -> list[Memory]:
        """Save several contents: judged concurrently, written in one transaction, input order kept.

        Each sees the earlier ones as related: "I live in Leeds", "we moved to York" retires
        the first. All inputs are validated first; if any judgement fails, nothing is written
        (duplicates are reinforced only after the judgements held).
        """
        report = await self.save_many_with_report(contents, user_context=user_context)
        return report.memories

    async def save_many_with_report(
        self, contents: Sequence[str], *, user_context: str | None = None
    ) -> SaveReport:
        """Like ``save_many``, but also says which were duplicates and what was archived."""
        contents = check_contents(contents, self.settings)
        user_context = check_user_context(user_context)
        unique = list(dict.fromkeys(contents))
        find, ns = self._db.find_active_duplicate, self.namespace
        peek = {c: await self._db_call(find, ns, content_hash(c), reinforce=False) for c in unique}
        seen = {c: m for c, m in peek.items() if m is not None}
        from aimem.saving.conversations import judge_in_order  # on use, as save_conversation

        fresh = [c for c in unique if c not in seen]
        items = await judge_in_order(self._judging, fresh, user_context)
        memories, archived = await self._db_call(
            self._db.insert, self.namespace, items, self.policy
        )
        again = {c: await self._db_call(find, ns, content_hash(c)) for c in seen}
        known = {c: again[c] or m for c, m in seen.items()}
        saved = {m.content: m for m in memories} | known
        self._report(archived)
        return SaveReport(
            memories=[saved[c] for c in contents],
            archived=archived,
            duplicates=[m.id for m in known.values()],
        )

    async def save_conversation(
        self, messages: Messages, *, user_context: str | None = None
    ) -> list[Memory]:
        """Turn an OpenAI-style ``role``/``content`` message list into memories.

        Only what the user said is kept: an LLM judge states the facts worth keeping (one
        call per ``judge_batch_size`` user turns), an offline judge the user turns scoring
        at least ``min_priority_score``. Duplicates, supersession and capacity as
        ``save_many``, in one transaction, conversation order kept (``[]`` if nothing is
        worth keeping). On a judge failure the user turns are kept raw as pending
        (``on_judge_error``). Message rules and size bounds: ``aimem.saving.messages``.

        Raises:
            ValidationError: a bad message (named by index), too long, or no user text.
            JudgeError: the judge failed and ``on_judge_error="raise"``; nothing was written.
        """
        report = await self.save_conversation_with_report(messages, user_context=user_context)
        return report.memories

    async def save_conversation_with_report(
        self, messages: Messages, *, user_context: str | None = None
    ) -> SaveReport:
        """Like ``save_conversation``, but also says which were duplicates and what was archived."""
        # On use: the conversation path (fact extraction, faithfulness checks) is big to import.
        from aimem.saving.conversations import plan_conversation

        turns = check_messages(messages, self.settings.max_content_chars)
        plan = await plan_conversation(
            self._judging,
            turns,
            check_user_context(user_context),
            lambda c, reinforce=True: self._db_call(
                self._db.find_active_duplicate, self.namespace, content_hash(c), reinforce=reinforce
            ),
        )
        memories, archived = await self._db_call(
            self._db.insert, self.namespace, plan.items, self.policy
        )
        self._report(archived)
        return plan.report(memories, archived)

    async def update(
        self,
        memory_id: str,
        content: str,
        *,
        user_context: str | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        """Replace a memory's content and re-interpret it (one LLM call); version rises by one.

        The new text is judged against the other memories, never against the one it
        replaces, and the previous version (content, interpretation, scores) stays
        readable in ``history()`` until the memory is deleted. With ``expected_version``,
        the update happens only if the memory is still at that version (checked before
        the LLM call and again in the write transaction). A failed judgement raises
        JudgeError whatever ``on_judge_error`` says: nothing is lost. What the update
        archived (superseded or over capacity) goes to ``on_archive``;
        ``update_with_report`` returns it.

        Raises:
            ConflictError: the memory's version is not ``expected_version``, or another
                active memory already holds ``content``.
            NotFoundError: no such memory in this namespace.
            JudgeError: the judge failed; nothing was written.
        """
        report = await self.update_with_report(
            memory_id, content, user_context=user_context, expected_version=expected_version
        )
        return report.memories[0]

    async def update_with_report(
        self,
        memory_id: str,
        content: str,
        *,
        user_context: str | None = None,
        expected_version: int | None = None,
    ) -> SaveReport:
        """Like ``update``, but also returns what it archived."""
        memory_id = check_memory_id(memory_id)
        content = check_content(content, self.settings.max_content_chars)
        user_context = check_user_context(user_context)
        expected = check_version_number(expected_version)
        memory_id = await self._resolve(memory_id)
        current = await self.get(memory_id)
        check_version(current, expected)
        if current.archived_at is None:  # before paying for a judgement
            await self._db_call(self._db.ensure_unique_content, self.namespace, memory_id, content)
        [item] = await self._judging.judge_all(
            [content],
            user_context or current.user_context,
            may_pend=False,
            exclude=frozenset({memory_id}),
        )
        memory, archived = await self._db_call(
            self._db.reinterpret,
            self.namespace,
            memory_id,
            item,
            self.policy,
            expected_version=expected,
        )
        self._report(archived)
        return SaveReport(memories=[memory], archived=archived)

    async def reinterpret_pending(
        self,
        limit: int | None = None,
        *,
        progress: Callable[[int, int], object] | None = None,
    ) -> builtins.list[Memory]:
        """Judge the memories saved while the judge was failing; returns those now judged.

        One judge call each, oldest first. A memory whose judgement fails again stays
        pending (logged); run this again later. One deleted meanwhile is skipped. Each
        newly judged memory then competes for capacity like any other, so the capacity
        manager may archive some. ``progress(done, total)`` is called after each one.
        """
        ids = await self._db_call(
            self._db.pending_ids, self.namespace, check_limit(limit, allow_none=True)
        )
        judged: builtins.list[Memory] = []
        for done, memory_id in enumerate(ids, start=1):
            if progress is not None and done > 1:
                progress(done - 1, len(ids))
            try:
                pending = await self.get(memory_id)
                [item] = await self._judging.judge_all(
                    [pending.content], pending.user_context, may_pend=False
                )
                memory, archived = await self._db_call(
                    self._db.reinterpret,
                    self.namespace,
                    memory_id,
                    item,
                    self.policy,
                    event="judge",
                )
            except NotFoundError:
                log.info("aimem: pending memory %s was deleted meanwhile; skipped", memory_id)
                continue
            except (JudgeError, ValidationError) as exc:
                log.warning("aimem: memory %s is still pending: %s", memory_id, exc)
                continue
            self._report(archived)
            judged.append(memory)
        if progress is not None:
            progress(len(ids), len(ids))
        return judged

    async def compress(self, items: Sequence[str], *, allow_empty: bool = False) -> list[Memory]:
        """Replace the active unpinned memories with ``items`` (aigpt's ``compress``).

        Each item is judged as a new memory; every other active unpinned memory is
        archived with reason ``"compressed"`` in the same transaction (never deleted).
        The items are kept whole: none is archived by this compress, whatever it scores
        (later saves apply the capacity rules to them as to any memory). More distinct
        items than ``max_memories``, or none (unless ``allow_empty=True``), is refused
        with a ValidationError before anything is judged or written.
        """
        report = await self.compress_with_report(items, allow_empty=allow_empty)
        return report.memories

    async def compress_with_report(
        self, items: Sequence[str], *, allow_empty: bool = False
    ) -> SaveReport:
        """Like ``compress``, but also returns the memories it archived."""
        contents = check_compress(items, self.settings, allow_empty=allow_empty)
        replaced = await self._db_call(self._db.list_memories, self.namespace, limit=None)
        judged = await self._judging.judge_all(
            contents,
            None,
            exclude=frozenset(m.id for m in replaced if not m.pinned),
        )
        # Kept whole: no threshold in this transaction, and check_compress made them fit the cap.
        whole = dataclasses.replace(self.policy, min_priority_score=0.0)
        memories, archived = await self._db_call(
            self._db.insert, self.namespace, judged, whole, archive_others="compressed"
        )
        self._report(archived)
        return SaveReport(memories=memories, archived=archived)

    # -- reading --------------------------------------------------------------------

    async def get(self, memory_id: str) -> Memory:
        """One memory by id or unique id prefix, archived ones included; NotFoundError if absent."""
        return await self._db_call(self._db.get, self.namespace, await self._resolve(memory_id))

    async def resolve_id(self, memory_id: str) -> str:
        """The full id of the memory an id or a unique id prefix names (4+ characters, as git).

        Every method that takes a ``memory_id`` resolves it this way.

        Raises:
            NotFoundError: no memory of this namespace has that id or starts with the prefix.
            AmbiguousIdError: several do; the message asks for more characters.
        """
        resolved = await self._resolve(memory_id)
        if resolved == memory_id:  # a whole id, or no prefix: make sure it is there
            await self._db_call(self._db.get, self.namespace, resolved)
        return resolved

    async def _resolve(self, memory_id: str) -> str:
        """A prefix as the one id it names; a whole id (or no prefix) as given, unchecked."""
        memory_id = check_memory_id(memory_id)
        prefix = id_prefix(memory_id)
        if prefix is None:
            if len(memory_id.strip()) < MIN_PREFIX:
                raise NotFoundError(
                    f"No memory with id {memory_id!r} in namespace {self.namespace!r}: "
                    f"an id prefix needs at least {MIN_PREFIX} characters"
                )
            return memory_id
        found = await self._db_call(self._db.ids_with_prefix, self.namespace, prefix, 3)
        if not found:
            raise NotFoundError(
                f"No memory with id or id prefix {memory_id!r} in namespace {self.namespace!r}"
            )
        if len(found) > 1:
            many = "2 memories" if len(found) == 2 else "3 or more memories"
            raise AmbiguousIdError(
                f"id prefix {memory_id!r} matches {many} ({', '.join(found[:2])}"
                f"{', ...' if len(found) > 2 else ''}): give more characters",
                prefix=memory_id,
                matches=len(found),
            )
        return found[0]

    async def short_ids(
        self, ids: Iterable[str], *, min_length: int = DISPLAY_PREFIX
    ) -> dict[str, str]:
        """Each id -> its shortest prefix (at least ``min_length``) no other memory id shares.

        Archived memories count too, so a shown prefix resolves to the same memory later
        (until a new memory saved in the same instant shares it).
        """
        targets = builtins.list(dict.fromkeys(ids))
        universe = await self._db_call(self._db.all_ids, self.namespace)
        return shortest_unique_prefixes(targets, universe, min_length)

    async def list(
        self,
        min_score: float | None = None,
        limit: int | None = None,
        order: Order = "priority",
        include_archived: bool = False,
    ) -> list[Memory]:
        """Memories by priority (highest first, pending last) or newest first."""
        if order not in ("priority", "recent"):
            raise ValidationError(f"order must be 'priority' or 'recent', got {order!r}")
        return await self._db_call(
            self._db.list_memories,
            self.namespace,
            min_score=check_min_score(min_score),
            limit=check_limit(limit, allow_none=True),
            order=order,
            include_archived=bool(include_archived),
        )

    async def search(
        self,
        query: str,
        limit: int = 10,
        min_score: float | None = None,
        explain: bool = False,
        include_archived: bool = False,
        *,
        mode: Mode = "hybrid",
        user_context: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        min_relevance: float | None = None,
    ) -> builtins.list[SearchHit]:
        """Find memories by words and by meaning; returned memories are reinforced.

        ``mode="hybrid"`` fuses keyword (BM25) and semantic (cosine) ranks and is
        keyword-only when no embedder is configured. Relevance leads the score; priority
        and recency (weights in Settings) break near-ties. Each hit's ``relevance`` is on
        an absolute 0..1 scale (``aimem.retrieval.relevance``); hits below ``min_relevance``
        (default ``Settings.search_min_relevance``) are left out, so a query sharing no
        word or meaning with any memory finds nothing. ``min_score`` is a *priority*
        floor. Others' facts rank below the user's own for a question about the user; of
        two memories stating the same thing, the newer ranks first and the older is
        marked ``conflicts_with`` it. ``explain=True`` shows every part of the score.
        """
        query = check_content(query, self.settings.max_content_chars, what="query")
        if mode not in ("hybrid", "keyword", "semantic"):
            raise ValidationError(f"mode must be 'hybrid', 'keyword' or 'semantic', got {mode!r}")
        filters = SearchFilters(
            min_score=check_min_score(min_score),
            user_context=check_user_context(user_context),
            created_after=check_when(created_after, "created_after"),
            created_before=check_when(created_before, "created_before"),
            include_archived=bool(include_archived),
        )
        floor = check_min_score(min_relevance, "min_relevance")
        hits = await self._retriever.search(
            query,
            limit=check_limit(limit) or 10,
            filters=filters,
            mode=mode,
            explain=bool(explain),
            min_relevance=self.settings.search_min_relevance if floor is None else floor,
        )
        await self._db_call(self._db.reinforce, self.namespace, [h.memory.id for h in hits])
        return hits

    async def stats(self) -> Stats:
        """Counts (active, archived, pending, pinned, total), mean priority, tokens, embedder.

        ``embedded`` counts the active memories with a vector from the configured
        embedder: fewer than ``count`` means some can only be found by keyword.
        """
        stats = await self._db_call(self._db.stats, self.namespace, self.policy)
        if self.embedder is None:
            return stats
        models = await self._db_call(self._db.vector_models, self.namespace)
        name = self.embedder.name
        return stats.model_copy(update={"embedder": name, "embedded": models.get(name, 0)})

    async def get_core(self) -> str:
        """The namespace's core text: identity and personality, never pruned."""
        return await self._db_call(self._db.get_core, self.namespace)

    async def set_core(self, text: str) -> None:
        """Replace the core text (may be empty)."""
        text = check_core_text(text, self.settings.max_content_chars)
        await self._db_call(self._db.set_core, self.namespace, text)

    async def context(self, max_chars: int = 4000, query: str | None = None) -> str:
        """Core text plus memories within ``max_chars``, for a system prompt.

        Memories come by priority, a newer fact just above the one it replaces; or, with
        ``query``, only those relevant to it (``search``), most relevant first, and the
        block says so, or that none matched. Nothing unrelated pads it.
        """
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
            raise ValidationError("max_chars must be a positive integer")
        core = await self.get_core()
        # A line is at least ~10 characters, so this many memories always fill the budget.
        wanted = min(1000, max(1, max_chars // 10))
        if query is not None:
            hits = await self.search(query, limit=min(wanted, 100))
            return render_context(core, [h.memory for h in hits], max_chars, query=query)
        from aimem.retrieval.siblings import current_first

        listed = await self.list(limit=wanted)
        memories, _ = current_first(
            listed, lambda m: m, self._retriever.reading, window=50, by_words=False
        )
        return render_context(core, memories, max_chars)

    # -- changing state ---------------------------------------------------------------

    async def delete(self, memory_id: str) -> None:
        """Delete one memory for good (the only hard delete)."""
        await self._db_call(self._db.delete, self.namespace, await self._resolve(memory_id))

    async def pin(self, memory_id: str) -> Memory:
        """Pin a memory: it is never archived and sits outside the cap."""
        return await self._db_call(
            self._db.set_pinned, self.namespace, await self._resolve(memory_id), True
        )

    async def unpin(self, memory_id: str) -> Memory:
        """Unpin a memory; it counts toward the cap again (the next capacity run may archive)."""
        memory = await self._db_call(
            self._db.set_pinned, self.namespace, await self._resolve(memory_id), False
        )
        if self.settings.auto_prune:
            await self.prune()
            memory = await self.get(memory.id)
        return memory

    async def prune(self, dry_run: bool = False) -> PruneReport:
        """Apply the capacity rules now; ``dry_run=True`` previews without changing anything."""
        archived = await self._db_call(self._db.prune, self.namespace, self.policy, dry_run=dry_run)
        if not dry_run:
            self._report(archived)
        active = await self._db_call(self._db.count_capped, self.namespace)
        return PruneReport(
            archived=archived,
            dry_run=dry_run,
            max_memories=self.settings.max_memories,
            min_priority_score=self.settings.min_priority_score,
            active_after=active - (len(archived) if dry_run else 0),
        )

    async def restore(self, memory_id: str) -> Memory:
        """Un-archive a memory (undoing a capacity archive or a wrong supersession).

        Room is made by archiving the next lowest, never this one, and later saves leave
        it be: the capacity manager does not archive a restored memory again (it still
        counts toward the cap). What the restore archived goes to ``on_archive``;
        ``restore_with_report`` returns it.

        Raises:
            ConflictError: an active memory already holds the same content.
        """
        report = await self.restore_with_report(memory_id)
        return report.memories[0]

    async def restore_with_report(self, memory_id: str) -> SaveReport:
        """Like ``restore``, but also returns what it archived to make room."""
        memory, archived = await self._db_call(
            self._db.restore, self.namespace, await self._resolve(memory_id), self.policy
        )
        self._report(archived)
        return SaveReport(memories=[memory], archived=archived)

    async def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        """A memory's events, oldest first, each with its time, kind, version and reason.

        Saved, judged, updated (carrying the version it replaced), archived (why, and by
        which memory when superseded), restored, pinned. Delete removes all of it.

        Raises:
            NotFoundError: no such memory in this namespace (a deleted memory has none).
        """
        memory_id = await self._resolve(memory_id)
        return await self._db_call(self._db.history, self.namespace, memory_id)

    # -- export, import, re-embedding, backup (Portability does the work) ---------------

    async def export_to(
        self, path: str | os.PathLike[str], *, include_history: bool = True
    ) -> ExportReport:
        """Write this namespace to a checksummed JSON Lines file (archived memories too).

        Lossless: every field of every memory (with its vector and idempotency keys),
        the core and, by default, the history. The file appears complete or not at all.

        Raises:
            FileExistsError: ``path`` exists; an export never overwrites anything.
        """
        return await self._transfers.export_to(path, include_history)

    async def import_from(
        self,
        path: str | os.PathLike[str],
        dry_run: bool = False,
        *,
        progress: Callable[[int, int], object] | None = None,
    ) -> ImportReport:
        """Load an ``export_to`` file into this namespace, all or nothing.

        The whole file is validated first (checksum, schema, bounds, counts) and checked
        against the database (ids, keys and active duplicates must be new); only then is
        it written, in one transaction, after which the capacity manager runs. With
        ``dry_run=True`` nothing is written and the report says what was found.
        ``progress(done, total)`` (memories) is called once the file is read and checked
        (0 of them), and again when the transaction is done (all of them).

        Raises:
            ValidationError: the file is damaged, tampered or clashes (not in a dry run,
                where the problems are in the report); nothing was written.
        """
        return await self._transfers.import_from(path, dry_run, progress)

    async def reembed(
        self,
        *,
        batch_size: int = 64,
        progress: Callable[[int, int], object] | None = None,
    ) -> int:
        """Re-compute every memory's vector (archived ones too) with this store's embedder.

        The way out after changing embedders (another model, or the same name with
        another dimension): all vectors of the namespace are replaced in one transaction,
        so search never mixes the two. ``progress(done, total)`` is called after each
        batch. Returns how many memories were embedded.

        Raises:
            ValidationError: the store has no embedder, or a bad ``batch_size``.
            EmbeddingError: the embedder failed; the stored vectors are unchanged.
        """
        return await self._transfers.reembed(batch_size, progress)

    async def backup(self, path: str | os.PathLike[str]) -> Path:
        """Copy the whole database file (every namespace) with SQLite's online backup API.

        Safe while other threads and processes write: never a copy of a live file.

        Raises:
            FileExistsError: ``path`` exists.
        """
        return await self._transfers.backup(path)


def _db_threads() -> ThreadPoolExecutor:
    """A store's database threads: started on first use, so an idle store costs none."""
    return ThreadPoolExecutor(max_workers=DB_THREADS, thread_name_prefix="aimem-db")
