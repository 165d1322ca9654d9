"""Search by meaning on the server (pgvector) against the in-process index, and its budget.

On PostgreSQL (``AIMEM_TEST_DATABASE_URL``) each test opens one fresh database where the
extension is created (``?vectors=server``: HNSW) and one with ``?vectors=memory`` (the
extension never created), writes the same memories to both, and asks both the same
questions: the answers must agree. They are skipped, with the server's reason, only when
the extension cannot be created; with ``AIMEM_REQUIRE_PGVECTOR=1`` (CI) that fails them.
The bounded cache's tests run on every backend.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from _stores import on_postgres

import aimem
from aimem.capacity import CapacityPolicy
from aimem.exceptions import StorageError
from aimem.models import Interpretation, Memory
from aimem.storage import Backend, SearchFilters, open_backend
from aimem.storage.sql import NewMemory
from aimem.storage.vector_cache import VectorCache
from aimem.testing import FixedJudge
from aimem.vectors import pack, unit

#: Read at import: conftest clears every AIMEM_* variable around each test.
REQUIRE = os.environ.get("AIMEM_REQUIRE_PGVECTOR", "").strip() == "1"
POLICY = CapacityPolicy(max_memories=10_000, min_priority_score=0.0, auto_prune=False)

postgres = pytest.mark.skipif(
    not on_postgres(), reason="pgvector needs a PostgreSQL server: set AIMEM_TEST_DATABASE_URL"
)


def vector_of(text: str, dim: int = 32) -> np.ndarray:
    """A unit vector drawn from the text's hash: no ties, the same in every database."""
    seed = int.from_bytes(hashlib.sha256(f"{dim}:{text}".encode()).digest()[:8], "little")
    return unit(np.random.default_rng(seed).standard_normal(dim))


class SeededEmbedder:
    """``vector_of`` as an embedder, for the store's own write paths."""

    calibration = None

    def __init__(self, dim: int = 32, name: str | None = None) -> None:
        self.dim = dim
        self.name = name or f"seeded-{dim}"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [vector_of(t, self.dim).tolist() for t in texts]


def with_option(url: str, option: str) -> str:
    return url + ("&" if "?" in url else "?") + option


def open_server(url: str) -> Backend:
    """The backend with pgvector, or a skip (a failure under AIMEM_REQUIRE_PGVECTOR=1)."""
    try:
        return open_backend(with_option(url, "vectors=server"))
    except StorageError as exc:
        if REQUIRE:
            pytest.fail(f"AIMEM_REQUIRE_PGVECTOR=1, but pgvector is unusable: {exc}")
        pytest.skip(f"the server cannot create the vector extension: {exc}")


def extension_installed(backend: Backend) -> bool:
    with backend.engine.connect() as conn:
        found = conn.exec_driver_sql("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        return found.first() is not None


@pytest.fixture
def pair(db_url_factory: Callable[[str], str]) -> Iterator[tuple[Backend, Backend]]:
    """(server mode, memory mode): two fresh databases on the test server."""
    server = open_server(db_url_factory("server"))
    memory = open_backend(with_option(db_url_factory("memory"), "vectors=memory"))
    try:
        yield server, memory
    finally:
        server.close()
        memory.close()


def item(content: str, score: float, *, dim: int = 32, context: str | None = None) -> NewMemory:
    part = score / 4  # the priority is the four components' sum
    interpretation = Interpretation(
        interpreted_content=content, emotional_impact=part, user_relevance=part,
        novelty=part, utility=part,
    )  # fmt: skip
    return NewMemory(
        content=content,
        interpretation=interpretation,
        score_source="client",
        user_context=context,
        vector=pack(vector_of(content, dim)),
        embedding_model=f"seeded-{dim}",
    )


def fill(backend: Backend, namespace: str, n: int, *, dim: int = 32) -> list[Memory]:
    """``n`` memories, scores spread over [0, 1), every third one about "work"."""
    items = [
        item(f"{namespace} note {i}", (i % 10) / 10, dim=dim, context="work" if i % 3 else None)
        for i in range(n)
    ]
    return backend.insert(namespace, items, POLICY)[0]


def ranked(
    backend: Backend, namespace: str, query: str, limit: int, dim: int = 32, **filters: object
) -> list[tuple[str, float]]:
    hits = backend.semantic_search(
        namespace, f"seeded-{dim}", vector_of(query, dim), limit=limit,
        filters=SearchFilters(**filters),  # type: ignore[arg-type]
    )  # fmt: skip
    return [(memory.content, cosine) for memory, cosine in hits]


def assert_same(server: list[tuple[str, float]], memory: list[tuple[str, float]]) -> None:
    """The same memories in the same order; cosines equal to float4's precision."""
    assert [c for c, _ in server] == [c for c, _ in memory]
    assert [s for _, s in server] == pytest.approx([s for _, s in memory], abs=1e-5)


@postgres
def test_modes_are_reported_and_memory_mode_never_creates_the_extension(
    pair: tuple[Backend, Backend],
) -> None:
    server, memory = pair
    assert extension_installed(server)
    assert not extension_installed(memory)
    assert server.stats("a", POLICY).vector_search == "pgvector (HNSW)"
    stats = memory.stats("a", POLICY)
    assert stats.vector_search == "in-process index"
    assert stats.vector_cache_budget_bytes == 256 << 20
    assert stats.vector_cache_bytes == 0


@postgres
def test_server_search_agrees_with_the_in_process_index(pair: tuple[Backend, Backend]) -> None:
    server, memory = pair
    for backend in pair:
        for namespace in ("a", "b", "c"):  # other namespaces share the server's index
            fill(backend, namespace, 90)
    with server.engine.connect() as conn:
        indexes = conn.exec_driver_sql(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_vectors'"
        ).scalars()
        assert "ix_memory_vectors_hnsw_32" in set(indexes)
    cases: list[dict[str, object]] = [
        {},
        {"min_score": 0.5},
        {"user_context": "work"},
        {"min_score": 0.8, "user_context": "work"},
        {"created_after": datetime.now(UTC) + timedelta(days=1)},  # nothing
        {"created_before": datetime.now(UTC) + timedelta(days=1)},
    ]
    for query in ("a note 7", "b note 40", "something else"):
        for limit in (1, 5, 20, 200):
            for filters in cases:
                got = ranked(server, "a", query, limit, **filters)
                assert_same(got, ranked(memory, "a", query, limit, **filters))
                assert all(content.startswith("a ") for content, _ in got)
    # A filter that rejects most of the index still fills the page (iterative scan).
    high = [m for m in server.list_memories("b") if (m.priority_score or 0) >= 0.9]
    assert 0 < len(high) < 20
    assert len(ranked(server, "b", "b note 1", 20, min_score=0.9)) == len(high)


@postgres
def test_archived_memories_are_found_only_when_asked(pair: tuple[Backend, Backend]) -> None:
    server, memory = pair
    for backend in pair:
        fill(backend, "a", 40)
        floor = CapacityPolicy(max_memories=1000, min_priority_score=0.35)
        archived = backend.prune("a", floor, dry_run=False)
        assert 0 < len(archived) < 40
        assert "a note 2" in [m.content for m in archived]
    active = ranked(server, "a", "a note 2", 40)
    assert 0 < len(active) < 40 and "a note 2" not in [c for c, _ in active]
    assert_same(active, ranked(memory, "a", "a note 2", 40))
    everything = ranked(server, "a", "a note 2", 40, include_archived=True)
    assert everything[0][0] == "a note 2" and everything[0][1] == pytest.approx(1.0, abs=1e-6)
    assert_same(everything, ranked(memory, "a", "a note 2", 40, include_archived=True))
    assert_same(
        ranked(server, "a", "a note 2", 5, include_archived=True),
        ranked(memory, "a", "a note 2", 5, include_archived=True),
    )


@postgres
def test_an_update_moves_the_memory_to_its_new_vector(pair: tuple[Backend, Backend]) -> None:
    for backend in pair:
        [first, *_] = fill(backend, "a", 30)
        assert ranked(backend, "a", "a note 0", 1)[0][0] == "a note 0"
        backend.reinterpret("a", first.id, item("tea with lemon", 0.5), POLICY)
        assert ranked(backend, "a", "tea with lemon", 1) == [
            ("tea with lemon", pytest.approx(1.0, abs=1e-6))
        ]
        assert ranked(backend, "a", "a note 0", 1)[0][0] != "tea with lemon"
    assert_same(ranked(pair[0], "a", "a note 0", 10), ranked(pair[1], "a", "a note 0", 10))


@postgres
def test_reembedding_with_another_dimension_gets_its_own_index(
    pair: tuple[Backend, Backend],
) -> None:
    server, memory = pair
    for backend in pair:
        fill(backend, "a", 30)
        fill(backend, "b", 30)
        rows = backend.contents_to_embed("a", "seeded-48")
        vectors = [(i, seq, pack(vector_of(content, 48))) for i, seq, content in rows]
        assert backend.replace_vectors("a", "seeded-48", vectors, clear=True) == 30
    with server.engine.connect() as conn:
        found = conn.exec_driver_sql(
            "SELECT count(*) FILTER (WHERE embedding IS NOT NULL), count(*) FROM memory_vectors"
        ).one()
        assert tuple(found) == (60, 60)
        assert conn.exec_driver_sql("SELECT to_regclass('ix_memory_vectors_hnsw_48')").scalar()
    got = ranked(server, "a", "a note 3", 10, dim=48)
    assert got[0][0] == "a note 3"
    assert_same(got, ranked(memory, "a", "a note 3", 10, dim=48))
    assert ranked(server, "a", "a note 3", 10) == []  # the old model's vectors are gone
    assert_same(ranked(server, "b", "b note 3", 10), ranked(memory, "b", "b note 3", 10))


@postgres
def test_existing_vectors_are_back_filled_when_server_mode_is_first_used(
    db_url_factory: Callable[[str], str],
) -> None:
    url = db_url_factory("late")
    before = open_backend(with_option(url, "vectors=memory"))
    try:
        fill(before, "a", 50)
        expected = ranked(before, "a", "a note 9", 10)
        assert not extension_installed(before)
    finally:
        before.close()
    server = open_server(url)
    try:
        with server.engine.connect() as conn:
            assert (
                conn.exec_driver_sql(
                    "SELECT count(*) FROM memory_vectors WHERE embedding IS NULL"
                ).scalar()
                == 0
            )
            # The decoding is exact: the server holds the very float32 values stored.
            blob, text = conn.exec_driver_sql(
                "SELECT vector, embedding::text FROM memory_vectors LIMIT 1"
            ).one()
        stored = np.frombuffer(bytes(blob), dtype=np.float32)
        assert np.array_equal(np.array(text.strip("[]").split(","), dtype=np.float32), stored)
        assert_same(ranked(server, "a", "a note 9", 10), expected)
    finally:
        server.close()


@postgres
def test_import_and_store_saves_are_searchable_on_the_server(
    db_url_factory: Callable[[str], str], tmp_path: Path
) -> None:
    embedder = SeededEmbedder()
    source = with_option(db_url_factory("source"), "vectors=memory")
    with aimem.MemoryStore(source, judge=FixedJudge(), embedder=embedder) as store:
        for i in range(25):
            store.save(f"fact number {i} about the garden")
        store.export_to(tmp_path / "out.jsonl")
        expected = [
            h.memory.content
            for h in store.search("fact number 4 about the garden", mode="semantic")
        ]
    open_server(db_url_factory("target")).close()  # skips without pgvector
    target = with_option(db_url_factory("target"), "vectors=server")
    with aimem.MemoryStore(target, judge=FixedJudge(), embedder=embedder) as store:
        report = store.import_from(tmp_path / "out.jsonl")
        assert report.ok and report.memories == 25
        assert store.stats().vector_search == "pgvector (HNSW)"
        got = [
            h.memory.content
            for h in store.search("fact number 4 about the garden", mode="semantic")
        ]
        assert got == expected and len(got) == 10  # the judge's reading is what is embedded
        store.save("a new fact about the kitchen")
        found = [h.memory.content for h in store.search("kitchen fact", mode="semantic", limit=50)]
        assert len(found) == 26 and "a new fact about the kitchen" in found
    server = open_backend(target)
    try:
        with server.engine.connect() as conn:
            counts = conn.exec_driver_sql(
                "SELECT count(embedding), count(*) FROM memory_vectors"
            ).one()
        assert tuple(counts) == (26, 26)
    finally:
        server.close()


@postgres
def test_the_hnsw_index_answers_a_large_namespace(pair: tuple[Backend, Backend]) -> None:
    server, _ = pair
    for start in range(0, 3000, 1000):
        server.insert("big", [item(f"big {i}", 0.5) for i in range(start, start + 1000)], POLICY)
    fill(server, "small", 20)
    from aimem.storage import postgres_vectors

    query = "[" + ",".join(repr(float(x)) for x in vector_of("big 5")) + "]"
    statement = (
        postgres_vectors._SEARCH.format(
            embedding="v.embedding::vector(32)",
            dim=32,
            conditions=" AND m.archived_at IS NULL",
            columns=postgres_vectors._COLUMNS,
        )
        .replace(":q", "%(q)s")
        .replace(":model", "%(model)s")
        .replace(":ns", "%(ns)s")
    )
    with server.engine.connect() as conn:
        conn.exec_driver_sql("ANALYZE")
        conn.exec_driver_sql("SET hnsw.iterative_scan = relaxed_order")
        plan = conn.exec_driver_sql(
            "EXPLAIN " + statement.replace(":k", "10"),
            {"q": query, "model": "seeded-32", "ns": "big"},
        ).scalars()
        assert "ix_memory_vectors_hnsw_32" in "\n".join(plan)
    got = ranked(server, "big", "big 5", 10)
    assert got[0] == ("big 5", pytest.approx(1.0, abs=1e-6)) and len(got) == 10
    small = ranked(server, "small", "small note 4", 30)  # fewer than asked: exact, all 20
    assert len(small) == 20 and small[0][0] == "small note 4"


@postgres
def test_mode_option_is_checked(db_url_factory: Callable[[str], str]) -> None:
    with pytest.raises(StorageError, match=r"\?vectors=sideways"):
        open_backend(with_option(db_url_factory("bad"), "vectors=sideways"))
    budget = open_backend(with_option(db_url_factory("budget"), "vectors=memory&vector_cache_mb=3"))
    try:
        assert budget.stats("a", POLICY).vector_cache_budget_bytes == 3 << 20
    finally:
        budget.close()


# -- the in-process cache's budget (every backend) ------------------------------------------


def test_the_cache_evicts_the_least_recently_searched_namespace(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    backend = open_backend(with_option(db_url, "vectors=memory") if on_postgres() else db_url)
    try:
        for namespace in ("a", "b", "c"):
            fill(backend, namespace, 200, dim=64)
        cache = backend._vectors
        assert isinstance(cache, VectorCache)
        ranked(backend, "a", "a note 1", 3, dim=64)
        one = cache.bytes_in_use
        assert one >= 200 * 64 * 4  # the matrix at least
        cache.budget_bytes = int(one * 2.5)  # room for two namespaces, not three
        ranked(backend, "b", "b note 1", 3, dim=64)
        assert cache.bytes_in_use == backend.stats("a", POLICY).vector_cache_bytes
        assert cache.bytes_in_use <= cache.budget_bytes
        ranked(backend, "a", "a note 2", 3, dim=64)  # a is now the most recent
        ranked(backend, "c", "c note 1", 3, dim=64)  # so b goes
        assert set(cache._entries) == {("a", "seeded-64"), ("c", "seeded-64")}
        assert cache.bytes_in_use <= cache.budget_bytes
        # An evicted namespace is rebuilt on its next search, answering as before.
        assert ranked(backend, "b", "b note 7", 3, dim=64)[0][0] == "b note 7"
        assert ("b", "seeded-64") in cache._entries
        # One namespace over the whole budget is still served, alone, and said once.
        cache.budget_bytes = one // 2
        with caplog.at_level(logging.WARNING, logger="aimem"):
            assert ranked(backend, "c", "c note 5", 3, dim=64)[0][0] == "c note 5"
            ranked(backend, "c", "c note 6", 3, dim=64)
        assert list(cache._entries) == [("c", "seeded-64")]
        assert (
            sum("larger than the vector cache's budget" in r.message for r in caplog.records) == 1
        )
        stats = backend.stats("c", POLICY)
        assert stats.vector_cache_bytes is not None and stats.vector_cache_budget_bytes is not None
        assert stats.vector_cache_bytes > stats.vector_cache_budget_bytes
    finally:
        backend.close()


def test_a_store_reports_where_search_by_meaning_runs(db_url: str) -> None:
    with aimem.MemoryStore(db_url, judge=FixedJudge(), embedder=SeededEmbedder()) as store:
        store.save("I grow tomatoes on the balcony")
        stats = store.stats()
        assert stats.vector_search in ("in-process index", "pgvector (HNSW)")
        if stats.vector_search == "in-process index":
            store.search("tomatoes", mode="semantic")
            after = store.stats()
            assert after.vector_cache_bytes and after.vector_cache_bytes > 0
            assert after.vector_cache_budget_bytes == 256 << 20


def test_seeded_vectors_have_no_ties() -> None:
    """The comparisons above rely on it: equal cosines would leave the order to chance."""
    query = vector_of("a note 7")
    scores = [float(vector_of(f"a note {i}") @ query) for i in range(90)]
    assert len(set(scores)) == 90
    assert asyncio.run(SeededEmbedder().embed(["x"]))[0] == pytest.approx(vector_of("x").tolist())
