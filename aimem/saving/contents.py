"""Contents in, memories ready to write out: embed, find related ones, judge, pend on failure.

What happens before a save's transaction, outside it: one embedder call for all
contents, the related lookup for each (what the judge weighs novelty against), then
the judge, one call per content or one per batch for a judge that can batch. A failed
judgement comes back unscored (``pending``) when ``on_judge_error`` allows, never lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from aimem.exceptions import AimemError, JudgeError, ValidationError
from aimem.judges.base import Judge, judge_source
from aimem.models import Interpretation, Memory
from aimem.retrieval.retriever import Retriever
from aimem.settings import Settings
from aimem.storage import NewMemory
from aimem.validation import check_interpretation, check_supersedes, history_reason
from aimem.vectors import Vector, pack

__all__ = [
    "HEURISTIC_NOTICE",
    "Judging",
    "default_judge",
    "heuristic_by_default",
    "judge_crash",
]

log = logging.getLogger("aimem")

#: Said once per process when a store falls back to the offline judge (the CLI prints it
#: itself, after a command's output).
#: Short enough for one line of an 80-column terminal (the CLI prints it after a command).
HEURISTIC_NOTICE = "aimem: judged offline (HeuristicJudge); set OPENAI_API_KEY or OPENAI_BASE_URL"

_warned_heuristic = False


def heuristic_by_default(settings: Settings) -> bool:
    """Whether ``default_judge`` gives the offline judge: no API key and no base URL."""
    return settings.openai_api_key is None and not settings.openai_base_url


def default_judge(settings: Settings) -> Judge:
    """OpenAIJudge when an API key or base URL is configured, else the offline heuristic."""
    global _warned_heuristic
    if not heuristic_by_default(settings):
        from aimem.judges.openai import OpenAIJudge  # on use: the openai SDK is slow to import

        return OpenAIJudge(
            model=settings.model,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
            timeout=settings.judge_timeout,
            max_attempts=settings.judge_max_attempts,
            temperature=settings.judge_temperature,
            max_tokens=settings.judge_max_tokens,
            seed=settings.judge_seed,
            heuristic_weight=settings.judge_heuristic_weight,
            check_faithfulness=settings.judge_check_faithfulness,
        )
    if not _warned_heuristic:
        _warned_heuristic = True
        log.warning(HEURISTIC_NOTICE)
    from aimem.judges.heuristic import HeuristicJudge  # on use, like the OpenAI one

    return HeuristicJudge()


def judge_crash(exc: Exception) -> JudgeError:
    """A judge that raised something other than an aimem error, as a JudgeError."""
    return JudgeError(f"The judge failed: {type(exc).__name__}: {exc}")


class Judging:
    """How one store turns contents into ``NewMemory`` items (see the module docstring)."""

    def __init__(self, judge: Judge, retriever: Retriever, settings: Settings) -> None:
        self.judge = judge
        self.retriever = retriever
        self.settings = settings

    async def _judge(
        self,
        content: str,
        user_context: str | None,
        vector: Vector | None,
        *,
        may_pend: bool = True,
        exclude: frozenset[str] = frozenset(),
        earlier: Sequence[Memory] = (),
    ) -> NewMemory:
        """Interpret one content, outside any transaction.

        When the judge fails and ``on_judge_error`` is "pending" (and ``may_pend``),
        the content comes back unscored rather than lost; otherwise JudgeError.
        """
        if not self.settings.interpretation_enabled:
            from aimem.judges.heuristic import HeuristicJudge

            heuristic = HeuristicJudge()
            scored = heuristic.score(content, user_context=user_context)
            interp = scored.model_copy(update={"interpreted_content": content})
            return self.new_memory(content, interp, judge_source(heuristic), user_context, vector)
        related = [*await self.retriever.related(content, vector, exclude), *earlier]
        try:
            interp = await self.judge.interpret(content, user_context=user_context, related=related)
            if not isinstance(interp, Interpretation):
                raise JudgeError(
                    f"The judge returned {type(interp).__name__}, not aimem.Interpretation"
                )
        except JudgeError as exc:
            if not self._may_pend(may_pend, exc):
                raise
            return self.new_memory(content, None, "pending", user_context, vector)
        except AimemError:
            raise
        except Exception as exc:
            failure = judge_crash(exc)
            if not self._may_pend(may_pend, failure):
                raise failure from exc
            return self.new_memory(content, None, "pending", user_context, vector)
        return self.new_memory(
            content, interp, judge_source(self.judge), user_context, vector, related
        )

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

    def new_memory(
        self,
        content: str,
        interp: Interpretation | None,
        source: str,
        user_context: str | None,
        vector: Vector | None,
        related: Sequence[Memory] = (),
    ) -> NewMemory:
        """A memory ready to write; its judgement passes the stored-field rules first.

        The judge names what the content supersedes by position in ``related`` (what it
        was shown); those positions become memory ids here, and a position it was not
        shown is refused, never guessed at.
        """
        import numpy as np

        superseded: tuple[str, ...] = ()
        reason = ""
        if interp is not None:
            what = "the client scores" if source == "client" else f"the judge ({source})"
            interp = check_interpretation(
                interp, source, self.settings.max_content_chars, what=what
            )
            if interp.supersedes:
                try:
                    check_supersedes(interp.supersedes, len(related))
                except ValidationError as exc:
                    raise ValidationError(f"Refused what {what} returned: {exc}") from None
                superseded = tuple(
                    related[i].id for i in interp.supersedes if may_retire(content, related[i])
                )
                reason = history_reason(interp.supersede_reason) or ""
        embedder = self.retriever.embedder
        if vector is not None and not np.any(vector):
            vector = None  # a zero vector has no direction: the memory is found by words only
        return NewMemory(
            content,
            interp,
            source,
            user_context,
            vector=None if vector is None else pack(vector),
            embedding_model=None if embedder is None else embedder.name,
            supersedes=superseded,
            supersede_reason=reason,
            contests=_contested(content, related, superseded) if interp is not None else (),
            recall_terms=_recall_terms(content),
        )

    async def judge_all(
        self,
        contents: Sequence[str],
        user_context: str | None,
        *,
        may_pend: bool = True,
        exclude: frozenset[str] = frozenset(),
        earlier: Sequence[Sequence[Memory]] = (),
    ) -> list[NewMemory]:
        """Embed all contents in one call, then judge them concurrently (bounded).

        With a judge that can batch (``interpret_many``) and ``judge_batch_size > 1``,
        several contents share one call; otherwise each gets its own. ``exclude`` are
        memories the contents replace: never shown to the judge as related. ``earlier[i]``
        are shown after content i's stored related ones (a conversation's earlier turns).
        """
        vectors = await self.retriever.embed(contents)
        limit = asyncio.Semaphore(self.settings.judge_concurrency)

        def vector(i: int) -> Vector | None:
            return None if vectors is None else vectors[i]

        def before(i: int) -> Sequence[Memory]:
            return earlier[i] if i < len(earlier) else ()

        async def one(i: int) -> list[NewMemory]:
            async with limit:
                return [
                    await self._judge(
                        contents[i],
                        user_context,
                        vector(i),
                        may_pend=may_pend,
                        exclude=exclude,
                        earlier=before(i),
                    )
                ]

        async def batch(indexes: range) -> list[NewMemory]:
            async with limit:
                return await self._judge_batch(
                    [contents[i] for i in indexes],
                    [vector(i) for i in indexes],
                    user_context,
                    may_pend=may_pend,
                    exclude=exclude,
                    earlier=[before(i) for i in indexes],
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
        exclude: frozenset[str] = frozenset(),
        earlier: Sequence[Sequence[Memory]] = (),
    ) -> list[NewMemory]:
        """Judge several contents in one call of a batching judge; failures as ``_judge``."""
        related = [
            [*await self.retriever.related(c, v, exclude), *(earlier[i] if earlier else ())]
            for i, (c, v) in enumerate(zip(contents, vectors, strict=True))
        ]
        from aimem.judges.requests import JudgeItem  # on use: only a batching judge needs it

        items = [JudgeItem(c, r) for c, r in zip(contents, related, strict=True)]
        interpret_many = self.judge.interpret_many  # type: ignore[attr-defined]
        try:
            results = await interpret_many(items, user_context=user_context)
        except AimemError:
            raise
        except Exception as exc:
            failure = judge_crash(exc)
            results = [failure] * len(items)
        if not isinstance(results, list) or len(results) != len(items):
            results = [
                JudgeError("The judge's interpret_many returned the wrong number of results")
            ] * len(items)
        made = []
        for content, vector_, shown, result in zip(
            contents, vectors, related, results, strict=True
        ):
            if isinstance(result, Interpretation):
                made.append(
                    self.new_memory(
                        content, result, judge_source(self.judge), user_context, vector_, shown
                    )
                )
                continue
            failure = (
                result if isinstance(result, JudgeError) else JudgeError(f"bad result: {result!r}")
            )
            if not self._may_pend(may_pend, failure):
                raise failure
            made.append(self.new_memory(content, None, "pending", user_context, vector_))
        return made


def _recall_terms(content: str) -> str:
    """The words questions about ``content`` use but it may not ("residence", "live")."""
    from aimem.judges.heuristic.statement import recall_terms  # on use: its vocabularies are big

    return recall_terms(content)


def _contested(
    content: str, related: Sequence[Memory], superseded: Sequence[str]
) -> tuple[str, ...]:
    """Ids of related memories ``content`` may make out of date but does not retire.

    A looser reading than supersession (``judges.heuristic.conflicts``): they stay
    active, ranked below it while both are. A restored memory is left be, as by
    supersession.
    """
    if not related:
        return ()
    from aimem.judges.heuristic.conflicts import find_contested  # on use: its vocabularies are big

    found = find_contested(content, [m.content for m in related])
    return tuple(
        related[i].id
        for i in found
        if related[i].id not in superseded and related[i].restored_at is None
    )


def may_retire(content: str, memory: Memory) -> bool:
    """Whether a save may supersede ``memory``: always, unless the user restored it.

    A restore says "this still holds", so later saves leave it be; only an explicit change
    of that very fact retires it again: an offline precise rule's end or change that names
    its value ("I no longer live in Sendai", "we moved from Sendai to Osaka").
    """
    if memory.restored_at is None:
        return True
    from aimem.judges.heuristic.ends import names_held_value  # on use: its vocabularies are big
    from aimem.judges.heuristic.supersession import find_superseded

    return bool(find_superseded(content, [memory.content], precise=True)) and names_held_value(
        content, memory.content
    )
