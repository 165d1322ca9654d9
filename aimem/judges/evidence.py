"""Evidence gathered over the requests of one interpretation, and one item's share of it.

A ``JudgeError`` carries this evidence (requests sent, the last raw reply, one line per
failure), and every stored memory its token counts, latency and retries.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from aimem.judges.output import Reply

__all__ = ["Tally", "share"]


@dataclass
class Tally:
    """Evidence gathered over every request of one interpretation."""

    started: float = field(default_factory=time.perf_counter)
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str | None = None
    last_raw: str | None = None
    errors: list[str] = field(default_factory=list)
    timeout: float = 30.0
    #: The capabilities generation the last request was built with.
    built_with: int = 0

    def fail(self, reason: str) -> None:
        """Note one failed request's reason."""
        self.errors.append(f"request {self.requests}: {reason}")

    def record(self, reply: Reply) -> None:
        """Fold one reply's tokens, model name and raw text in."""
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.model = reply.model or self.model
        self.last_raw = reply.content if reply.content is not None else reply.refusal


def share(tally: Tally, items: int) -> Tally:
    """One item's part of a batch call: tokens split evenly, latency and retries shared."""
    per = max(1, items)
    return Tally(
        started=tally.started,
        requests=tally.requests,
        prompt_tokens=-(-tally.prompt_tokens // per),
        completion_tokens=-(-tally.completion_tokens // per),
        model=tally.model,
    )
