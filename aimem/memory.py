"""The facades users hold: ``AsyncMemoryStore`` (the one implementation) and ``MemoryStore``.

A save flows: validate -> exact-duplicate check (no LLM call) -> related memories ->
judge (one LLM call, outside any transaction) -> one transaction that inserts, logs
history and runs the capacity manager. ``MemoryStore`` only forwards each call to the
async twin on aimem's background loop, so both share every decision.
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import logging
import os
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np

from . import transfer
from .capacity import CapacityPolicy
from .context import render_context
from .embedder_spec import embedder_from_spec
from .embeddings import Embedder
from .exceptions import (
    AimemError,
    EmbeddingError,
    JudgeError,
    NotFoundError,
    StorageError,
    ValidationError,
)
from .judges.base import Judge, judge_source
from .judges.batch import JudgeItem
from .models import (
    ExportReport,
    ImportReport,
    Interpretation,
    Memory,
    PruneReport,
    SaveReport,
    SearchHit,
    Stats,
)
from .retrieval import Mode, Retriever, mismatch_message
from .settings import Settings, default_database_url
from .storage import (
    NewMemory,
    Order,
    SearchFilters,
    check_version,
    content_hash,
    open_backend,
)
from .sync import on_sync_loop, run_sync
from .validation import (
    check_content,
    check_contents,
    check_core_text,
    check_idempotency_key,
    check_interpretation,
    check_label,
    check_limit,
    check_memory_id,
    check_min_score,
    check_namespace,
    check_user_context,
    check_version_number,
    check_when,
)
from .vectors import Vector, pack, units

__all__ = ["ArchiveCallback", "AsyncMemoryStore", "MemoryStore"]

log = logging.getLogger("aimem")

ArchiveCallback = Callable[[list[Memory]], object]
P = ParamSpec("P")
T = TypeVar("T")

_warned_heuristic = False


def _default_judge(settings: Settings) -> Judge:
    """OpenAIJudge when an API key or base URL is configured, else the offline heuristic."""
    global _warned_heuristic
    if settings.openai_api_key is not None or settings.openai_base_url:
        from .judges.openai import OpenAIJudge

        return OpenAIJudge(
            model=settings.model,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
            timeout=settings.judge_timeout,
            max_attempts=settings.judge_max_attempts,
        )
    from .judges.heuristic import HeuristicJudge

    if not _warned_heuristic:
        _warned_heuristic = True
        log.warning(
            "aimem: no OPENAI_API_KEY or OPENAI_BASE_URL configured, so memories are judged "
            "offline by the built-in HeuristicJudge. Set one of them to use an LLM judge."
        )
    return HeuristicJudge()


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
        self._db = open_backend(self.settings.database_url or default_database_url())
        try:
            self.judge: Judge = judge if judge is not None else _default_judge(self.settings)
        except BaseException:
            self._db.close()
            raise
        self._owns_judge = judge is None
        self._on_archive = on_archive
        self._retriever = Retriever(
            self._db, self.namespace, embedder, self.settings, self._db_call
        )
        self._closed = False
        if embedder is not None:
            self._check_embedder(embedder)

    def _check_embedder(self, embedder: Embedder) -> None:
        """Say at open when the embedder cannot use the stored vectors (saves will refuse)."""
        try:
            check_label(embedder.name, "the embedder's name")
            dim = embedder.dim
            stored = self._db.vector_dim(self.namespace, embedder.name)
        except AimemError:
            self._db.close()
            raise
        if dim is not None and stored is not None and stored != dim:
            log.warning("aimem: %s", mismatch_message(embedder.name, stored, dim))

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
        self._db.close()

    async def close(self) -> None:
        """Same as ``aclose()``: the async twin of ``MemoryStore.close()``."""
        await self.aclose()

    async def __aenter__(self) -> AsyncMemoryStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _db_call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a database call without stalling the caller's event loop.

        On a user's loop it goes to a worker thread. On aimem's private loop (a sync
        store's call) nobody else waits on the loop but our own concurrent judgements,
        so it runs inline: a thread hop would cost more than the query itself.
        """
        if self._closed:
            raise AimemError("This memory store is closed: open a new one")
        if on_sync_loop():
            return fn(*args, **kwargs)
        return await asyncio.to_thread(fn, *args, **kwargs)

    # -- judging --------------------------------------------------------------------

    async def _judge(
        self,
        content: str,
        user_context: str | None,
        vector: Vector | None,
        *,
        may_pend: bool = True,
    ) -> NewMemory:
        """Interpret one content, outside any transaction.

        When the judge fails and ``on_judge_error`` is "pending" (and ``may_pend``),
        the content comes back unscored rather than lost; otherwise JudgeError.
        """
        if not self.settings.interpretation_enabled:
            from .judges.heuristic import HeuristicJudge

            heuristic = HeuristicJudge()
            scored = heuristic.score(content, user_context=user_context)
            interp = scored.model_copy(update={"interpreted_content": content})
            return self._new_memory(content, interp, judge_source(heuristic), user_context, vector)
        related = await self._retriever.related(content, vector)
        try:
            interp = await self.judge.interpret(content, user_context=user_context, related=related)
            if not isinstance(interp, Interpretation):
                raise JudgeError(
                    f"The judge returned {type(interp).__name__}, not aimem.Interpretation"
                )
        except JudgeError as exc:
            if not self._may_pend(may_pend, exc):
                raise
            return self._new_memory(content, None, "pending", user_context, vector)
        except AimemError:
            raise
        except Exception as exc:
            failure = _judge_crash(exc)
            if not self._may_pend(may_pend, failure):
                raise failure from exc
            return self._new_memory(content, None, "pending", user_context, vector)
        return self._new_memory(content, interp, judge_source(self.judge), user_context, vector)

    def _may_pend(self, may_pend: bool, failure: JudgeError) -> bool:
        """Whether a failed judgement is stored as pending (and say so) instead of raised."""
        if not (may_pend and self.settings.on_judge_error == "pending"):
            return False
        log.warning(
            "aimem: the judge failed (%s); the memory is stored as pending and will be "
            "judged by reinterpret_pending()",
            failure,
        )
        return True

    def _new_memory(
        self,
        content: str,
        interp: Interpretation | None,
        source: str,
        user_context: str | None,
        vector: Vector | None,
    ) -> NewMemory:
        """A memory ready to write; its judgement passes the stored-field rules first."""
        if interp is not None:
            what = "the client scores" if source == "client" else f"the judge ({source})"
            interp = check_interpretation(
                interp, source, self.settings.max_content_chars, what=what
            )
        embedder = self._retriever.embedder
        if vector is not None and not np.any(vector):
            vector = None  # a zero vector has no direction: the memory is found by words only
        return NewMemory(
            content,
            interp,
            source,
            user_context,
            vector=None if vector is None else pack(vector),
            embedding_model=None if embedder is None else embedder.name,
        )

    async def _judge_all(
        self, contents: Sequence[str], user_context: str | None, *, may_pend: bool = True
    ) -> list[NewMemory]:
        """Embed all contents in one call, then judge them concurrently (bounded).

        With a judge that can batch (``interpret_many``) and ``judge_batch_size > 1``,
        several contents share one call; otherwise each gets its own.
        """
        vectors = await self._retriever.embed(contents)
        limit = asyncio.Semaphore(self.settings.judge_concurrency)

        def vector(i: int) -> Vector | None:
            return None if vectors is None else vectors[i]

        async def one(i: int) -> list[NewMemory]:
            async with limit:
                return [await self._judge(contents[i], user_context, vector(i), may_pend=may_pend)]

        async def batch(indexes: range) -> list[NewMemory]:
            async with limit:
                return await self._judge_batch(
                    [contents[i] for i in indexes],
                    [vector(i) for i in indexes],
                    user_context,
                    may_pend=may_pend,
                )

        size = self.settings.judge_batch_size
        batching = (
            size > 1
            and len(contents) > 1
            and self.settings.interpretation_enabled
            and callable(getattr(self.judge, "interpret_many", None))
        )
        if batching:
            work = [
                batch(range(i, min(i + size, len(contents)))) for i in range(0, len(contents), size)
            ]
        else:
            work = [one(i) for i in range(len(contents))]
        tasks = [asyncio.ensure_future(w) for w in work]
        try:
            return [item for done in await asyncio.gather(*tasks) for item in done]
        except BaseException:
            # One failure dooms the batch: stop the others' LLM calls instead of paying for them.
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _judge_batch(
        self,
        contents: Sequence[str],
        vectors: Sequence[Vector | None],
        user_context: str | None,
        *,
        may_pend: bool,
    ) -> list[NewMemory]:
        """Judge several contents in one call of a batching judge; failures as ``_judge``."""
        related = [
            await self._retriever.related(c, v) for c, v in zip(contents, vectors, strict=True)
        ]
        items = [JudgeItem(c, r) for c, r in zip(contents, related, strict=True)]
        interpret_many = self.judge.interpret_many  # type: ignore[attr-defined]
        try:
            results = await interpret_many(items, user_context=user_context)
        except AimemError:
            raise
        except Exception as exc:
            failure = _judge_crash(exc)
            results = [failure] * len(items)
        if not isinstance(results, list) or len(results) != len(items):
            results = [
                JudgeError("The judge's interpret_many returned the wrong number of results")
            ] * len(items)
        made = []
        for content, vector_, result in zip(contents, vectors, results, strict=True):
            if isinstance(result, Interpretation):
                made.append(
                    self._new_memory(
                        content, result, judge_source(self.judge), user_context, vector_
                    )
                )
                continue
            failure = (
                result if isinstance(result, JudgeError) else JudgeError(f"bad result: {result!r}")
            )
            if not self._may_pend(may_pend, failure):
                raise failure
            made.append(self._new_memory(content, None, "pending", user_context, vector_))
        return made

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
            [item] = await self._judge_all([content], user_context)
        else:
            vectors = await self._retriever.embed([content])
            vector = None if vectors is None else vectors[0]
            item = self._new_memory(content, interpretation, "client", user_context, vector)
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

        All inputs are validated before any judging; if any judgement fails, nothing is written.
        """
        report = await self.save_many_with_report(contents, user_context=user_context)
        return report.memories

    async def save_many_with_report(
        self, contents: Sequence[str], *, user_context: str | None = None
    ) -> SaveReport:
        """Like ``save_many``, but also says which were duplicates and what was archived."""
        contents = check_contents(contents, self.settings.max_content_chars)
        user_context = check_user_context(user_context)
        unique = list(dict.fromkeys(contents))
        known: dict[str, Memory] = {}
        for content in unique:
            found = await self._db_call(
                self._db.find_active_duplicate, self.namespace, content_hash(content)
            )
            if found is not None:
                known[content] = found
        items = await self._judge_all([c for c in unique if c not in known], user_context)
        memories, archived = await self._db_call(
            self._db.insert, self.namespace, items, self.policy
        )
        saved = {m.content: m for m in memories} | known
        self._report(archived)
        return SaveReport(
            memories=[saved[c] for c in contents],
            archived=archived,
            duplicates=[m.id for m in known.values()],
        )

    async def update(
        self,
        memory_id: str,
        content: str,
        *,
        user_context: str | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        """Replace a memory's content and re-interpret it (one LLM call); version rises by one.

        With ``expected_version``, the update happens only if the memory is still at that
        version (checked before the LLM call and again in the write transaction). A
        failed judgement raises JudgeError whatever ``on_judge_error`` says: the memory
        keeps its old content and scores, so nothing is lost.

        Raises:
            ConflictError: the memory's version is not ``expected_version``, or another
                active memory already holds ``content``.
            NotFoundError: no such memory in this namespace.
            JudgeError: the judge failed; nothing was written.
        """
        memory_id = check_memory_id(memory_id)
        content = check_content(content, self.settings.max_content_chars)
        user_context = check_user_context(user_context)
        expected = check_version_number(expected_version)
        current = await self.get(memory_id)
        check_version(current, expected)
        if current.archived_at is None:  # before paying for a judgement
            await self._db_call(self._db.ensure_unique_content, self.namespace, memory_id, content)
        [item] = await self._judge_all(
            [content], user_context or current.user_context, may_pend=False
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
        return memory

    async def reinterpret_pending(self, limit: int | None = None) -> builtins.list[Memory]:
        """Judge the memories saved while the judge was failing; returns those now judged.

        One judge call each, oldest first. A memory whose judgement fails again stays
        pending (logged); run this again later. One deleted meanwhile is skipped. Each
        newly judged memory then competes for capacity like any other, so the capacity
        manager may archive some.
        """
        ids = await self._db_call(
            self._db.pending_ids, self.namespace, check_limit(limit, allow_none=True)
        )
        judged: builtins.list[Memory] = []
        for memory_id in ids:
            try:
                pending = await self.get(memory_id)
                [item] = await self._judge_all(
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
        return judged

    async def compress(self, items: Sequence[str], *, allow_empty: bool = False) -> list[Memory]:
        """Replace the active unpinned memories with ``items`` (aigpt's ``compress``).

        Each item is judged as a new memory; every other active unpinned memory is
        archived with reason ``"compressed"`` in the same transaction (never deleted).
        An empty list is refused unless ``allow_empty=True``.
        """
        report = await self.compress_with_report(items, allow_empty=allow_empty)
        return report.memories

    async def compress_with_report(
        self, items: Sequence[str], *, allow_empty: bool = False
    ) -> SaveReport:
        """Like ``compress``, but also returns the memories it archived."""
        contents = check_contents(items, self.settings.max_content_chars)
        if not contents and not allow_empty:
            raise ValidationError(
                "compress() got no items: that would archive every memory. "
                "Pass allow_empty=True if that is what you want."
            )
        judged = await self._judge_all(list(dict.fromkeys(contents)), None)
        memories, archived = await self._db_call(
            self._db.insert, self.namespace, judged, self.policy, archive_others="compressed"
        )
        self._report(archived)
        return SaveReport(memories=memories, archived=archived)

    # -- reading --------------------------------------------------------------------

    async def get(self, memory_id: str) -> Memory:
        """One memory by id, archived ones included; NotFoundError if absent."""
        return await self._db_call(self._db.get, self.namespace, check_memory_id(memory_id))

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
    ) -> builtins.list[SearchHit]:
        """Find memories by words and by meaning; returned memories are reinforced.

        ``mode="hybrid"`` fuses keyword (BM25) and semantic (cosine) ranks and is
        keyword-only when no embedder is configured. Relevance leads the score; priority
        and recency (weights in Settings) break near-ties. ``explain=True`` puts each
        part of the score on the hit: ``relevance + priority + recency == score``.
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
        hits = await self._retriever.search(
            query,
            limit=check_limit(limit) or 10,
            filters=filters,
            mode=mode,
            explain=bool(explain),
        )
        await self._db_call(self._db.reinforce, self.namespace, [h.memory.id for h in hits])
        return hits

    async def stats(self) -> Stats:
        """Counts (active, archived, pending, pinned, total), mean priority and tokens used."""
        return await self._db_call(self._db.stats, self.namespace, self.policy)

    async def get_core(self) -> str:
        """The namespace's core text: identity and personality, never pruned."""
        return await self._db_call(self._db.get_core, self.namespace)

    async def set_core(self, text: str) -> None:
        """Replace the core text (may be empty)."""
        text = check_core_text(text, self.settings.max_content_chars)
        await self._db_call(self._db.set_core, self.namespace, text)

    async def context(self, max_chars: int = 4000, query: str | None = None) -> str:
        """Core text plus memories within ``max_chars``, for a system prompt.

        Memories come by priority, or by relevance to ``query`` when one is given.
        """
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
            raise ValidationError("max_chars must be a positive integer")
        core = await self.get_core()
        # A line is at least ~10 characters, so this many memories always fill the budget.
        wanted = min(1000, max(1, max_chars // 10))
        if query is None:
            memories = await self.list(limit=wanted)
        else:
            memories = [h.memory for h in await self.search(query, limit=min(wanted, 100))]
        return render_context(core, memories, max_chars)

    # -- changing state ---------------------------------------------------------------

    async def delete(self, memory_id: str) -> None:
        """Delete one memory for good (the only hard delete)."""
        await self._db_call(self._db.delete, self.namespace, check_memory_id(memory_id))

    async def pin(self, memory_id: str) -> Memory:
        """Pin a memory: it is never archived and sits outside the cap."""
        return await self._db_call(
            self._db.set_pinned, self.namespace, check_memory_id(memory_id), True
        )

    async def unpin(self, memory_id: str) -> Memory:
        """Unpin a memory; it counts toward the cap again (the next capacity run may archive)."""
        memory = await self._db_call(
            self._db.set_pinned, self.namespace, check_memory_id(memory_id), False
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
        """Un-archive a memory; room is made by archiving the next lowest, never this one.

        Raises:
            ConflictError: an active memory already holds the same content.
        """
        memory, archived = await self._db_call(
            self._db.restore, self.namespace, check_memory_id(memory_id), self.policy
        )
        self._report(archived)
        return memory

    # -- export, import, backup ----------------------------------------------------------

    async def export_to(
        self, path: str | os.PathLike[str], *, include_history: bool = True
    ) -> ExportReport:
        """Write this namespace to a checksummed JSON Lines file (archived memories too).

        Lossless: every field of every memory (with its vector and idempotency keys),
        the core and, by default, the history. The file appears complete or not at all.

        Raises:
            FileExistsError: ``path`` exists; an export never overwrites anything.
        """
        target = Path(path)
        if target.exists():
            raise FileExistsError(f"{target} already exists: choose a new file for the export")
        lines = await self._db_call(
            self._db.export_lines, self.namespace, include_history=bool(include_history)
        )
        await self._db_call(_write_new_file, target, "".join(lines).encode("utf-8"))
        trailer = transfer.Trailer.model_validate_json(lines[-1])
        counts = transfer.Header.model_validate_json(lines[0]).counts
        return ExportReport(
            path=str(target),
            memories=counts.memories,
            history=counts.history,
            sha256=trailer.sha256,
        )

    async def import_from(
        self, path: str | os.PathLike[str], dry_run: bool = False
    ) -> ImportReport:
        """Load an ``export_to`` file into this namespace, all or nothing.

        The whole file is validated first (checksum, schema, bounds, counts) and checked
        against the database (ids, keys and active duplicates must be new); only then is
        it written, in one transaction, after which the capacity manager runs. With
        ``dry_run=True`` nothing is written and the report says what was found.

        Raises:
            ValidationError: the file is damaged, tampered or clashes (not in a dry run,
                where the problems are in the report); nothing was written.
        """
        parsed = await self._db_call(
            transfer.parse_export, Path(path), max_content_chars=self.settings.max_content_chars
        )
        archived: builtins.list[Memory] = []
        if not parsed.errors:
            _, archived = await self._db_call(
                self._db.import_parsed,
                self.namespace,
                parsed,
                self.policy,
                dry_run=dry_run,
                embedder=self._embedder_identity(),
            )
        report = ImportReport(
            ok=not parsed.errors,
            dry_run=bool(dry_run),
            errors=parsed.errors,
            memories=len(parsed.memories),
            history=len(parsed.history),
            archived=archived,
        )
        if parsed.errors and not dry_run:
            raise ValidationError(
                f"Import refused, nothing was written ({len(parsed.errors)} problem"
                f"{'s' if len(parsed.errors) > 1 else ''}): {parsed.errors[0]}"
            )
        self._report(archived)
        return report

    def _embedder_identity(self) -> tuple[str, int | None] | None:
        """``(name, dim)`` of the embedder, for checking an import's vectors against it."""
        embedder = self._retriever.embedder
        return None if embedder is None else (embedder.name, embedder.dim)

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
        embedder = self._retriever.embedder
        if embedder is None:
            raise ValidationError(
                "reembed needs an embedder: open the store with embedder=aimem.LocalEmbedder() "
                "(or another) and call reembed() again"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValidationError("batch_size must be a positive integer")
        done = 0
        clear = True
        attempted: set[str] = set()
        while True:  # memories saved by others meanwhile get a vector in the next round
            rows = await self._db_call(
                self._db.contents_to_embed, self.namespace, embedder.name, missing_only=not clear
            )
            rows = [row for row in rows if row[0] not in attempted]
            if not rows and not clear:
                break
            attempted.update(i for i, _, _ in rows)
            vectors = await self._embed_all(embedder, [c for _, _, c in rows], batch_size, progress)
            await self._db_call(
                self._db.replace_vectors,
                self.namespace,
                embedder.name,
                [
                    (i, seq, pack(v))
                    for (i, seq, _), v in zip(rows, vectors, strict=True)
                    if np.any(v)  # a zero vector has no direction: none is stored
                ],
                clear=clear,
            )
            done += len(rows)
            clear = False
        self._retriever.forget_dimension()
        log.info("aimem: re-embedded %d memories with %s", done, embedder.name)
        return done

    async def _embed_all(
        self,
        embedder: Embedder,
        texts: Sequence[str],
        batch_size: int,
        progress: Callable[[int, int], object] | None,
    ) -> builtins.list[Vector]:
        """Unit vectors for ``texts``, in batches, all of one finite length."""
        vectors: builtins.list[Vector] = []
        for start in range(0, len(texts), batch_size):
            batch = list(texts[start : start + batch_size])
            vectors += units(await embedder.embed(batch), len(batch), embedder.name)
            if progress is not None:
                progress(len(vectors), len(texts))
        if len({len(v) for v in vectors}) > 1:
            raise EmbeddingError(
                f"The embedder {embedder.name!r} changed its vectors' length between batches; "
                "nothing was changed"
            )
        return vectors

    async def backup(self, path: str | os.PathLike[str]) -> Path:
        """Copy the whole database file (every namespace) with SQLite's online backup API.

        Safe while other threads and processes write: never a copy of a live file.

        Raises:
            FileExistsError: ``path`` exists.
        """
        target = Path(path)
        if target.exists():
            raise FileExistsError(f"{target} already exists: choose a new file for the backup")
        partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.partial")
        try:
            await self._db_call(self._db.backup, partial)
            await self._db_call(_link_new, partial, target)
        except sqlite3.Error as exc:
            raise StorageError(f"Backup failed: {exc}") from exc
        finally:
            partial.unlink(missing_ok=True)
        return target


class MemoryStore:
    """Long-term memory that interprets, scores and forgets (synchronous API).

    Works in scripts and inside a running event loop (Jupyter): calls run on
    aimem's own background loop.

    Example:
        >>> import aimem, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "agent.db")
        >>> with aimem.MemoryStore(f"sqlite:///{path}", judge=aimem.HeuristicJudge(),
        ...                        max_memories=100) as store:
        ...     m = store.save("User prefers Rust for systems work", user_context="syui")
        ...     [hit.memory.id for hit in store.search("Rust")] == [m.id]
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
        self._async = AsyncMemoryStore(
            database_url,
            judge=judge,
            embedder=embedder,
            settings=settings,
            namespace=namespace,
            on_archive=on_archive,
            **overrides,
        )

    @property
    def settings(self) -> Settings:
        """The settings in force."""
        return self._async.settings

    @property
    def namespace(self) -> str:
        """The namespace every call is scoped to."""
        return self._async.namespace

    @property
    def judge(self) -> Judge:
        """The judge that interprets saves."""
        return self._async.judge

    @property
    def embedder(self) -> Embedder | None:
        """The embedder behind semantic search, or None for keyword search only."""
        return self._async.embedder

    @property
    def database_url(self) -> str:
        """Where this store keeps its memories."""
        return self._async.database_url

    @property
    def core(self) -> str:
        """The core text (read and assign)."""
        return self.get_core()

    @core.setter
    def core(self, text: str) -> None:
        self.set_core(text)

    def close(self) -> None:
        """Close the database and any judge client this store created."""
        run_sync(self._async.aclose())

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def save(  # noqa: D102
        self,
        content: str,
        *,
        user_context: str | None = None,
        interpretation: Interpretation | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
        return run_sync(
            self._async.save(
                content,
                user_context=user_context,
                interpretation=interpretation,
                idempotency_key=idempotency_key,
            )
        )

    def save_with_report(  # noqa: D102
        self,
        content: str,
        *,
        user_context: str | None = None,
        interpretation: Interpretation | None = None,
        idempotency_key: str | None = None,
    ) -> SaveReport:
        return run_sync(
            self._async.save_with_report(
                content,
                user_context=user_context,
                interpretation=interpretation,
                idempotency_key=idempotency_key,
            )
        )

    def save_many(  # noqa: D102
        self, contents: Sequence[str], *, user_context: str | None = None
    ) -> list[Memory]:
        return run_sync(self._async.save_many(contents, user_context=user_context))

    def save_many_with_report(  # noqa: D102
        self, contents: Sequence[str], *, user_context: str | None = None
    ) -> SaveReport:
        return run_sync(self._async.save_many_with_report(contents, user_context=user_context))

    def update(  # noqa: D102
        self,
        memory_id: str,
        content: str,
        *,
        user_context: str | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        return run_sync(
            self._async.update(
                memory_id, content, user_context=user_context, expected_version=expected_version
            )
        )

    def reinterpret_pending(self, limit: int | None = None) -> builtins.list[Memory]:  # noqa: D102
        return run_sync(self._async.reinterpret_pending(limit))

    def compress(self, items: Sequence[str], *, allow_empty: bool = False) -> list[Memory]:  # noqa: D102
        return run_sync(self._async.compress(items, allow_empty=allow_empty))

    def compress_with_report(  # noqa: D102
        self, items: Sequence[str], *, allow_empty: bool = False
    ) -> SaveReport:
        return run_sync(self._async.compress_with_report(items, allow_empty=allow_empty))

    def get(self, memory_id: str) -> Memory:  # noqa: D102
        return run_sync(self._async.get(memory_id))

    def list(  # noqa: D102
        self,
        min_score: float | None = None,
        limit: int | None = None,
        order: Order = "priority",
        include_archived: bool = False,
    ) -> list[Memory]:
        return run_sync(self._async.list(min_score, limit, order, include_archived))

    def search(  # noqa: D102
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
    ) -> builtins.list[SearchHit]:
        return run_sync(
            self._async.search(
                query,
                limit,
                min_score,
                explain,
                include_archived,
                mode=mode,
                user_context=user_context,
                created_after=created_after,
                created_before=created_before,
            )
        )

    def stats(self) -> Stats:  # noqa: D102
        return run_sync(self._async.stats())

    def get_core(self) -> str:  # noqa: D102
        return run_sync(self._async.get_core())

    def set_core(self, text: str) -> None:  # noqa: D102
        run_sync(self._async.set_core(text))

    def context(self, max_chars: int = 4000, query: str | None = None) -> str:  # noqa: D102
        return run_sync(self._async.context(max_chars, query))

    def delete(self, memory_id: str) -> None:  # noqa: D102
        run_sync(self._async.delete(memory_id))

    def pin(self, memory_id: str) -> Memory:  # noqa: D102
        return run_sync(self._async.pin(memory_id))

    def unpin(self, memory_id: str) -> Memory:  # noqa: D102
        return run_sync(self._async.unpin(memory_id))

    def prune(self, dry_run: bool = False) -> PruneReport:  # noqa: D102
        return run_sync(self._async.prune(dry_run))

    def restore(self, memory_id: str) -> Memory:  # noqa: D102
        return run_sync(self._async.restore(memory_id))

    def export_to(  # noqa: D102
        self, path: str | os.PathLike[str], *, include_history: bool = True
    ) -> ExportReport:
        return run_sync(self._async.export_to(path, include_history=include_history))

    def import_from(  # noqa: D102
        self, path: str | os.PathLike[str], dry_run: bool = False
    ) -> ImportReport:
        return run_sync(self._async.import_from(path, dry_run))

    def reembed(  # noqa: D102
        self,
        *,
        batch_size: int = 64,
        progress: Callable[[int, int], object] | None = None,
    ) -> int:
        return run_sync(self._async.reembed(batch_size=batch_size, progress=progress))

    def backup(self, path: str | os.PathLike[str]) -> Path:  # noqa: D102
        return run_sync(self._async.backup(path))


# The sync twin shares its docs with the async one: one text, kept in one place.
for _name in (
    "save",
    "save_with_report",
    "save_many",
    "save_many_with_report",
    "update",
    "reinterpret_pending",
    "compress",
    "compress_with_report",
    "get",
    "list",
    "search",
    "stats",
    "get_core",
    "set_core",
    "context",
    "delete",
    "pin",
    "unpin",
    "prune",
    "restore",
    "export_to",
    "import_from",
    "reembed",
    "backup",
):
    getattr(MemoryStore, _name).__doc__ = getattr(AsyncMemoryStore, _name).__doc__
del _name


def _judge_crash(exc: Exception) -> JudgeError:
    """A judge that raised something other than an aimem error, as a JudgeError."""
    return JudgeError(f"The judge failed: {type(exc).__name__}: {exc}")


def _link_new(source: Path, target: Path) -> None:
    """Give ``source`` the name ``target``, failing if ``target`` exists (no overwrite)."""
    os.link(source, target)


def _write_new_file(target: Path, data: bytes) -> None:
    """Write ``data`` to a new file ``target``: complete and synced, or not there at all."""
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.partial")
    try:
        with partial.open("xb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        _link_new(partial, target)
    finally:
        partial.unlink(missing_ok=True)
