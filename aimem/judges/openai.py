"""The only module that talks to an LLM: request, validate, retry, translate errors.

One interpretation is one chat completion with structured output, and so is a batch of
them or of a conversation's turns (``extract_facts``). What is sent is rendered in
``requests``, what comes back is checked in ``replies`` (``facts`` for extraction), and
the endpoint is reached through ``transport``. Failures are handled by kind:

* transport failures (429, 5xx, 408/409, dropped connections, unreadable bodies) by
  ``transport.retrying``, up to ``max_attempts`` requests, honouring ``Retry-After``; a
  timed-out request is sent again with twice the timeout (at most 4x ``timeout``), and
  a timed-out batch is split in halves instead;
* a refused capability (a 4xx/5xx naming ``response_format``, ``temperature``, ``seed``
  or ``max_tokens``) is never retried as it was: ``transport.Capabilities`` steps that
  part of the request down once and the judge remembers it;
* invalid output (not JSON, a missing field, a component off the scale, a refusal, a
  reply cut off by ``finish_reason="length"``) and an unfaithful interpretation (see
  ``faithfulness``) by ONE corrective re-ask that shows the model its reply and the
  reason. An interpretation still unfaithful after it is replaced by the content itself,
  flagged in the rationale: a distorted fact is worse than an unpolished one.

Anything else (401, 400, ...) fails at once. Every failure ends as a ``JudgeError``
that carries the evidence: requests sent, the last raw reply, one line per failure.

With a small model (its name says at most 8B parameters) the judge also sends one
request at a time, sizes batches by the pace it measured, and blends each component
with the offline heuristic's (``heuristic_weight``), which ranks better than either.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager, nullcontext

import openai
from openai.types.chat import ChatCompletionMessageParam
from openai.types.shared_params import ResponseFormatJSONSchema

from aimem.exceptions import JudgeError, ValidationError
from aimem.forking import renew_after_fork
from aimem.judges.facts import Draft, Extraction, Fact, unfaithful_facts
from aimem.judges.faithfulness import unfaithful_reason
from aimem.judges.heuristic import HeuristicJudge
from aimem.judges.heuristic.supersession import find_superseded
from aimem.judges.prompts import DEFAULT_PROMPT_VERSION, PromptTemplate, load_prompt
from aimem.judges.replies import (
    KEPT_CONTENT_FLAG,
    InvalidOutputError,
    JudgeOutput,
    Reply,
    RequestEvidence,
    batch_response_format,
    blend,
    corrective_messages,
    kept_content,
    parse_batch,
    parse_output,
    read_reply,
    response_format,
    with_supersedes,
)
from aimem.judges.requests import (
    MAX_RELATED,
    SMALL_MODEL_WEIGHT,
    JudgeItem,
    Pace,
    build_batch_messages,
    build_messages,
    estimate_tokens,
    is_small_model,
    one_line_json,
    related_notes,
    reply_tokens,
    with_note,
)
from aimem.judges.transport import (
    Capabilities,
    OwnsClient,
    UnreadableResponseError,
    describe_error,
    is_auth,
    is_transient,
    new_client,
    refused_parameter,
    retrying,
    server_message,
)
from aimem.models import Interpretation, Memory, Usage
from aimem.saving.messages import Turn

__all__ = [
    "KEPT_CONTENT_FLAG",
    "OpenAIJudge",
    "build_messages",
    "one_line_json",
    "related_notes",
]

log = logging.getLogger("aimem")

#: A timed-out request is sent again with a longer timeout, up to this many times the
#: configured one: a slow local model should finish, a dead endpoint should not hang.
_MAX_TIMEOUT_GROWTH = 4


class _TimedOut(Exception):
    """A batch request timed out (or no longer fits the pace): split it, don't wait longer.

    ``sent`` is False when the batch was not sent at all: while it waited its turn,
    another request's timeout showed the endpoint to be slower than its grouping assumed.
    """

    def __init__(self, sent: bool = True) -> None:
        super().__init__("timed out" if sent else "no longer fits the pace")
        self.sent = sent


class _Unfaithful(InvalidOutputError):
    """A valid reply whose interpretation changes the content's facts."""

    def __init__(self, reason: str, output: JudgeOutput) -> None:
        super().__init__(f"the interpretation is not faithful: {reason}")
        self.reason = reason
        self.output = output


def _invalid_twice(exc: InvalidOutputError, evidence: RequestEvidence) -> JudgeError:
    """The error for a reply still invalid after the corrective re-ask."""
    return JudgeError(
        f"The model returned invalid output twice (last: {exc}). Try a stronger "
        "model, or check that the endpoint supports json_schema structured output.",
        **evidence.error_fields(),
    )


class OpenAIJudge(OwnsClient):
    """Interprets content with any OpenAI-compatible chat endpoint.

    Args:
        model: the chat model to ask.
        base_url: an OpenAI-compatible endpoint (Ollama ``http://localhost:11434/v1``,
            vLLM, LM Studio, llama.cpp's ``llama-server``); ``OPENAI_BASE_URL`` when
            omitted. No key needed with one.
        api_key: defaults to ``OPENAI_API_KEY``.
        client: a ready ``openai.AsyncOpenAI``; used as is (not closed by ``aclose``),
            except that its own retries are turned off.
        timeout: seconds per request (a timed-out one is sent again with up to 4x).
        max_attempts: requests per ask before transient failures give up (>= 1).
        max_retry_wait: cap, in seconds, on any wait including a server's ``Retry-After``.
        prompt_version: which ``prompts/interpret.<version>.md`` to use. ``"v4"`` (the
            default) is v3 plus how facts change: an update stated inside a request
            counts, a move retires only the residence, diagnoses add up. ``"v3"`` asks
            for integer scores 0-5 with bounds in the schema, which small models' grammar
            engines enforce; ``"v2"`` asks for fractions 0-0.25; ``"v1"`` is the first
            prompt, without supersession.
        temperature: sent with every request (None: the server's default).
        max_tokens: a bound on each reply; None sizes it to what the request asks for.
        seed: sent for repeatable sampling where the server supports it (None: not sent).
        heuristic_weight: the offline heuristic's share (0-1) of each component; None
            means 0.5 for a small model (at most 8B parameters, by the name the server
            reports) and 0 otherwise.
        check_faithfulness: re-ask once when an interpretation changes the content's
            people, negations, numbers or names, then keep the content itself.

    Example:
        ```python
        from aimem import OpenAIJudge
        from aimem.testing import OpenAIStub  # stands in for e.g. http://localhost:11434/v1

        with OpenAIStub() as server:
            async with OpenAIJudge(base_url=server.base_url, model="llama3.2") as judge:
                interpretation = await judge.interpret("I'm allergic to penicillin.")
        assert 0.0 <= interpretation.priority_score <= 1.0
        ```
    """

    source = "llm"

    def __init__(
        self,
        model: str = "gpt-4o-mini",
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        timeout: float = 30.0,
        max_attempts: int = 3,
        max_retry_wait: float = 60.0,
        prompt_version: str = DEFAULT_PROMPT_VERSION,
        *,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        seed: int | None = 0,
        heuristic_weight: float | None = None,
        check_faithfulness: bool = True,
    ) -> None:
        if max_attempts < 1 or not timeout > 0 or not max_retry_wait >= 0:
            raise ValidationError(
                "OpenAIJudge needs max_attempts >= 1, timeout > 0 and max_retry_wait >= 0"
            )
        if temperature is not None and not 0.0 <= temperature <= 2.0:
            raise ValidationError("OpenAIJudge needs temperature from 0 to 2 (or None)")
        if max_tokens is not None and max_tokens < 1:
            raise ValidationError("OpenAIJudge needs max_tokens >= 1 (or None)")
        if heuristic_weight is not None and not 0.0 <= heuristic_weight <= 1.0:
            raise ValidationError("OpenAIJudge needs heuristic_weight from 0 to 1 (or None)")
        self.model = model
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.max_retry_wait = max_retry_wait
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.heuristic_weight = heuristic_weight
        self.check_faithfulness = check_faithfulness
        self._template: PromptTemplate = load_prompt("interpret", prompt_version)
        self._batch_template: PromptTemplate = load_prompt("interpret_batch", prompt_version)
        #: Whether the prompt asks for supersession (interpret.v2 on) and numbers the
        #: related memories; the schema sent follows it.
        self._supersession = "supersedes" in self._template.system
        self._scale = self._template.scale
        self._caps = Capabilities()
        self._pace = Pace()
        self._heuristic = HeuristicJudge()
        #: The model name the server reports (it may differ from ``model``).
        self._served: str | None = None
        #: A request timed out: the endpoint is slow, so send one request at a time.
        self._slow = False
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._owns_client = client is None
        self._client = (
            client.with_options(max_retries=0)
            if client is not None
            else new_client(base_url, api_key, timeout)
        )
        self._secret = self._client.api_key
        renew_after_fork(self)

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={str(self._client.base_url)!r})"

    @property
    def small_model(self) -> bool:
        """Whether the served model's name says it has at most 8B parameters."""
        return is_small_model(self._served or self.model)

    async def interpret(
        self,
        content: str,
        *,
        user_context: str | None = None,
        related: Sequence[Memory] = (),
    ) -> Interpretation:
        """Interpret ``content`` in one chat call (more only on failure).

        Raises:
            JudgeError: transport failures outlasted the retries, the endpoint refused
                the request, or the output was invalid twice.
        """
        evidence = RequestEvidence(timeout=self.timeout)
        messages = build_messages(
            self._template,
            content,
            user_context=user_context,
            related=related,
            numbered=self._supersession,
        )
        shown = self._shown(related)
        # Bounded by how many related memories a prompt can show, not by how many this
        # one does: a request's shape must not depend on what is judged.
        schema = response_format(
            self._supersession, self._scale, MAX_RELATED if self._scale is not None else None
        )
        reply = await self._send(messages, evidence, schema, [content])
        try:
            output = self._parse(reply, shown, content)
        except InvalidOutputError as exc:
            evidence.fail(f"invalid output: {exc}")
            retry = [*messages, *corrective_messages(reply, str(exc), self._scale)]
            output = await self._reask(retry, evidence, shown, content, schema, exc)
        return await self._interpretation(output, evidence, content, user_context, related)

    def _shown(self, related: Sequence[Memory]) -> int:
        """How many related memories the prompt numbers (0 for a prompt without supersession)."""
        return min(len(related), MAX_RELATED) if self._supersession else 0

    def _parse(self, reply: Reply, shown: int, content: str) -> JudgeOutput:
        output = parse_output(reply, shown, self._scale)
        reason = (
            unfaithful_reason(content, output.interpreted_content)
            if self.check_faithfulness
            else None
        )
        if reason is not None:
            raise _Unfaithful(reason, output)
        return output

    async def interpret_many(
        self, items: Sequence[JudgeItem], *, user_context: str | None = None
    ) -> list[Interpretation | JudgeError]:
        """Interpret several contents in as few chat calls as fit; results line up with items.

        Items go in one call unless the measured pace says that would take more than
        half the timeout; then in consecutive groups that fit. A group that times out is
        split in halves. Items an answer gets wrong (missing, duplicated, invalid,
        unfaithful) are asked again one at a time, with the single path's own re-ask.
        When the endpoint itself fails after its retries, every item of that call gets
        that ``JudgeError``: calling once per item would only multiply the failing requests.
        """
        if len(items) <= 1:
            return [await self._single(item, user_context) for item in items]
        results: list[Interpretation | JudgeError] = []
        for group in self._pace.groups(self._sizes(items), self._fixed_prompt(), self.timeout):
            results += await self._batch([items[i] for i in group], user_context)
        return results

    def _fixed_prompt(self) -> int:
        return estimate_tokens(self._batch_template.system)

    @staticmethod
    def _sizes(items: Sequence[JudgeItem]) -> list[tuple[int, int]]:
        """Each item's (prompt tokens, expected reply tokens), for sizing requests."""
        return [
            (estimate_tokens(i.content) + 60, 80 + estimate_tokens(i.content) // 2) for i in items
        ]

    async def _single(
        self, item: JudgeItem, user_context: str | None
    ) -> Interpretation | JudgeError:
        try:
            return await self.interpret(
                item.content, user_context=user_context, related=item.related
            )
        except JudgeError as exc:
            return exc

    async def _batch(
        self, items: Sequence[JudgeItem], user_context: str | None
    ) -> list[Interpretation | JudgeError]:
        if len(items) == 1:
            return [await self._single(items[0], user_context)]
        evidence = RequestEvidence(timeout=self.timeout)
        messages = build_batch_messages(
            self._batch_template,
            items,
            user_context=user_context,
            related_notes=[related_notes(i.related, numbered=self._supersession) for i in items],
        )
        shown = [self._shown(i.related) for i in items]
        schema = batch_response_format(
            self._supersession,
            self._scale,
            len(items) if self._scale is not None else None,
            MAX_RELATED if self._scale is not None else None,
        )
        try:
            reply = await self._send(
                messages, evidence, schema, [i.content for i in items], plan=self._plan(items)
            )
            outputs, problems = parse_batch(reply, len(items), shown, self._scale)
        except _TimedOut as exc:
            return await self._regroup(items, user_context, sent=exc.sent)
        except JudgeError as exc:
            return [exc] * len(items)
        except InvalidOutputError as exc:
            outputs, problems = {}, [str(exc)]
        if self.check_faithfulness:
            for number, output in list(outputs.items()):
                reason = unfaithful_reason(items[number - 1].content, output.interpreted_content)
                if reason is not None:
                    del outputs[number]
                    problems.append(f"item {number}: {reason}")
        if problems:
            log.info("aimem: batch answer had problems, asking singly: %s", "; ".join(problems))
        portion = evidence.per_item(len(outputs))
        results: list[Interpretation | JudgeError | None] = []
        for n, item in enumerate(items, start=1):
            if n in outputs:
                results.append(
                    await self._interpretation(
                        outputs[n],
                        portion,
                        item.content,
                        user_context,
                        item.related,
                        self._batch_template.version,
                    )
                )
            else:
                results.append(None)
        # Concurrently: the gate already sends them one at a time to a small or slow server.
        missing = [i for i, r in enumerate(results) if r is None]
        retried = await asyncio.gather(*(self._single(items[i], user_context) for i in missing))
        for i, result in zip(missing, retried, strict=True):
            results[i] = result
        return [r for r in results if r is not None]

    def _plan(self, items: Sequence[JudgeItem]) -> tuple[int, int]:
        """A batch request's expected (prompt tokens, reply tokens)."""
        sizes = self._sizes(items)
        return self._fixed_prompt() + sum(p for p, _ in sizes), sum(r for _, r in sizes)

    async def _regroup(
        self, items: Sequence[JudgeItem], user_context: str | None, *, sent: bool = True
    ) -> list[Interpretation | JudgeError]:
        """A timed-out batch again, in groups the pace now says fit (halves at least)."""
        sizes = self._sizes(items)
        fixed = self._fixed_prompt()
        if sent:
            self._pace.timed_out(*self._plan(items), self.timeout)
        groups = self._pace.groups(sizes, fixed, self.timeout)
        if len(groups) == 1:
            half = len(items) // 2
            groups = [range(half), range(half, len(items))]
        log.info(
            "aimem: a batch of %d timed out after %g s; asking in %d smaller requests",
            len(items),
            self.timeout,
            len(groups),
        )
        results: list[Interpretation | JudgeError] = []
        for group in groups:
            results += await self._batch([items[i] for i in group], user_context)
        return results

    async def extract_facts(
        self,
        turns: Sequence[Turn],
        *,
        user_context: str | None = None,
        related: Sequence[Memory] = (),
    ) -> list[Fact]:
        """The facts worth keeping in ``turns``, in one chat call (two with the corrective re-ask).

        ``related`` are memories the facts may supersede, numbered for the model (at most
        ``facts.MAX_SHOWN``). Facts come in conversation order; each records ``extract.v2``,
        the model, and its share of the call's tokens; its rationale names its source turns.
        The request and the checks on its reply are ``facts.Extraction``'s.

        Raises:
            JudgeError: transport failures outlasted the retries, the endpoint refused the
                request, or the reply was invalid twice.
        """
        extraction = Extraction(
            turns,
            user_context=user_context,
            related=related,
            check_faithfulness=self.check_faithfulness,
        )
        evidence = RequestEvidence(timeout=self.timeout)
        messages, schema, said = extraction.messages, extraction.schema, extraction.said
        reply = await self._send(messages, evidence, schema, said)
        drafts: list[Draft] | None = None
        try:
            drafts = extraction.read(reply)
            problem = unfaithful_facts(drafts)
        except InvalidOutputError as exc:
            problem = str(exc)
        if problem:
            evidence.fail(f"invalid output: {problem}")
            retry = [*messages, *corrective_messages(reply, problem, extraction.template.scale)]
            second = await self._send(retry, evidence, schema, said)
            try:
                drafts = extraction.read(second)
            except InvalidOutputError as exc:
                evidence.fail(f"invalid output: {exc}")
                if drafts is None:
                    raise _invalid_twice(exc, evidence) from exc
            else:
                if unfaithful_facts(drafts):
                    evidence.fail(f"invalid output: {unfaithful_facts(drafts)}")
        assert drafts is not None
        portion = evidence.per_item(len(drafts))
        facts = []
        for draft in extraction.settled(drafts):
            interpretation = await self._interpretation(
                draft.output,
                portion,
                draft.statement,
                user_context,
                related,
                extraction.template.version,
            )
            facts.append(Fact(draft.statement, interpretation, draft.turns))
        return facts

    async def _reask(
        self,
        messages: list[ChatCompletionMessageParam],
        evidence: RequestEvidence,
        shown: int,
        content: str,
        schema: ResponseFormatJSONSchema,
        first: InvalidOutputError,
    ) -> JudgeOutput:
        reply = await self._send(messages, evidence, schema, [content])
        try:
            return self._parse(reply, shown, content)
        except _Unfaithful as exc:
            evidence.fail(f"invalid output: {exc}")
            return kept_content(exc.output, content, exc.reason)
        except InvalidOutputError as exc:
            evidence.fail(f"invalid output: {exc}")
            if isinstance(first, _Unfaithful):  # the first reply's scores were valid
                return kept_content(first.output, content, first.reason)
            raise _invalid_twice(exc, evidence) from exc

    async def _send(
        self,
        messages: list[ChatCompletionMessageParam],
        evidence: RequestEvidence,
        schema: ResponseFormatJSONSchema,
        contents: Sequence[str],
        *,
        plan: tuple[int, int] | None = None,
    ) -> Reply:
        """One successful exchange, retrying transient failures with backoff.

        A refused capability steps the request down and sends it again (each step at
        most once per judge); it is never retried unchanged.
        """
        bound = self.max_tokens or reply_tokens(len(contents))
        while True:
            try:
                reply: Reply = await retrying(
                    self.max_attempts, self.max_retry_wait, final=refused_parameter
                )(self._request, messages, evidence, schema, bound, plan)
            except (openai.APIError, UnreadableResponseError) as exc:
                parameter = refused_parameter(exc)
                if parameter is not None and (
                    evidence.built_with != self._caps.generation
                    or self._caps.degrade(parameter, self._endpoint())
                ):
                    continue  # stale (built before another request stepped down), or stepped down
                error = self._give_up(exc, evidence)
                if is_auth(exc):
                    raise error from None
                raise error from exc
            return reply

    def _endpoint(self) -> str:
        return f"the LLM endpoint {self._client.base_url}"

    def _gate(self) -> AbstractAsyncContextManager[object]:
        """One request at a time to a small model or an endpoint that timed out.

        A local server answers requests in turn; a queued one would spend its timeout waiting.
        """
        if not (self.small_model or self._slow):
            return nullcontext()
        loop = asyncio.get_running_loop()
        gate = self._gates.get(loop)
        if gate is None:
            gate = self._gates[loop] = asyncio.Lock()
        return gate

    async def _request(
        self,
        messages: list[ChatCompletionMessageParam],
        evidence: RequestEvidence,
        schema: ResponseFormatJSONSchema,
        bound: int,
        plan: tuple[int, int] | None,
    ) -> Reply:
        async with self._gate():
            if plan is not None and not self._pace.fits(*plan, self.timeout):
                raise _TimedOut(sent=False)  # learnt while this batch waited its turn
            # Built after the wait: another request may have stepped the capabilities down.
            evidence.built_with = self._caps.generation
            options = self._caps.request_options(
                dict(schema), temperature=self.temperature, seed=self.seed, max_tokens=bound
            )
            sent = with_note(messages, self._caps.schema_note(dict(schema)))
            evidence.requests += 1
            started = time.perf_counter()
            try:
                completion: object = await self._client.chat.completions.create(
                    model=self.model, messages=sent, timeout=evidence.timeout, **options
                )
                reply = read_reply(completion)
            except openai.APITimeoutError as exc:
                evidence.fail(f"timed out after {evidence.timeout:g} s")
                self._slow = True
                if plan is not None:  # a batch: split it rather than wait longer
                    raise _TimedOut from exc
                evidence.timeout = min(evidence.timeout * 2, self.timeout * _MAX_TIMEOUT_GROWTH)
                raise
            except openai.APIError as exc:
                evidence.fail(describe_error(exc))
                raise
            # ValueError: the SDK's json() on a garbled 200 body.
            except (ValueError, UnreadableResponseError) as exc:
                evidence.fail("unreadable response body")
                raise UnreadableResponseError("unreadable response body") from exc
            self._pace.observe(
                reply.prompt_tokens, reply.completion_tokens, time.perf_counter() - started
            )
        evidence.record(reply)
        if reply.model:
            self._served = reply.model
        return reply

    def _give_up(self, exc: BaseException, evidence: RequestEvidence) -> JudgeError:
        carried = evidence.error_fields()
        if is_transient(exc) and refused_parameter(exc) is None:
            return JudgeError(
                f"The LLM endpoint kept failing after {evidence.requests} attempts "
                f"(last: {describe_error(exc)}); try again later, or raise max_attempts "
                "or timeout.",
                **carried,
            )
        status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
        if status == 401:
            return JudgeError(
                "The LLM endpoint rejected the API key (HTTP 401): check OPENAI_API_KEY or "
                "api_key (and base_url), or pass judge=aimem.HeuristicJudge().",
                **carried,
            )
        detail = self._redact(server_message(exc))
        return JudgeError(
            f"The LLM endpoint refused the request (HTTP {status}): {detail}. Check "
            f"model={self.model!r}, the key's access to it, and json_schema support.",
            **carried,
        )

    def _redact(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text

    def _weight(self, model: str) -> float:
        if self.heuristic_weight is not None:
            return self.heuristic_weight
        return SMALL_MODEL_WEIGHT if is_small_model(model) else 0.0

    async def _interpretation(
        self,
        output: JudgeOutput,
        evidence: RequestEvidence,
        content: str,
        user_context: str | None,
        related: Sequence[Memory],
        prompt_version: str | None = None,
    ) -> Interpretation:
        model = evidence.model or self.model
        usage = Usage(
            model=model,
            prompt_tokens=evidence.prompt_tokens,
            completion_tokens=evidence.completion_tokens,
            latency_ms=(time.perf_counter() - evidence.started) * 1000,
            retries=evidence.requests - 1,
        )
        fields = output.model_dump()
        # The prompt numbers related memories from 1; Interpretation counts from 0.
        fields["supersedes"] = tuple(n - 1 for n in output.supersedes)
        weight = self._weight(model)
        if weight > 0:
            offline = await self._heuristic.interpret(
                content, user_context=user_context, related=related
            )
            precise = find_superseded(content, [m.content for m in related], precise=True)
            fields = with_supersedes(blend(fields, offline, weight), precise)
        return Interpretation(
            **fields,
            model=model,
            prompt_version=prompt_version or self._template.version,
            usage=usage,
        )
