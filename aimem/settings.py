"""One frozen ``Settings`` and the single place where its precedence is applied.

Precedence, highest first: explicit arguments > environment (``AIMEM_*``, plus the
standard ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``) > the JSON config file
(``~/.config/aimem/config.json`` on Linux) > defaults.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic import ValidationError as PydanticValidationError

from aimem.exceptions import ValidationError
from aimem.validation import parse_json

__all__ = ["Settings", "config_dir", "data_dir", "default_database_url", "masked_url"]

APP = "aimem"


def _platform_dir(xdg_var: str, xdg_default: str, windows_var: str, windows_default: str) -> Path:
    """The per-user directory for aimem on this platform, honouring the usual variables."""
    if sys.platform == "win32":  # pragma: no cover - platform specific
        return Path(os.environ.get(windows_var) or Path.home() / windows_default) / APP
    if sys.platform == "darwin":  # pragma: no cover - platform specific
        return Path.home() / "Library/Application Support" / APP
    return Path(os.environ.get(xdg_var) or Path.home() / xdg_default) / APP


def data_dir() -> Path:
    """Platform data directory (``~/.local/share/aimem`` on Linux, honouring XDG_DATA_HOME)."""
    return _platform_dir("XDG_DATA_HOME", ".local/share", "LOCALAPPDATA", "AppData/Local")


def config_dir() -> Path:
    """Platform config directory (``~/.config/aimem`` on Linux, honouring XDG_CONFIG_HOME)."""
    return _platform_dir("XDG_CONFIG_HOME", ".config", "APPDATA", "AppData/Roaming")


def default_database_url() -> str:
    """SQLite file in the platform data directory; created on first use."""
    return f"sqlite:///{data_dir() / 'aimem.db'}"


def masked_url(url: str) -> str:
    """``url`` with any password replaced by ``***``, for status lines, logs and errors.

    >>> masked_url("postgresql://agent:s3cret@db.internal:5432/memories")
    'postgresql://agent:***@db.internal:5432/memories'
    """
    scheme, sep, rest = url.partition("://")
    authority, slash, tail = rest.partition("/")
    user, at, host = authority.rpartition("@")
    if not sep or not at or ":" not in user:
        return url
    return f"{scheme}://{user.split(':', 1)[0]}:***@{host}{slash}{tail}"


class Settings(BaseModel):
    """Every aimem setting, with its default. Build one with ``Settings.load(...)``.

    Example:
        >>> Settings.load(max_memories=50).max_memories
        50
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; None means the platform data dir file."
    )
    max_memories: int = Field(default=100, ge=1, description="Active, unpinned, judged cap.")
    min_priority_score: float = Field(
        default=0.3, ge=0.0, le=1.0, description="Archive active memories scoring below this."
    )
    auto_prune: bool = Field(default=True, description="Run the capacity manager on every save.")
    interpretation_enabled: bool = Field(
        default=True, description="False: no LLM call; the heuristic judge scores the raw text."
    )
    max_content_chars: int = Field(default=16_000, ge=1, description="Longest content accepted.")
    model: str = Field(default="gpt-4o-mini", description="Chat model for OpenAIJudge.")
    openai_api_key: SecretStr | None = Field(default=None, description="OPENAI_API_KEY.")
    openai_base_url: str | None = Field(
        default=None, description="OPENAI_BASE_URL: any OpenAI-compatible endpoint."
    )
    max_batch_items: int = Field(
        default=10_000,
        ge=1,
        description=(
            "Most items one save_many or compress takes (one write transaction); a larger "
            "batch is refused before anything is judged: split it."
        ),
    )
    judge_timeout: float = Field(default=30.0, gt=0, description="Seconds per LLM request.")
    judge_max_attempts: int = Field(default=3, ge=1, description="Requests per save at most.")
    judge_concurrency: int = Field(
        default=8, ge=1, description="save_many runs this many judge calls at once."
    )
    judge_batch_size: int = Field(
        default=8,
        ge=1,
        le=32,
        description=(
            "save_many and compress ask a judge that can batch (OpenAIJudge) about this many "
            "items per call; 1 = one call per item."
        ),
    )
    judge_temperature: float | None = Field(
        default=0.0,
        ge=0.0,
        le=2.0,
        description="Sent with every judge request; 'none' leaves it to the server.",
    )
    judge_max_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Bound on each judge reply; None sizes it to the request.",
    )
    judge_seed: int | None = Field(
        default=0, description="Seed for repeatable sampling where supported; 'none' omits it."
    )
    judge_heuristic_weight: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description=(
            "The offline heuristic's share of each component; None: 0.5 for a small model "
            "(at most 8B parameters by name), else 0."
        ),
    )
    judge_check_faithfulness: bool = Field(
        default=True,
        description="Re-ask once when an interpretation changes the content's facts, then keep it.",
    )
    related_limit: int = Field(
        default=5, ge=0, le=20, description="Existing memories shown to the judge for novelty."
    )
    search_priority_weight: float = Field(
        default=0.01, ge=0.0, le=1.0, description="Weight of priority in search scores."
    )
    search_recency_weight: float = Field(
        default=0.005, ge=0.0, le=1.0, description="Weight of recency in search scores."
    )
    recency_half_life_days: float = Field(
        default=30.0, gt=0, description="Days for a memory's recency to halve since last use."
    )
    search_min_relevance: float = Field(
        default=0.05,
        ge=0.0,
        le=1.0,
        description="Hits below this absolute relevance (0..1) are left out of searches.",
    )
    near_duplicate_similarity: float = Field(
        default=0.95, ge=0.0, le=1.0, description="Cosine at which a related memory is flagged."
    )
    embedder: str | None = Field(
        default=None,
        description=(
            "The embedder for semantic search when none is passed: none, local, local:PATH "
            "or openai:MODEL. None: keyword search only."
        ),
    )
    mcp_max_chars: int = Field(
        default=20000,
        ge=1000,
        le=1_000_000,
        description=(
            "Character budget of the MCP server's instructions, read_memory and any one tool "
            "result (text and structured content together); longer lists come in pages."
        ),
    )
    on_judge_error: Literal["pending", "raise"] = Field(
        default="pending",
        description=(
            "What a failed judgement does: 'pending' stores the raw content unscored "
            "(score_source='pending', outside the cap) for reinterpret_pending(); "
            "'raise' raises JudgeError and writes nothing."
        ),
    )

    @classmethod
    def load(
        cls,
        overrides: Mapping[str, Any] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        config_file: Path | None = None,
        **kwargs: Any,
    ) -> Settings:
        """Merge defaults < config file < environment < explicit overrides, then validate.

        Raises:
            ValidationError: an unknown setting name or a value out of range.
        """
        env = os.environ if environ is None else environ
        merged: dict[str, Any] = {}
        merged.update(_from_file(config_file or config_dir() / "config.json"))
        merged.update(_from_env(env))
        explicit = {**(overrides or {}), **kwargs}
        merged.update({k: v for k, v in explicit.items() if v is not None})
        return cls._validated(merged)

    def with_overrides(self, **overrides: Any) -> Settings:
        """A copy with some fields replaced, validated like ``load``."""
        return self._validated({**self.model_dump(), **overrides})

    @classmethod
    def _validated(cls, values: dict[str, Any]) -> Settings:
        try:
            return cls.model_validate(values)
        except PydanticValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}"
                for e in exc.errors()
            )
            raise ValidationError(f"Invalid aimem settings: {problems}") from None


_ENV_NAMES = {
    "database_url": "AIMEM_DATABASE_URL",
    "max_memories": "AIMEM_MAX_MEMORIES",
    "min_priority_score": "AIMEM_MIN_PRIORITY_SCORE",
    "auto_prune": "AIMEM_AUTO_PRUNE",
    "interpretation_enabled": "AIMEM_INTERPRETATION_ENABLED",
    "max_content_chars": "AIMEM_MAX_CONTENT_CHARS",
    "max_batch_items": "AIMEM_MAX_BATCH_ITEMS",
    "model": "AIMEM_MODEL",
    "judge_timeout": "AIMEM_JUDGE_TIMEOUT",
    "judge_max_attempts": "AIMEM_JUDGE_MAX_ATTEMPTS",
    "judge_concurrency": "AIMEM_JUDGE_CONCURRENCY",
    "judge_batch_size": "AIMEM_JUDGE_BATCH_SIZE",
    "judge_temperature": "AIMEM_JUDGE_TEMPERATURE",
    "judge_max_tokens": "AIMEM_JUDGE_MAX_TOKENS",
    "judge_seed": "AIMEM_JUDGE_SEED",
    "judge_heuristic_weight": "AIMEM_JUDGE_HEURISTIC_WEIGHT",
    "judge_check_faithfulness": "AIMEM_JUDGE_CHECK_FAITHFULNESS",
    "search_priority_weight": "AIMEM_SEARCH_PRIORITY_WEIGHT",
    "search_recency_weight": "AIMEM_SEARCH_RECENCY_WEIGHT",
    "recency_half_life_days": "AIMEM_RECENCY_HALF_LIFE_DAYS",
    "search_min_relevance": "AIMEM_SEARCH_MIN_RELEVANCE",
    "on_judge_error": "AIMEM_ON_JUDGE_ERROR",
    "embedder": "AIMEM_EMBEDDER",
    "mcp_max_chars": "AIMEM_MCP_MAX_CHARS",
    "openai_api_key": "OPENAI_API_KEY",
    "openai_base_url": "OPENAI_BASE_URL",
}


#: Settings where the word "none" (env or config file) means None: not sent, or automatic.
_NONE_ALLOWED = frozenset(
    {"judge_temperature", "judge_max_tokens", "judge_seed", "judge_heuristic_weight"}
)


def _from_env(env: Mapping[str, str]) -> dict[str, str | None]:
    # pydantic parses "false"/"0"/"250" from strings, so values pass through as text.
    return _none_words(
        {field: env[name] for field, name in _ENV_NAMES.items() if env.get(name, "") != ""}
    )


def _none_words(values: dict[str, Any]) -> dict[str, Any]:
    """``"none"`` as None for the settings where None means something."""
    return {
        k: None
        if k in _NONE_ALLOWED and isinstance(v, str) and v.strip().lower() in ("none", "null")
        else v
        for k, v in values.items()
    }


def _from_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValidationError(f"Cannot read aimem config file {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ValidationError(f"aimem config file {path} must hold a JSON object")
    return _none_words(data)
