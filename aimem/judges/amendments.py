"""What aimem changes in a model's valid answer before it is stored, and how it says so.

* An interpretation still unfaithful after the re-ask is replaced by the content itself,
  flagged at the start of the rationale (``KEPT_CONTENT_FLAG``): nothing is lost, and a
  distorted fact is worse than an unpolished one.
* A small model's components are blended with the offline heuristic's, which on the
  labelled sets ranks better than the model alone (``bench/real_model.py``), and the
  related memories the heuristic finds out of date are added to the model's: a 1.5B model
  rarely names one (knowledge-update current-first 1/4 against the heuristic's 3/4).
"""

from __future__ import annotations

from typing import Any

from ..models import Interpretation
from ..scoring import COMPONENTS
from .output import MAX_INTERPRETATION_CHARS, MAX_RATIONALE_CHARS, JudgeOutput

__all__ = ["KEPT_CONTENT_FLAG", "blend", "kept_content", "replace_output", "with_supersedes"]

#: How a kept content is flagged in its rationale.
KEPT_CONTENT_FLAG = "[interpretation kept as the content: {reason}]"


def kept_content(output: JudgeOutput, content: str, reason: str) -> JudgeOutput:
    """The model's scores with the content itself as the interpretation, flagged."""
    flag = KEPT_CONTENT_FLAG.format(reason=reason)
    rationale = f"{flag} {output.rationale}".strip()[:MAX_RATIONALE_CHARS]
    kept = content.strip()[:MAX_INTERPRETATION_CHARS]
    return replace_output(output, interpreted_content=kept, rationale=rationale)


def replace_output(output: JudgeOutput, **changes: Any) -> JudgeOutput:
    """A copy of ``output`` with some fields replaced (validated: the rules still hold)."""
    return JudgeOutput.model_validate({**output.model_dump(), **changes})


def blend(fields: dict[str, Any], offline: Interpretation, weight: float) -> dict[str, Any]:
    """``fields`` with each component ``weight * offline + (1 - weight) * model``."""
    if weight <= 0:
        return fields
    return {
        **fields,
        **{
            name: round(weight * getattr(offline, name) + (1 - weight) * fields[name], 6)
            for name in COMPONENTS
        },
    }


def with_supersedes(fields: dict[str, Any], offline: Interpretation) -> dict[str, Any]:
    """``fields`` (``supersedes`` counted from 0) plus what ``offline`` finds out of date."""
    extra = tuple(i for i in offline.supersedes if i not in fields["supersedes"])
    if not extra:
        return fields
    return {
        **fields,
        "supersedes": (*fields["supersedes"], *extra),
        "supersede_reason": fields["supersede_reason"] or offline.supersede_reason,
    }
