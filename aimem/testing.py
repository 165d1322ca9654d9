"""Offline doubles for tests, notebooks and demos. Library code never imports this module.

* :class:`OpenAIStub` is a real OpenAI-compatible HTTP server on 127.0.0.1, so
  :class:`aimem.OpenAIJudge` can run end to end with no network and no key.
  It also serves ``/v1/embeddings`` with deterministic vectors.
* :class:`FixedJudge` is an in-process judge that needs no HTTP at all.
* :class:`HashEmbedder` is an in-process embedder: texts sharing words get similar vectors.

Both score content by the same marker rule: content containing ``[score=0.80]`` gets
0.80 / 4 = 0.2 on each of the four components (priority 0.8); any other content gets
0.1 on each (priority 0.4). The stub also answers ``supersedes`` from a
``[supersedes=1]`` marker (numbers of the related memories the prompt showed, from 1).

Example:
    ```python
    import aimem
    from aimem.testing import OpenAIStub, StubReply

    with OpenAIStub() as stub:
        stub.enqueue(StubReply(status=500, body={"error": {"message": "boom"}}))
        judge = aimem.OpenAIJudge(base_url=stub.base_url, api_key="test")
        with aimem.MemoryStore("sqlite:///:memory:", judge=judge) as store:
            memory = store.save("Prefers Rust [score=0.80]")  # retried once, priority 0.8
    assert memory.priority_score == 0.8 and memory.judge_retries == 1
    ```
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import re
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from aimem.judges.heuristic import HeuristicJudge
from aimem.judges.prompts import extract_data_block
from aimem.models import Interpretation, Memory
from aimem.retrieval.relevance import Calibration
from aimem.scoring import COMPONENTS

__all__ = [
    "DEFAULT_COMPONENT",
    "FixedJudge",
    "HashEmbedder",
    "OpenAIStub",
    "StubReply",
    "chat_completion",
    "embedding_response",
    "marker_score",
    "marker_scores",
    "marker_supersedes",
    "stub_vector",
]

_MARKER = re.compile(r"\[score=(\d+(?:\.\d+)?)\]")
_SUPERSEDES = re.compile(r"\[supersedes=(\d+(?:,\d+)*)\]")
_TURN = re.compile(r'^Turn (\d+) \(([a-z]+)\):\n<turn id="([0-9a-f]{16,})-\1">$', re.MULTILINE)
#: A user turn without a marker is a fact for the stub when the heuristic scores it this high.
STUB_FACT_FLOOR = 0.3
#: Each component's score for content without a marker (priority 0.4).
DEFAULT_COMPONENT = 0.1


def marker_score(content: str) -> float | None:
    """The priority a ``[score=0.80]`` marker in ``content`` asks for, or None."""
    match = _MARKER.search(content)
    return float(match.group(1)) if match else None


def marker_supersedes(content: str) -> list[int]:
    """The related-memory numbers a ``[supersedes=1,2]`` marker asks the stub to answer."""
    match = _SUPERSEDES.search(content)
    return [int(n) for n in match.group(1).split(",")] if match else []


def marker_scores(content: str) -> dict[str, float]:
    """The four components by the marker rule: priority/4 each, else 0.1 each."""
    priority = marker_score(content)
    return dict.fromkeys(COMPONENTS, DEFAULT_COMPONENT if priority is None else priority / 4)


def chat_completion(
    content: str | None,
    *,
    model: str = "stub-model",
    finish_reason: str = "stop",
    refusal: str | None = None,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
) -> dict[str, Any]:
    """A ``chat.completion`` body with one choice, as the OpenAI API returns it."""
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def stub_vector(text: str, dim: int) -> list[float]:
    """A pseudo-random unit vector fixed by ``text``: the same text always gets the same one."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    rng = random.Random(seed)
    return _unit([rng.gauss(0.0, 1.0) for _ in range(dim)])


def embedding_response(
    vectors: Sequence[Sequence[float]],
    *,
    model: str = "stub-embedding",
    prompt_tokens: int = 0,
    encoding_format: str = "float",
) -> dict[str, Any]:
    """An embeddings ``list`` body, as the OpenAI API returns it (base64: float32 bytes)."""

    def encode(vector: Sequence[float]) -> list[float] | str:
        if encoding_format != "base64":
            return list(vector)
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")

    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": i, "embedding": encode(v)}
            for i, v in enumerate(vectors)
        ],
        "model": model,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
    }


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


@dataclass(frozen=True)
class StubReply:
    """One scripted HTTP reply for :meth:`OpenAIStub.enqueue` or ``enqueue_embedding``.

    A dict body is sent as JSON; a str body is sent verbatim (garbage, truncated
    JSON...). Either way the Content-Type is ``application/json`` unless ``headers``
    say otherwise. ``delay`` seconds pass before the reply: longer than the client's
    timeout simulates a hang.
    """

    status: int = 200
    body: str | Mapping[str, Any] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0


class OpenAIStub:
    """An OpenAI-compatible chat server on 127.0.0.1 that judges by the marker rule.

    Each ``POST /v1/chat/completions`` is recorded in ``chat_requests``, then answered
    by the next scripted :class:`StubReply` if any, else by a valid completion whose
    content is the JSON interpretation of the ``<memory-data>`` block: the four
    components from ``scorer`` (default :func:`marker_scores`, not range-checked, so
    a scorer can provoke re-asks), ``"Interpreted: " + content`` and rationale
    ``"stub"``. A batch request (numbered ``<memory-data id="NONCE-N">`` blocks) gets
    ``{"items": [...]}`` with one such answer per item, each with its ``index``. An
    extraction request (``save_conversation``: ``<turn id="NONCE-N">`` blocks) gets
    ``{"facts": [...]}``: one fact per user turn that carries a ``[score=...]`` marker or
    that the offline heuristic scores at least 0.3 (chit-chat gets none), its statement
    the turn verbatim, scored by ``scorer``.
    ``GET /v1/models`` lists ``model``; any other path is a JSON 404.

    Each ``POST /v1/embeddings`` is recorded in ``embedding_requests``, then answered
    by the next reply queued with :meth:`enqueue_embedding` if any, else by one unit
    vector per input, fixed by a hash of the text (:func:`stub_vector`), of length
    ``dimensions`` if the request asks, else ``embedding_dim``; ``encoding_format``
    ``"base64"`` is honoured as the SDK expects.

    Args:
        scorer: content -> the four components.
        latency: seconds to wait before each unscripted reply.
        model: the model name the replies report.
        embedding_dim: length of the unscripted embedding vectors.
    """

    def __init__(
        self,
        scorer: Callable[[str], Mapping[str, float]] | None = None,
        latency: float = 0.0,
        model: str = "stub-model",
        embedding_dim: int = 64,
    ) -> None:
        self.scorer = scorer or marker_scores
        self.latency = latency
        self.model = model
        self.embedding_dim = embedding_dim
        self.chat_requests: list[dict[str, Any]] = []
        self.embedding_requests: list[dict[str, Any]] = []
        self._scripted: deque[StubReply] = deque()
        self._scripted_embeddings: deque[StubReply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``; available once started."""
        if self._server is None:
            raise RuntimeError("OpenAIStub is not running: call start() or use 'with'")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def chat_calls(self) -> int:
        """How many chat-completion requests have arrived."""
        with self._lock:
            return len(self.chat_requests)

    def enqueue(self, *replies: StubReply) -> None:
        """Queue scripted replies; each answers one chat request, in order."""
        with self._lock:
            self._scripted.extend(replies)

    def enqueue_embedding(self, *replies: StubReply) -> None:
        """Queue scripted replies; each answers one embeddings request, in order."""
        with self._lock:
            self._scripted_embeddings.extend(replies)

    def start(self) -> Self:
        """Listen on a free loopback port and serve from a daemon thread."""
        if self._server is None:
            self._stopping.clear()
            self._server = _Server(("127.0.0.1", 0), _Handler)
            self._server.stub = self
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},  # stop() waits up to one poll
                name="aimem-openai-stub",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Wake delayed replies, stop serving and close the socket (idempotent)."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        thread.join()
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _pause(self, seconds: float) -> bool:
        """Sleep unless stopped meanwhile; True when the server is still running."""
        return not (seconds > 0 and self._stopping.wait(seconds))

    def _chat(self, request: dict[str, Any]) -> StubReply:
        with self._lock:
            self.chat_requests.append(request)
            if self._scripted:
                return self._scripted.popleft()
        self._pause(self.latency)
        return self._interpretation(request)

    def _embeddings(self, request: dict[str, Any]) -> StubReply:
        with self._lock:
            self.embedding_requests.append(request)
            if self._scripted_embeddings:
                return self._scripted_embeddings.popleft()
        self._pause(self.latency)
        texts = request.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts:
            return _error(400, "'input' must be a string or a non-empty list")
        dim = request.get("dimensions") or self.embedding_dim
        inputs = [t if isinstance(t, str) else json.dumps(t) for t in texts]  # token arrays
        return StubReply(
            body=embedding_response(
                [stub_vector(text, dim) for text in inputs],
                model=str(request.get("model") or self.model),
                prompt_tokens=sum(len(text.split()) for text in inputs),
                encoding_format=str(request.get("encoding_format") or "float"),
            )
        )

    def _interpretation(self, request: dict[str, Any]) -> StubReply:
        messages = request.get("messages") or []
        batch = _batch_contents(messages)
        turns = _conversation_turns(messages)
        if turns is not None:  # an extraction request: the facts of the user turns
            facts = (self._fact(n, text) for n, role, text in turns if role == "user")
            payload: dict[str, Any] = {"facts": [f for f in facts if f is not None]}
        elif batch is not None:  # a batch request: one answer per numbered item
            payload = {
                "items": [
                    {"index": n, **self._judgement(content)}
                    for n, content in enumerate(batch, start=1)
                ]
            }
        else:
            payload = self._judgement(_judged_content(messages))
        text = json.dumps(payload, ensure_ascii=False)
        prompt = "".join(_text(m.get("content")) for m in messages if isinstance(m, dict))
        body = chat_completion(
            text, model=self.model, prompt_tokens=len(prompt) // 4, completion_tokens=len(text) // 4
        )
        return StubReply(body=body)

    def _fact(self, number: int, text: str) -> dict[str, Any] | None:
        """User turn ``number`` as one fact, or None when it is chit-chat."""
        if marker_score(text) is None and _HEURISTIC.score(text).priority_score < STUB_FACT_FLOOR:
            return None
        return {"statement": text, "turns": [number], **self._judgement(text)}

    def _judgement(self, content: str) -> dict[str, Any]:
        supersedes = marker_supersedes(content)
        return {
            "interpreted_content": "Interpreted: " + content,
            **self.scorer(content),
            "rationale": "stub",
            "supersedes": supersedes,
            "supersede_reason": "stub: marked as an update" if supersedes else "",
        }


def _batch_contents(messages: Sequence[Any]) -> list[str] | None:
    """The numbered items of a batch prompt (``<memory-data id="NONCE-N">``), else None."""
    for message in messages:
        if not (isinstance(message, dict) and message.get("role") == "user"):
            continue
        text = _text(message.get("content"))
        first = re.search(r'<memory-data id="([0-9a-f]{16,})-1">', text)
        if first is None:
            continue
        nonce, items = first.group(1), list[str]()
        while (block := extract_data_block(text, nonce=f"{nonce}-{len(items) + 1}")) is not None:
            items.append(block)
        return items
    return None


def _conversation_turns(messages: Sequence[Any]) -> list[tuple[int, str, str]] | None:
    """The turns of an extraction prompt as ``(number, role, text)``, else None.

    Only blocks under the first block's nonce count: a forged one inside a turn cannot know it.
    """
    for message in messages:
        if not (isinstance(message, dict) and message.get("role") == "user"):
            continue
        text = _text(message.get("content"))
        heads = list(_TURN.finditer(text))
        if not heads:
            continue
        nonce, turns = heads[0].group(3), list[tuple[int, str, str]]()
        for head in heads:
            number = head.group(1)
            block = extract_data_block(text, "turn", nonce=f"{nonce}-{number}")
            if head.group(3) == nonce and block is not None:
                turns.append((int(number), head.group(2), block))
        return turns
    return None


def _text(content: object) -> str:
    """A message's text, whether a string or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _judged_content(messages: Sequence[Any]) -> str:
    """The content under judgement: the first user message's data block, else its text."""
    users = [
        _text(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user"
    ]
    for text in users:
        block = extract_data_block(text)
        if block is not None:
            return block
    return users[-1] if users else ""


def _error(status: int, message: str) -> StubReply:
    return StubReply(status=status, body={"error": {"message": message, "type": "stub_error"}})


_HEURISTIC = HeuristicJudge()


class _Server(ThreadingHTTPServer):
    stub: OpenAIStub
    #: socketserver's default backlog of 5 drops bursts of concurrent connections
    #: (save_many with judge_concurrency 8+), and each dropped one retries a second later.
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is expected, not an error worth printing.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        stub = self.server.stub
        routes = {"/v1/chat/completions": stub._chat, "/v1/embeddings": stub._embeddings}
        route = routes.get(self.path.rstrip("/"))
        if route is None:
            self._reply(_error(404, f"no route for POST {self.path}"))
            return
        try:
            request = json.loads(raw)
        except ValueError:
            self._reply(_error(400, "the request body is not JSON"))
            return
        try:
            reply = route(request)
        except Exception as exc:  # a broken scorer should be a visible 500, not a hang-up
            reply = _error(500, f"OpenAIStub failed: {exc!r}")
        self._reply(reply)

    def do_GET(self) -> None:
        if self.path.rstrip("/") != "/v1/models":
            self._reply(_error(404, f"no route for GET {self.path}"))
            return
        model = {"id": self.server.stub.model, "object": "model", "owned_by": "aimem"}
        self._reply(StubReply(body={"object": "list", "data": [model]}))

    def _reply(self, reply: StubReply) -> None:
        if not self.server.stub._pause(reply.delay):
            return  # stopped while delaying: drop the connection like a hung server
        body = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
        data = body.encode("utf-8")
        headers = {"Content-Type": "application/json", **reply.headers}
        try:
            self.send_response(reply.status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
        except ConnectionError:
            pass  # the client gave up (timed out) before we answered

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean


class FixedJudge:
    """An in-process judge with fixed scores, recording what it was asked.

    Args:
        scorer: content -> a priority ``p`` (each component ``p / 4``) or the four
            components as a tuple. Default: the ``[score=...]`` marker rule.
        source: the ``score_source`` memories it scores will carry.
        supersedes: ``(content, related)`` -> positions (from 0) in ``related`` that the
            content supersedes. Default: a ``[supersedes=1]`` marker, numbered from 1 as
            the LLM prompt numbers them.

    Example:
        >>> import asyncio
        >>> judge = FixedJudge()
        >>> asyncio.run(judge.interpret("Likes tea [score=0.80]")).priority_score
        0.8
    """

    model = "fixed-judge"

    def __init__(
        self,
        scorer: Callable[[str], float | tuple[float, float, float, float]] | None = None,
        source: str = "custom",
        supersedes: Callable[[str, Sequence[Memory]], Sequence[int]] | None = None,
    ) -> None:
        self.scorer = scorer
        self.source = source
        self.supersedes = supersedes
        self.calls: list[str] = []
        self.related_seen: list[list[str]] = []

    async def interpret(
        self,
        content: str,
        *,
        user_context: str | None = None,
        related: Sequence[Memory] = (),
    ) -> Interpretation:
        """Score ``content`` without any I/O and record the call."""
        self.calls.append(content)
        self.related_seen.append([m.id for m in related])
        if self.supersedes is not None:
            positions = tuple(self.supersedes(content, related))
        else:
            positions = tuple(n - 1 for n in marker_supersedes(content))
        return Interpretation(
            interpreted_content="Interpreted: " + content,
            **self._components(content),
            rationale="fixed",
            model=self.model,
            supersedes=positions,
            supersede_reason="replaced: the supersedes marker" if positions else "",
        )

    def _components(self, content: str) -> dict[str, float]:
        if self.scorer is None:
            return marker_scores(content)
        scored = self.scorer(content)
        if isinstance(scored, int | float):
            return dict.fromkeys(COMPONENTS, scored / 4)
        return dict(zip(COMPONENTS, scored, strict=True))


class HashEmbedder:
    """An in-process embedder: a hashed bag of words, L2-normalised, with no model at all.

    Each lower-cased word adds +1 or -1 (by its hash) to one of ``dim`` slots, so texts
    that share words have a higher cosine than texts that share none: enough for
    semantic-search tests to be meaningful and exact.

    Example:
        >>> import asyncio
        >>> a, b, c = asyncio.run(HashEmbedder().embed(["tea lover", "loves tea", "rust"]))
        >>> sum(x * y for x, y in zip(a, b)) > sum(x * y for x, y in zip(a, c))
        True
    """

    name = "hash-embedder"
    #: Texts that share no word have a cosine near 0; one word in five in common, ~0.2.
    calibration = Calibration(low=0.1, high=0.7)

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, recording the call."""
        self.calls.append(list(texts))
        return [self.vector(text) for text in texts]

    def vector(self, text: str) -> list[float]:
        """The vector of one text, synchronously."""
        vector = [0.0] * self.dim
        # A text with no words still gets a unit vector, from the text itself.
        for word in _WORD.findall(text.lower()) or [text]:
            digest = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest())
            vector[digest % self.dim] += 1.0 if digest >> 63 else -1.0
        if not any(vector):  # words that cancel out: fall back to the whole text's slot
            digest = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest())
            vector[digest % self.dim] = 1.0
        return _unit(vector)


_WORD = re.compile(r"\w+")
