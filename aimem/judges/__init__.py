"""Judges: what turns a memory's text into an interpretation and four scores.

``base`` is the ``Judge`` protocol every judge follows; ``openai`` talks to any
OpenAI-compatible chat API (the prompt files in ``prompts``, what it sends in
``requests``, its reply checks in ``replies`` and ``faithfulness``, a conversation's facts
in ``facts``, retries, errors and capabilities in ``transport``, which the embedder
shares); ``heuristic`` judges offline from cue vocabularies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aimem.judges.base import Judge, judge_source

if TYPE_CHECKING:
    from aimem.judges.heuristic import HeuristicJudge
    from aimem.judges.openai import OpenAIJudge

__all__ = ["HeuristicJudge", "Judge", "OpenAIJudge", "judge_source"]


def __getattr__(name: str) -> Any:
    # On first use: the openai SDK takes most of a second to import, and the heuristic's
    # vocabularies a tenth of one; reading memories needs neither.
    if name == "OpenAIJudge":
        from aimem.judges.openai import OpenAIJudge

        return OpenAIJudge
    if name == "HeuristicJudge":
        from aimem.judges.heuristic import HeuristicJudge

        return HeuristicJudge
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
