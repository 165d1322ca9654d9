"""Judges: what turns a memory's text into an interpretation and four scores.

``base`` is the ``Judge`` protocol every judge follows; ``openai`` talks to any
OpenAI-compatible chat API (its request shape in ``prompts`` and ``batch``, its reply
checks in ``output``, retries and error translation in ``transport``, which the
embedder shares); ``heuristic`` judges offline from cue vocabularies.
"""

from __future__ import annotations

from .base import Judge, judge_source
from .heuristic import HeuristicJudge
from .openai import OpenAIJudge

__all__ = ["HeuristicJudge", "Judge", "OpenAIJudge", "judge_source"]
