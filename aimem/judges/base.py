"""The pluggable parts of aimem, as structural protocols.

A judge is anything with an async ``interpret``; it need not inherit from aimem. A
judge may also offer ``text_reading`` (a ``TextReading``): how retrieval reads a text for
that judge's store. Stores of judges without one read as the offline judge does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from aimem.models import Interpretation, Memory

__all__ = ["Judge", "TextReading", "judge_source"]


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


class TextReading(Protocol):
    """What retrieval asks of a text: more words to look up, whose fact, what changed.

    Retrieval depends on this interface only; the offline judge's vocabularies fill it
    (``aimem.judges.reading.HeuristicReading``), and any judge may bring its own.
    """

    def stated_facts(self, text: str) -> str:
        """A long text's stated facts without its request ("" when that is all of it)."""
        ...

    def related_terms(self, text: str) -> str:
        """Words naming the slots ``text`` fills ("We moved" -> residence words), or ""."""
        ...

    def recall_kinds(self, recall_terms: str) -> frozenset[str]:
        """The slot kinds a stored memory's recall terms name."""
        ...

    def subject_of(self, text: str) -> str:
        """``"user"``, ``"other:<relation>"`` or ``"name:<name>"``: whose fact it states."""
        ...

    def says_change(self, text: str) -> bool:
        """Whether ``text`` says something changed, ended or resumed."""
        ...

    def relatives(self) -> tuple[str, str]:
        """Regex alternations of relatives' words (English, Japanese): "sister", 母."""
        ...


def judge_source(judge: object) -> str:
    """The ``score_source`` recorded for memories this judge scored."""
    source = getattr(judge, "source", None)
    return source if isinstance(source, str) and source else "custom"
