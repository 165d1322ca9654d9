"""Import checks every invariant the store keeps, before any write, naming the line.

Each forgery is re-sealed (a correct checksum over the altered lines), so only the
invariant checks can catch it; the target store must be untouched afterwards.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_transfer import _exported, _raise_or_report, _rewrite, _store

import aimem
from aimem.testing import HashEmbedder

Record = dict[str, Any]


def _vector(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def _first(kind: str, test: Callable[[Record], bool] = lambda r: True) -> Callable[..., Any]:
    """An edit applying ``change`` to the first line of ``kind`` that passes ``test``."""

    def make(change: Callable[[Record], Record]) -> Callable[[list[str]], list[str]]:
        def edit(lines: list[str]) -> list[str]:
            for i, line in enumerate(lines):
                record = json.loads(line)
                if record["kind"] == kind and test(record):
                    lines[i] = json.dumps(change(record), ensure_ascii=False) + "\n"
                    return lines
            raise AssertionError(f"no {kind} line to forge")

        return edit

    return make


def _active_with_vector(r: Record) -> bool:
    return r["archived_at"] is None and r["vector"] is not None


def _scored(r: Record) -> bool:
    return r["priority_score"] is not None


def _pending(r: Record) -> bool:
    return r["priority_score"] is None


def _keyed(r: Record) -> bool:
    return bool(r["idempotency_keys"]) and r["version"] == 1


def _unit_twice(r: Record) -> Record:
    return r | {"vector": r["vector"] | {"data": _vector([2.0] + [0.0] * (r["vector"]["dim"] - 1))}}


def _nan_vector(r: Record) -> Record:
    values = [float("nan")] + [0.0] * (r["vector"]["dim"] - 1)
    return r | {"vector": r["vector"] | {"data": _vector(values)}}


def _unscored(r: Record) -> Record:
    empty = dict.fromkeys(
        ("emotional_impact", "user_relevance", "novelty", "utility", "priority_score")
    )
    return r | empty


FORGERIES: dict[str, tuple[Callable[[list[str]], list[str]], str]] = {
    "id not in aimem's format": (_first("memory")(lambda r: r | {"id": "mem-1"}), "format"),
    "uppercase uuid": (_first("memory")(lambda r: r | {"id": r["id"].upper()}), "format"),
    "esc in interpretation": (
        _first("memory", _scored)(lambda r: r | {"interpreted_content": "x\x1b[2Jy"}),
        "control character",
    ),
    "rtl override in rationale": (
        _first("memory", _scored)(lambda r: r | {"rationale": "ok \u202e kayo"}),
        "bidirectional",
    ),
    "nul in user_context": (
        _first("memory")(lambda r: r | {"user_context": "syui\x00"}),
        "control character",
    ),
    "bel in a model name": (
        _first("memory", _scored)(lambda r: r | {"model": "gpt\x07"}),
        "control character",
    ),
    "crlf left in content": (
        _first("memory")(lambda r: r | {"content": r["content"] + "\r\nmore"}),
        "form aimem stores",
    ),
    "rationale over the bound": (
        _first("memory", _scored)(lambda r: r | {"rationale": "r" * 4_001}),
        "over the limit",
    ),
    "interpretation over the bound": (
        _first("memory", _scored)(lambda r: r | {"interpreted_content": "i" * 70_000}),
        "over the limit",
    ),
    "score_source over the bound": (
        _first("memory", _scored)(lambda r: r | {"score_source": "s" * 65}),
        "over the limit",
    ),
    "model over the bound": (
        _first("memory", _scored)(lambda r: r | {"model": "m" * 201}),
        "over the limit",
    ),
    "negative tokens": (
        _first("memory", _scored)(lambda r: r | {"prompt_tokens": -3}),
        "prompt_tokens",
    ),
    "negative retries": (
        _first("memory", _scored)(lambda r: r | {"judge_retries": -1}),
        "judge_retries",
    ),
    "access count beyond 64 bits": (
        _first("memory")(lambda r: r | {"access_count": 2**64}),
        "access_count",
    ),
    "version beyond 64 bits": (_first("memory")(lambda r: r | {"version": 2**63}), "version"),
    "unscored claiming llm": (
        _first("memory", _scored)(lambda r: _unscored(r) | {"score_source": "llm"}),
        "pending",
    ),
    "scored claiming pending": (
        _first("memory", _scored)(lambda r: r | {"score_source": "pending"}),
        "pending",
    ),
    "vector not of unit length": (
        _first("memory", _active_with_vector)(_unit_twice),
        "unit length",
    ),
    "non-finite vector": (_first("memory", _active_with_vector)(_nan_vector), "non-finite"),
    "key naming other content": (
        _first("memory", _keyed)(
            lambda r: (
                r
                | {
                    "idempotency_keys": [
                        k | {"content_hash": hashlib.sha256(b"other").hexdigest()}
                        for k in r["idempotency_keys"]
                    ]
                }
            )
        ),
        "other content",
    ),
    "key with a line break": (
        _first("memory", _keyed)(
            lambda r: r | {"idempotency_keys": [k | {"key": "a\nb"} for k in r["idempotency_keys"]]}
        ),
        "idempotency",
    ),
    "history of a malformed id": (
        _first("history")(lambda r: r | {"memory_id": "../../etc"}),
        "format",
    ),
    "history detail not json": (_first("history")(lambda r: r | {"detail": "{oops"}), "JSON"),
    "history event with esc": (
        _first("history")(lambda r: r | {"event": "save\x1b"}),
        "control character",
    ),
    "core with esc": (_first("core")(lambda r: r | {"text": "I am \x1b[31m"}), "control character"),
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_resealed_file_breaking_an_invariant_is_refused(tmp_path: Path, name: str) -> None:
    path = _exported(tmp_path)
    edit, expected = FORGERIES[name]
    _rewrite(path, edit)
    _raise_or_report(tmp_path, path, expected)


def test_errors_name_the_line(tmp_path: Path) -> None:
    path = _exported(tmp_path)
    _rewrite(path, FORGERIES["esc in interpretation"][0])
    with _store(tmp_path / "fresh.db") as target:
        report = target.import_from(path, dry_run=True)
    assert any(e.startswith("line ") for e in report.errors), report.errors


def test_two_active_memories_with_one_content_are_refused(tmp_path: Path) -> None:
    path = _exported(tmp_path)

    def twin(lines: list[str]) -> list[str]:
        records = [json.loads(line) for line in lines]
        active = [
            i for i, r in enumerate(records) if r["kind"] == "memory" and not r["archived_at"]
        ]
        first, second = records[active[0]], records[active[1]]
        second |= {"content": first["content"]}
        lines[active[1]] = json.dumps(second, ensure_ascii=False) + "\n"
        return lines

    _rewrite(path, twin)
    _raise_or_report(tmp_path, path, "the same content")


def test_a_key_may_name_the_content_before_an_update(tmp_path: Path) -> None:
    # update() keeps a memory's keys (a retried save must still find it): not a forgery.
    with _store(tmp_path / "a.db") as store:
        memory = store.save("the first wording", idempotency_key="k")
        store.update(memory.id, "the second wording")
        store.export_to(tmp_path / "x.jsonl")
        store.export_to(tmp_path / "no-history.jsonl", include_history=False)
    for name in ("x.jsonl", "no-history.jsonl"):
        with _store(tmp_path / f"{name}.db") as target:
            assert target.import_from(tmp_path / name).ok
            assert target.save("the first wording", idempotency_key="k").id == memory.id


def test_vectors_of_another_dimension_are_refused_at_import(tmp_path: Path) -> None:
    path = _exported(tmp_path)  # made with HashEmbedder(), 256 dimensions
    with _store(tmp_path / "other.db", embedder=HashEmbedder(dim=16)) as target:
        report = target.import_from(path, dry_run=True)
        assert not report.ok and any("dimensions" in e for e in report.errors), report.errors
        with pytest.raises(aimem.ValidationError, match="reembed"):
            target.import_from(path)
        assert target.stats().total == 0
    with _store(tmp_path / "small.db", embedder=HashEmbedder(dim=16)) as small:
        small.save("a memory with a 16-dimension vector")
    with _store(tmp_path / "small.db", embedder=None) as keyword_only:
        report = keyword_only.import_from(path, dry_run=True)
        # no embedder configured, but the namespace's vectors from that model are 16-dim
        assert not report.ok and any("dimensions" in e for e in report.errors)


def test_vectors_of_one_model_must_share_one_dimension(tmp_path: Path) -> None:
    path = _exported(tmp_path)
    shrink = _first("memory", _active_with_vector)(
        lambda r: r | {"vector": r["vector"] | {"dim": 4, "data": _vector([0.5, 0.5, 0.5, 0.5])}}
    )
    _rewrite(path, shrink)
    _raise_or_report(tmp_path, path, "differs from")
