"""The offline judge: scoring logic in ``judge``, the cue vocabularies it reads in ``cues``."""

from __future__ import annotations

from aimem.judges.heuristic.judge import HeuristicJudge

__all__ = ["HeuristicJudge"]
