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

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import ChatCompletionMessageParam
from openai.types.shared_params import ResponseFormatJSONSchema
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic import ValidationError as PydanticValidationError

from .exceptions import JudgeError, ValidationError
from .models import Interpretation, Memory, Usage
from .openai_transport import (
    OwnsClient,
    UnreadableResponseError,
    describe_error,
    is_auth,
    is_transient,
    new_client,
    retrying,
    server_message,
)
from .prompts import PromptTemplate, load_prompt, new_nonce
from .scoring import COMPONENT_MAX, COMPONENTS

__all__ = ["OpenAIJudge", "build_messages", "one_line_json"]

#: A model answer longer than these is re-asked: restating even the longest allowed content
#: fits, a runaway reply (which would bloat the row and every later prompt) does not.
MAX_INTERPRETATION_CHARS = 20_000
MAX_RATIONALE_CHARS = 4000

#: Related memories shown to the model for judging novelty, and how much of each.
_MAX_RELATED = 5
_RELATED_CHARS = 300


class _Output(BaseModel):
    """What the model must return; its schema is sent as the structured-output format.

    Ranges are checked by validators rather than schema bounds: some OpenAI-compatible
    grammar engines reject or ignore numeric bounds, and a bad value must be re-asked,
    never clamped. Strict mode refuses numbers sent as strings.
    """

    model_config = ConfigDict(strict=True)

    interpreted_content: str = Field(description="One sentence: what to remember about the user.")
    emotional_impact: float = Field(description="0.0 to 0.25")
    user_relevance: float = Field(description="0.0 to 0.25")
    novelty: float = Field(description="0.0 to 0.25")
    utility: float = Field(description="0.0 to 0.25")
    rationale: str = Field(description="One short sentence explaining the scores.")

    @field_validator("interpreted_content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        if len(value) > MAX_INTERPRETATION_CHARS:
            raise ValueError(
                f"is {len(value)} characters: write one sentence, at most "
                f"{MAX_INTERPRETATION_CHARS}"
            )
        return value.strip()

    @field_validator("rationale")
    @classmethod
    def _short(cls, value: str) -> str:
        if len(value) > MAX_RATIONALE_CHARS:
            raise ValueError(f"is {len(value)} characters: at most {MAX_RATIONALE_CHARS}")
        return value

    @field_validator(*COMPONENTS)
    @classmethod
    def _in_range(cls, value: float) -> float:
        if not (math.isfinite(value) and 0.0 <= value <= COMPONENT_MAX):
            raise ValueError(f"must be a number from 0.0 to {COMPONENT_MAX}, got {value!r}")
        return value


def _response_format() -> ResponseFormatJSONSchema:
    schema = _Output.model_json_schema()
    # Titles and the class docstring would only cost prompt tokens.
    properties = {
        name: {k: v for k, v in prop.items() if k != "title"}
        for name, prop in schema["properties"].items()
    }
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "memory_interpretation",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": properties,
                "required": schema["required"],
                "additionalProperties": False,  # strict mode requires a closed object
            },
        },
    }


_RESPONSE_FORMAT = _response_format()


class _InvalidOutputError(Exception):
    """The reply arrived but is not a valid interpretation; worth one corrective re-ask."""


@dataclass(frozen=True)
class _Reply:
    content: str | None
    refusal: str | None
    finish_reason: str | None
    model: str | None
    prompt_tokens: int
    completion_tokens: int


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

    def record(self, reply: _Reply) -> None:
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
        prompt_version: which ``prompts/interpret.<version>.md`` to use.

    Example:
        ```python
        async with OpenAIJudge(base_url="http://localhost:11434/v1", model="llama3.2") as judge:
            interpretation = await judge.interpret("I'm allergic to penicillin.")
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
        prompt_version: str = "v1",
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
            self._template, content, user_context=user_context, related=related
        )
        reply = await self._send(messages, tally)
        try:
            output = _parse_output(reply)
        except _InvalidOutputError as exc:
            tally.fail(f"invalid output: {exc}")
            output = await self._reask([*messages, *_corrective_messages(reply, str(exc))], tally)
        return self._interpretation(output, tally)

    async def _reask(self, messages: list[ChatCompletionMessageParam], tally: _Tally) -> _Output:
        reply = await self._send(messages, tally)
        try:
            return _parse_output(reply)
        except _InvalidOutputError as exc:
            tally.fail(f"invalid output: {exc}")
            raise JudgeError(
                f"The model returned invalid output twice (last: {exc}). Try a stronger "
                "model, or check that the endpoint supports json_schema structured output.",
                attempts=tally.requests,
                last_raw=tally.last_raw,
                errors=tally.errors,
            ) from exc

    async def _send(self, messages: list[ChatCompletionMessageParam], tally: _Tally) -> _Reply:
        """One successful exchange, retrying transient failures with backoff."""
        try:
            reply: _Reply = await retrying(self.max_attempts, self.max_retry_wait)(
                self._request, messages, tally
            )
        except (openai.APIError, UnreadableResponseError) as exc:
            error = self._give_up(exc, tally)
            if is_auth(exc):
                raise error from None
            raise error from exc
        return reply

    async def _request(self, messages: list[ChatCompletionMessageParam], tally: _Tally) -> _Reply:
        tally.requests += 1
        try:
            completion: object = await self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                response_format=_RESPONSE_FORMAT,
                timeout=self.timeout,
            )
            reply = _read_reply(completion)
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

    def _interpretation(self, output: _Output, tally: _Tally) -> Interpretation:
        model = tally.model or self.model
        usage = Usage(
            model=model,
            prompt_tokens=tally.prompt_tokens,
            completion_tokens=tally.completion_tokens,
            latency_ms=(time.perf_counter() - tally.started) * 1000,
            retries=tally.requests - 1,
        )
        return Interpretation(
            **output.model_dump(), model=model, prompt_version=self._template.version, usage=usage
        )


#: Line breaks by Unicode's rules that json.dumps(ensure_ascii=False) leaves raw.
_UNICODE_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def one_line_json(text: str) -> str:
    """``text`` as a JSON string that no reader can split into two lines."""
    line = json.dumps(text, ensure_ascii=False)
    for raw, escaped in _UNICODE_BREAKS.items():
        line = line.replace(raw, escaped)
    return line


def build_messages(
    template: PromptTemplate,
    content: str,
    *,
    user_context: str | None = None,
    related: Sequence[Memory] = (),
) -> list[ChatCompletionMessageParam]:
    """Render the prompt: static rubric first, then the data blocks under a fresh nonce.

    Each related memory is one JSON string per line, so none can span or forge lines;
    one the store found nearly identical to the content is marked ``near-duplicate:``.
    """
    notes = [
        ("near-duplicate: " if getattr(m, "near_duplicate", False) else "")
        + one_line_json((m.interpreted_content or m.content)[:_RELATED_CHARS])
        for m in related[:_MAX_RELATED]
    ]
    context = user_context or "(none)"
    nonce = new_nonce(content, context, *notes)
    prompt = template.render(
        nonce=nonce, content=content, user_context=context, related="\n".join(notes) or "(none)"
    )
    return [
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": prompt.user},
    ]


def _corrective_messages(reply: _Reply, problem: str) -> list[ChatCompletionMessageParam]:
    return [
        {"role": "assistant", "content": reply.content or reply.refusal or ""},
        {
            "role": "user",
            "content": f"Your reply was invalid: {problem}. Reply again with only the JSON "
            f"object; each component is a number from 0.0 to {COMPONENT_MAX}.",
        },
    ]


def _read_reply(completion: object) -> _Reply:
    """Pull what we need out of a completion; anything not shaped like one is unreadable."""
    try:
        choice = completion.choices[0]  # type: ignore[attr-defined]
        message = choice.message
        content, refusal = message.content, getattr(message, "refusal", None)
        finish_reason = choice.finish_reason
    except (AttributeError, IndexError, TypeError) as exc:
        raise UnreadableResponseError("not a chat completion") from exc
    usage = getattr(completion, "usage", None)
    model = getattr(completion, "model", None)
    return _Reply(
        content=content if isinstance(content, str) else None,
        refusal=refusal if isinstance(refusal, str) else None,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        model=model if isinstance(model, str) and model else None,
        prompt_tokens=_count(getattr(usage, "prompt_tokens", 0)),
        completion_tokens=_count(getattr(usage, "completion_tokens", 0)),
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _parse_output(reply: _Reply) -> _Output:
    """Validate a reply; raise ``_InvalidOutputError`` with a reason the model can act on."""
    if reply.refusal:
        raise _InvalidOutputError(f"the model refused ({reply.refusal})")
    if reply.finish_reason == "length":
        raise _InvalidOutputError("the reply was cut off (finish_reason=length); keep it short")
    text = _strip_code_fence(reply.content or "")
    if not text:
        raise _InvalidOutputError("the reply was empty")
    try:
        return _Output.model_validate_json(text)
    except PydanticValidationError as exc:
        raise _InvalidOutputError(_describe_validation(exc)) from None


def _strip_code_fence(text: str) -> str:
    # Some local models wrap JSON in a Markdown fence even when asked for JSON only.
    text = text.strip()
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        text = text[3:-3].removeprefix("json").strip()
    return text


def _describe_validation(exc: PydanticValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}"
        for err in exc.errors(include_url=False)
    )
