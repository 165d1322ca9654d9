"""Property tests of the export format, through the public ``MemoryStore`` API only.

Every example gets a fresh temporary directory with real SQLite files, a scripted judge
(each judged call is answered with an ``aimem.Interpretation`` the test drew, or fails
with ``JudgeError`` so the memory is stored pending) and, when drawn, ``HashEmbedder``.

* Round trip: after any sequence of operations, ``export_to(a)``, ``import_from(a)`` into
  a fresh store with the same namespace and settings, then ``export_to(b)``: a and b are
  byte-identical. A few states the API reaches but random sequences seldom draw are
  spelled out in ``test_states_the_api_reaches_round_trip``.
* Whatever ``save()`` accepts round-trips in the same way, even with hostile
  interpretations and judges; what it refuses, it refuses with ``ValidationError``.
* Forgery (one test per kind in ``FORGERIES``): one field of one line of a sealed export
  is changed and the trailer is re-sealed exactly as ``aimem.transfer.export_file`` seals it
  (SHA-256 over the preceding lines, and their count), so only the invariant checks can notice.
  Importing the file into a store that already holds memories is refused (``ok=False`` in
  a dry run, ``ValidationError`` otherwise) and leaves that store exactly as it was. The
  random valid stores forged are built once per module (``Workshop``), so hypothesis
  varies only the forgery and a failure shrinks in seconds.
* Damage: a flipped byte, a cut, a dropped, swapped or extra line, with no re-sealing, is
  refused in the same way.

Changes the format legitimately allows are not forgeries and are not in ``FORGERIES``:

* A well-formed key ``content_hash`` that differs from the memory's content: ``update()``
  changes the content and keeps the keys, so this is normal after an update (it is a
  forgery only on a memory the history shows was never updated, which is in the list).
* A history event whose memory is not in the file: deleted memories leave their history.
* A timestamp written with another UTC offset (same instant), a float written as an
  integer, a component moved by one ulp while the priority is still its sum: the same
  values, or equally valid ones.
* Timestamps out of order (``updated_at``, ``last_accessed_at``, ``archived_at`` or a
  key's ``created_at`` before the memory's ``created_at``): each comes from the clock of
  the process that made the change, and clocks step back (NTP, another host), so the
  store does not keep that order and import does not demand it.
* A pinned archived memory (``pin()`` works on archived memories), an archived pending
  memory (``compress()`` archives those), an unknown ``archive_reason`` or
  ``schema_version`` (free text / informational in format 1), the namespace changed on
  every line (a file may come from any namespace; import writes into the store's own).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import math
import os
import shutil
import struct
import tempfile
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _stores import store_url
from hypothesis import HealthCheck, Phase, assume, given, note, settings
from hypothesis import strategies as st

import aimem
from aimem.testing import HashEmbedder

# No example database (a failure is reported with its seed; nothing is written to the
# checkout) and no explain phase: on a store-building test it costs minutes per failure.
_COMMON = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
)
ROUND_TRIP = settings(_COMMON, max_examples=50)
HOSTILE = settings(_COMMON, max_examples=20)
FORGERY = settings(_COMMON, max_examples=4)
DAMAGE = settings(_COMMON, max_examples=25)


@pytest.fixture(scope="module", autouse=True)
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Module-wide stand-in for conftest's per-test fixture (hypothesis reuses the test)."""
    home = tmp_path_factory.mktemp("fuzz-home")
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith(("AIMEM_", "OPENAI_")):
                mp.delenv(name)
        mp.setenv("HOME", str(home))
        mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        mp.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
        yield


# -- a judge that says what the test tells it to ---------------------------------------

FAIL = "the judge fails"  # a scripted answer: raise JudgeError, so the save is stored pending


class ScriptedJudge:
    """Answers each call with the next scripted answer; fails when none is left."""

    def __init__(self, source: str = "scripted") -> None:
        self.source = source
        self.answers: deque[aimem.Interpretation | str] = deque()

    def script(self, answers: Iterable[aimem.Interpretation | str]) -> None:
        self.answers = deque(answers)

    async def interpret(
        self, content: str, *, user_context: str | None = None, related: Sequence[Any] = ()
    ) -> aimem.Interpretation:
        answer = self.answers.popleft() if self.answers else FAIL
        if not isinstance(answer, aimem.Interpretation):
            raise aimem.JudgeError("scripted judge failure")
        return answer


def _judge(store: aimem.MemoryStore) -> ScriptedJudge:
    judge = store.judge
    assert isinstance(judge, ScriptedJudge)
    return judge


def _flat(component: float, text: str = "interpreted") -> aimem.Interpretation:
    return aimem.Interpretation(
        interpreted_content=text,
        emotional_impact=component,
        user_relevance=component,
        novelty=component,
        utility=component,
        rationale="flat",
    )


# -- what valid input looks like ---------------------------------------------------------

#: Pieces real text is made of: CJK, emoji (with modifiers and joiners), tabs, line
#: breaks (``\r\n`` is normalised by save), no-break and zero-width spaces.
_SPICE = (
    "日本語のメモ",
    "中文内容",
    "한국어",
    "ｶﾀｶﾅ",
    "😀",
    "👍🏽",
    "🧑‍💻",
    "\t",
    "\n",
    "\r\n",
    " ",
    "é",
    "\u00a0",
    "\u200b",
)
_ONE_LINE_SPICE = ("日本語", "記憶", "😀", "👍🏽", " ", "\u200d", "é")
# Every assigned or unassigned code point except control characters and surrogates.
_PRINTABLE = st.characters(codec="utf-8", exclude_categories=("Cc", "Cs"))

_piece = st.one_of(st.text(_PRINTABLE, min_size=1, max_size=8), st.sampled_from(_SPICE))
_one_line_piece = st.one_of(
    st.text(_PRINTABLE, min_size=1, max_size=8), st.sampled_from(_ONE_LINE_SPICE)
)
texts = st.lists(_piece, min_size=1, max_size=6).map("".join)
contents = texts.filter(lambda s: s.strip())
free_texts = st.one_of(st.just(""), texts)
one_line = st.lists(_one_line_piece, min_size=1, max_size=4).map("".join)
labels = one_line.filter(lambda s: s.strip())
user_contexts = st.one_of(st.none(), st.just(""), one_line)
idempotency_keys = st.one_of(st.none(), st.sampled_from(["k1", "k2", "retry-7", "キー", "🔑 key"]))
namespaces = st.from_regex(r"[A-Za-z0-9_.\-]{1,64}", fullmatch=True)

components = st.one_of(
    st.floats(min_value=0.0, max_value=0.25),
    st.sampled_from([0.0, 0.25, 0.075, 0.1, 1 / 3 / 4, 5e-324]),
)
usages = st.builds(
    aimem.Usage,
    model=st.one_of(st.none(), labels),
    prompt_tokens=st.integers(0, 10**7),
    completion_tokens=st.integers(0, 10**7),
    latency_ms=st.floats(min_value=0.0, max_value=1e7),
    retries=st.integers(0, 10),
)
interpretations = st.builds(
    aimem.Interpretation,
    interpreted_content=contents,
    emotional_impact=components,
    user_relevance=components,
    novelty=components,
    utility=components,
    rationale=free_texts,
    model=st.one_of(st.none(), labels),
    prompt_version=st.one_of(st.none(), st.sampled_from(["interpret.v1", "v2", "実験-3"])),
    usage=st.one_of(st.none(), usages),
)
#: What the judge does when asked: mostly an interpretation, sometimes a failure.
answers = st.one_of(interpretations, interpretations, interpretations, st.just(FAIL))

Op = tuple[Any, ...]


def operations(content: st.SearchStrategy[str]) -> st.SearchStrategy[Op]:
    index = st.integers(0, 1000)
    save = st.tuples(st.just("save"), content, user_contexts, idempotency_keys, answers)
    client = st.tuples(st.just("client"), content, user_contexts, idempotency_keys, interpretations)
    # one_of picks a branch evenly: saves are listed several times to make most operations saves.
    return st.one_of(
        save,
        save,
        save,
        client,
        client,
        client,
        st.tuples(st.just("update"), index, content, answers),
        st.tuples(st.just("pin"), index),
        st.tuples(st.just("unpin"), index),
        st.tuples(st.just("restore"), index),
        st.tuples(st.just("delete"), index),
        st.tuples(st.just("core"), free_texts),
        st.tuples(st.just("prune")),
        st.tuples(st.just("search"), content),
        st.tuples(st.just("reinterpret"), st.lists(answers, max_size=3).map(tuple)),
        st.tuples(
            st.just("compress"),
            st.lists(content, min_size=1, max_size=2).map(tuple),
            st.lists(answers, max_size=2).map(tuple),
        ),
    )


@dataclass(frozen=True)
class Scenario:
    """A store's settings and what is done to it."""

    namespace: str
    max_memories: int
    min_priority_score: float
    auto_prune: bool
    embedder: bool
    history: bool
    ops: tuple[Op, ...]

    def open(self, path: Path, judge: ScriptedJudge | None = None) -> aimem.MemoryStore:
        return aimem.MemoryStore(
            store_url(path),
            judge=judge or ScriptedJudge(),
            embedder=HashEmbedder(dim=16) if self.embedder else None,
            namespace=self.namespace,
            max_memories=self.max_memories,
            min_priority_score=self.min_priority_score,
            auto_prune=self.auto_prune,
        )


@st.composite
def scenarios(draw: st.DrawFn, max_ops: int = 20, **fixed: Any) -> Scenario:
    # A small pool of contents the operations come back to, so exact duplicates,
    # re-saved archived contents and reused idempotency keys all happen.
    pool = draw(st.lists(contents, min_size=1, max_size=4))
    content = st.one_of(st.sampled_from(pool), contents)
    drawn: dict[str, Any] = {
        "namespace": draw(st.one_of(st.just("default"), namespaces)),
        "max_memories": draw(st.integers(1, 6)),
        "min_priority_score": draw(st.sampled_from([0.0, 0.25, 0.3, 0.5])),
        "auto_prune": draw(st.booleans()),
        "embedder": draw(st.booleans()),
        "history": draw(st.booleans()),
    }
    ops = tuple(draw(st.lists(operations(content), min_size=min(4, max_ops), max_size=max_ops)))
    return Scenario(**(drawn | fixed), ops=ops)


def _pick(store: aimem.MemoryStore, index: int, archived: bool | None = None) -> str | None:
    """The id of the index-th memory (newest first, modulo the count), if there is one."""
    found = [
        m
        for m in store.list(order="recent", include_archived=True)
        if archived is None or m.archived == archived
    ]
    return found[index % len(found)].id if found else None


def run(store: aimem.MemoryStore, ops: Iterable[Op]) -> None:
    """Apply operations; only the refusals the API promises are tolerated."""
    judge = _judge(store)
    for kind, *args in ops:
        try:
            if kind == "save":
                content, user_context, key, answer = args
                judge.script([answer])
                store.save(content, user_context=user_context, idempotency_key=key)
            elif kind == "client":
                content, user_context, key, interpretation = args
                store.save(
                    content,
                    user_context=user_context,
                    idempotency_key=key,
                    interpretation=interpretation,
                )
            elif kind == "update":
                index, content, answer = args
                if (memory_id := _pick(store, index)) is not None:
                    judge.script([answer])
                    store.update(memory_id, content)
            elif kind in ("pin", "unpin", "delete"):
                if (memory_id := _pick(store, args[0])) is not None:
                    getattr(store, kind)(memory_id)
            elif kind == "restore":
                if (memory_id := _pick(store, args[0], archived=True)) is not None:
                    store.restore(memory_id)
            elif kind == "core":
                store.set_core(args[0])
            elif kind == "prune":
                store.prune()
            elif kind == "search":
                store.search(args[0])
            elif kind == "reinterpret":
                judge.script(args[0])
                store.reinterpret_pending()
            elif kind == "compress":
                items, scripted = args
                judge.script(scripted)
                store.compress(items)
            else:  # pragma: no cover - the strategy makes only the kinds above
                raise AssertionError(kind)
        except aimem.ValidationError:
            # Input the current rules refuse (text, a judge's answer): refused, as promised.
            assert kind in ("save", "client", "update", "core", "search", "compress"), kind
        except aimem.ConflictError:
            pass  # an idempotency key reused for other content: refused, as promised
        except aimem.JudgeError:
            assert kind == "update"  # update never stores pending: it keeps the old version
        finally:
            judge.script([])


# -- comparing and sealing files ---------------------------------------------------------


def _assert_same_bytes(first: Path, second: Path) -> None:
    a, b = first.read_bytes(), second.read_bytes()
    if a == b:
        return
    for number, (x, y) in enumerate(zip(a.split(b"\n"), b.split(b"\n"), strict=False), 1):
        if x != y:
            left, right = json.loads(x), json.loads(y)
            diff = {
                k: (left.get(k), right.get(k))
                for k in sorted(left.keys() | right.keys())
                if left.get(k) != right.get(k)
            }
            raise AssertionError(
                f"line {number} ({left.get('kind')} {left.get('id', '')}) changed in the round "
                f"trip, field: (first export, second export): {diff}"
            )
    raise AssertionError(f"the exports differ in length: {len(a)} and {len(b)} bytes")


def _round_trip(scenario: Scenario, source: aimem.MemoryStore, directory: Path) -> None:
    first, second = directory / "first.jsonl", directory / "second.jsonl"
    source.export_to(first, include_history=scenario.history)
    with scenario.open(directory / "copy.db") as copy_:
        report = copy_.import_from(first)
        assert report.ok, report.errors
        assert not report.archived, {m.id: m.archive_reason for m in report.archived}
        copy_.export_to(second, include_history=scenario.history)
    _assert_same_bytes(first, second)


def _line(record: dict[str, Any]) -> str:
    """One JSON line; lone surrogates (which UTF-8 cannot carry) are written as escapes."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(record, separators=(",", ":"))
    return text + "\n"


def _seal(lines: Sequence[str]) -> bytes:
    """The body and a trailer computed exactly as ``aimem.transfer.export_file`` computes it."""
    body = "".join(lines).encode("utf-8")
    trailer = {"kind": "trailer", "lines": len(lines), "sha256": hashlib.sha256(body).hexdigest()}
    return body + (json.dumps(trailer, separators=(",", ":")) + "\n").encode("ascii")


# -- the store an import is refused into ---------------------------------------------------


TARGET_KEYS = ("target-key-0", "target-key-1", "target-key-2")


def _open_target(path: Path, namespace: str) -> aimem.MemoryStore:
    return aimem.MemoryStore(
        store_url(path),
        judge=ScriptedJudge(),
        embedder=HashEmbedder(dim=16),
        namespace=namespace,
        max_memories=5,
        min_priority_score=0.3,
    )


def _fill_target(store: aimem.MemoryStore) -> None:
    """Memories of the target's own: active, pinned, archived, keyed; no core text."""
    own = [
        store.save(
            f"the target's own memory, {key}",
            interpretation=_flat(component),
            idempotency_key=key,
        )
        for key, component in zip(TARGET_KEYS, [0.2, 0.25, 0.05], strict=True)
    ]  # the last is below min_priority_score: archived at once
    store.pin(own[1].id)
    assert store.stats().archived == 1 and store.get_core() == ""


def _state(store: aimem.MemoryStore, directory: Path) -> tuple[Any, ...]:
    """Everything the store holds: its own export, plus what the read API says."""
    path = directory / f"state-{uuid.uuid4().hex}.jsonl"
    store.export_to(path)
    return (
        path.read_bytes(),
        store.get_core(),
        store.stats(),
        store.list(include_archived=True, order="recent"),
    )


def _assert_refused(target: aimem.MemoryStore, path: Path, directory: Path, what: str) -> None:
    before = _state(target, directory)
    problems = []
    try:
        report = target.import_from(path, dry_run=True)
        if report.ok:
            problems.append("the dry run reported ok=True")
    except Exception as exc:
        problems.append(f"the dry run raised {type(exc).__name__}: {exc}")
    try:
        target.import_from(path)
        problems.append("the import was accepted")
    except aimem.ValidationError:
        pass
    except Exception as exc:
        problems.append(f"the import raised {type(exc).__name__}, not ValidationError: {exc}")
    if _state(target, directory) != before:
        problems.append("the target store changed")
    assert not problems, f"{what}: " + "; ".join(problems)


# -- 1. round trips --------------------------------------------------------------------------


@ROUND_TRIP
@given(scenario=scenarios())
def test_export_import_export_is_byte_identical(scenario: Scenario) -> None:
    # Known gap (test_a_compress_below_the_floor_exported_without_history_is_archived): a
    # file without history cannot say an item came from a compress.
    assume(scenario.history or not any(op[0] == "compress" for op in scenario.ops))
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        with scenario.open(directory / "source.db") as source:
            run(source, scenario.ops)
            _round_trip(scenario, source, directory)


_SCORED = _flat(0.1)


def _spelled_out(*ops: Op, min_priority_score: float = 0.0, embedder: bool = False) -> Scenario:
    return Scenario("default", 10, min_priority_score, True, embedder, True, ops)


@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(
            _spelled_out(
                ("client", "alpha", None, None, _SCORED),
                ("client", "beta", None, None, _SCORED),
                ("update", 0, "alpha", _SCORED),  # beta becomes a second active "alpha"
            ),
            id="update-to-the-content-of-another-active-memory",
        ),
        pytest.param(
            _spelled_out(
                ("client", "alpha", None, None, _SCORED),
                ("compress", ("gamma",), (_SCORED,)),  # archives alpha
                ("client", "alpha", None, None, _SCORED),  # a new active "alpha"
                ("restore", 0),  # and the old one is active again
            ),
            id="restore-beside-a-new-save-of-its-content",
        ),
        pytest.param(
            _spelled_out(
                ("client", "low", None, None, _flat(0.05)),  # 0.2 < 0.3: archived at once
                ("restore", 0),  # active again: a restore never archives what it restored
                min_priority_score=0.3,
            ),
            id="restore-of-a-memory-below-min_priority_score",
        ),
        pytest.param(
            Scenario(
                "default",
                1,
                0.25,
                True,
                False,
                False,  # exported without history: restored_at says it was restored
                (
                    ("client", "low", None, None, _flat(0.05)),
                    ("restore", 0),
                ),
            ),
            id="restore-below-min_priority_score-exported-without-history",
        ),
        pytest.param(
            _spelled_out(
                ("compress", ("low",), (_flat(0.05),)),  # 0.2 < 0.3, yet a compress keeps it
                min_priority_score=0.3,
            ),
            id="compress-of-an-item-below-min_priority_score",
        ),
        pytest.param(
            # HashEmbedder(dim=16) hashes "aa" and "ah" to one slot with opposite signs.
            _spelled_out(("client", "aa ah", None, None, _SCORED), embedder=True),
            id="an-embedder-that-returns-a-zero-vector",
        ),
    ],
)
def test_states_the_api_reaches_round_trip(scenario: Scenario, tmp_path: Path) -> None:
    """States the public API reaches that the random round trip seldom draws."""
    with scenario.open(tmp_path / "source.db") as source:
        run(source, scenario.ops)
        _round_trip(scenario, source, tmp_path)


@pytest.mark.xfail(
    strict=True,
    reason="known gap: without history nothing in the file says an item came from a compress, "
    "so the import archives a compress item below min_priority_score",
)
def test_a_compress_below_the_floor_exported_without_history_is_archived(tmp_path: Path) -> None:
    scenario = Scenario(
        "default", 1, 0.25, True, False, False, (("compress", ("low",), (_flat(0.05),)),)
    )
    with scenario.open(tmp_path / "source.db") as source:
        run(source, scenario.ops)
        _round_trip(scenario, source, tmp_path)


_any_text = st.text(st.characters(codec="utf-8"), max_size=12)
_bad_chars = st.sampled_from(["\x00", "\x07", "\x1b", "\x7f", "\x85", "\x9b", "\ud800", "\r"])
#: Lengths on both sides of every limit a stored text may have (64, 200, 1000, 4000, ...).
_lengths = st.sampled_from([64, 65, 200, 201, 1000, 1001, 4000, 4001, 16000, 16001, 20000, 20001])
_hostile_text = st.one_of(
    _any_text,
    st.builds(lambda a, c, b: a + c + b, _any_text, _bad_chars, _any_text),
    st.sampled_from([" ", "\t\n", "\u202e", "a\u2066b"]),
    _lengths.map(lambda n: "x" * n),
)
_counts = st.one_of(
    st.integers(-(2**70), 2**70), st.sampled_from([-1, 2**31 - 1, 2**31, 2**63 - 1, 2**63])
)
#: One field of an interpretation (or the judge) at a time, so each failure names its field.
HOSTILE_FIELDS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "interpreted_content": st.fixed_dictionaries(
        {"interpreted_content": _hostile_text.filter(bool)}
    ),
    "rationale": st.fixed_dictionaries({"rationale": _hostile_text}),
    "model": st.fixed_dictionaries({"model": _hostile_text}),
    "prompt_version": st.fixed_dictionaries({"prompt_version": _hostile_text}),
    "usage": st.fixed_dictionaries(
        {
            "usage": st.builds(
                aimem.Usage,
                model=st.one_of(st.none(), _hostile_text),
                prompt_tokens=_counts,
                completion_tokens=_counts,
                latency_ms=st.one_of(
                    st.floats(), st.sampled_from([-0.0, 86_400_000.0, 86_400_001.0, 1e300])
                ),
                retries=_counts,
            )
        }
    ),
    "components": st.fixed_dictionaries(
        {
            name: st.sampled_from([-0.0, 0.0, 5e-324, 0.25, math.nextafter(0.25, 0)])
            for name in ("emotional_impact", "user_relevance", "novelty", "utility")
        }
    ),
    "judge source": st.fixed_dictionaries({"source": _hostile_text}),
}


@pytest.mark.parametrize("field", list(HOSTILE_FIELDS))
@HOSTILE
@given(data=st.data(), by_judge=st.booleans())
def test_whatever_save_accepts_round_trips(field: str, data: st.DataObject, by_judge: bool) -> None:
    change = data.draw(HOSTILE_FIELDS[field], label=field)
    source_name = change.pop("source", "scripted")
    by_judge = by_judge or field == "judge source"
    plain = _flat(0.1, "a plain interpretation").model_dump(exclude={"priority_score"})
    try:
        interpretation = aimem.Interpretation(**plain | change)
    except ValueError:  # pydantic refused to build it: save never sees it
        return
    scenario = Scenario("default", 10, 0.0, True, True, True, ())
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        with scenario.open(directory / "source.db", ScriptedJudge(source_name)) as source:
            try:
                if by_judge:
                    _judge(source).script([interpretation])
                    source.save("a save with a hostile interpretation")
                else:
                    source.save("a save with hostile scores", interpretation=interpretation)
            except aimem.ValidationError:
                assert source.stats().total == 0
                return
            except Exception as exc:
                raise AssertionError(
                    f"save() refused bad input with {type(exc).__name__}, "
                    f"not ValidationError: {exc}"
                ) from exc
            _round_trip(scenario, source, directory)


# -- 2. forged and damaged files ---------------------------------------------------------------


Base = tuple[Scenario, tuple[Any, ...]]


@st.composite
def sealed_bases(draw: st.DrawFn) -> Base:
    """Random operations, then the texts and scores of a fixed shape (see ``_build``)."""
    scenario = draw(
        scenarios(max_ops=4, embedder=True, history=True, auto_prune=True, min_priority_score=0.3)
    )
    shape = (
        draw(contents, label="core text"),
        tuple(draw(st.lists(contents, min_size=4, max_size=4), label="texts")),
        tuple(draw(st.lists(components, min_size=2, max_size=2), label="emotional_impact")),
        draw(st.one_of(st.none(), usages), label="usage"),
    )
    return scenario, shape


def _build(base: Base, directory: Path) -> bytes | None:
    """A sealed export of the random operations, then of a shape every forgery can use:
    two pinned, keyed memories with vectors, an archived one, a pending one, a core text,
    access counts and the history. None if today's rules refuse the drawn texts."""
    scenario, (core, texts_, emotions, usage) = base
    with scenario.open(directory / "source.db") as store:
        run(store, scenario.ops)
        try:
            store.set_core(core)
            for n, emotion in enumerate(emotions):
                interpretation = aimem.Interpretation(
                    interpreted_content=f"interpreted {n}: {texts_[n]}",
                    emotional_impact=emotion,
                    user_relevance=0.25,
                    novelty=0.25,
                    utility=0.25,
                    rationale=f"because {texts_[3 - n]}",
                    model="shape-model",
                    prompt_version="interpret.v1",
                    usage=usage,
                )
                memory = store.save(
                    f"pinned {n}: {texts_[n]}",
                    interpretation=interpretation,
                    idempotency_key=f"source-key-{n}",
                    user_context=f"someone {n}",
                )
                store.pin(memory.id)
            store.save(f"archived: {texts_[2]}", interpretation=_flat(0.0))  # below the minimum
            _judge(store).script([FAIL])
            store.save(f"pending: {texts_[3]}")
        except aimem.ValidationError:
            return None
        store.search("pinned")
        path = directory / "clean.jsonl"
        store.export_to(path)
    return path.read_bytes()


POOL_SIZE = 6


class Workshop:
    """Random valid stores, built and sealed once per module, and the target stores.

    Each base's unforged export must import (dry run) into a copy of the target; bases the
    current rules refuse are kept aside in ``refused`` (the round-trip tests report why).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.bases: list[tuple[Base, bytes]] = []
        self.refused: list[tuple[Base, list[str]]] = []
        self._targets: dict[str, tuple[Path, list[str]]] = {}

    def add(self, base: Base) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp)
            clean = _build(base, directory)
            if clean is None:
                return
            path = directory / "clean.jsonl"
            path.write_bytes(clean)
            target, _ = self.target(base[0].namespace, directory)
            with target:
                control = target.import_from(path, dry_run=True)
        if control.ok:
            self.bases.append((base, clean))
        else:
            self.refused.append((base, control.errors))

    def pick(self, data: st.DataObject) -> tuple[Base, bytes]:
        base, clean = self.bases[data.draw(st.integers(0, len(self.bases) - 1), "base store")]
        note(f"base store: {base!r}")
        return base, clean

    def target(self, namespace: str, directory: Path) -> tuple[aimem.MemoryStore, list[str]]:
        """A fresh copy of the namespace's filled target store in ``directory``, and its ids."""
        if namespace not in self._targets:
            folder = self.directory / f"target-{len(self._targets)}"
            folder.mkdir()
            with _open_target(folder / "target.db", namespace) as template:
                _fill_target(template)
                ids = [m.id for m in template.list(include_archived=True)]
            self._targets[namespace] = (folder / "target.db", ids)
        template_path, ids = self._targets[namespace]
        for suffix in ("", "-wal", "-shm"):  # a closed database: its files are consistent
            if (source := Path(f"{template_path}{suffix}")).exists():
                shutil.copyfile(source, directory / f"target.db{suffix}")
        return _open_target(directory / "target.db", namespace), ids


@pytest.fixture(scope="module")
def workshop(tmp_path_factory: pytest.TempPathFactory) -> Workshop:
    shop = Workshop(tmp_path_factory.mktemp("workshop"))

    @settings(_COMMON, max_examples=3 * POOL_SIZE, phases=[Phase.generate])
    @given(base=sealed_bases())
    def collect(base: Base) -> None:
        if len(shop.bases) < POOL_SIZE:
            shop.add(base)

    collect()
    assert shop.bases, f"no base store exports and imports cleanly: {shop.refused[:2]}"
    return shop


@dataclass
class Ctx:
    """What a forgery may look at: the drawn data, all records, the target's ids and keys."""

    data: st.DataObject
    records: list[dict[str, Any]]
    target_ids: list[str]
    target_keys: list[str]

    def draw(self, strategy: st.SearchStrategy[Any], label: str) -> Any:
        return self.data.draw(strategy, label=label)


Where = Callable[[list[dict[str, Any]]], list[int]]
Change = Callable[[dict[str, Any], Ctx], dict[str, Any] | str]


class Forgery:
    """One kind of single-field change: which lines it applies to, and the change."""

    def __init__(self, name: str, where: Where, change: Change) -> None:
        self.name, self.where, self.change = name, where, change

    def __repr__(self) -> str:
        return f"Forgery({self.name!r})"


def lines_of(kind: str, test: Callable[[dict[str, Any]], bool] = lambda r: True) -> Where:
    return lambda records: [i for i, r in enumerate(records) if r["kind"] == kind and test(r)]


def memories(test: Callable[[dict[str, Any]], bool] = lambda r: True) -> Where:
    return lines_of("memory", test)


def scored(m: dict[str, Any]) -> bool:
    return m["priority_score"] is not None


def pending(m: dict[str, Any]) -> bool:
    return m["priority_score"] is None


def active(m: dict[str, Any]) -> bool:
    return m["archived_at"] is None


def archived(m: dict[str, Any]) -> bool:
    return m["archived_at"] is not None


def with_vector(m: dict[str, Any]) -> bool:
    return m["vector"] is not None


def with_keys(m: dict[str, Any]) -> bool:
    return bool(m["idempotency_keys"])


COMPONENT_NAMES = ("emotional_impact", "user_relevance", "novelty", "utility")
CONTROL = ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\x9b", "\u202e", "\ud800"]
STAMPS = ("created_at", "updated_at", "last_accessed_at", "archived_at")


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _stamp(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _resum(m: dict[str, Any]) -> dict[str, Any]:
    m["priority_score"] = min(1.0, round(math.fsum(m[c] for c in COMPONENT_NAMES), 12))
    return m


def _set(**values: Any) -> Change:
    def change(record: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        return record | values

    return change


def _inject(text: str, ctx: Ctx, chars: Sequence[str] = CONTROL) -> str:
    char = ctx.draw(st.sampled_from(chars), "character")
    at = ctx.draw(st.integers(0, len(text)), "position")
    return text[:at] + char + text[at:]


def _inject_into(field: str) -> Change:
    def change(record: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        record[field] = _inject(record[field] or "", ctx)
        return record

    return change


def _component(values: st.SearchStrategy[float], resum: bool = True) -> Change:
    def change(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        m[ctx.draw(st.sampled_from(COMPONENT_NAMES), "component")] = ctx.draw(values, "value")
        return _resum(m) if resum else m

    return change


def _draw_delta(ctx: Ctx) -> timedelta:
    """How much earlier: from a microsecond to years (few values, so failures shrink fast)."""
    micros = ctx.draw(
        st.one_of(st.sampled_from([1, 1_000_000, 86_400 * 10**6]), st.integers(1, 10**15)),
        "microseconds earlier",
    )
    return timedelta(microseconds=micros)


def _naive(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    field = ctx.draw(st.sampled_from([f for f in STAMPS if m[f] is not None]), "timestamp")
    m[field] = _when(m[field]).replace(tzinfo=None).isoformat()
    return m


def _floats(vector: dict[str, Any]) -> list[float]:
    blob = base64.b64decode(vector["data"])
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


def _pack(values: Sequence[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


def _vector_nan(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    values = _floats(m["vector"])
    at = ctx.draw(st.integers(0, len(values) - 1), "slot")
    values[at] = ctx.draw(st.sampled_from([math.nan, math.inf, -math.inf]), "value")
    m["vector"]["data"] = _pack(values)
    return m


def _vector_scaled(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    factor = ctx.draw(st.sampled_from([0.0, 0.5, 2.0, 1000.0]), "factor")
    m["vector"]["data"] = _pack([x * factor for x in _floats(m["vector"])])
    return m


def _vector_shorter(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    values = _floats(m["vector"])[:-1]
    m["vector"] |= {"dim": len(values), "data": _pack(values)}
    return m


def _vector_bytes(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    blob = bytearray(base64.b64decode(m["vector"]["data"]))
    how = ctx.draw(st.sampled_from(["drop a byte", "add a byte", "not base64"]), "how")
    if how == "drop a byte":
        m["vector"]["data"] = base64.b64encode(blob[:-1]).decode()
    elif how == "add a byte":
        m["vector"]["data"] = base64.b64encode(blob + b"\x00").decode()
    else:
        m["vector"]["data"] = "*" + m["vector"]["data"][1:]
    return m


def _two_vectors_of_one_model(records: list[dict[str, Any]]) -> list[int]:
    found = memories(lambda m: with_vector(m) and m["vector"]["dim"] > 1)(records)
    return found if len(found) >= 2 else []


def _duplicate_content(records: list[dict[str, Any]]) -> list[int]:
    found = memories(active)(records)
    return found if len({records[i]["content"] for i in found}) >= 2 else []


def _copy_other_content(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    others = sorted(
        {r["content"] for r in ctx.records if r["kind"] == "memory" and active(r)} - {m["content"]}
    )
    m["content"] = ctx.draw(st.sampled_from(others), "content of another active memory")
    if pending(m):
        m["interpreted_content"] = m["content"]
    return m


def _never_updated_keyed(records: list[dict[str, Any]]) -> list[int]:
    updated = {r["memory_id"] for r in records if r["kind"] == "history" and r["event"] == "update"}
    return memories(lambda m: with_keys(m) and m["id"] not in updated)(records)


def _other_hash(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    other = ctx.draw(contents, "other content")
    assume(other != m["content"])
    m["idempotency_keys"][0]["content_hash"] = hashlib.sha256(other.encode()).hexdigest()
    return m


def _key(change: Callable[[dict[str, Any], Ctx], None]) -> Change:
    def apply(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        change(m["idempotency_keys"][0], ctx)
        return m

    return apply


def _key_control(key: dict[str, Any], ctx: Ctx) -> None:
    key["key"] = _inject(key["key"], ctx, [*CONTROL, "\n", "\t"])


def _key_naive(key: dict[str, Any], ctx: Ctx) -> None:
    key["created_at"] = _when(key["created_at"]).replace(tzinfo=None).isoformat()


def _key_of_target(key: dict[str, Any], ctx: Ctx) -> None:
    key["key"] = ctx.draw(st.sampled_from(ctx.target_keys), "key of the target")


def _key_blank(key: dict[str, Any], ctx: Ctx) -> None:
    key["key"] = ctx.draw(st.sampled_from(["", " ", "\u3000"]), "blank key")


def _key_hash_upper(key: dict[str, Any], ctx: Ctx) -> None:
    key["content_hash"] = key["content_hash"].upper()
    assume(key["content_hash"] != key["content_hash"].lower())


def _key_of_another(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    others = [
        k
        for r in ctx.records
        if r["kind"] == "memory" and r["id"] != m["id"]
        for k in r["idempotency_keys"]
    ]
    assume(others)
    m["idempotency_keys"].append(ctx.draw(st.sampled_from(others), "key of another memory"))
    m["idempotency_keys"].sort(key=lambda k: k["key"])
    return m


def _id_of_another(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    others = [r["id"] for r in ctx.records if r["kind"] == "memory" and r["id"] != m["id"]]
    m["id"] = ctx.draw(st.sampled_from(others), "id of another memory")
    return m


def _id_of_target(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    m["id"] = ctx.draw(st.sampled_from(ctx.target_ids), "id of a target memory")
    return m


def _id_not_uuid(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    m["id"] = ctx.draw(
        st.one_of(
            st.sampled_from(["1", "memory-1", m["id"].upper(), "{" + m["id"][:34] + "}"]),
            st.text(_PRINTABLE, min_size=1, max_size=36),
        ).filter(lambda s: s.strip() != m["id"]),
        "id",
    )
    return m


def _id_fresh_uuid(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    m["id"] = str(ctx.draw(st.uuids(), "uuid"))
    return m


def _version_off(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    deltas = [d for d in (-2, -1, 1, 2) if m["version"] + d >= 1]
    m["version"] += ctx.draw(st.sampled_from(deltas), "version change")
    return m


def _int_field(values: st.SearchStrategy[int], fields: Sequence[str]) -> Change:
    def change(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        m[ctx.draw(st.sampled_from(fields), "field")] = ctx.draw(values, "value")
        return m

    return change


def _below_bound(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    field, value = ctx.draw(
        st.sampled_from(
            [
                ("access_count", -1),
                ("version", 0),
                ("prompt_tokens", -1),
                ("completion_tokens", -5),
                ("judge_retries", -1),
                ("judge_latency_ms", -0.5),
            ]
        ),
        "field and value",
    )
    m[field] = value
    return m


def _wrong_type(m: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    field, value = ctx.draw(
        st.sampled_from(
            [
                ("access_count", "3"),
                ("pinned", 1),
                ("version", 1.0),
                ("content", None),
                ("created_at", 1_700_000_000),
                ("idempotency_keys", {}),
                ("priority_score", "0.5"),
                ("vector", "AAAA"),
            ]
        ),
        "field and value",
    )
    m[field] = value
    return m


def _history_naive(event: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    event["at"] = _when(event["at"]).replace(tzinfo=None).isoformat()
    return event


def _history_detail(event: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    event["detail"] = ctx.draw(st.sampled_from(["{", "not json", "[1, 2]", '"x"']), "detail")
    return event


def _core_naive(core: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    core["updated_at"] = _when(core["updated_at"]).replace(tzinfo=None).isoformat()
    return core


def _header_counts(header: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    which = ctx.draw(st.sampled_from(["memories", "history"]), "count")
    delta = ctx.draw(st.sampled_from([-1, 1, 1000]), "change")
    header["counts"][which] = max(0, header["counts"][which] + delta)
    return header


FORGERIES = [
    # Scores: the components and their sum.
    Forgery(
        "component above 0.25",
        memories(scored),
        _component(st.one_of(st.just(0.3), st.floats(0.25, 1.0, exclude_min=True))),
    ),
    Forgery("negative component", memories(scored), _component(st.floats(-1.0, -5e-324))),
    Forgery(
        "component not finite",
        memories(scored),
        _component(st.sampled_from([math.nan, math.inf, -math.inf]), resum=False),
    ),
    Forgery(
        "priority_score one ulp off the sum",
        memories(scored),
        lambda m, ctx: (
            m
            | {
                "priority_score": math.nextafter(
                    m["priority_score"], 0 if m["priority_score"] else 1
                )
            }
        ),
    ),
    Forgery(
        "priority_score not the sum",
        memories(scored),
        lambda m, ctx: (
            m
            | {
                "priority_score": ctx.draw(
                    st.floats(0.0, 1.0).filter(lambda p: p != m["priority_score"]), "priority"
                )
            }
        ),
    ),
    Forgery("priority_score null on a scored memory", memories(scored), _set(priority_score=None)),
    Forgery("priority_score on a pending memory", memories(pending), _set(priority_score=0.5)),
    Forgery(
        "one component null on a scored memory",
        memories(scored),
        lambda m, ctx: m | {ctx.draw(st.sampled_from(COMPONENT_NAMES), "component"): None},
    ),
    # score_source.
    Forgery(
        "score_source 'pending' on a scored memory", memories(scored), _set(score_source="pending")
    ),
    Forgery(
        "score_source of a judge on a pending memory",
        memories(pending),
        lambda m, ctx: (
            m
            | {"score_source": ctx.draw(st.sampled_from(["llm", "client", "heuristic"]), "source")}
        ),
    ),
    Forgery("score_source empty", memories(), _set(score_source="")),
    Forgery("control character in score_source", memories(), _inject_into("score_source")),
    # Text fields.
    Forgery("control character in content", memories(), _inject_into("content")),
    Forgery(
        "control character in interpreted_content", memories(), _inject_into("interpreted_content")
    ),
    Forgery("control character in rationale", memories(), _inject_into("rationale")),
    Forgery("control character in user_context", memories(), _inject_into("user_context")),
    Forgery("control character in model", memories(), _inject_into("model")),
    Forgery("control character in prompt_version", memories(), _inject_into("prompt_version")),
    Forgery(
        "control character in archive_reason", memories(archived), _inject_into("archive_reason")
    ),
    Forgery("control character in id", memories(), _inject_into("id")),
    Forgery(
        "carriage return in content",
        memories(),
        lambda m, ctx: m | {"content": _inject(m["content"], ctx, ["\r", "\r\n"])},
    ),
    Forgery(
        "line break in user_context",
        memories(),
        lambda m, ctx: m | {"user_context": _inject(m["user_context"] or "", ctx, ["\n", "\t"])},
    ),
    Forgery(
        "blank content",
        memories(),
        lambda m, ctx: m | {"content": ctx.draw(st.sampled_from(["", " ", "\n\t"]), "content")},
    ),
    Forgery("content over max_content_chars", memories(), _set(content="x" * 16_001)),
    Forgery("interpreted_content empty", memories(), _set(interpreted_content="")),
    Forgery("interpreted_content over 4 x max", memories(), _set(interpreted_content="x" * 64_001)),
    Forgery("user_context over 1000 chars", memories(), _set(user_context="u" * 1_001)),
    Forgery("same content as another active memory", _duplicate_content, _copy_other_content),
    # Ids, versions, counters.
    Forgery("id of another memory in the file", memories(), _id_of_another),
    Forgery("id of a memory already in the target", memories(), _id_of_target),
    Forgery("id not a UUID", memories(), _id_not_uuid),
    Forgery("id changed to a fresh UUID (history then has none)", memories(), _id_fresh_uuid),
    Forgery("version differs from its last history event", memories(), _version_off),
    Forgery("integer field below its bound", memories(), _below_bound),
    Forgery(
        "integer field beyond SQLite's 64 bits",
        memories(),
        _int_field(
            st.sampled_from([2**63, 2**64, 10**30]),
            ["access_count", "version", "prompt_tokens", "completion_tokens", "judge_retries"],
        ),
    ),
    Forgery("wrong JSON type", memories(), _wrong_type),
    Forgery("unknown field", memories(), _set(admin=True)),
    Forgery("kind changed", memories(), _set(kind="memories")),
    Forgery("namespace differs from the header", memories(), _set(namespace="mallory")),
    # Timestamps and archiving.
    Forgery("timestamp without a timezone", memories(), _naive),
    Forgery("archived_at without archive_reason", memories(archived), _set(archive_reason=None)),
    Forgery(
        "archive_reason without archived_at", memories(active), _set(archive_reason="over_capacity")
    ),
    # Vectors.
    Forgery("vector length differs from dim", memories(with_vector), _vector_bytes),
    Forgery("vector holds NaN or infinity", memories(with_vector), _vector_nan),
    Forgery("vector not unit length", memories(with_vector), _vector_scaled),
    Forgery(
        "vector dim differs from the other vectors of its model",
        _two_vectors_of_one_model,
        _vector_shorter,
    ),
    Forgery(
        "vector model empty",
        memories(with_vector),
        lambda m, ctx: m | {"vector": m["vector"] | {"model": ""}},
    ),
    # Idempotency keys.
    Forgery("key with a control character or line break", memories(with_keys), _key(_key_control)),
    Forgery("key blank", memories(with_keys), _key(_key_blank)),
    Forgery("key content_hash not lowercase hex", memories(with_keys), _key(_key_hash_upper)),
    Forgery(
        "key content_hash of other content on a never-updated memory",
        _never_updated_keyed,
        _other_hash,
    ),
    Forgery("key created_at without a timezone", memories(with_keys), _key(_key_naive)),
    Forgery("key of another memory in the file", memories(with_keys), _key_of_another),
    Forgery("key already used in the target", memories(with_keys), _key(_key_of_target)),
    # Core.
    Forgery(
        "control character in core text",
        lines_of("core"),
        lambda c, ctx: c | {"text": _inject(c["text"], ctx)},
    ),
    Forgery(
        "carriage return in core text",
        lines_of("core"),
        lambda c, ctx: c | {"text": _inject(c["text"], ctx, ["\r", "\r\n"])},
    ),
    Forgery("core text over max_content_chars", lines_of("core"), _set(text="c" * 16_001)),
    Forgery("core updated_at without a timezone", lines_of("core"), _core_naive),
    Forgery("core text without updated_at", lines_of("core"), _set(updated_at=None)),
    # Header.
    Forgery("header counts off", lines_of("header"), _header_counts),
    Forgery("header format_version 2", lines_of("header"), _set(format_version=2)),
    Forgery("header says no history", lines_of("header"), _set(history=False)),
    Forgery("header namespace differs from the memories", lines_of("header"), _set(namespace="x")),
    Forgery("header format renamed", lines_of("header"), _set(format="aimem-exports")),
    Forgery("header unknown field", lines_of("header"), _set(extra=1)),
    # History.
    Forgery("history version 0", lines_of("history"), _set(version=0)),
    Forgery("history at without a timezone", lines_of("history"), _history_naive),
    Forgery(
        "control character in history event",
        lines_of("history"),
        lambda e, ctx: e | {"event": _inject(e["event"], ctx)},
    ),
    Forgery("history detail not a JSON object", lines_of("history"), _history_detail),
    Forgery("history event empty", lines_of("history"), _set(event="")),
    Forgery("history version beyond SQLite's 64 bits", lines_of("history"), _set(version=2**63)),
]


def _forge(forgery: Forgery, clean: bytes, ctx: Ctx) -> bytes:
    lines = [line.decode("utf-8") + "\n" for line in clean.split(b"\n")[:-2]]
    candidates = forgery.where(ctx.records)
    assume(candidates)
    number = ctx.draw(st.sampled_from(candidates), "line index")
    original = lines[number]
    changed = forgery.change(copy.deepcopy(ctx.records[number]), ctx)
    lines[number] = changed if isinstance(changed, str) else _line(changed)
    assume(lines[number] != original)
    before, after = ctx.records[number], json.loads(lines[number])
    changed_fields = {
        k: (before.get(k), after.get(k))
        for k in sorted(before.keys() | after.keys())
        if before.get(k) != after.get(k) or k not in before or k not in after
    }
    note(f"line {number + 1} ({before['kind']}), field: (was, now): {changed_fields!r}")
    note(f"the forged line: {lines[number].strip()}")
    return _seal(lines)


# The filled target is cloned by copying its SQLite file (Workshop.target); on PostgreSQL
# the copy would be an empty database, and forgeries that clash with it would look valid.
@pytest.mark.sqlite_only
@pytest.mark.parametrize("forgery", FORGERIES, ids=lambda f: f.name.replace(" ", "-"))
@FORGERY
@given(data=st.data())
def test_a_resealed_forgery_is_refused_and_changes_nothing(
    workshop: Workshop, forgery: Forgery, data: st.DataObject
) -> None:
    base, clean = workshop.pick(data)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        target, target_ids = workshop.target(base[0].namespace, directory)
        with target:
            records = [json.loads(line) for line in clean.split(b"\n")[:-2]]
            ctx = Ctx(data, records, target_ids, list(TARGET_KEYS))
            forged = directory / "forged.jsonl"
            forged.write_bytes(_forge(forgery, clean, ctx))
            _assert_refused(target, forged, directory, forgery.name)


def _damage(raw: bytes, data: st.DataObject) -> bytes:
    lines = raw.split(b"\n")[:-1]
    how = data.draw(
        st.sampled_from(["flip a byte", "cut", "drop a line", "swap two lines", "append a line"]),
        "damage",
    )
    if how == "flip a byte":
        at = data.draw(st.integers(0, len(raw) - 1), "byte")
        mask = data.draw(st.integers(1, 255), "xor mask")
        return raw[:at] + bytes([raw[at] ^ mask]) + raw[at + 1 :]
    if how == "cut":
        return raw[: data.draw(st.integers(0, len(raw) - 1), "bytes kept")]
    if how == "drop a line":
        del lines[data.draw(st.integers(0, len(lines) - 1), "line dropped")]
    elif how == "swap two lines":
        i = data.draw(st.integers(0, len(lines) - 2), "line swapped with the next")
        assume(lines[i] != lines[i + 1])
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    else:
        at = data.draw(st.integers(0, len(lines)), "where")
        lines.insert(at, data.draw(st.sampled_from([b"", b"{}", lines[min(at, len(lines) - 1)]])))
    return b"".join(line + b"\n" for line in lines)


@DAMAGE
@given(data=st.data())
def test_a_damaged_file_is_refused_and_changes_nothing(
    workshop: Workshop, data: st.DataObject
) -> None:
    base, clean = workshop.pick(data)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        target, _ = workshop.target(base[0].namespace, directory)
        with target:
            damaged = directory / "damaged.jsonl"
            damaged.write_bytes(_damage(clean, data))
            _assert_refused(target, damaged, directory, "damaged file")
