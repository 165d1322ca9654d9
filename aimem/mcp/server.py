"""``aimem mcp``: the store's API as MCP tools and resources, for agents that are not Python.

A thin shell over ``AsyncMemoryStore``: each tool calls one store method and answers
with compact views of what it read or wrote (``views.py``), every result within the
character budget ``mcp_max_chars`` (``pages.py``: pages and cursors). What lives here
is the server: one-line errors that never carry a traceback, SQL, path or key (for
tools, ``initialize`` and resources alike; ``errors.py`` words them for MCP callers),
``instructions`` rebuilt from ``store.context()`` at every ``initialize`` within the same
budget, and the transports (HTTP's guards live in ``http.py``). Tool names follow
aigpt (``read_core``, ``read_memory``, ``save_memory``, ``compress``) so its clients work
unchanged. The tools are in ``reads.py`` and ``writes.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

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
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, CallToolResult, InputRequiredResult

from aimem import __version__
from aimem.exceptions import NotFoundError, ValidationError
from aimem.mcp.args import MAX_ID_CHARS, publish, strict
from aimem.mcp.errors import public_message
from aimem.mcp.http import (
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
from aimem.mcp.pages import Pager, compact
from aimem.mcp.reads import read_tools
from aimem.mcp.views import Json, memory_view
from aimem.mcp.writes import write_tools
from aimem.settings import Settings
from aimem.store import AsyncMemoryStore

__all__ = [
    "ALLOWED_HOSTS_ENV",
    "CONTEXT_CHARS",
    "MAX_ERROR_CHARS",
    "MORE_MEMORIES",
    "TOKEN_ENV",
    "build_server",
    "run_server",
]

log = logging.getLogger("aimem.mcp")
T = TypeVar("T")

#: The default budget of ``instructions`` (and of every result): ``mcp_max_chars``'s default.
CONTEXT_CHARS: int = Settings.model_fields["mcp_max_chars"].default
#: What ``memory://memories`` says when more memories are left than its page holds.
MORE_MEMORIES = (
    "More memories than fit the server's character budget (AIMEM_MCP_MAX_CHARS): call "
    "read_memory with cursor=next_cursor and detail=true for the next page."
)
#: The order tools are listed in: aigpt's four last, as before.
TOOL_ORDER = (
    "save_memory",
    "save_memories",
    "save_conversation",
    "search_memories",
    "list_memories",
    "get_memory",
    "update_memory",
    "delete_memory",
    "pin_memory",
    "unpin_memory",
    "restore_memory",
    "memory_history",
    "prune_memories",
    "memory_stats",
    "set_core",
    "read_core",
    "read_memory",
    "compress",
)


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
            message = public_message(name, cause, arguments=arguments_failed)
            raise ToolError(message) from None


async def _read_resource(uri: str, read: Callable[[], Awaitable[T]]) -> T:
    """Run one resource read, its failures as one-line MCP errors like a tool's.

    A bad or unknown id is the caller's mistake (-32602, nothing logged); anything
    else is -32603 with the details in the server log only.
    """
    try:
        return await read()
    except (NotFoundError, ValidationError) as exc:
        raise ResourceNotFoundError(public_message(uri, exc)) from None
    except Exception as exc:
        raise ResourceError(public_message(uri, exc)) from None


def _tools(store: AsyncMemoryStore, pager: Pager) -> list[Tool]:
    """Every tool, strict about its arguments, with its result model as a lean ``outputSchema``."""
    plan = {fn.__name__: (fn, hints) for fn, hints in read_tools(store, pager)}
    plan |= {fn.__name__: (fn, hints) for fn, hints in write_tools(store, pager)}
    return publish(
        [strict(Tool.from_function(plan[n][0], annotations=plan[n][1])) for n in TOOL_ORDER]
    )


def build_server(
    store: AsyncMemoryStore, *, context_chars: int | None = None, max_chars: int | None = None
) -> MCPServer[Any]:
    """An MCP server over ``store``; the caller owns the store and closes it.

    ``max_chars`` bounds every tool result and ``context_chars`` the ``instructions``;
    both default to the store's ``mcp_max_chars`` setting.
    """
    budget = max_chars or store.settings.mcp_max_chars
    context_chars = context_chars or store.settings.mcp_max_chars
    pager = Pager(budget)
    server = _AimemMCPServer(
        "aimem",
        version=__version__,
        instructions="aimem long-term memory",
        tools=_tools(store, pager),
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
                message = public_message("initialize", exc)
                raise MCPError(code=INTERNAL_ERROR, message=message) from None
        return result

    server.middleware.append(fresh_instructions)

    @server.resource("memory://core", name="core", mime_type="text/plain")
    async def core_resource() -> str:
        """The core record: identity, personality, standing instructions."""
        return await _read_resource("memory://core", store.get_core)

    @server.resource("memory://memories", name="memories", mime_type="application/json")
    async def memories_resource() -> str:
        """The active memories, most important first, every field.

        A JSON list when they all fit the server's character budget; otherwise the first
        page of read_memory (``{memories, next_cursor, note}``), the note saying how to
        read on.
        """

        async def read() -> str:
            memories = await store.list(order="priority")
            page = pager.page(
                {"note": MORE_MEMORIES},
                "memories",
                memories,
                lambda m: memory_view(m, detail=True),
                continue_with="read_memory",
                id_of=lambda m: m.id,
            )
            result = dict(page.structured_content or {})
            if result.get("next_cursor") is None:
                return compact(result["memories"])  # all of them: the plain list, as always
            return compact(result)

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
            return memory_view(await store.get(memory_id), detail=True)

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
