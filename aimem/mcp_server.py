"""``aimem mcp``: the store's API as MCP tools and resources, for agents that are not Python.

A thin shell over ``AsyncMemoryStore``: each tool calls one store method and returns
its result as JSON. What lives here is only what MCP needs: argument schemas that
reject unknown fields, one-line errors that never carry a traceback, SQL, path or key
(for tools, ``initialize`` and resources alike), ``instructions`` rebuilt from
``store.context()`` at every ``initialize``, and the HTTP transport's guards. Tool names
follow aigpt (``read_core``, ``read_memory``, ``save_memory``, ``compress``) so its
clients work unchanged.
The HTTP transport's guards live in ``mcp_http.py``.
"""

# Annotations are evaluated here (no ``from __future__ import annotations``): the
# tool signatures carry limits from the store's settings, read when the tools are built.

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceError,
    ResourceNotFoundError,
    ToolError,
    UnexpectedToolError,
)
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from . import __version__
from .exceptions import AimemError, NotFoundError, StorageError, ValidationError
from .mcp_http import (
    ALLOWED_HOSTS_ENV,
    MAX_ERROR_CHARS,
    TOKEN_ENV,
    HostPolicy,
    check_port,
    http_token,
    http_url,
    listen,
    one_line,
    serve_http,
)
from .memory import AsyncMemoryStore
from .models import Interpretation, Memory
from .validation import MAX_IDEMPOTENCY_KEY_CHARS, MAX_LIMIT, MAX_USER_CONTEXT_CHARS

__all__ = ["ALLOWED_HOSTS_ENV", "MAX_ERROR_CHARS", "TOKEN_ENV", "build_server", "run_server"]

log = logging.getLogger("aimem.mcp")
T = TypeVar("T")

CONTEXT_CHARS = 4000

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
ADDITIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)
REVERSIBLE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)

Json = dict[str, Any]
MAX_ID_CHARS = 64
MemoryId = Annotated[
    str, Field(min_length=1, max_length=MAX_ID_CHARS, description="A memory's id.")
]
MinScore = Annotated[
    float | None,
    Field(ge=0.0, le=1.0, description="Only memories with priority_score at least this."),
]
Component = Annotated[float | None, Field(ge=0.0, le=0.25)]


def _memory(m: Memory) -> Json:
    return m.model_dump(mode="json")


def _archived(archived: Sequence[Memory]) -> Json:
    """What a write archived: every id, and apart the ones a newer memory superseded."""
    return {
        "archived": [m.id for m in archived],
        "superseded": [m.id for m in archived if m.archive_reason == "superseded"],
    }


def _argument_errors(tool: str, exc: PydanticValidationError) -> str:
    """Say which arguments were wrong and how, without echoing their values."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        if error["type"] == "extra_forbidden":
            parts.append(f"unknown argument {where!r}")
        elif error["type"] == "missing":
            parts.append(f"missing required argument {where!r}")
        else:
            parts.append(f"{where}: {error['msg']}")
    return f"{tool}: invalid arguments: " + "; ".join(parts)


def _public_message(where: str, exc: BaseException, *, arguments: bool = False) -> str:
    """The one line a caller may see for a failure at ``where``; the server log gets the rest.

    ``arguments`` says a pydantic error is about the caller's arguments; anywhere else
    (a row that fails to load) it is our fault, and its text could quote stored data.
    """
    if arguments and isinstance(exc, PydanticValidationError):
        return one_line(_argument_errors(where, exc))
    if isinstance(exc, StorageError):
        # Storage messages can name files; the server log keeps the details.
        log.error("%s: %s", where, exc, exc_info=exc)
        return one_line(f"{where}: the memory database failed; see the server log")
    if isinstance(exc, AimemError):
        return one_line(f"{where}: {exc}")
    log.error("%s crashed", where, exc_info=exc)
    return one_line(f"{where}: internal error; see the server log")


class _AimemMCPServer(MCPServer[Any]):
    """MCPServer whose tool errors are one clean line (no traceback, path, SQL or key)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if cause is None:  # e.g. an unknown tool name: the SDK's message is safe
                raise ToolError(one_line(str(exc))) from None
            # The SDK raises a plain ToolError for arguments that fail the schema, and
            # UnexpectedToolError for anything the tool body raised.
            arguments_failed = not isinstance(exc, UnexpectedToolError)
            message = _public_message(name, cause, arguments=arguments_failed)
            raise ToolError(message) from None


async def _read_resource(uri: str, read: Callable[[], Awaitable[T]]) -> T:
    """Run one resource read, its failures as one-line MCP errors like a tool's.

    A bad or unknown id is the caller's mistake (-32602, nothing logged); anything
    else is -32603 with the details in the server log only.
    """
    try:
        return await read()
    except (NotFoundError, ValidationError) as exc:
        raise ResourceNotFoundError(_public_message(uri, exc)) from None
    except Exception as exc:
        raise ResourceError(_public_message(uri, exc)) from None


def _strict(tool: Tool) -> Tool:
    """Make a tool reject unknown arguments and coerced types, in its schema too."""
    base = tool.fn_metadata.arg_model
    strict: type[ArgModelBase] = type(
        base.__name__,
        (base,),
        {"model_config": ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)},
    )
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
    return tool


def _client_interpretation(
    interpreted_content: str | None,
    components: dict[str, float | None],
    rationale: str | None,
) -> Interpretation | None:
    """Scores supplied by the calling model, complete or not at all."""
    given = {k: v for k, v in components.items() if v is not None}
    if interpreted_content is None and not given and rationale is None:
        return None
    missing = [k for k, v in components.items() if v is None]
    if interpreted_content is None:
        missing.insert(0, "interpreted_content")
    if missing:
        raise ValidationError(
            "client scoring needs interpreted_content and all four components; missing: "
            + ", ".join(missing)
        )
    try:
        return Interpretation(
            interpreted_content=interpreted_content, rationale=rationale or "", **given
        )
    except PydanticValidationError as exc:
        raise ValidationError(
            "invalid client scores: " + "; ".join(e["msg"] for e in exc.errors())
        ) from None


def _tools(store: AsyncMemoryStore) -> list[Tool]:
    """One tool per store method; descriptions tell the calling model when to use each."""
    max_chars = store.settings.max_content_chars
    Content = Annotated[str, Field(min_length=1, max_length=max_chars)]
    UserContext = Annotated[
        str | None,
        Field(
            max_length=MAX_USER_CONTEXT_CHARS,
            description="Who or what the memory is about (e.g. a user name).",
        ),
    ]
    Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT)]

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
    ) -> Json:
        """Remember something about the user or the task for later conversations.

        Use it for facts, preferences, decisions and events worth recalling; not for
        small talk. The memory is interpreted and scored for importance (emotional
        impact, user relevance, novelty, utility, 0-0.25 each); the least important
        memories are archived when the store is full, and their ids are returned under
        ``archived``. A memory this one makes out of date (the user moved, changed jobs,
        stopped a medication) is archived too and also listed under ``superseded``;
        restore_memory undoes a wrong one. Saving the exact text of an active memory
        returns it with ``duplicate`` true. To score it yourself, pass
        interpreted_content and all four components: no LLM call is made.
        """
        interpretation = _client_interpretation(
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
        return {
            "memory": _memory(report.memories[0]),
            "duplicate": bool(report.duplicates),
            **_archived(report.archived),
        }

    async def search_memories(
        query: Annotated[Content, Field(description="Words or a question to look up.")],
        limit: Limit = 10,
        min_score: MinScore = None,
    ) -> Json:
        """Find memories relevant to a question or topic, best match first.

        Use it before answering something that may depend on what you were told
        earlier. Matches by keyword (and by meaning when embeddings are configured).
        """
        hits = await store.search(query, limit=limit, min_score=min_score)
        return {"hits": [{"score": h.score, "memory": _memory(h.memory)} for h in hits]}

    async def list_memories(
        min_score: MinScore = None,
        limit: Limit = 50,
        order: Literal["priority", "recent"] = "priority",
        include_archived: bool = False,
    ) -> Json:
        """List memories by priority (most important first) or newest first."""
        memories = await store.list(
            min_score=min_score, limit=limit, order=order, include_archived=include_archived
        )
        return {"memories": [_memory(m) for m in memories]}

    async def get_memory(memory_id: MemoryId) -> Json:
        """Fetch one memory by id, archived ones included."""
        return {"memory": _memory(await store.get(memory_id))}

    async def update_memory(
        memory_id: MemoryId,
        content: Content,
        expected_version: Annotated[
            int | None,
            Field(ge=1, description="Optional: fail if the memory changed since you read it."),
        ] = None,
    ) -> Json:
        """Replace a memory's content when it is outdated or wrong; it is re-interpreted.

        The id stays and the version rises; the previous version stays readable with
        memory_history. What the update archived is listed under ``archived``.
        """
        report = await store.update_with_report(
            memory_id, content, expected_version=expected_version
        )
        return {"memory": _memory(report.memories[0]), **_archived(report.archived)}

    async def delete_memory(memory_id: MemoryId) -> Json:
        """Delete a memory for good. Only when the user asks to forget it; prefer archiving."""
        await store.delete(memory_id)
        return {"ok": True, "deleted": memory_id}

    async def pin_memory(memory_id: MemoryId) -> Json:
        """Pin a memory so it is never archived (for things that must always be kept)."""
        return {"memory": _memory(await store.pin(memory_id))}

    async def unpin_memory(memory_id: MemoryId) -> Json:
        """Unpin a memory; it competes for space again and may be archived."""
        return {"memory": _memory(await store.unpin(memory_id))}

    async def restore_memory(memory_id: MemoryId) -> Json:
        """Bring an archived memory back (also undoes a wrong supersession).

        The next least important one may be archived to make room (listed under
        ``archived``); later saves do not archive the restored memory again.
        """
        report = await store.restore_with_report(memory_id)
        return {"memory": _memory(report.memories[0]), **_archived(report.archived)}

    async def memory_history(memory_id: MemoryId) -> Json:
        """Read a memory's history, oldest first, e.g. to see what it said before.

        Events: saved, judged, updated (the version it replaced under ``previous``),
        archived (``reason``; ``superseded_by`` when a newer memory made it out of
        date), restored, pinned.
        """
        events = await store.history(memory_id)
        return {"events": [e.model_dump(mode="json") for e in events]}

    async def prune_memories(dry_run: bool = False) -> Json:
        """Apply the capacity rules now; with dry_run=true only preview what would be archived."""
        return (await store.prune(dry_run=dry_run)).model_dump(mode="json")

    async def memory_stats() -> Json:
        """Counts (active, archived, pending, pinned), mean priority and tokens used."""
        return (await store.stats()).model_dump(mode="json")

    async def read_core() -> Json:
        """Read the core record: the identity, personality and standing instructions."""
        return {"core": await store.get_core()}

    async def read_memory() -> Json:
        """Read every active memory, most important first (aigpt's read_memory)."""
        memories = await store.list(order="priority")
        return {"memories": [_memory(m) for m in memories]}

    async def compress(
        items: Annotated[
            list[Content],
            Field(
                max_length=MAX_LIMIT,
                description="The consolidated memories that replace the current ones.",
            ),
        ],
        allow_empty: bool = False,
    ) -> Json:
        """Replace all active unpinned memories with a consolidated list (aigpt's compress).

        Use it when memories are redundant or contradictory: keep facts and decisions,
        merge related items, keep the newer of two contradicting ones, leave out what
        the core already says. Replaced memories are archived, not deleted. An empty
        list is refused unless allow_empty=true.
        """
        report = await store.compress_with_report(items, allow_empty=allow_empty)
        return {
            "memories": [_memory(m) for m in report.memories],
            **_archived(report.archived),
        }

    plan: list[tuple[Callable[..., Awaitable[Json]], ToolAnnotations]] = [
        (save_memory, ADDITIVE),
        (search_memories, READ_ONLY),
        (list_memories, READ_ONLY),
        (get_memory, READ_ONLY),
        (update_memory, DESTRUCTIVE),
        (delete_memory, DESTRUCTIVE),
        (pin_memory, REVERSIBLE),
        (unpin_memory, REVERSIBLE),
        (restore_memory, REVERSIBLE),
        (memory_history, READ_ONLY),
        (prune_memories, DESTRUCTIVE),
        (memory_stats, READ_ONLY),
        (read_core, READ_ONLY),
        (read_memory, READ_ONLY),
        (compress, DESTRUCTIVE),
    ]
    return [_strict(Tool.from_function(fn, annotations=hints)) for fn, hints in plan]


def build_server(store: AsyncMemoryStore, *, context_chars: int = CONTEXT_CHARS) -> MCPServer[Any]:
    """An MCP server over ``store``; the caller owns the store and closes it."""
    server = _AimemMCPServer(
        "aimem",
        version=__version__,
        instructions="aimem long-term memory",
        tools=_tools(store),
        log_level="WARNING",
    )

    async def fresh_instructions(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        """Answer ``initialize`` with the memory as it is now, not as it was at startup.

        If the context cannot be built, ``initialize`` fails with the one-line error a
        tool would give, rather than succeed with instructions that hide the failure.
        """
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            try:
                result["instructions"] = await store.context(max_chars=context_chars)
            except Exception as exc:
                message = _public_message("initialize", exc)
                raise MCPError(code=INTERNAL_ERROR, message=message) from None
        return result

    server.middleware.append(fresh_instructions)

    @server.resource("memory://core", name="core", mime_type="text/plain")
    async def core_resource() -> str:
        """The core record: identity, personality, standing instructions."""
        return await _read_resource("memory://core", store.get_core)

    @server.resource("memory://memories", name="memories", mime_type="application/json")
    async def memories_resource() -> list[Json]:
        """Every active memory, most important first."""

        async def read() -> list[Json]:
            return [_memory(m) for m in await store.list(order="priority")]

        return await _read_resource("memory://memories", read)

    @server.resource("memory://memories/{memory_id}", name="memory", mime_type="application/json")
    async def memory_resource(memory_id: str) -> Json:
        """One memory by id (ids are checked as the tools check them)."""
        if not 1 <= len(memory_id) <= MAX_ID_CHARS:
            raise ResourceNotFoundError(
                f"memory://memories/{{id}}: a memory id has 1 to {MAX_ID_CHARS} characters, "
                f"got {len(memory_id)}"
            )

        async def read() -> Json:
            return _memory(await store.get(memory_id))

        return await _read_resource(f"memory://memories/{memory_id}", read)

    return server


def run_server(
    *,
    database_url: str | None = None,
    namespace: str = "default",
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Run ``aimem mcp`` until the client disconnects (stdio) or the process is stopped.

    Everything that can be refused is checked before the store is opened, the HTTP
    socket bound included; ``ready`` is then called with the URL served (HTTP only:
    on stdio, stdout is the protocol).

    Raises:
        ValidationError: an unknown transport, a port outside 1-65535, a non-loopback
            HTTP bind without ``AIMEM_MCP_TOKEN``, a malformed
            ``AIMEM_MCP_ALLOWED_HOSTS``, or a host:port that cannot be bound.
    """
    if transport not in ("stdio", "http"):
        raise ValidationError(f"transport must be 'stdio' or 'http', got {transport!r}")
    check_port(port)
    if transport == "stdio":

        async def stdio() -> None:
            async with AsyncMemoryStore(database_url, namespace=namespace) as store:
                await build_server(store).run_stdio_async()

        anyio.run(stdio)
        return
    token = http_token(host)
    policy = HostPolicy.for_bind(host, port)
    with listen(host, port) as sock:

        async def http() -> None:
            async with AsyncMemoryStore(database_url, namespace=namespace) as store:
                if ready is not None:
                    ready(http_url(host, port))
                await serve_http(build_server(store), sock, policy, token)

        anyio.run(http)
