"""What aimem changes in a model's valid answer before it is stored, and how it says so.

* An interpretation still unfaithful after the re-ask is replaced by the content itself,
  flagged at the start of the rationale (``KEPT_CONTENT_FLAG``): nothing is lost, and a
  distorted fact is worse than an unpolished one.
* A small model's components are blended with the offline heuristic's, which on the
  labelled sets ranks better than the model alone (``bench/real_model.py``), and the
  related memories the heuristic's precise rules find out of date are added to the
  model's: a 1.5B model rarely names one (knowledge-update current-first 1/4 against the
  heuristic's 3/4), but a looser rule must not retire what the model kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aimem.judges.output import MAX_INTERPRETATION_CHARS, MAX_RATIONALE_CHARS, JudgeOutput
from aimem.models import Interpretation
from aimem.scoring import COMPONENTS
from aimem.validation import MAX_SUPERSEDE_REASON_CHARS

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


def with_supersedes(fields: dict[str, Any], found: Sequence[tuple[int, str]]) -> dict[str, Any]:
    """``fields`` (``supersedes`` counted from 0) plus the offline rules' precise findings.

    ``found`` is ``find_superseded(..., precise=True)``: only an explicit change or end
    tied to the very thing (a move against the residence, "sold the car", a new dose). A
    small model misses updates, but its answer is not overruled by the looser rules (the
    same frame with no change word, a changed count), which are the offline judge's own.
    """
    extra = tuple((i, why) for i, why in found if i not in fields["supersedes"])
    if not extra:
        return fields
    reason = "; ".join(dict.fromkeys(why for _, why in extra))
    return {
        **fields,
        "supersedes": (*fields["supersedes"], *(i for i, _ in extra)),
        "supersede_reason": fields["supersede_reason"] or reason[:MAX_SUPERSEDE_REASON_CHARS],
    }
