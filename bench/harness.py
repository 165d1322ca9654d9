"""Shared pieces of the performance benches: token counting, a counting stub, RSS, percentiles.

* :func:`token_counter` counts tokens with tiktoken when it is installed *and* its
  encoding file is already cached (it never downloads); otherwise with the stated
  approximation of ``aimem.testing.OpenAIStub`` itself, characters / 4. Every JSON
  line carries which one as ``"tokens"``.
* :class:`CountingStub` is ``aimem.testing.OpenAIStub`` (a real OpenAI-compatible HTTP
  server on 127.0.0.1, ``latency`` seconds per reply) that also counts chat and
  embedding requests, sums prompt and completion tokens of what it received and sent,
  and adds up the seconds its server threads spent on each request (reading its body,
  waiting ``latency``, building and writing the reply). "Library overhead" of a call
  is its wall time minus that server time. It keeps connections alive, as real
  endpoints do (``keep_alive=False``: a connection per request, as ``OpenAIStub``).
* :func:`peak_rss_mb`, :func:`percentile` and the text sources shared by the benches
  (the Zipf sentences of ``save_overhead.TextMaker``, or LoCoMo dev turns when the data
  is there).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from itertools import accumulate
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from save_overhead import FUNCTION_WORDS, LOCOMO, TextMaker

from aimem.testing import OpenAIStub, StubReply

__all__ = [
    "LOCOMO",
    "CountingStub",
    "FastTextMaker",
    "StubCounts",
    "emit",
    "peak_rss_mb",
    "percentile",
    "query_source",
    "text_source",
    "token_counter",
]

APPROX = "approx chars/4"
LISTEN_BACKLOG = 256
_TIKTOKEN_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


def _tiktoken_cached(name: str) -> bool:
    """Whether tiktoken's cache already holds ``name``'s file (so loading needs no network)."""
    cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    folder = Path(cache) if cache else Path(tempfile.gettempdir()) / "data-gym-cache"
    key = hashlib.sha1(_TIKTOKEN_URLS[name].encode()).hexdigest()
    return (folder / key).is_file()


def token_counter() -> tuple[str, Callable[[str], int]]:
    """(label, text -> tokens): tiktoken when it works offline, else characters / 4."""
    try:
        import tiktoken
    except ImportError:
        return APPROX, lambda text: len(text) // 4
    for name in _TIKTOKEN_URLS:
        if not _tiktoken_cached(name):
            continue  # loading it would download the file: not here
        try:
            encoding = tiktoken.get_encoding(name)
        except Exception:
            continue
        return f"tiktoken:{name}", partial(_tiktoken_len, encoding)
    return APPROX, lambda text: len(text) // 4


def _tiktoken_len(encoding: Any, text: str) -> int:
    return len(encoding.encode(text, disallowed_special=()))


def _message_text(messages: object) -> str:
    """All message texts of a chat request, joined (what the stub itself counts)."""
    parts: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [str(p.get("text", "")) for p in content if isinstance(p, dict)]
    return "".join(parts)


@dataclasses.dataclass(frozen=True)
class StubCounts:
    """What a :class:`CountingStub` has seen so far; subtract two to get one interval's."""

    chat: int = 0
    embeddings: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    schema_tokens: int = 0
    server_s: float = 0.0
    max_in_flight: int = 0  # most requests handled at once (not a difference: a peak)

    def __sub__(self, other: StubCounts) -> StubCounts:
        return StubCounts(
            self.chat - other.chat,
            self.embeddings - other.embeddings,
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
            self.schema_tokens - other.schema_tokens,
            self.server_s - other.server_s,
            self.max_in_flight,
        )


class CountingStub(OpenAIStub):
    """``OpenAIStub`` that counts requests and tokens and times its own work per request.

    ``prompt_tokens`` are the message texts of each chat request; ``schema_tokens``
    the JSON of its ``response_format`` (real APIs bill the schema too, the stub's own
    ``usage`` leaves it out); ``completion_tokens`` the reply's message content. All
    with :func:`token_counter`. ``server_s`` is the wall time the server threads spent
    inside each request (from its body being read to the reply written), latency
    included: the part of a call that is not aimem's. The request records of the base
    class are dropped (``keep_requests=False``) so a long run does not grow.

    ``keep_alive=True`` (default) keeps connections open as real endpoints do (HTTP/1.1,
    no ``Connection: close``, TCP_NODELAY); ``False`` is ``OpenAIStub``'s own way, a new
    TCP connection per request, which costs the client about 1 ms more per call here.
    Either way it listens with a backlog of 256 instead of socketserver's 5: with more
    simultaneous connections than that, SYNs are dropped and retried a second later,
    which would time the kernel, not aimem.
    """

    def __init__(
        self,
        latency: float = 0.0,
        *,
        keep_alive: bool = True,
        keep_requests: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(latency=latency, **kwargs)
        self.tokens, self._count = token_counter()
        self.keep_alive = keep_alive
        self.connections = "keep-alive" if keep_alive else "closed after each request"
        self._keep = keep_requests
        self._totals = StubCounts()
        self._in_flight = 0
        self._count_lock = threading.Lock()

    def start(self) -> CountingStub:
        """Start serving, with every request's handling timed."""
        super().start()
        server = self._server
        assert server is not None
        server.socket.listen(LISTEN_BACKLOG)  # listening again only raises the backlog
        server.RequestHandlerClass = _timed_handler(server.RequestHandlerClass, self)
        return self

    def _enter(self) -> None:
        with self._count_lock:
            self._in_flight += 1
            peak = max(self._totals.max_in_flight, self._in_flight)
            self._totals = dataclasses.replace(self._totals, max_in_flight=peak)

    def _leave(self, seconds: float) -> None:
        with self._count_lock:
            self._in_flight -= 1
            self._totals = dataclasses.replace(
                self._totals, server_s=self._totals.server_s + seconds
            )

    def counts(self) -> StubCounts:
        """The totals so far."""
        with self._count_lock:
            return self._totals

    def reset_peak(self) -> None:
        """Start counting ``max_in_flight`` afresh."""
        with self._count_lock:
            self._totals = dataclasses.replace(self._totals, max_in_flight=self._in_flight)

    def _add(self, **deltas: Any) -> None:
        with self._count_lock:
            values = {name: getattr(self._totals, name) + value for name, value in deltas.items()}
            self._totals = dataclasses.replace(self._totals, **values)

    def _chat(self, request: dict[str, Any]) -> StubReply:
        reply = super()._chat(request)
        if not self._keep:
            with self._lock:
                self.chat_requests.clear()
        content = ""
        if isinstance(reply.body, dict):
            try:
                content = reply.body["choices"][0]["message"]["content"] or ""
            except (KeyError, IndexError, TypeError):
                content = ""
        schema = request.get("response_format")
        self._add(
            chat=1,
            prompt_tokens=self._count(_message_text(request.get("messages"))),
            completion_tokens=self._count(content),
            schema_tokens=self._count(json.dumps(schema)) if schema else 0,
        )
        return reply

    def _embeddings(self, request: dict[str, Any]) -> StubReply:
        reply = super()._embeddings(request)
        if not self._keep:
            with self._lock:
                self.embedding_requests.clear()
        texts = request.get("input")
        texts = [texts] if isinstance(texts, str) else texts if isinstance(texts, list) else []
        self._add(embeddings=1, prompt_tokens=sum(self._count(str(t)) for t in texts))
        return reply


def _timed_handler(base: Any, stub: CountingStub) -> Any:
    """The stub's request handler, timing each POST and keeping connections if asked."""

    class Timed(base):  # type: ignore[misc, valid-type]
        disable_nagle_algorithm = True
        protocol_version = "HTTP/1.1" if stub.keep_alive else base.protocol_version

        def send_header(self, keyword: str, value: str) -> None:
            if stub.keep_alive and keyword.lower() == "connection" and value == "close":
                return
            super().send_header(keyword, value)

        def do_POST(self) -> None:
            stub._enter()
            began = time.perf_counter()
            try:
                super().do_POST()
            finally:
                stub._leave(time.perf_counter() - began)

    return Timed


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB (``ru_maxrss`` is KB on Linux)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def percentile(values: Sequence[float], q: float, digits: int = 3) -> float | None:
    """Nearest-rank percentile (``q`` in 0..1) of ``values``, rounded; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))], digits)


def emit(record: dict[str, Any]) -> None:
    """Print one JSON line and flush (run_all.py reads these)."""
    print(json.dumps(record), flush=True)


class FastTextMaker(TextMaker):
    """``save_overhead.TextMaker`` with its cumulative weights computed once.

    ``random.choices`` with ``cum_weights`` draws exactly what it draws with ``weights``
    (it accumulates them the same way), so the texts are identical, about 4x faster.
    """

    def __init__(self, rng: random.Random, vocabulary: int = 5_000) -> None:
        super().__init__(rng, vocabulary)
        self.cum_weights = list(accumulate(self.weights))

    def __call__(self, i: int) -> str:
        rng = self.rng
        content = rng.choices(self.words, cum_weights=self.cum_weights, k=rng.randint(8, 16))
        out = [w if rng.random() > 0.35 else rng.choice(FUNCTION_WORDS) for w in content]
        return f"{i}: " + " ".join(out)


def text_source(seed: int = 7, path: Path | None = None) -> tuple[str, Callable[[int], str]]:
    """(description, i -> a distinct memory text), as ``save_overhead`` picks them.

    LoCoMo dev turns suffixed with ``#i`` when ``path`` or the shared data is there,
    else synthetic Zipf sentences prefixed with ``i:``.
    """
    rng = random.Random(seed)
    source = path or (LOCOMO if LOCOMO.is_file() else None)
    if source is None:
        return "synthetic Zipf sentences", FastTextMaker(rng)
    with source.open(encoding="utf-8") as f:
        turns = [json.loads(line)["text"] for line in f if line.strip()]
    return f"{source.name} turns", lambda i: f"{rng.choice(turns)} #{i}"


def query_source(count: int, seed: int = 11) -> tuple[str, list[str]]:
    """(description, queries): LoCoMo dev questions when there, else 3-6 word samples."""
    rng = random.Random(seed)
    questions = LOCOMO.with_name("queries.jsonl")
    if questions.is_file():
        with questions.open(encoding="utf-8") as f:
            rows = [json.loads(line)["question"] for line in f if line.strip()]
        return "LoCoMo dev questions", [rng.choice(rows) for _ in range(count)]
    maker = FastTextMaker(random.Random(7))  # same vocabulary as the stored texts
    queries = []
    for i in range(count):
        words = maker(-1 - i).split()[1:]
        queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(3, 6)))))
    return "word samples of synthetic sentences", queries
