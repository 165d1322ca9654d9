"""The whole aimem error tree, split by whose fault a failure is.

```
AimemError
├── ValidationError (also ValueError)    bad input from the caller: fix the call
│   ├── AmbiguousIdError                 an id prefix that names several memories
│   └── EmbedderMismatchError            the embedder's vectors differ from the stored ones
├── NotFoundError   (also KeyError)      no memory with that id in this namespace
├── ConflictError                        stale expected_version, reused idempotency key
├── JudgeError                           the LLM failed after retries or kept answering badly
├── EmbeddingError                       the embedder failed or answered badly
│   └── EmbedderMismatchError            (also a ValidationError: reembed, or configure it)
└── StorageError                         the database could not be read or written
```

Every message says what to do next. Nothing in aimem returns ``[]`` or a default
score to hide one of these.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AimemError",
    "AmbiguousIdError",
    "ConflictError",
    "EmbedderMismatchError",
    "EmbeddingError",
    "JudgeError",
    "NotFoundError",
    "StorageError",
    "ValidationError",
]


class AimemError(Exception):
    """Base class of every error aimem raises on purpose."""


class ValidationError(AimemError, ValueError):
    """The caller passed something aimem refuses to store (empty, too large, wrong type)."""


class AmbiguousIdError(ValidationError):
    """An id prefix matched several memories: give more characters (as git does)."""

    def __init__(self, message: str, *, prefix: str = "", matches: int = 0) -> None:
        super().__init__(message)
        #: The prefix as the caller gave it, and how many memories it matched (at least).
        self.prefix = prefix
        self.matches = matches


class NotFoundError(AimemError, KeyError):
    """No memory with the given id exists in the store's namespace."""

    def __str__(self) -> str:
        # KeyError.__str__ would wrap the message in quotes.
        return str(self.args[0]) if self.args else ""


class ConflictError(AimemError):
    """The stored record changed since the caller read it, or a key was reused."""


class StorageError(AimemError):
    """The database failed in a way a retry did not fix."""


class JudgeError(AimemError):
    """The judge could not produce a valid interpretation.

    Attributes:
        attempts: how many requests were sent before giving up.
        last_raw: the last raw reply text from the model, if one arrived.
        errors: one line per failed attempt, oldest first.
    """

    def __init__(
        self,
        message: str,
        *,
        attempts: int = 0,
        last_raw: str | None = None,
        errors: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.last_raw = last_raw
        self.errors = list(errors)


class EmbeddingError(AimemError):
    """The embedder could not produce valid vectors.

    Attributes:
        attempts: how many requests were sent before giving up.
        errors: one line per failed attempt, oldest first.
    """

    def __init__(self, message: str, *, attempts: int = 0, errors: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.errors = list(errors)


class EmbedderMismatchError(EmbeddingError, ValidationError):
    """The configured embedder makes vectors unlike the ones the store holds.

    Same name, other dimension (or vectors of another dimension in an import): searching
    them together would be meaningless. ``store.reembed()`` / ``aimem reembed``
    re-computes the stored vectors with the configured embedder.
    """
