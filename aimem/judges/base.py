"""The pluggable parts of aimem, as structural protocols.

A judge is anything with an async ``interpret``; it need not inherit from aimem.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from aimem.models import Interpretation, Memory

__all__ = ["Judge", "judge_source"]


@runtime_checkable
class Judge(Protocol):
    """Reads one piece of content and returns its interpretation and four rubric scores.

    A judge may declare a class attribute ``source`` (``"llm"``, ``"heuristic"``, ...);
    it becomes each memory's ``score_source``. Without one, memories say ``"custom"``.
    """

    async def interpret(
        self,
        content: str,
        *,
        user_context: str | None = None,
        related: Sequence[Memory] = (),
    ) -> Interpretation:
        """Interpret ``content``; ``related`` are existing memories, for judging novelty."""
        ...


def judge_source(judge: object) -> str:
    """The ``score_source`` recorded for memories this judge scored."""
    source = getattr(judge, "source", None)
    return source if isinstance(source, str) and source else "custom"
