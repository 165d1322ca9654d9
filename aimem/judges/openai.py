"""The only module that talks to an LLM: request, validate, retry, translate errors.

One interpretation is one chat completion with structured output. Two kinds of
failure are retried, separately:

* transport failures (429, 5xx, 408/409, timeouts, dropped connections, unreadable
  bodies) by ``openai_transport.retrying``, up to ``max_attempts`` requests, honouring
  ``Retry-After``;
* invalid output (not JSON, a missing field, a component outside [0, 0.25], a
  refusal, a reply cut off by ``finish_reason="length"``) by ONE corrective re-ask
  that shows the model its reply and the validation error.

Anything else (401, 400, ...) fails at once. Every failure ends as a ``JudgeError``
that carries the evidence: requests sent, the last raw reply, one line per failure.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import ChatCompletionMessageParam
from openai.types.shared_params import ResponseFormatJSONSchema

from ..exceptions import JudgeError, ValidationError
from ..models import Interpretation, Memory, Usage
from .batch import JudgeItem, batch_response_format, build_batch_messages, parse_batch
from .output import (
    RESPONSE_FORMAT,
    RESPONSE_FORMAT_V1,
    InvalidOutputError,
    JudgeOutput,
    Reply,
    corrective_messages,
    parse_output,
    read_reply,
)
from .prompts import PromptTemplate, load_prompt, new_nonce
from .transport import (
    OwnsClient,
    UnreadableResponseError,
    describe_error,
    is_auth,
    is_transient,
    new_client,
    retrying,
    server_message,
)

__all__ = ["OpenAIJudge", "build_messages", "one_line_json", "related_notes"]

log = logging.getLogger("aimem")

#: Related memories shown to the model for judging novelty, and how much of each.
_MAX_RELATED = 5
_RELATED_CHARS = 300


@dataclass
class _Tally:
    """Evidence gathered over every request of one interpretation."""

    started: float = field(default_factory=time.perf_counter)
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str | None = None
    last_raw: str | None = None
    errors: list[str] = field(default_factory=list)

    def fail(self, reason: str) -> None:
        self.errors.append(f"request {self.requests}: {reason}")

    def record(self, reply: Reply) -> None:
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.model = reply.model or self.model
        self.last_raw = reply.content if reply.content is not None else reply.refusal


class OpenAIJudge(OwnsClient):
    """Interprets content with any OpenAI-compatible chat endpoint.

    Args:
        model: the chat model to ask.
        base_url: an OpenAI-compatible endpoint (Ollama ``http://localhost:11434/v1``,
            vLLM, LM Studio); ``OPENAI_BASE_URL`` when omitted. No key needed with one.
        api_key: defaults to ``OPENAI_API_KEY``.
        client: a ready ``openai.AsyncOpenAI``; used as is (not closed by ``aclose``),
            except that its own retries are turned off.
        timeout: seconds per request.
        max_attempts: requests per ask before transient failures give up (>= 1).
        max_retry_wait: cap, in seconds, on any wait including a server's ``Retry-After``.
        prompt_version: which ``prompts/interpret.<version>.md`` to use. ``"v2"`` (the
            default) also asks which related memories the content supersedes; ``"v1"``
            is the earlier prompt and schema, without supersession.

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
        prompt_version: str = "v2",
    ) -> None:
        if max_attempts < 1 or not timeout > 0 or not max_retry_wait >= 0:
            raise ValidationError(
                "OpenAIJudge needs max_attempts >= 1, timeout > 0 and max_retry_wait >= 0"
            )
        self.model = model
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.max_retry_wait = max_retry_wait
        self._template: PromptTemplate = load_prompt("interpret", prompt_version)
        self._batch_template: PromptTemplate = load_prompt("interpret_batch", prompt_version)
        #: Whether the prompt asks for supersession (interpret.v2 on) and numbers the
        #: related memories; the schema sent follows it.
        self._supersession = "supersedes" in self._template.system
        self._format = RESPONSE_FORMAT if self._supersession else RESPONSE_FORMAT_V1
        self._batch_format = batch_response_format(self._supersession)
        self._owns_client = client is None
        self._client = (
            client.with_options(max_retries=0)
            if client is not None
            else new_client(base_url, api_key, timeout)
        )
        self._secret = self._client.api_key

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={str(self._client.base_url)!r})"

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
        tally = _Tally()
        messages = build_messages(
            self._template,
            content,
            user_context=user_context,
            related=related,
            numbered=self._supersession,
        )
        shown = self._shown(related)
        reply = await self._send(messages, tally)
        try:
            output = parse_output(reply, shown)
        except InvalidOutputError as exc:
            tally.fail(f"invalid output: {exc}")
            output = await self._reask(
                [*messages, *corrective_messages(reply, str(exc))], tally, shown
            )
        return self._interpretation(output, tally)

    def _shown(self, related: Sequence[Memory]) -> int:
        """How many related memories the prompt numbers (0 for a prompt without supersession)."""
        return min(len(related), _MAX_RELATED) if self._supersession else 0

    async def interpret_many(
        self, items: Sequence[JudgeItem], *, user_context: str | None = None
    ) -> list[Interpretation | JudgeError]:
        """Interpret several contents in one chat call; each result lines up with its item.

        Items the answer gets wrong (missing, duplicated, invalid) are asked again one at a
        time, with the single path's own re-ask. When the endpoint itself fails after its
        retries, every item gets that ``JudgeError``: calling once per item would only
        multiply the failing requests.
        """

        async def single(item: JudgeItem) -> Interpretation | JudgeError:
            try:
                return await self.interpret(
                    item.content, user_context=user_context, related=item.related
                )
            except JudgeError as exc:
                return exc

        if len(items) == 1:
            return [await single(items[0])]
        tally = _Tally()
        messages = build_batch_messages(
            self._batch_template,
            items,
            user_context=user_context,
            related_notes=[related_notes(i.related, numbered=self._supersession) for i in items],
        )
        try:
            reply = await self._send(messages, tally, self._batch_format)
            outputs, problems = parse_batch(
                reply, len(items), [self._shown(i.related) for i in items]
            )
        except JudgeError as exc:
            return [exc] * len(items)
        except InvalidOutputError as exc:
            outputs, problems = {}, [str(exc)]
        if problems:
            log.info("aimem: batch answer had problems, asking singly: %s", "; ".join(problems))
        share = _share(tally, len(outputs))
        results: list[Interpretation | JudgeError | None] = [
            self._interpretation(outputs[n], share, self._batch_template.version)
            if n in outputs
            else None
            for n in range(1, len(items) + 1)
        ]
        missing = [i for i, r in enumerate(results) if r is None]
        for i, result in zip(
            missing, await asyncio.gather(*(single(items[i]) for i in missing)), strict=True
        ):
            results[i] = result
        return [r for r in results if r is not None]

    async def _reask(
        self, messages: list[ChatCompletionMessageParam], tally: _Tally, shown: int
    ) -> JudgeOutput:
        reply = await self._send(messages, tally)
        try:
            return parse_output(reply, shown)
        except InvalidOutputError as exc:
            tally.fail(f"invalid output: {exc}")
            raise JudgeError(
                f"The model returned invalid output twice (last: {exc}). Try a stronger "
                "model, or check that the endpoint supports json_schema structured output.",
                attempts=tally.requests,
                last_raw=tally.last_raw,
                errors=tally.errors,
            ) from exc

    async def _send(
        self,
        messages: list[ChatCompletionMessageParam],
        tally: _Tally,
        response_format: ResponseFormatJSONSchema | None = None,
    ) -> Reply:
        """One successful exchange, retrying transient failures with backoff."""
        response_format = response_format or self._format
        try:
            reply: Reply = await retrying(self.max_attempts, self.max_retry_wait)(
                self._request, messages, tally, response_format
            )
        except (openai.APIError, UnreadableResponseError) as exc:
            error = self._give_up(exc, tally)
            if is_auth(exc):
                raise error from None
            raise error from exc
        return reply

    async def _request(
        self,
        messages: list[ChatCompletionMessageParam],
        tally: _Tally,
        response_format: ResponseFormatJSONSchema,
    ) -> Reply:
        tally.requests += 1
        try:
            completion: object = await self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                response_format=response_format,
                timeout=self.timeout,
            )
            reply = read_reply(completion)
        except openai.APIError as exc:
            tally.fail(describe_error(exc))
            raise
        # ValueError: the SDK's json() on a garbled 200 body.
        except (ValueError, UnreadableResponseError) as exc:
            tally.fail("unreadable response body")
            raise UnreadableResponseError("unreadable response body") from exc
        tally.record(reply)
        return reply

    def _give_up(self, exc: BaseException, tally: _Tally) -> JudgeError:
        evidence: dict[str, Any] = {
            "attempts": tally.requests,
            "last_raw": tally.last_raw,
            "errors": tally.errors,
        }
        if is_transient(exc):
            return JudgeError(
                f"The LLM endpoint kept failing after {tally.requests} attempts "
                f"(last: {describe_error(exc)}); try again later, or raise max_attempts "
                "or timeout.",
                **evidence,
            )
        status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
        if status == 401:
            return JudgeError(
                "The LLM endpoint rejected the API key (HTTP 401): check OPENAI_API_KEY or "
                "api_key (and base_url), or pass judge=aimem.HeuristicJudge().",
                **evidence,
            )
        detail = self._redact(server_message(exc))
        return JudgeError(
            f"The LLM endpoint refused the request (HTTP {status}): {detail}. Check "
            f"model={self.model!r}, the key's access to it, and json_schema support.",
            **evidence,
        )

    def _redact(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text

    def _interpretation(
        self, output: JudgeOutput, tally: _Tally, prompt_version: str | None = None
    ) -> Interpretation:
        model = tally.model or self.model
        usage = Usage(
            model=model,
            prompt_tokens=tally.prompt_tokens,
            completion_tokens=tally.completion_tokens,
            latency_ms=(time.perf_counter() - tally.started) * 1000,
            retries=tally.requests - 1,
        )
        fields = output.model_dump()
        # The prompt numbers related memories from 1; Interpretation counts from 0.
        fields["supersedes"] = tuple(n - 1 for n in output.supersedes)
        return Interpretation(
            **fields,
            model=model,
            prompt_version=prompt_version or self._template.version,
            usage=usage,
        )


#: Line breaks by Unicode's rules that json.dumps(ensure_ascii=False) leaves raw.
_UNICODE_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def one_line_json(text: str) -> str:
    """``text`` as a JSON string that no reader can split into two lines."""
    line = json.dumps(text, ensure_ascii=False)
    for raw, escaped in _UNICODE_BREAKS.items():
        line = line.replace(raw, escaped)
    return line


def _share(tally: _Tally, items: int) -> _Tally:
    """One item's part of a batch call: tokens split evenly, latency and retries shared."""
    per = max(1, items)
    return _Tally(
        started=tally.started,
        requests=tally.requests,
        prompt_tokens=-(-tally.prompt_tokens // per),
        completion_tokens=-(-tally.completion_tokens // per),
        model=tally.model,
    )


def related_notes(related: Sequence[Memory], *, numbered: bool = False) -> list[str]:
    """The related-memory lines a prompt shows: one escaped JSON string each, trimmed.

    ``numbered`` prefixes each with its number from 1 (``1. ``), which is how a reply's
    ``supersedes`` names them.
    """
    return [
        (f"{n}. " if numbered else "")
        + ("near-duplicate: " if getattr(m, "near_duplicate", False) else "")
        + one_line_json((m.interpreted_content or m.content)[:_RELATED_CHARS])
        for n, m in enumerate(related[:_MAX_RELATED], start=1)
    ]


def build_messages(
    template: PromptTemplate,
    content: str,
    *,
    user_context: str | None = None,
    related: Sequence[Memory] = (),
    numbered: bool = False,
) -> list[ChatCompletionMessageParam]:
    """Render the prompt: static rubric first, then the data blocks under a fresh nonce.

    Each related memory is one JSON string per line, so none can span or forge lines;
    one the store found nearly identical to the content is marked ``near-duplicate:``;
    ``numbered`` (interpret.v2) numbers them for ``supersedes``.
    """
    notes = related_notes(related, numbered=numbered)
    context = user_context or "(none)"
    nonce = new_nonce(content, context, *notes)
    prompt = template.render(
        nonce=nonce, content=content, user_context=context, related="\n".join(notes) or "(none)"
    )
    return [
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": prompt.user},
    ]
