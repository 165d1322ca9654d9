"""Test judges shared by several test modules (``aimem.testing`` has the public ones)."""

from __future__ import annotations

from collections.abc import Sequence

import aimem
from aimem.testing import FixedJudge


class FlakyJudge(FixedJudge):
    """Judges by the ``[score=...]`` marker rule, or fails while ``down`` is set.

    Every call is recorded in ``calls``, the failed ones too.
    """

    def __init__(self, *, down: bool = False) -> None:
        super().__init__()
        self.down = down

    async def interpret(
        self,
        content: str,
        *,
        user_context: str | None = None,
        related: Sequence[aimem.Memory] = (),
    ) -> aimem.Interpretation:
        if self.down:
            self.calls.append(content)
            raise aimem.JudgeError("endpoint down")
        return await super().interpret(content, user_context=user_context, related=related)
