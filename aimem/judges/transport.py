"""Talking to an OpenAI-compatible endpoint: the client, retries, errors, capabilities.

The client, retries and error accounts are shared by ``OpenAIJudge`` and
``OpenAIEmbedder``, so both treat keys, base URLs, transient failures and ``Retry-After``
the same way. The SDK's own retries are off: tenacity alone retries, so the two layers
never multiply.

What one endpoint accepts is learnt from its refusals and remembered by the judge.
OpenAI-compatible servers differ: llama-cpp-python's server answers ``json_schema``
with HTTP 500, older Ollama and LM Studio builds refuse it with a 400, some reasoning
models refuse ``temperature`` or want ``max_completion_tokens``. Such a refusal is not
transient: sending the same request again only fails again. :func:`refused_parameter`
recognises one from the server's message, and :meth:`Capabilities.degrade` steps that
part of the request down once, for every later request of the same judge:

* ``response_format``: ``json_schema`` -> ``json_object`` with the schema written into
  the prompt (once: an endpoint refusing that too fails as before);
* ``temperature`` and ``seed``: dropped;
* ``max_tokens``: renamed ``max_completion_tokens``, then dropped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Literal, Self

from aimem.exceptions import ValidationError
from aimem.forking import keep

# openai, httpx and tenacity are imported where used: importing them costs most of a
# second, and a store that never calls an LLM (the CLI's `list`) should not pay it.
if TYPE_CHECKING:
    import httpx
    import openai
    from tenacity import AsyncRetrying, RetryCallState

__all__ = [
    "Capabilities",
    "OwnsClient",
    "UnreadableResponseError",
    "describe_error",
    "is_auth",
    "is_transient",
    "new_client",
    "refused_parameter",
    "retry_after",
    "retrying",
    "server_message",
    "wait_strategy",
]

log = logging.getLogger("aimem")

#: Local servers (Ollama, vLLM, LM Studio) ignore the key, but the SDK insists on one.
_NO_KEY = "not-needed"
#: 4xx statuses worth retrying: request timeout, conflict, rate limit.
_RETRY_STATUSES = frozenset({408, 409, 429})
_BACKOFF_INITIAL = 0.5


class UnreadableResponseError(Exception):
    """The HTTP exchange succeeded but its body is unreadable: a hiccup, worth a retry."""


async def _sleep(seconds: float) -> None:
    """Wait between retries; module-level so tests can record waits instead of sleeping."""
    await asyncio.sleep(seconds)


class OwnsClient:
    """Closes the ``openai.AsyncOpenAI`` client on exit when this object made it.

    A client passed in by the caller is theirs to close (and to make anew in a forked
    child); shared by the judge and the embedder, which build their clients the same way.
    """

    _client: openai.AsyncOpenAI
    _owns_client: bool

    def _after_fork(self) -> None:
        """In a forked child: a client of our own gets a connection pool of its own.

        The inherited pool's connections are the parent's sockets, bound to the parent's
        event loop: a request on one would wait for a reply the child never sees. The old
        pool is kept, never closed here (closing TLS would tell the server goodbye).
        """
        if self._owns_client:
            import openai

            keep(self._client)
            self._client = self._client.copy(http_client=openai.DefaultAsyncHttpxClient())

    async def aclose(self) -> None:
        """Close the HTTP client if this object created it."""
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def new_client(
    base_url: str | None,
    api_key: str | None,
    timeout: float,
    *,
    missing: str = "No LLM configured for OpenAIJudge: set OPENAI_API_KEY or base_url, "
    "or pass judge=aimem.HeuristicJudge()",
) -> openai.AsyncOpenAI:
    """An SDK client by aimem's rules: arguments, then ``OPENAI_*`` env; a URL needs no key.

    Raises:
        ValidationError: with the ``missing`` message, when there is neither key nor URL.
    """
    key = api_key or os.environ.get("OPENAI_API_KEY")
    url = base_url or os.environ.get("OPENAI_BASE_URL")
    if not key and not url:
        raise ValidationError(missing)
    import openai

    if url is not None:
        _check_base_url(url)
    # max_retries=0: tenacity alone owns transport retries, so the two layers never multiply.
    return openai.AsyncOpenAI(api_key=key or _NO_KEY, base_url=url, timeout=timeout, max_retries=0)


def _check_base_url(url: str) -> None:
    """An endpoint URL must be http(s) with a host; say so before the SDK fails on it."""
    import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValidationError(
            "The LLM endpoint URL (base_url or OPENAI_BASE_URL) is not an http(s) URL with a "
            "host, e.g. http://localhost:11434/v1"
        )


def is_transient(exc: BaseException) -> bool:
    """Whether a failed request is worth sending again (429, 408/409, 5xx, network, garble)."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _RETRY_STATUSES or exc.status_code >= 500
    return isinstance(
        exc, openai.APIConnectionError | openai.APIResponseValidationError | UnreadableResponseError
    )


def is_auth(exc: BaseException) -> bool:
    """An authentication failure: its SDK message may quote the (masked) key, so drop it."""
    import openai

    return isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError)


def describe_error(exc: BaseException) -> str:
    """A short, secret-free account of a failed request, for error evidence."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timed out"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}"
    if isinstance(exc, openai.APIConnectionError):
        return "connection failed"
    if isinstance(exc, UnreadableResponseError):
        return "unreadable response body"
    return type(exc).__name__


def server_message(exc: BaseException) -> str:
    """The error message the server sent, cut to 300 characters."""
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    return str(message or getattr(exc, "message", "") or type(exc).__name__)[:300]


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds a server asked us to wait, or None when it did not say (or said nonsense).

    Reads ``Retry-After-Ms`` (OpenAI's precise variant), then ``Retry-After`` as
    seconds or as an HTTP-date.
    """
    if millis := headers.get("retry-after-ms"):
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def wait_strategy(max_wait: float) -> Callable[[RetryCallState], float]:
    """The server's ``Retry-After`` when it sent one, else exponential backoff with jitter.

    Both are capped at ``max_wait``. (Hand-rolled because tenacity renamed the
    parameters of ``wait_exponential_jitter`` between the versions we accept.)
    """
    import openai

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = (
            retry_after(exc.response.headers) if isinstance(exc, openai.APIStatusError) else None
        )
        if asked is None:
            asked = _BACKOFF_INITIAL * 2 ** (state.attempt_number - 1) + random.uniform(0, 0.5)
        return min(asked, max_wait)

    return wait


def retrying(
    max_attempts: int,
    max_wait: float,
    *,
    final: Callable[[BaseException], object] | None = None,
) -> AsyncRetrying:
    """Retries for one logical request: transient failures only, ``Retry-After`` honoured.

    ``final(exc)`` truthy marks a failure that looks transient but is not worth sending
    again unchanged (a 5xx refusing a request parameter).
    """
    from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

    def worth_retrying(exc: BaseException) -> bool:
        return is_transient(exc) and not (final is not None and final(exc))

    return AsyncRetrying(
        stop=stop_after_attempt(max_attempts),
        wait=wait_strategy(max_wait),
        retry=retry_if_exception(worth_retrying),
        sleep=_sleep,
        reraise=True,
    )


# --- capabilities: what one endpoint accepts -------------------------------------------------

Parameter = Literal["response_format", "temperature", "seed", "max_tokens"]
#: The words a refusal names, for each parameter the judge can step down.
_NAMES: tuple[tuple[Parameter, re.Pattern[str]], ...] = (
    ("response_format", re.compile(r"response_format|json_schema|json_object|structured", re.I)),
    ("max_tokens", re.compile(r"max_tokens|max_completion_tokens", re.I)),
    ("temperature", re.compile(r"\btemperature\b", re.I)),
    ("seed", re.compile(r"\bseed\b", re.I)),
)
#: Statuses that mean "not this request" rather than "not you" (401/403), "not here"
#: (404) or "not now" (408/409/429).
_REFUSAL_STATUSES = frozenset({400, 422, 500, 501})


def refused_parameter(exc: BaseException) -> Parameter | None:
    """The request parameter an endpoint's error names as unsupported, or None."""
    import openai

    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in _REFUSAL_STATUSES:
        return None
    message = server_message(exc)
    for parameter, pattern in _NAMES:
        if pattern.search(message):
            return parameter
    return None


@dataclass
class Capabilities:
    """How this judge shapes its requests; starts at the full OpenAI feature set."""

    response_format: Literal["json_schema", "json_object"] = "json_schema"
    temperature: bool = True
    seed: bool = True
    max_tokens: Literal["max_tokens", "max_completion_tokens", "none"] = "max_tokens"
    #: Bumped by every step down: a refusal of a request built before the last step is
    #: stale (another request already stepped down), so the request is just sent again.
    generation: int = 0

    def degrade(self, parameter: Parameter, endpoint: str) -> bool:
        """Step ``parameter`` down once; False when it is already as low as it goes."""
        before = self.describe(parameter)
        if parameter == "response_format":
            if self.response_format != "json_schema":
                return False
            self.response_format = "json_object"
        elif parameter == "max_tokens":
            if self.max_tokens == "none":
                return False
            self.max_tokens = "max_completion_tokens" if self.max_tokens == "max_tokens" else "none"
        elif parameter == "temperature":
            if not self.temperature:
                return False
            self.temperature = False
        else:
            if not self.seed:
                return False
            self.seed = False
        self.generation += 1
        log.info(
            "aimem: %s refused %s; this judge now sends %s",
            endpoint,
            before,
            self.describe(parameter),
        )
        return True

    def describe(self, parameter: Parameter) -> str:
        """The current form of ``parameter``, for the log line."""
        if parameter == "response_format":
            return {
                "json_schema": "response_format json_schema",
                "json_object": "response_format json_object (schema in the prompt)",
            }[self.response_format]
        if parameter == "max_tokens":
            return self.max_tokens if self.max_tokens != "none" else "no reply-length bound"
        sent = self.temperature if parameter == "temperature" else self.seed
        return parameter if sent else f"no {parameter}"

    def request_options(
        self,
        schema_format: dict[str, Any],
        *,
        temperature: float | None,
        seed: int | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` beyond model and messages."""
        options: dict[str, Any] = {}
        options["response_format"] = (
            schema_format if self.response_format == "json_schema" else {"type": "json_object"}
        )
        if temperature is not None and self.temperature:
            options["temperature"] = temperature
        if seed is not None and self.seed:
            options["seed"] = seed
        if max_tokens is not None and self.max_tokens != "none":
            options[self.max_tokens] = max_tokens
        return options

    def schema_note(self, schema_format: dict[str, Any]) -> str | None:
        """The schema as prompt text, when the endpoint cannot be sent it as a format."""
        if self.response_format == "json_schema":
            return None
        schema = schema_format["json_schema"]["schema"]
        return (
            "Reply with only a JSON object (no prose, no code fence) that matches this "
            "JSON schema:\n" + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
        )
