"""The read tools of ``aimem mcp``: search, list, get, history, stats, core, read_memory.

Each calls one store method and answers with compact views within the budget; lists
that do not fit come in pages (``cursor`` / ``next_cursor``), whose memories are read
anew from the store, so a deleted one is never served from a cursor.
"""

# No ``from __future__ import annotations``: the SDK reads these signatures at runtime.

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from aimem.exceptions import NotFoundError, ValidationError
from aimem.mcp.args import (
    Cursor,
    Detail,
    Limit,
    MemoryId,
    MinRelevance,
    MinScore,
    SearchMode,
    UserContext,
    When,
    parse_when,
)
from aimem.mcp.errors import SEMANTIC_NEEDS_EMBEDDER
from aimem.mcp.pages import Pager
from aimem.mcp.views import (
    NO_MATCH,
    CoreResult,
    HistoryResult,
    MemoryResult,
    PageResult,
    SearchResult,
    event_view,
    hit_view,
    memory_view,
)
from aimem.models import Memory, Stats
from aimem.store import AsyncMemoryStore

__all__ = ["READ_ONLY", "read_tools"]

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)

Plan = list[tuple[Callable[..., Awaitable[Any]], ToolAnnotations]]


def read_tools(store: AsyncMemoryStore, pager: Pager) -> Plan:
    """The read tools over ``store``; descriptions tell the calling model when to use each."""
    Content = Annotated[str, Field(min_length=1, max_length=store.settings.max_content_chars)]

    async def current(memory_id: str) -> Memory | None:
        """A listed memory as it is now; None once deleted, so a cursor never serves it."""
        try:
            return await store.get(memory_id)
        except NotFoundError:
            return None

    async def search_memories(
        query: Annotated[Content, Field(description="Words or a question to look up.")],
        limit: Annotated[Limit, Field(description="Most hits in all (over every page).")] = 10,
        min_score: MinScore = None,
        min_relevance: MinRelevance = None,
        mode: SearchMode = "hybrid",
        include_archived: Annotated[
            bool, Field(description="Also search archived and superseded memories.")
        ] = False,
        user_context: Annotated[
            UserContext, Field(description="Only memories saved with this user_context.")
        ] = None,
        created_after: Annotated[When, Field(description="Only memories saved after this.")] = None,
        created_before: Annotated[
            When, Field(description="Only memories saved before this.")
        ] = None,
        detail: Detail = False,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Find memories relevant to a question or topic, best match first.

        Use it before answering something that may depend on what you were told
        earlier. Matches words, and meaning when the server has an embedder
        (mode=semantic needs one). Each hit has a relevance from 0 to 1; nothing
        unrelated is returned, and an empty result says "no memory matches". A hit
        marked conflicts_with is likely out of date: the newer one it names ranks
        above it. min_score is a floor on priority, not on relevance. Times are ISO
        8601 with a timezone. Hits that do not fit the server's character budget come
        on the next page: call again with cursor=next_cursor and the same query.
        """
        if cursor is not None:
            resumed = pager.resume("search_memories", cursor, query)
            return await pager.more(
                {},
                "hits",
                resumed,
                current,
                lambda m, s, r: hit_view(m, s or 0.0, detail, relevance=r),
            )
        if mode == "semantic" and store.embedder is None:
            raise ValidationError(SEMANTIC_NEEDS_EMBEDDER)
        after = parse_when(created_after, "created_after")
        before = parse_when(created_before, "created_before")
        hits = await store.search(
            query,
            limit=limit,
            min_score=min_score,
            min_relevance=min_relevance,
            include_archived=include_archived,
            mode=mode,
            user_context=user_context,
            created_after=after,
            created_before=before,
        )
        return pager.page(
            {} if hits else {"note": NO_MATCH},
            "hits",
            hits,
            lambda h: hit_view(
                h.memory, h.score, detail, relevance=h.relevance, conflicts_with=h.conflicts_with
            ),
            continue_with="search_memories",
            query=query,
            id_of=lambda h: h.memory.id,
            score_of=lambda h: h.score,
            relevance_of=lambda h: h.relevance,
        )

    async def list_memories(
        min_score: MinScore = None,
        limit: Annotated[
            Limit | None, Field(description="Most memories in all, over every page (default: all).")
        ] = None,
        order: Literal["priority", "recent"] = "priority",
        include_archived: bool = False,
        detail: Detail = False,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, PageResult]:
        """List memories by priority (most important first) or newest first.

        Archived and superseded ones only with include_archived=true (their state says
        which). What does not fit the server's character budget comes on the next
        page: call again with cursor=next_cursor.
        """
        if cursor is not None:
            resumed = pager.resume("list_memories", cursor)
            return await pager.more(
                {}, "memories", resumed, current, lambda m, _s, _r: memory_view(m, detail)
            )
        memories = await store.list(
            min_score=min_score, limit=limit, order=order, include_archived=include_archived
        )
        return pager.page(
            {},
            "memories",
            memories,
            lambda m: memory_view(m, detail),
            continue_with="list_memories",
            id_of=lambda m: m.id,
        )

    async def get_memory(
        memory_id: MemoryId, detail: Detail = False
    ) -> Annotated[CallToolResult, MemoryResult]:
        """Fetch one memory by id or unique id prefix, archived ones included."""
        return pager.answer({"memory": memory_view(await store.get(memory_id), detail)})

    async def memory_history(
        memory_id: MemoryId, detail: Detail = False, cursor: Cursor = None
    ) -> Annotated[CallToolResult, HistoryResult]:
        """Read a memory's history, oldest first, e.g. to see what it said before.

        Events: save, judge, update (the version it replaced under previous), archive
        (reason; superseded_by when a newer memory made it out of date), restore, pin,
        unpin. More than fits the budget: call again with cursor=next_cursor.
        """
        full_id = await store.resolve_id(memory_id)  # a deleted memory: NotFoundError
        events = await store.history(full_id)  # re-read for every page: append-only
        listing_id, offset = None, 0
        if cursor is not None:
            listing_id, listing, offset = pager.resume("memory_history", cursor, full_id)
            events = events[: listing.size]
        return pager.page(
            {"memory_id": full_id},
            "events",
            events,
            lambda e: event_view(e, detail),
            continue_with="memory_history",
            offset=offset,
            listing_id=listing_id,
            query=full_id,
        )

    async def memory_stats() -> Annotated[CallToolResult, Stats]:
        """Counts (active, archived, pending, pinned), mean priority, tokens, embedder."""
        return pager.answer((await store.stats()).model_dump(mode="json"))

    async def read_core() -> Annotated[CallToolResult, CoreResult]:
        """Read the core record: the identity, personality and standing instructions."""
        return pager.answer({"core": await store.get_core()})

    async def read_memory(
        detail: Detail = False, cursor: Cursor = None
    ) -> Annotated[CallToolResult, PageResult]:
        """Read every active memory, most important first (aigpt's read_memory).

        The answer stays within the server's character budget (AIMEM_MCP_MAX_CHARS);
        when more memories are left, call again with cursor=next_cursor.
        """
        if cursor is not None:
            resumed = pager.resume("read_memory", cursor)
            return await pager.more(
                {}, "memories", resumed, current, lambda m, _s, _r: memory_view(m, detail)
            )
        memories = await store.list(order="priority")
        return pager.page(
            {},
            "memories",
            memories,
            lambda m: memory_view(m, detail),
            continue_with="read_memory",
            id_of=lambda m: m.id,
        )

    return [
        (search_memories, READ_ONLY),
        (list_memories, READ_ONLY),
        (get_memory, READ_ONLY),
        (memory_history, READ_ONLY),
        (memory_stats, READ_ONLY),
        (read_core, READ_ONLY),
        (read_memory, READ_ONLY),
    ]
