"""The offline judge's reading of a text, as retrieval asks for it (``TextReading``).

Retrieval never imports the heuristic: a store hands its retriever this reading, or its
judge's own. Each method imports the heuristic's vocabularies on first use, so opening
a store and listing memories still loads none of them.
"""

from __future__ import annotations

from typing import cast

from aimem.judges.base import Judge, TextReading

__all__ = ["HeuristicReading", "reading_for"]


class HeuristicReading:
    """``TextReading`` by the offline judge's clause, slot and subject rules."""

    def stated_facts(self, text: str) -> str:
        """See ``TextReading.stated_facts``."""
        from aimem.judges.heuristic.clauses import stated_facts

        return stated_facts(text)

    def related_terms(self, text: str) -> str:
        """See ``TextReading.related_terms``."""
        from aimem.judges.heuristic.statement import slot_terms

        return slot_terms(text)

    def recall_kinds(self, recall_terms: str) -> frozenset[str]:
        """See ``TextReading.recall_kinds``."""
        from aimem.judges.heuristic.statement import recall_kinds

        return recall_kinds(recall_terms)

    def subject_of(self, text: str) -> str:
        """See ``TextReading.subject_of``."""
        from aimem.judges.heuristic.statement import subject_of

        return subject_of(text)

    def says_change(self, text: str) -> bool:
        """See ``TextReading.says_change``."""
        from aimem.judges.heuristic.statement import says_change

        return says_change(text)

    def relatives(self) -> tuple[str, str]:
        """See ``TextReading.relatives``."""
        from aimem.judges.heuristic.slots import OTHER_PERSON_EN, OTHER_PERSON_JA

        return OTHER_PERSON_EN, OTHER_PERSON_JA


#: One per process: it holds no state.
HEURISTIC_READING = HeuristicReading()


def reading_for(judge: Judge) -> TextReading:
    """The judge's own ``text_reading`` if it offers one, else the offline judge's."""
    own = getattr(judge, "text_reading", None)
    if callable(getattr(own, "related_terms", None)):
        return cast(TextReading, own)
    return HEURISTIC_READING
