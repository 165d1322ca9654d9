"""The write tools of ``aimem mcp``: save (one, several, a conversation), edit, forget, core.

Each calls one store method and answers with compact views of what it wrote and the
ids of what it archived, within the budget.
"""

# No ``from __future__ import annotations``: the SDK reads these signatures at runtime.

from collections.abc import Sequence
from typing import Annotated, Any

from mcp_types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from aimem.exceptions import ValidationError
from aimem.mcp.args import Component, Detail, MemoryId, UserContext, client_interpretation
from aimem.mcp.pages import Pager
from aimem.mcp.reads import Plan
from aimem.mcp.views import (
    BatchResult,
    CoreSet,
    Deleted,
    Json,
    MemoryResult,
    PruneResult,
    SaveResult,
    WriteResult,
    memory_view,
    prune_view,
)
from aimem.models import Memory, SaveReport
from aimem.saving.messages import MAX_MESSAGES, ROLES
from aimem.store import AsyncMemoryStore
from aimem.validation import (
    MAX_IDEMPOTENCY_KEY_CHARS,
    MAX_LIMIT,
    check_content,
    check_user_context,
)

__all__ = ["write_tools"]

ADDITIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)
REVERSIBLE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)


def _archived(archived: Sequence[Memory]) -> Json:
    """What a write archived: every id, and apart the ones a newer memory superseded."""
    return {
        "archived": [m.id for m in archived],
        "superseded": [m.id for m in archived if m.archive_reason == "superseded"],
    }


#: What save_conversation's ``messages`` looks like, for the client. The value itself is
#: checked by ``conversation.check_messages``, the store's own check, so a bad conversation
#: gets the same message from the tool as from ``store.save_conversation``.
MESSAGES_SCHEMA: Json = {
    "type": "array",
    "minItems": 1,
    "maxItems": MAX_MESSAGES,
    "description": "OpenAI-style {role, content} messages, oldest first; other keys "
    "(name, tool_calls) are ignored.",
    "items": {
        "type": "object",
        "properties": {
            "role": {"enum": list(ROLES)},
            "content": {
                "type": ["string", "array", "null"],
                "description": "Text, or a list of parts such as {type: text, text: ...}.",
            },
        },
        "required": ["role"],
    },
}


def write_tools(store: AsyncMemoryStore, pager: Pager) -> Plan:
    """The write tools over ``store``; descriptions tell the calling model when to use each."""
    max_chars = store.settings.max_content_chars
    # A list the store would refuse is refused by the schema, before any group is saved.
    max_items = min(MAX_LIMIT, store.settings.max_batch_items)
    Content = Annotated[str, Field(min_length=1, max_length=max_chars)]

    class SaveItem(BaseModel):
        """One memory to save, optionally about someone."""

        model_config = ConfigDict(extra="forbid")

        content: Content
        user_context: UserContext = None

    def batch(report: SaveReport, detail: bool, *, duplicates: bool = True) -> CallToolResult:
        head = {"duplicates": report.duplicates} if duplicates else {}
        return pager.page(
            head | _archived(report.archived),
            "memories",
            report.memories,
            lambda m: memory_view(m, detail),
            continue_with="list_memories",
            id_of=lambda m: m.id,
        )

    async def save_memory(
        content: Annotated[Content, Field(description="What to remember, in plain words.")],
        user_context: UserContext = None,
        interpreted_content: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=max_chars,
                description="Optional client scoring: your own interpretation of the content.",
            ),
        ] = None,
        emotional_impact: Annotated[
            Component, Field(description="Optional client scoring, 0-0.25.")
        ] = None,
        user_relevance: Annotated[
            Component, Field(description="Optional client scoring, 0-0.25.")
        ] = None,
        novelty: Annotated[Component, Field(description="Optional client scoring, 0-0.25.")] = None,
        utility: Annotated[Component, Field(description="Optional client scoring, 0-0.25.")] = None,
        rationale: Annotated[str | None, Field(max_length=2000)] = None,
        idempotency_key: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=MAX_IDEMPOTENCY_KEY_CHARS,
                description="Optional: a retry with the same key returns the same memory.",
            ),
        ] = None,
        detail: Detail = False,
    ) -> Annotated[CallToolResult, SaveResult]:
        """Remember something about the user or the task for later conversations.

        Use it for facts, preferences, decisions and events worth recalling; not for
        small talk (several at once: save_memories). The memory is interpreted and
        scored for importance (emotional impact, user relevance, novelty, utility,
        0-0.25 each); the least important memories are archived when the store is full,
        and their ids are returned under archived. A memory this one makes out of date
        (the user moved, changed jobs, stopped a medication) is archived too and also
        listed under superseded; restore_memory undoes a wrong one. Saving the exact
        text of an active memory returns it with duplicate true. To score it yourself,
        pass interpreted_content and all four components: no LLM call is made.
        """
        interpretation = client_interpretation(
            interpreted_content,
            {
                "emotional_impact": emotional_impact,
                "user_relevance": user_relevance,
                "novelty": novelty,
                "utility": utility,
            },
            rationale,
        )
        report = await store.save_with_report(
            content,
            user_context=user_context,
            interpretation=interpretation,
            idempotency_key=idempotency_key,
        )
        return pager.answer(
            {
                "memory": memory_view(report.memories[0], detail),
                "duplicate": bool(report.duplicates),
                **_archived(report.archived),
            }
        )

    async def save_memories(
        items: Annotated[
            list[SaveItem] | None,
            Field(
                min_length=1,
                max_length=max_items,
                description="The memories: {content, user_context?} each.",
            ),
        ] = None,
        contents: Annotated[
            list[Content] | None,
            Field(
                min_length=1,
                max_length=max_items,
                description="Or just the texts, all about user_context.",
            ),
        ] = None,
        user_context: Annotated[
            UserContext, Field(description="Who the memories are about, unless an item says.")
        ] = None,
        detail: Detail = False,
    ) -> Annotated[CallToolResult, BatchResult]:
        """Remember several things at once: judged in batches (one LLM call per batch).

        Pass items ({content, user_context?} each) or contents (texts) with one
        user_context. Memories sharing a user_context are written in one transaction,
        in input order; exact duplicates of active memories are returned, listed under
        duplicates. What the saves archived is listed as under save_memory. Memories
        that do not fit the server's character budget: call list_memories with
        cursor=next_cursor.
        """
        if (items is None) == (contents is None):
            raise ValidationError("save_memories takes items or contents (one of them, not both)")
        if items is not None:
            pairs = [(i.content, i.user_context or user_context) for i in items]
        else:
            pairs = [(c, user_context) for c in contents or []]
        where = "items[{}].content" if items is not None else "contents[{}]"
        for n, (text, about) in enumerate(pairs):  # all checked before anything is judged
            check_content(text, max_chars, what=where.format(n))
            check_user_context(about)
        groups: dict[str | None, list[int]] = {}
        for n, (_, about) in enumerate(pairs):
            groups.setdefault(about, []).append(n)
        saved: dict[int, Memory] = {}
        archived: list[Memory] = []
        duplicates: list[str] = []
        for about, positions in groups.items():
            report = await store.save_many_with_report(
                [pairs[n][0] for n in positions], user_context=about
            )
            saved.update(zip(positions, report.memories, strict=True))
            archived += report.archived
            duplicates += report.duplicates
        merged = SaveReport(
            memories=[saved[n] for n in range(len(pairs))],
            archived=archived,
            duplicates=list(dict.fromkeys(duplicates)),
        )
        return batch(merged, detail)

    async def save_conversation(
        messages: Annotated[Any, WithJsonSchema(MESSAGES_SCHEMA)],
        user_context: Annotated[
            UserContext, Field(description="Who the conversation's user is.")
        ] = None,
        detail: Detail = False,
    ) -> Annotated[CallToolResult, BatchResult]:
        """Turn a conversation into memories: the facts worth keeping from what the user said.

        Only user turns become memories; the other roles are context (what a "yes"
        answers). One LLM call per batch of turns; duplicates, supersession and capacity
        as save_memories. Memories that do not fit the server's character budget: call
        list_memories with cursor=next_cursor.
        """
        report = await store.save_conversation_with_report(messages, user_context=user_context)
        return batch(report, detail)

    async def update_memory(
        memory_id: MemoryId,
        content: Content,
        expected_version: Annotated[
            int | None,
            Field(ge=1, description="Optional: fail if the memory changed since you read it."),
        ] = None,
        detail: Detail = False,
    ) -> Annotated[CallToolResult, WriteResult]:
        """Replace a memory's content when it is outdated or wrong; it is re-interpreted.

        The id stays and the version rises; the previous version stays readable with
        memory_history. What the update archived is listed under archived.
        """
        report = await store.update_with_report(
            memory_id, content, expected_version=expected_version
        )
        return pager.answer(
            {"memory": memory_view(report.memories[0], detail), **_archived(report.archived)}
        )

    async def delete_memory(memory_id: MemoryId) -> Annotated[CallToolResult, Deleted]:
        """Delete a memory for good. Only when the user asks to forget it; prefer archiving."""
        full_id = await store.resolve_id(memory_id)
        await store.delete(full_id)
        return pager.answer({"ok": True, "deleted": full_id})

    async def pin_memory(
        memory_id: MemoryId, detail: Detail = False
    ) -> Annotated[CallToolResult, MemoryResult]:
        """Pin a memory so it is never archived (for things that must always be kept)."""
        return pager.answer({"memory": memory_view(await store.pin(memory_id), detail)})

    async def unpin_memory(
        memory_id: MemoryId, detail: Detail = False
    ) -> Annotated[CallToolResult, MemoryResult]:
        """Unpin a memory; it competes for space again and may be archived."""
        return pager.answer({"memory": memory_view(await store.unpin(memory_id), detail)})

    async def restore_memory(
        memory_id: MemoryId, detail: Detail = False
    ) -> Annotated[CallToolResult, WriteResult]:
        """Bring an archived memory back (also undoes a wrong supersession).

        The next least important one may be archived to make room (listed under
        archived); later saves do not archive the restored memory again.
        """
        report = await store.restore_with_report(memory_id)
        return pager.answer(
            {"memory": memory_view(report.memories[0], detail), **_archived(report.archived)}
        )

    async def prune_memories(dry_run: bool = False) -> Annotated[CallToolResult, PruneResult]:
        """Apply the capacity rules now; with dry_run=true only preview what would be archived."""
        return pager.answer(prune_view(await store.prune(dry_run=dry_run)))

    async def set_core(
        text: Annotated[
            str,
            Field(
                max_length=max_chars,
                description="The whole new core text; an empty string clears it.",
            ),
        ],
    ) -> Annotated[CallToolResult, CoreSet]:
        """Replace the core record: identity, personality, standing instructions.

        The core is never archived and leads the instructions of every new session.
        It replaces the previous core entirely: read_core first to keep parts of it.
        """
        await store.set_core(text)
        return pager.answer({"ok": True, "chars": len(await store.get_core())})

    async def compress(
        items: Annotated[
            list[Content],
            Field(
                max_length=max_items,
                description="The consolidated memories that replace the current ones.",
            ),
        ],
        allow_empty: bool = False,
        detail: Detail = False,
    ) -> Annotated[CallToolResult, BatchResult]:
        """Replace all active unpinned memories with a consolidated list (aigpt's compress).

        Use it when memories are redundant or contradictory: keep facts and decisions,
        merge related items, keep the newer of two contradicting ones, leave out what
        the core already says. Replaced memories are archived, not deleted. Every item
        is kept, whatever it scores (later saves may archive it like any memory); more
        items than the server's max_memories, or none unless allow_empty=true, is
        refused and nothing changes. New memories that do not fit the server's
        character budget: call list_memories with cursor=next_cursor.
        """
        report = await store.compress_with_report(items, allow_empty=allow_empty)
        return batch(report, detail, duplicates=False)

    return [
        (save_memory, ADDITIVE),
        (save_memories, ADDITIVE),
        (save_conversation, ADDITIVE),
        (update_memory, DESTRUCTIVE),
        (delete_memory, DESTRUCTIVE),
        (pin_memory, REVERSIBLE),
        (unpin_memory, REVERSIBLE),
        (restore_memory, REVERSIBLE),
        (prune_memories, DESTRUCTIVE),
        (set_core, DESTRUCTIVE),
        (compress, DESTRUCTIVE),
    ]
