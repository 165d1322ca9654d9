"""The one line an MCP caller sees for a failure, in the words of MCP arguments.

The store's messages are written for Python callers ("store.list(include_archived=True)",
"Pass allow_empty=True"); an agent can act only on tool names, arguments and the
server's environment, so each such phrase is said that way here. A failure never shows
a traceback, SQL, a file path or a key: storage errors and crashes are one generic line,
with the details in the server log.
"""

from __future__ import annotations

import logging
import re

from pydantic import ValidationError as PydanticValidationError

from aimem.exceptions import AimemError, StorageError
from aimem.mcp.http import one_line

__all__ = ["SEMANTIC_NEEDS_EMBEDDER", "argument_errors", "mcp_wording", "public_message"]

log = logging.getLogger("aimem.mcp")

SEMANTIC_NEEDS_EMBEDDER = (
    "semantic search needs an embedder: start the server with AIMEM_EMBEDDER=local "
    "(or openai:MODEL), or search with mode=keyword"
)

#: Python advice the store gives -> what an MCP caller can do instead (exact phrases).
_PHRASES = (
    (
        "check the id with store.list(include_archived=True)",
        "check the id with list_memories (include_archived=true)",
    ),
    (
        "compress() got no items: that would archive every memory. "
        "Pass allow_empty=True if that is what you want.",
        "compress got no items: that would archive every memory; "
        "set allow_empty=true if that is what you want",
    ),
    (
        "Semantic search needs an embedder: pass embedder=aimem.LocalEmbedder() "
        "or aimem.OpenAIEmbedder(), or search with mode='keyword'",
        SEMANTIC_NEEDS_EMBEDDER,
    ),
    (" (or store.reembed())", ""),
    (
        "open the store with embedder=aimem.LocalEmbedder() (or another) and call reembed() again",
        "start the server with AIMEM_EMBEDDER=local (or openai:MODEL)",
    ),
    (
        "or pass judge=aimem.HeuristicJudge()",
        "or start the server without OPENAI_API_KEY and OPENAI_BASE_URL to judge offline",
    ),
    ("check OPENAI_API_KEY or api_key (and base_url)", "check the server's OPENAI_API_KEY"),
    ("raise max_attempts or timeout", "raise AIMEM_JUDGE_MAX_ATTEMPTS or AIMEM_JUDGE_TIMEOUT"),
    (
        "or use aimem.LocalEmbedder() (pip install 'aimem[local]')",
        "or start the server with AIMEM_EMBEDDER=local",
    ),
    (
        "Pass a local model directory, a model already in the Hugging Face cache, or "
        "allow_download=True.",
        "Set AIMEM_EMBEDDER=local:PATH to a model directory or a model already in the "
        "Hugging Face cache.",
    ),
    ("raise max_content_chars", "raise AIMEM_MAX_CONTENT_CHARS"),
    ("raise max_memories", "start the server with a higher AIMEM_MAX_MEMORIES"),
)
#: Whatever Python spelling is left: literals in JSON's words, calls without parentheses.
_PATTERNS = (
    (re.compile(r"\bstore\.(\w+)"), r"\1"),
    (re.compile(r"\baimem\.(\w+)\(\)"), r"\1"),
    (re.compile(r"(\w)\(\)"), r"\1"),
    (re.compile(r"=True\b"), "=true"),
    (re.compile(r"=False\b"), "=false"),
    (re.compile(r"=None\b"), "=null"),
    (re.compile(r"\bPass "), "Set "),
)


def mcp_wording(message: str) -> str:
    """``message`` with Python calls and literals said as MCP arguments and settings."""
    for python, mcp in _PHRASES:
        message = message.replace(python, mcp)
    for pattern, replacement in _PATTERNS:
        message = pattern.sub(replacement, message)
    return message


def argument_errors(tool: str, exc: PydanticValidationError) -> str:
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


def public_message(where: str, exc: BaseException, *, arguments: bool = False) -> str:
    """The one line a caller may see for a failure at ``where``; the server log gets the rest.

    ``arguments`` says a pydantic error is about the caller's arguments; anywhere else
    (a row that fails to load) it is our fault, and its text could quote stored data.
    """
    if arguments and isinstance(exc, PydanticValidationError):
        return one_line(argument_errors(where, exc))
    if isinstance(exc, StorageError):
        # Storage messages can name files; the server log keeps the details.
        log.error("%s: %s", where, exc, exc_info=exc)
        return one_line(f"{where}: the memory database failed; see the server log")
    if isinstance(exc, AimemError):
        return one_line(f"{where}: {mcp_wording(str(exc))}")
    log.error("%s crashed", where, exc_info=exc)
    return one_line(f"{where}: internal error; see the server log")
