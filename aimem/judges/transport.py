"""Talking to an OpenAI-compatible endpoint: the client, retries and error accounts.

Shared by ``OpenAIJudge`` and ``OpenAIEmbedder`` so both treat keys, base URLs,
transient failures and ``Retry-After`` the same way. The SDK's own retries are off:
tenacity alone retries, so the two layers never multiply.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Self

from aimem.exceptions import ValidationError
from aimem.forking import keep

# openai, httpx and tenacity are imported where used: importing them costs most of a
# second, and a store that never calls an LLM (the CLI's `list`) should not pay it.
if TYPE_CHECKING:
    import httpx
    import openai
    from tenacity import AsyncRetrying, RetryCallState

__all__ = [
    "OwnsClient",
    "UnreadableResponseError",
    "describe_error",
    "is_auth",
    "is_transient",
    "new_client",
    "retry_after",
    "retrying",
    "server_message",
    "wait_strategy",
]

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
