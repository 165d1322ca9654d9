"""Plain helpers for the tests that talk to a mocked OpenAI-compatible endpoint.

The fixtures built on them (``chat``, ``waits``) live in ``conftest.py``; a test module
mocks another path with :func:`mocked` (``/embeddings``) and reads what was sent with
:func:`sent`. Nothing here reaches a network: respx answers on :data:`BASE_URL`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import httpx
import respx

import aimem.judges.transport as openai_transport
from aimem.judges.openai import OpenAIJudge

BASE_URL = "https://llm.test/v1"
SECRET = "sk-test-0123456789abcdef"


@contextlib.contextmanager
def mocked(path: str) -> Iterator[respx.Route]:
    """POST ``path`` on :data:`BASE_URL`, mocked for the block (calls are not required)."""
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        yield router.post(path)


@contextlib.contextmanager
def recorded_waits() -> Iterator[list[float]]:
    """Record the transport's retry waits instead of sleeping through them."""
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    saved = openai_transport._sleep
    openai_transport._sleep = record
    try:
        yield waits
    finally:
        openai_transport._sleep = saved


def sent(route: respx.Route, index: int = 0) -> dict[str, Any]:
    """The JSON body of the ``index``-th request the route answered."""
    body: dict[str, Any] = json.loads(route.calls[index].request.content)
    return body


def status(
    code: int, headers: dict[str, str] | None = None, message: str = "oops"
) -> httpx.Response:
    """An error reply in OpenAI's shape."""
    return httpx.Response(code, json={"error": {"message": message}}, headers=headers)


def make_judge(**kwargs: Any) -> OpenAIJudge:
    """An OpenAIJudge on the mocked endpoint (:data:`BASE_URL`, :data:`SECRET`)."""
    kwargs.setdefault("base_url", BASE_URL)
    kwargs.setdefault("api_key", SECRET)
    return OpenAIJudge(**kwargs)
