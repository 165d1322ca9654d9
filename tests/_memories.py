"""A detached :class:`aimem.Memory` built by hand, for tests that need one without a store.

Judges get related memories, pagers and budgets get listings: those tests build the
snapshot directly with :func:`make_memory` and name only the fields they care about.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aimem.models import Memory


def make_memory(
    id: str, content: str = "c", *, now: datetime | None = None, **fields: Any
) -> Memory:
    """An active, unpinned, once-judged memory; ``fields`` override any field.

    ``interpreted_content`` defaults to ``content``; every timestamp is ``now`` (the
    current time unless given).
    """
    now = now or datetime.now(UTC)
    values: dict[str, Any] = {
        "id": id,
        "namespace": "default",
        "content": content,
        "interpreted_content": content,
        "emotional_impact": 0.1,
        "user_relevance": 0.1,
        "novelty": 0.1,
        "utility": 0.1,
        "priority_score": 0.4,
        "rationale": "",
        "user_context": None,
        "score_source": "custom",
        "model": None,
        "prompt_version": None,
        "created_at": now,
        "updated_at": now,
        "last_accessed_at": now,
        "access_count": 0,
        "pinned": False,
        "version": 1,
        "archived_at": None,
        "archive_reason": None,
    }
    return Memory(**(values | fields))
