"""The offline judge: scoring logic in ``judge``, the cue vocabularies it reads in ``cues``."""

from __future__ import annotations

from .judge import HeuristicJudge

__all__ = ["HeuristicJudge"]
