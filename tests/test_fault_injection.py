"""Fault injection: every save against a failing LLM endpoint ends in exactly one honest way.

A table of scenarios (``SCENARIOS``) scripts what the OpenAI-compatible endpoint does
to the requests that judge one target content: HTTP errors (429 with Retry-After,
5xx, 401/403/400/404), a hang past the judge's timeout, unreadable 200 bodies
(garbage, truncated JSON, an HTML error page, empty choices), socket faults (reset,
closed without a reply, body cut mid-stream, connection refused) and hostile model
output (not JSON, missing fields, out-of-range/NaN/infinite numbers, wrong types,
refusals, ``finish_reason="length"``, huge strings, extra fields). Each scenario
declares whether the judge should end with a judgement or give up, how many requests
that takes, and which retry waits it asks for.

Every scenario runs under both ``on_judge_error`` policies, through ``save`` (the
target alone) and ``save_many`` (a batch of three with the target in the middle; the
other two are answered normally, concurrently). Each save must end as exactly one of:

* judged: ``score_source == "llm"``, four components in [0, 0.25] equal to what the
  endpoint's valid reply stated (never a default), priority their sum as
  ``aimem.scoring.priority_from`` computes it, the row in the database;
* pending: ``score_source == "pending"``, every score None, content byte-identical,
  ``stats().pending`` up by one, not counted in the cap (it archives nothing);
* raised: ``aimem.JudgeError`` and nothing written (``stats().total`` and the rows of
  ``memories`` and ``memory_history``, read from the database directly, are unchanged).

Each case saves into a namespace of its own in one store (``store_url``: a SQLite file,
or a PostgreSQL database), so several hundred cases cost one database, not one each.
The last tests inject storage faults instead: a statement failing inside the write
transaction (both backends), and on PostgreSQL the server ending aimem's connection
mid-write (``pg_terminate_backend`` from a trigger).

The endpoint is ``aimem.testing.OpenAIStub`` on 127.0.0.1, subclassed (``FaultStub``)
so that scripted replies answer only requests whose ``<memory-data>`` block holds
``FAULT_TAG``: concurrent batch siblings can then never consume the target's faults.
Socket faults that an HTTP server cannot produce are served by ``DropProxy``, a tiny
TCP front that forwards everything else to the stub. Retry waits go to a recording
stand-in for ``aimem.judges.transport._sleep``, so a ``Retry-After: 2`` costs nothing.

Sharing the table with ``bench/fault_injection.py``: the bench loads this file by
path (``importlib``) and calls ``run_case`` for every case, then prints the counts.
``run_case`` therefore needs no pytest fixture: it reports what it saw as an outcome
plus a list of violations, which the test asserts is empty. One table, one runner,
no pytest hook or environment variable; tests never import from ``bench/``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import re
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from _llm import recorded_waits

import aimem
from aimem.judges.prompts import extract_data_block
from aimem.scoring import COMPONENT_MAX, COMPONENTS, priority_from
from aimem.sync_store import run_sync
from aimem.testing import FixedJudge, OpenAIStub, StubReply, chat_completion

try:
    from _db import dump_text, execute, is_postgres, rows, scalar
    from _stores import on_postgres, store_url
except ModuleNotFoundError:  # bench/fault_injection.py loads this file by path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _db import dump_text, execute, is_postgres, rows, scalar
    from _stores import on_postgres, store_url

#: Seconds per request in scenarios that hang: tiny, so hangs cost little.
TIMEOUT = 0.5
#: Seconds per request everywhere else: a valid loopback reply takes ~5 ms, but on a busy
#: 2-core CI machine one can exceed TIMEOUT, and a spurious retry breaks the exact counts.
CALM_TIMEOUT = 10.0
ATTEMPTS = 3
#: A hung reply waits this long: far past TIMEOUT (the stub wakes it when it stops).
HANG = 30.0
#: The judge's cap on any retry wait, a server's Retry-After included.
MAX_RETRY_WAIT = 60.0
API_KEY = "sk-test"
MAX_MEMORIES = 3

#: Requests judging content that contains this tag get the scenario's scripted replies.
FAULT_TAG = "#fault"
#: The content the faults hit: non-ASCII, a tab and trailing spaces, to prove it is kept verbatim.
TARGET = f"Tagged ☕ café\tnaïve — 東京 {FAULT_TAG} (keep me verbatim)  "
#: save_many batch: the target in the middle, two siblings the endpoint answers normally.
BATCH = ("Prefers green tea over coffee in the morning.", TARGET, "Works on compilers in Rust.")
#: Memories present before every save: client-scored at 0.1, so judged saves archive them.
SEEDS = ("seed: likes hiking", "seed: has a cat", "seed: lives in Osaka")
SEED_COMPONENTS = dict(zip(COMPONENTS, (0.01, 0.02, 0.03, 0.04), strict=True))
#: What a scripted valid reply states (distinct values, so a swapped or defaulted field shows).
SCRIPTED = dict(zip(COMPONENTS, (0.03, 0.07, 0.11, 0.19), strict=True))

Outcome = Literal["judged", "pending", "raised"]
Policy = Literal["pending", "raise"]
Method = Literal["save", "save_many"]


def stated_components(content: str) -> dict[str, float]:
    """What the stub states for an unscripted request: four values in [0.05, 0.25], by content."""
    digest = hashlib.sha256(content.encode("utf-8")).digest()
    return {name: round(0.05 + digest[i] % 21 / 100, 2) for i, name in enumerate(COMPONENTS)}


# --- the scenario table ------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """What the endpoint does to one request judging the target.

    ``reply`` is sent by the stub; ``drop`` ("reset", "close" or "truncate") is a socket
    fault served by ``DropProxy``; ``states`` are the components of a valid judgement
    (None when the reply is not one).
    """

    reply: StubReply | None = None
    drop: Literal["reset", "close", "truncate"] | None = None
    states: Mapping[str, float] | None = None


@dataclass(frozen=True)
class Scenario:
    """One row of the table.

    Attributes:
        name: unique, used as the test id.
        steps: scripted replies, in order; later requests get valid unscripted replies.
        judged: True when the judge should end with a judgement, False when it gives up.
        requests: requests the target's judgement sends in all.
        waits: retry waits asked for: the exact values when the server dictates them
            (Retry-After), else how many (backoff has jitter).
        refused: the judge points at a loopback port where nothing listens.
    """

    name: str
    steps: tuple[Step, ...]
    judged: bool
    requests: int
    waits: tuple[float, ...] | int = 0
    refused: bool = False

    @property
    def wait_count(self) -> int:
        return self.waits if isinstance(self.waits, int) else len(self.waits)

    @property
    def hangs(self) -> int:
        return sum(1 for s in self.steps if s.reply is not None and s.reply.delay >= HANG)


def judgement(**changes: Any) -> dict[str, Any]:
    """A valid judgement stating ``SCRIPTED``, with ``changes`` applied."""
    return {
        "interpreted_content": "Scripted interpretation.",
        **SCRIPTED,
        "rationale": "scripted",
        **changes,
    }


def without(*names: str) -> dict[str, Any]:
    return {k: v for k, v in judgement().items() if k not in names}


def with_literal(name: str, literal: str) -> str:
    """Judgement JSON whose ``name`` is a raw JSON token (``Infinity``, ``1e999``)."""
    return json.dumps(judgement(**{name: "@@"})).replace('"@@"', literal)


def says(
    text: str | None,
    *,
    finish_reason: str = "stop",
    refusal: str | None = None,
    headers: Mapping[str, str] | None = None,
    states: Mapping[str, float] | None = None,
) -> Step:
    """A 200 chat completion whose message content is ``text``."""
    body = chat_completion(text, finish_reason=finish_reason, refusal=refusal)
    return Step(StubReply(body=body, headers=dict(headers or {})), states=states)


def valid(*, headers: Mapping[str, str] | None = None, **changes: Any) -> Step:
    """A valid judgement: what it states is what must be stored."""
    return says(json.dumps(judgement(**changes)), headers=headers, states=SCRIPTED)


def invalid(**changes: Any) -> Step:
    """Well-formed JSON that is not a valid judgement."""
    return says(json.dumps(judgement(**changes)))


def message_content(value: Any) -> Step:
    """A completion whose ``message.content`` is not a string at all."""
    body = chat_completion(None)
    body["choices"][0]["message"]["content"] = value
    return Step(StubReply(body=body))


def status(code: int, headers: Mapping[str, str] | None = None, message: str = "boom") -> Step:
    error = {"error": {"message": message, "type": "stub_error"}}
    return Step(StubReply(status=code, body=error, headers=dict(headers or {})))


def raw(text: str, *, code: int = 200, content_type: str = "application/json") -> Step:
    """A body sent verbatim, labelled with ``content_type``."""
    return Step(StubReply(status=code, body=text, headers={"Content-Type": content_type}))


def envelope(**changes: Any) -> Step:
    """A 200 JSON body shaped like (or unlike) a chat completion."""
    return Step(StubReply(body={**chat_completion(json.dumps(judgement())), **changes}))


def hang() -> Step:
    """A valid reply that arrives long after the judge stopped waiting."""
    return Step(StubReply(body=chat_completion(json.dumps(judgement())), delay=HANG))


def drop(kind: Literal["reset", "close", "truncate"]) -> Step:
    return Step(drop=kind)


HTML = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
TRUNCATED = json.dumps(chat_completion(json.dumps(judgement())))[:90]
PROSE = "Sure! This memory seems fairly important to the user."
NAN = float("nan")

SCENARIOS: tuple[Scenario, ...] = (
    # HTTP failures worth a retry: 408/409/429/5xx, Retry-After honoured (capped at 60 s).
    Scenario("429-retry-after-2s-once", (status(429, {"Retry-After": "2"}),), True, 2, (2.0,)),
    Scenario(
        "429-retry-after-ms-once", (status(429, {"Retry-After-Ms": "1500"}),), True, 2, (1.5,)
    ),
    Scenario(
        "429-retry-after-date-capped-once",
        (status(429, {"Retry-After": "Fri, 31 Dec 2099 23:59:59 GMT"}),),
        True,
        2,
        (MAX_RETRY_WAIT,),
    ),
    Scenario("429-retry-after-garbage-once", (status(429, {"Retry-After": "soon"}),), True, 2, 1),
    Scenario("429-always", (status(429, {"Retry-After": "1"}),) * 3, False, 3, (1.0, 1.0)),
    Scenario("408-once", (status(408),), True, 2, 1),
    Scenario("409-once", (status(409),), True, 2, 1),
    Scenario("500-once", (status(500),), True, 2, 1),
    Scenario("500-twice", (status(500),) * 2, True, 3, 2),
    Scenario("500-always", (status(500),) * 3, False, 3, 2),
    Scenario("502-html-page-once", (raw(HTML, code=502, content_type="text/html"),), True, 2, 1),
    Scenario("503-retry-after-3-once", (status(503, {"Retry-After": "3"}),), True, 2, (3.0,)),
    Scenario("504-always", (status(504),) * 3, False, 3, 2),
    # HTTP failures that no retry fixes: one request, then the policy.
    Scenario("400-bad-request", (status(400, message="messages malformed"),), False, 1),
    # A refusal naming response_format steps down once (json_object), never retried as is.
    Scenario(
        "400-response-format-refused",
        (status(400, message="response_format unsupported"),) * 2,
        False,
        2,
    ),
    Scenario("401-unauthorized", (status(401, message=f"Incorrect API key {API_KEY}"),), False, 1),
    Scenario("403-forbidden", (status(403, message="no access to stub-model"),), False, 1),
    Scenario("404-model-not-found", (status(404, message="model not found"),), False, 1),
    Scenario("500-then-401", (status(500), status(401)), False, 2, 1),
    # A hang past the timeout costs one timeout per attempt, never the hang itself.
    Scenario("hang-once", (hang(),), True, 2, 1),
    Scenario("hang-always", (hang(),) * 3, False, 3, 2),
    # Unreadable 200 bodies are transport hiccups: retried, not re-asked.
    Scenario("200-garbage-body-once", (raw("Service temporarily unavailable"),), True, 2, 1),
    Scenario("200-truncated-json-body-once", (raw(TRUNCATED),), True, 2, 1),
    Scenario("200-truncated-json-body-always", (raw(TRUNCATED),) * 3, False, 3, 2),
    Scenario("200-empty-body-once", (raw(""),), True, 2, 1),
    Scenario("200-html-error-page-once", (raw(HTML, content_type="text/html"),), True, 2, 1),
    Scenario("200-html-error-page-always", (raw(HTML, content_type="text/html"),) * 3, False, 3, 2),
    Scenario("200-html-labelled-json-once", (raw(HTML),), True, 2, 1),
    Scenario("200-error-object-once", (raw('{"error": {"message": "overloaded"}}'),), True, 2, 1),
    Scenario("200-json-array-body-once", (raw("[]"),), True, 2, 1),
    Scenario("empty-choices-once", (envelope(choices=[]),), True, 2, 1),
    Scenario("empty-choices-always", (envelope(choices=[]),) * 3, False, 3, 2),
    Scenario("null-choices-once", (envelope(choices=None),), True, 2, 1),
    # Socket faults (DropProxy) and a port where nothing listens.
    Scenario("connection-reset-once", (drop("reset"),), True, 2, 1),
    Scenario("connection-reset-always", (drop("reset"),) * 3, False, 3, 2),
    Scenario("closed-without-reply-once", (drop("close"),), True, 2, 1),
    Scenario("closed-without-reply-always", (drop("close"),) * 3, False, 3, 2),
    Scenario("body-cut-mid-stream-once", (drop("truncate"),), True, 2, 1),
    Scenario("connection-refused", (), False, 3, 2, refused=True),
    # Invalid model output: one corrective re-ask, then the policy; never clamped.
    Scenario("prose-not-json-once", (says(PROSE),), True, 2),
    Scenario("prose-not-json-twice", (says(PROSE),) * 2, False, 2),
    Scenario("truncated-json-content-once", (says('{"interpreted_content": "User li'),), True, 2),
    Scenario(
        "finish-length-truncated-once",
        (says('{"interpreted_content": "User li', finish_reason="length"),),
        True,
        2,
    ),
    Scenario(
        "finish-length-twice",
        (says('{"interpreted_content": "Us', finish_reason="length"),) * 2,
        False,
        2,
    ),
    Scenario(
        "finish-length-complete-json-once",
        (says(json.dumps(judgement()), finish_reason="length"),),
        True,
        2,
    ),
    Scenario(
        "refusal-content-null-once", (says(None, refusal="I can't help with that."),), True, 2
    ),
    Scenario("refusal-twice", (says(None, refusal="I can't help with that."),) * 2, False, 2),
    Scenario("content-null-once", (says(None),), True, 2),
    Scenario("content-empty-string-once", (says(""),), True, 2),
    Scenario("content-number-once", (message_content(42),), True, 2),
    Scenario("missing-field-once", (says(json.dumps(without("utility"))),), True, 2),
    Scenario(
        "missing-fields-twice",
        (says(json.dumps(without("utility"))), says(json.dumps(without("interpreted_content")))),
        False,
        2,
    ),
    Scenario("empty-object-once", (says("{}"),), True, 2),
    Scenario("json-array-content-once", (says("[0.1, 0.1, 0.1, 0.1]"),), True, 2),
    Scenario("json-null-content-once", (says("null"),), True, 2),
    Scenario("out-of-range-high-once", (invalid(utility=0.3),), True, 2),
    Scenario("out-of-range-twice", (invalid(utility=0.3), invalid(novelty=1.0)), False, 2),
    Scenario("out-of-range-negative-once", (invalid(emotional_impact=-0.01),), True, 2),
    Scenario("nan-once", (invalid(novelty=NAN),), True, 2),
    Scenario("nan-twice", (invalid(novelty=NAN), invalid(utility=NAN)), False, 2),
    Scenario("infinity-once", (says(with_literal("novelty", "Infinity")),), True, 2),
    Scenario("overflow-1e999-once", (says(with_literal("utility", "1e999")),), True, 2),
    Scenario("numbers-as-strings-once", (invalid(utility="0.2", novelty="0.1"),), True, 2),
    Scenario("null-component-once", (invalid(utility=None),), True, 2),
    Scenario("bool-component-once", (invalid(utility=True),), True, 2),
    Scenario("list-component-once", (invalid(utility=[0.1]),), True, 2),
    Scenario("blank-interpretation-once", (invalid(interpreted_content="   "),), True, 2),
    Scenario("interpretation-not-a-string-once", (invalid(interpreted_content=["a"]),), True, 2),
    Scenario("huge-garbage-1mb-once", (says("A" * 1_000_000),), True, 2),
    Scenario("huge-garbage-1mb-twice", (says("A" * 1_000_000),) * 2, False, 2),
    # Odd but valid: accepted on the first try, exactly as stated.
    Scenario(
        "extra-fields-incl-priority",
        (valid(priority_score=0.99, total=1.0, confidence="high", notes={"a": [1]}),),
        True,
        1,
    ),
    Scenario(
        "wrong-content-type-valid-json", (valid(headers={"Content-Type": "text/plain"}),), True, 1
    ),
    Scenario(
        "code-fenced-json",
        (says(f"```json\n{json.dumps(judgement())}\n```", states=SCRIPTED),),
        True,
        1,
    ),
    Scenario("huge-interpretation-200k", (valid(interpreted_content="x" * 200_000),), True, 2),
    Scenario("huge-rationale-100k", (valid(rationale="y" * 100_000),) * 2, False, 2),
    # Mixed sequences: transport retries inside the re-ask, each ask with its own budget.
    Scenario("prose-then-valid-scripted", (says(PROSE), valid()), True, 2),
    Scenario("prose-then-500-then-ok", (says(PROSE), status(500)), True, 3, 1),
    Scenario("500-then-prose-then-ok", (status(500), says(PROSE)), True, 3, 1),
    Scenario("reset-then-prose-then-ok", (drop("reset"), says(PROSE)), True, 3, 1),
    Scenario("prose-then-500-always", (says(PROSE), *(status(500),) * 3), False, 4, 2),
    Scenario(
        "500-twice-then-prose-twice",
        (status(500), status(500), says(PROSE), says(PROSE)),
        False,
        4,
        2,
    ),
    Scenario(
        "full-budget-then-ok",
        (status(500), status(500), says(PROSE), status(500), status(500)),
        True,
        6,
        4,
    ),
    Scenario("prose-then-401", (says(PROSE), status(401)), False, 2),
)


def expected_outcome(scenario: Scenario, policy: Policy) -> Outcome:
    """The one outcome the table says a save of the target must have."""
    if scenario.judged:
        return "judged"
    return "pending" if policy == "pending" else "raised"


# --- the endpoint: stub, socket-fault proxy, dead port ----------------------------------------


def is_target(request: Mapping[str, Any]) -> bool:
    """Whether a chat request judges the target (its first ``<memory-data>`` holds the tag)."""
    for message in request.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            block = extract_data_block(str(message.get("content")))
            if block is not None:
                return FAULT_TAG in block
    return False


class FaultStub(OpenAIStub):
    """OpenAIStub whose scripted steps answer only requests judging the target.

    Other requests (batch siblings) get the stub's valid unscripted judgement, so
    concurrent saves can never eat the target's faults. ``target_requests`` counts the
    target's requests, including those ``DropProxy`` answers with a socket fault.
    """

    def __init__(self, steps: Sequence[Step] = ()) -> None:
        super().__init__(scorer=stated_components)
        self.steps: deque[Step] = deque(steps)
        self.steps_lock = threading.Lock()
        self.target_requests = 0

    def script(self, steps: Sequence[Step]) -> None:
        """Start over with new steps for the target (one stub serves many cases)."""
        with self.steps_lock:
            self.steps = deque(steps)
            self.target_requests = 0

    def take_drop(self, request: Mapping[str, Any]) -> str | None:
        """The socket fault for this request, if the target's next step is one (proxy side)."""
        if not is_target(request):
            return None
        with self.steps_lock:
            if self.steps and self.steps[0].drop is not None:
                self.target_requests += 1
                return self.steps.popleft().drop
        return None

    def _chat(self, request: dict[str, Any]) -> StubReply:
        if is_target(request):
            with self.steps_lock:
                self.target_requests += 1
                step = self.steps.popleft() if self.steps else None
            if step is not None and step.reply is not None:
                return step.reply
        return super()._chat(request)


class DropProxy:
    """A TCP front for a FaultStub: socket faults for the target, the rest forwarded.

    ``reset`` closes with SO_LINGER 0 (an RST), ``close`` closes without a reply,
    ``truncate`` sends headers promising 4 KiB and a few bytes of body, then closes.
    """

    def __init__(self, stub: FaultStub) -> None:
        self.stub = stub
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, name="drop-proxy", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def __enter__(self) -> DropProxy:
        self._acceptor.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()
        self._acceptor.join()
        for thread in self._threads:
            thread.join(timeout=5)
        self._listener.close()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(10)
                head, body = _read_request(conn)
                try:
                    request = json.loads(body)
                except ValueError:
                    request = {}
                kind = self.stub.take_drop(request) if isinstance(request, dict) else None
                if kind is None:
                    self._forward(conn, head + body)
                elif kind == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                elif kind == "truncate":
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        b'Content-Length: 4096\r\n\r\n{"id": "chatcmpl-stub", "cho'
                    )
                # "close": leave the with-block, closing without a word.
            except OSError:
                pass  # the client gave up first

    def _forward(self, conn: socket.socket, data: bytes) -> None:
        host, port = self.stub.base_url.removeprefix("http://").split("/")[0].split(":")
        with socket.create_connection((host, int(port)), timeout=HANG + 5) as upstream:
            upstream.sendall(data)
            while chunk := upstream.recv(65536):
                conn.sendall(chunk)


def _read_request(conn: socket.socket) -> tuple[bytes, bytes]:
    """One HTTP request: (head including the blank line, body of Content-Length bytes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("client closed before sending a request")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("client closed mid-request")
        body += chunk
    return head + b"\r\n\r\n", body


def dead_url() -> str:
    """A loopback URL where nothing listens: connection refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def aimem_warnings() -> Iterator[list[str]]:
    handler = _Warnings()
    logger = logging.getLogger("aimem")
    logger.addHandler(handler)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)


# --- looking at the database directly -----------------------------------------------------

_SCORES = (*COMPONENTS, "priority_score")


def file_counts(url: str, namespace: str = "default") -> tuple[int, int]:
    """The namespace's rows in ``memories`` and ``memory_history``, read from the database."""
    memories = scalar(url, "SELECT count(*) FROM memories WHERE namespace = ?", (namespace,))
    history = scalar(url, "SELECT count(*) FROM memory_history WHERE namespace = ?", (namespace,))
    return int(memories), int(history)


def file_row(url: str, memory_id: str) -> dict[str, Any] | None:
    columns = ("content", "score_source", "version", *_SCORES)
    found = rows(url, f"SELECT {', '.join(columns)} FROM memories WHERE id = ?", (memory_id,))
    return dict(zip(columns, found[0], strict=True)) if found else None


# --- running one case ------------------------------------------------------------------------


@dataclass
class CaseResult:
    """What one save did: the target's outcome, every item's, the checks that failed."""

    outcome: str
    items: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    waits: list[float] = field(default_factory=list)


def new_judge(base_url: str, timeout: float = CALM_TIMEOUT) -> aimem.OpenAIJudge:
    return aimem.OpenAIJudge(
        base_url=base_url,
        api_key=API_KEY,
        model="stub-model",
        timeout=timeout,
        max_attempts=ATTEMPTS,
        max_retry_wait=MAX_RETRY_WAIT,
    )


def new_store(
    url: str,
    judge: aimem.OpenAIJudge,
    policy: Policy,
    max_memories: int = MAX_MEMORIES,
    namespace: str = "default",
) -> aimem.MemoryStore:
    return aimem.MemoryStore(
        url,
        judge=judge,
        namespace=namespace,
        on_judge_error=policy,
        max_memories=max_memories,
        min_priority_score=0.0,
        # One call per item, so each fault reaches exactly the item it targets; batch
        # calls have their own failure tests in test_batch_judge.py.
        judge_batch_size=1,
    )


def seed(store: aimem.MemoryStore) -> None:
    for content in SEEDS:
        store.save(
            content,
            interpretation=aimem.Interpretation(
                interpreted_content=content, rationale="seed", **SEED_COMPONENTS
            ),
        )


def case_namespace(scenario: Scenario, policy: Policy, method: Method) -> str:
    """The case's own namespace (at most 64 letters, digits, ``-``, ``_`` or ``.``)."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", f"{scenario.name}.{policy}.{method}")
    if len(name) <= 64:
        return name
    return f"{name[:47]}.{hashlib.sha256(name.encode()).hexdigest()[:16]}"


def run_case(
    scenario: Scenario,
    policy: Policy,
    method: Method,
    workdir: Path,
    stub: FaultStub | None = None,
) -> CaseResult:
    """Save under one scenario, policy and method; report the outcome and any violation.

    ``stub`` may be shared between cases (starting a server costs ~50 ms); its script
    is replaced. The store in ``workdir`` (``store_url``) may be shared too: each case
    saves into a fresh namespace of its own.
    """
    url = store_url(workdir / "fault-injection.db")
    namespace = case_namespace(scenario, policy, method)
    with contextlib.ExitStack() as stack:
        if stub is None:
            stub = stack.enter_context(FaultStub())
        stub.script(scenario.steps)
        base_url = stub.base_url
        if scenario.refused:
            base_url = dead_url()
        elif any(step.drop for step in scenario.steps):
            base_url = stack.enter_context(DropProxy(stub)).base_url
        waits = stack.enter_context(recorded_waits())
        judge = new_judge(base_url, TIMEOUT if scenario.hangs else CALM_TIMEOUT)
        stack.callback(lambda: run_sync(judge.aclose()))
        store = new_store(url, judge, policy, namespace=namespace)
        stack.callback(store.close)
        if store.stats().total:
            raise AssertionError(f"namespace {namespace!r} is not fresh: run each case once")
        seed(store)
        result = _check_save(scenario, policy, method, store, url, stub, waits)
        result.waits = list(waits)
    return result


def _check_save(
    scenario: Scenario,
    policy: Policy,
    method: Method,
    store: aimem.MemoryStore,
    url: str,
    stub: FaultStub,
    waits: list[float],
) -> CaseResult:
    contents = [TARGET] if method == "save" else list(BATCH)
    target_index = contents.index(TARGET)
    ns = store.namespace
    before, rows_before = store.stats(), file_counts(url, ns)
    error: Exception | None = None
    returned: list[aimem.Memory] = []
    with aimem_warnings() as warned:
        started = time.perf_counter()
        try:
            returned = [store.save(TARGET)] if method == "save" else store.save_many(contents)
        except Exception as exc:  # judged below: only a JudgeError is acceptable
            error = exc
        elapsed = time.perf_counter() - started
    after, rows_after = store.stats(), file_counts(url, ns)

    v: list[str] = []
    if error is not None:
        result = CaseResult("raised", ["raised"] * len(contents), v, elapsed)
        if type(error) is not aimem.JudgeError:
            v.append(f"expected aimem.JudgeError, got {type(error).__qualname__}: {error}")
        elif error.attempts != scenario.requests:
            v.append(f"JudgeError.attempts is {error.attempts}, expected {scenario.requests}")
        if API_KEY in str(error):
            v.append("the error message shows the API key")
        if (after.total, after.count, after.pending, after.archived) != (
            before.total,
            before.count,
            before.pending,
            before.archived,
        ):
            v.append(f"a raising save changed the store: {before} -> {after}")
        if rows_after != rows_before:
            v.append(
                f"a raising save wrote rows (memories, history): {rows_before} -> {rows_after}"
            )
    else:
        items = [
            _check_memory(content, m, _stated_for(scenario, content), url, store, v)
            for content, m in zip(contents, returned, strict=False)
        ]
        if [m.content for m in returned] != contents:
            v.append("the returned memories are not one per content, in input order")
        result = CaseResult(items[target_index] if items else "missing", items, v, elapsed)
        judged, pending = items.count("judged"), items.count("pending")
        added = (after.total - before.total, rows_after[0] - rows_before[0])
        if added != (len(contents), len(contents)):
            v.append(f"rows added (stats, file): {added}, expected {len(contents)}")
        if after.pending - before.pending != pending:
            v.append(f"stats().pending rose by {after.pending - before.pending}, not {pending}")
        # The seeds fill the cap at priority 0.1; each judged memory (>= 0.2) archives one.
        # A pending memory is outside the cap, so it archives nothing.
        if after.archived - before.archived != judged:
            v.append(f"{after.archived - before.archived} archived for {judged} judged")
        if after.count - after.pending - after.pinned > MAX_MEMORIES:
            v.append("the cap is exceeded")
        if len(warned) != pending:
            v.append(f"{len(warned)} warnings logged for {pending} pending memories")

    # Every save ends as the table says; the siblings of a batch are judged normally.
    expected = expected_outcome(scenario, policy)
    if result.outcome != expected:
        v.append(f"outcome {result.outcome}, expected {expected}")
    if expected != "raised" and len(result.items) == len(contents):
        sibling = expected if scenario.refused else "judged"
        for i, item in enumerate(result.items):
            if i != target_index and item != sibling:
                v.append(f"batch item {i} is {item}, expected {sibling}")
    # The endpoint saw exactly the requests the table predicts; all steps were used.
    if not scenario.refused and stub.target_requests != scenario.requests:
        v.append(f"{stub.target_requests} requests for the target, expected {scenario.requests}")
    if stub.steps:
        v.append(f"{len(stub.steps)} scripted steps left unused")
    failing = len(contents) if scenario.refused else 1
    if isinstance(scenario.waits, tuple):
        if waits != list(scenario.waits):
            v.append(f"retry waits {waits}, expected {list(scenario.waits)}")
    elif policy == "raise" and failing > 1:
        # The first failure cancels its siblings' calls, so they may have waited less.
        if not scenario.wait_count <= len(waits) <= scenario.wait_count * failing:
            v.append(
                f"{len(waits)} retry waits, expected {scenario.wait_count} to "
                f"{scenario.wait_count * failing}"
            )
    elif len(waits) != scenario.wait_count * failing:
        v.append(f"{len(waits)} retry waits, expected {scenario.wait_count * failing}")
    # A hang costs a timeout per hung attempt, never the hang itself.
    if elapsed < 0.9 * TIMEOUT * scenario.hangs or elapsed >= HANG / 2:
        v.append(f"took {elapsed:.2f} s with {scenario.hangs} hung attempts of {TIMEOUT} s")
    return result


def _check_memory(
    content: str,
    memory: aimem.Memory,
    stated: Mapping[str, float],
    url: str,
    store: aimem.MemoryStore,
    v: list[str],
) -> str:
    """Classify one returned memory as judged or pending, checking that it is honest."""
    row = file_row(url, memory.id)
    if row is None:
        v.append(f"memory {memory.id} was returned but is not in the database")
        return "missing"
    if memory.content != content or row["content"].encode() != content.encode():
        v.append(f"content changed: {content!r} -> {memory.content!r} / {row['content']!r}")
    if store.get(memory.id).score_source != memory.score_source:
        v.append("get() disagrees with the returned memory")
    scores = {name: getattr(memory, name) for name in _SCORES}
    if memory.score_source == "pending":
        if any(value is not None for value in scores.values()):
            v.append(f"a pending memory has scores: {scores}")
        if any(row[name] is not None for name in _SCORES) or row["score_source"] != "pending":
            v.append(f"the pending row is not pending in the database: {row}")
        if memory.version != 1:
            v.append(f"a new pending memory has version {memory.version}")
        return "pending"
    if memory.score_source != "llm":
        v.append(f"score_source {memory.score_source!r} is neither 'llm' nor 'pending'")
        return "other"
    components = {name: scores[name] for name in COMPONENTS}
    if not all(
        isinstance(x, float) and math.isfinite(x) and 0.0 <= x <= COMPONENT_MAX
        for x in components.values()
    ):
        v.append(f"components out of [0, {COMPONENT_MAX}]: {components}")
        return "judged"
    if components != dict(stated):
        v.append(f"components {components} are not what the endpoint stated: {dict(stated)}")
    if memory.priority_score != priority_from(*components.values()):
        v.append(f"priority {memory.priority_score} is not the sum of {components}")
    if any(row[name] != scores[name] for name in _SCORES) or row["score_source"] != "llm":
        v.append(f"the stored row disagrees with the returned memory: {row}")
    if not memory.interpreted_content.strip() or memory.model != "stub-model":
        v.append(f"judged without an interpretation or model: {memory.model!r}")
    return "judged"


def _stated_for(scenario: Scenario, content: str) -> Mapping[str, float]:
    """What the reply that judged ``content`` stated: the scripted step or the stub's rule."""
    if content == TARGET and scenario.requests == len(scenario.steps):
        states = scenario.steps[-1].states
        if states is not None:
            return states
    return stated_components(content)


# --- the tests -------------------------------------------------------------------------------

#: Cases that expose a library bug: (scenario name, policy, method) -> reason. None so far.
KNOWN_BUGS: dict[tuple[str, str, str], str] = {}
BY_NAME = {s.name: s for s in SCENARIOS}

POLICIES: tuple[Policy, ...] = ("pending", "raise")
METHODS: tuple[Method, ...] = ("save", "save_many")

CASES = [
    pytest.param(
        scenario,
        policy,
        method,
        id=f"{scenario.name}-{policy}-{method}",
        marks=(
            [pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[key])] if key in KNOWN_BUGS else []
        ),
    )
    for scenario in SCENARIOS
    for policy in POLICIES
    for method in METHODS
    for key in [(scenario.name, policy, method)]
]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[FaultStub]:
    """One stub for the module; each case scripts it afresh."""
    with FaultStub() as stub:
        yield stub


@pytest.fixture(scope="module")
def cases_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the module's one store for the table's cases lives (a namespace per case)."""
    return tmp_path_factory.mktemp("fault-injection")


def test_every_case_has_a_namespace_of_its_own() -> None:
    names = {case_namespace(s, p, m) for s in SCENARIOS for p in POLICIES for m in METHODS}
    assert len(names) == len(SCENARIOS) * len(POLICIES) * len(METHODS)
    assert all(len(name) <= 64 for name in names)


def test_the_table_is_well_formed() -> None:
    assert len(BY_NAME) == len(SCENARIOS)
    assert {s.judged for s in SCENARIOS} == {True, False}
    for s in SCENARIOS:
        # Requests are bounded: max_attempts per ask, and at most one corrective re-ask.
        assert 1 <= s.requests <= 2 * ATTEMPTS, s.name
        assert len(s.steps) <= s.requests, s.name


@pytest.mark.parametrize(("scenario", "policy", "method"), CASES)
def test_each_save_is_judged_pending_or_raised_honestly(
    scenario: Scenario, policy: Policy, method: Method, cases_dir: Path, endpoint: FaultStub
) -> None:
    result = run_case(scenario, policy, method, cases_dir, endpoint)

    assert result.violations == []
    assert result.outcome == expected_outcome(scenario, policy)


def test_retry_after_is_honoured_without_really_sleeping(
    tmp_path: Path, endpoint: FaultStub
) -> None:
    result = run_case(BY_NAME["429-retry-after-2s-once"], "raise", "save", tmp_path, endpoint)

    assert result.outcome == "judged" and result.violations == []
    assert result.waits == [2.0]  # the server's Retry-After: 2, asked of the sleep hook
    assert result.elapsed < 2.0  # ...which the test's hook does not sleep through


def test_a_hang_costs_about_timeout_times_attempts_not_forever(
    tmp_path: Path, endpoint: FaultStub
) -> None:
    result = run_case(BY_NAME["hang-always"], "raise", "save", tmp_path, endpoint)

    assert result.outcome == "raised" and result.violations == []
    assert 0.9 * TIMEOUT * ATTEMPTS <= result.elapsed < TIMEOUT * ATTEMPTS + 10 < HANG


def _save_pending(store: aimem.MemoryStore, endpoint: FaultStub) -> list[aimem.Memory]:
    """Three pending memories (each judgement refused with a 400) around a judged one."""
    endpoint.script([status(400)] * 3)
    saved = [
        store.save(f"First pending note {FAULT_TAG}"),
        store.save("Judged normally: likes jazz."),
        store.save(f"Second pending note {FAULT_TAG}  \ttabbed ✓"),
        store.save(f"Third pending note {FAULT_TAG}"),
    ]
    assert endpoint.target_requests == 3 and not endpoint.steps
    assert [m.score_source for m in saved] == ["pending", "llm", "pending", "pending"]
    assert store.stats().pending == 3
    return [m for m in saved if m.score_source == "pending"]


def test_reinterpret_pending_judges_every_pending_memory_once(
    tmp_path: Path, endpoint: FaultStub, waits: list[float]
) -> None:
    url = store_url(tmp_path / "pending.db")
    judge = new_judge(endpoint.base_url)
    try:
        with new_store(url, judge, "pending", 10) as store:
            pending = _save_pending(store, endpoint)
            recent = [m.id for m in store.list(order="recent")]
            endpoint.script([])  # the endpoint recovers: every request gets a valid judgement

            judged = store.reinterpret_pending()

            assert [m.id for m in judged] == [m.id for m in pending]  # oldest first, same ids
            assert endpoint.target_requests == 3  # one call each
            for old, new in zip(pending, judged, strict=True):
                assert new.score_source == "llm" and new.version == old.version + 1
                assert new.content == old.content and new.created_at == old.created_at
                components = {name: getattr(new, name) for name in COMPONENTS}
                assert components == stated_components(old.content)
                assert new.priority_score == priority_from(*components.values())
                assert store.get(new.id) == new
                row = file_row(url, new.id)
                assert row is not None and row["score_source"] == "llm" and row["version"] == 2
            assert [m.id for m in store.list(order="recent")] == recent
            assert store.stats().pending == 0
            assert store.reinterpret_pending() == []
            assert endpoint.target_requests == 3
    finally:
        run_sync(judge.aclose())


def test_reinterpret_pending_keeps_them_pending_while_the_judge_fails(
    tmp_path: Path, endpoint: FaultStub, waits: list[float]
) -> None:
    url = store_url(tmp_path / "pending.db")
    judge, dead, healthy = (
        new_judge(base) for base in (endpoint.base_url, dead_url(), endpoint.base_url)
    )
    try:
        with new_store(url, judge, "pending", 10) as store:
            pending = _save_pending(store, endpoint)
            counted = file_counts(url)
            endpoint.script([status(500)] * ATTEMPTS * 3)  # every retry of every memory fails

            assert store.reinterpret_pending() == []  # not raised, not lost

            assert endpoint.target_requests == ATTEMPTS * 3 and not endpoint.steps
            assert [store.get(m.id) for m in pending] == pending  # untouched, still version 1
            assert store.stats().pending == 3 and file_counts(url)[0] == counted[0]
        # After a restart, with the endpoint unreachable and the "raise" policy: still kept.
        with new_store(url, dead, "raise", 10) as store:
            assert store.reinterpret_pending() == []
            assert [store.get(m.id) for m in pending] == pending
        # And once a judge answers, each is judged.
        endpoint.script([])
        with new_store(url, healthy, "raise", 10) as store:
            judged = store.reinterpret_pending()
            assert [m.id for m in judged] == [m.id for m in pending]
            assert all(m.score_source == "llm" and m.version == 2 for m in judged)
            assert store.stats().pending == 0
    finally:
        for j in (judge, dead, healthy):
            run_sync(j.aclose())


# --- storage faults ----------------------------------------------------------------------------

#: A statement that fails inside the write transaction: the archive event a capacity pass
#: records, so the save's insert and the counter's update came before it.
_FAILING_ARCHIVE = {
    "sqlite": """CREATE TRIGGER injected_fault BEFORE INSERT ON memory_history
        WHEN NEW.event = 'archive' BEGIN SELECT RAISE(ABORT, 'injected fault'); END;""",
    "postgresql": """
        CREATE FUNCTION injected_fault() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.event = 'archive' THEN RAISE EXCEPTION 'injected fault'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER injected_fault BEFORE INSERT ON memory_history
          FOR EACH ROW EXECUTE FUNCTION injected_fault();""",
}


def test_a_statement_failing_mid_write_leaves_nothing_behind(db_url: str) -> None:
    dialect = "postgresql" if is_postgres(db_url) else "sqlite"
    with aimem.MemoryStore(
        db_url, judge=FixedJudge(), max_memories=2, min_priority_score=0.0
    ) as store:
        low = store.save("low note [score=0.10]")
        store.save("middle note [score=0.20]")
        execute(db_url, _FAILING_ARCHIVE[dialect])
        before, stats = dump_text(db_url), store.stats()
        with pytest.raises(aimem.StorageError, match="injected fault"):
            store.save("new note that would archive the low one [score=0.90]")
        assert dump_text(db_url) == before  # the insert and the counter went with it
        assert store.stats() == stats and store.get(low.id).archived_at is None
        execute(
            db_url, "DROP TRIGGER injected_fault" + (" ON memory_history" * is_postgres(db_url))
        )
        saved = store.save("new note that would archive the low one [score=0.90]")
        assert store.get(low.id).archive_reason == "over_capacity"
        assert [h.memory.id for h in store.search("archive")] == [saved.id]


#: The server ends the writing connection mid-statement, while ``kill_budget`` allows it.
_KILL_MID_WRITE = """
CREATE SEQUENCE injected_kills;
CREATE TABLE kill_budget (n integer NOT NULL);
INSERT INTO kill_budget VALUES (0);
CREATE FUNCTION injected_kill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF nextval('injected_kills') <= (SELECT n FROM kill_budget) THEN
    PERFORM pg_terminate_backend(pg_backend_pid());
    PERFORM pg_sleep(10);  -- the termination lands here, inside the transaction
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER injected_kill BEFORE INSERT ON memory_history
  FOR EACH ROW EXECUTE FUNCTION injected_kill();
"""


@pytest.mark.skipif(not on_postgres(), reason="PostgreSQL: the server ends aimem's connection")
def test_a_connection_the_server_ends_mid_write_is_rerun_and_never_half_kept(
    db_url: str,
) -> None:
    url = db_url + "&reconnect_timeout=2"
    with aimem.MemoryStore(
        url, judge=FixedJudge(), max_memories=2, min_priority_score=0.0
    ) as store:
        store.save("seed note [score=0.10]")
        execute(db_url, _KILL_MID_WRITE)
        execute(db_url, "UPDATE kill_budget SET n = 2")  # the first two tries are cut off
        saved = store.save("saved through two dropped connections [score=0.50]")
        # Two tries died inside their transaction; the third wrote the save, once.
        assert scalar(db_url, "SELECT last_value FROM injected_kills") == 3
        assert store.get(saved.id).access_count == 0  # not found and reinforced by a rerun
        same = "SELECT count(*) FROM memories WHERE content = ?"
        assert scalar(db_url, same, (saved.content,)) == 1
        events = "SELECT event FROM memory_history WHERE memory_id = ?"
        assert rows(db_url, events, (saved.id,)) == [("save",)]
        assert scalar(db_url, "SELECT capped FROM namespace_counts") == 2

        execute(db_url, "UPDATE kill_budget SET n = 1000000")  # now every try is cut off
        before, stats = dump_text(db_url), store.stats()
        started = time.monotonic()
        with pytest.raises(aimem.StorageError, match="terminating connection"):
            store.save("never acknowledged [score=0.90]")
        assert time.monotonic() - started < 10  # given up after reconnect_timeout
        assert scalar(db_url, "SELECT last_value FROM injected_kills") > 4  # it did retry
        assert dump_text(db_url) == before and store.stats() == stats
        execute(db_url, "UPDATE kill_budget SET n = 0")  # the store goes on once it may
        after = store.save("after the faults [score=0.60]")
        assert store.get(after.id).content == "after the faults [score=0.60]"
