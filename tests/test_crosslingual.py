"""Across languages: what README says the default embedder and keyword search can and cannot do,
the embedder specs' errors, and the evaluation set bench/embedders.py measures it with."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import aimem
from aimem.embedder_spec import SPEC_HELP, embedder_from_spec, parse_spec
from aimem.exceptions import ValidationError

DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "crosslingual.jsonl"
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def rows() -> list[dict[str, str | None]]:
    with DATA.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def store(tmp_path: Path) -> aimem.MemoryStore:
    return aimem.MemoryStore(
        f"sqlite:///{tmp_path / 'x.db'}",
        judge=aimem.HeuristicJudge(),
        embedder=None,
        min_priority_score=0.0,
        interpretation_enabled=False,
    )


@pytest.mark.parametrize("spec", ["multilingual", "e5", "local-multilingual", "openai:"])
def test_a_wrong_spec_is_one_typed_line_naming_the_choices(spec: str) -> None:
    with pytest.raises(ValidationError) as caught:
        embedder_from_spec(spec)
    message = str(caught.value)
    assert "\n" not in message and isinstance(caught.value, ValueError)
    if spec != "openai:":
        assert message == f"Unknown embedder {spec!r}: use {SPEC_HELP}"


def test_local_is_still_minilm() -> None:
    assert parse_spec("local") == ("local", "")
    pytest.importorskip("sentence_transformers", reason="the local extra is not installed")
    embedder = embedder_from_spec("local")
    assert embedder is not None and embedder.name == "all-MiniLM-L6-v2"


def test_keyword_search_matches_words_of_the_questions_own_language(tmp_path: Path) -> None:
    with store(tmp_path) as s:
        cats, move = s.save_many(["猫を二匹飼っている。", "来月、札幌に引っ越す予定だ。"])
        assert [h.memory.id for h in s.search("猫を飼っている？", mode="keyword")][:1] == [cats.id]
        assert [h.memory.id for h in s.search("札幌", mode="keyword")][:1] == [move.id]


def test_the_evaluation_set_asks_across_languages() -> None:
    data = rows()
    ids = [row["id"] for row in data]
    assert len(ids) == len(set(ids))
    for direction, memory_is_japanese in (("en->ja", True), ("ja->en", False)):
        chosen = [row for row in data if row["direction"] == direction]
        asked = [row for row in chosen if row["question"]]
        assert len(asked) == 28 and len(chosen) == 36
        for row in chosen:
            assert bool(JAPANESE.search(str(row["memory"]))) is memory_is_japanese, row
        for row in asked:
            assert bool(JAPANESE.search(str(row["question"]))) is not memory_is_japanese, row
