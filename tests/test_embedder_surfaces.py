"""The embedder setting reaches every surface; stats and status name it; mismatches say reembed."""

from __future__ import annotations

import logging
import re

import pytest

import aimem
from aimem.cli import main
from aimem.testing import HashEmbedder


class OtherEmbedder(HashEmbedder):
    name = "other-embedder"


def test_stats_name_the_embedder_and_count_the_memories_it_embedded(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as plain:
        assert (plain.stats().embedder, plain.stats().embedded) == (None, None)
        plain.save("I love green tea")
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), embedder=HashEmbedder()) as store:
        store.save("I'm allergic to penicillin")
        stats = store.stats()
        assert (stats.embedder, stats.embedded, stats.count) == ("hash-embedder", 1, 2)
        assert store.reembed() == 2
        assert store.stats().embedded == 2


def test_opening_with_another_embedder_says_so_and_points_to_reembed(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), embedder=HashEmbedder()) as store:
        store.save_many(["I love green tea", "My sister lives in Osaka"])
    with caplog.at_level(logging.WARNING, logger="aimem"):
        store = aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), embedder=OtherEmbedder())
    try:
        [warning] = [r.getMessage() for r in caplog.records if "reembed" in r.getMessage()]
        assert "'hash-embedder' (2 memories)" in warning
        assert "'other-embedder'" in warning
        assert "aimem reembed" in warning
        assert store.stats().embedded == 0
    finally:
        store.close()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="aimem"):
        aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge(), embedder=HashEmbedder()).close()
    assert not [r for r in caplog.records if "reembed" in r.getMessage()]


def test_the_embedder_setting_is_the_default_of_every_store(
    monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("AIMEM_EMBEDDER", "local")
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        assert isinstance(store.embedder, aimem.LocalEmbedder)  # built, not loaded
        assert store.embedder.name == "all-MiniLM-L6-v2"
    monkeypatch.setenv("AIMEM_EMBEDDER", "none")
    with aimem.MemoryStore(db_url, judge=aimem.HeuristicJudge()) as store:
        assert store.embedder is None


def _status(capsys: pytest.CaptureFixture[str], url: str) -> str:
    assert main(["--database-url", url]) == 0
    # the table's rules and borders away, then one space between words
    text = re.sub(r"[\u2500-\u257f]", " ", capsys.readouterr().out)
    return " ".join(text.split())


def test_status_shows_the_embedder_and_vectors_due(
    db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = db_url
    monkeypatch.setenv("COLUMNS", "200")
    with aimem.MemoryStore(url, judge=aimem.HeuristicJudge()) as store:
        store.save("I love green tea")
    assert "embedder none: keyword search only" in _status(capsys, url)
    pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("AIMEM_EMBEDDER", "local")
    shown = _status(capsys, url)
    assert "embedder local (all-MiniLM-L6-v2, offline)" in shown
    assert "0 of 1 active memories have a vector from all-MiniLM-L6-v2" in shown
    assert "aimem reembed" in shown
