"""The arguments ``aimem mcp`` tools take: strict schemas, their bounds, and their parsing.

Annotations are evaluated here and where the tools are defined (no ``from __future__
import annotations``): the SDK builds each tool's ``inputSchema`` from them. The bound of
a content comes from the store's settings, so the tool modules spell that one type
where the tools are built.
"""

from datetime import datetime
from typing import Annotated, Literal

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from .exceptions import ValidationError
from .mcp_pages import MAX_CURSOR_CHARS
from .models import Interpretation
from .validation import MAX_LIMIT, MAX_USER_CONTEXT_CHARS

__all__ = [
    "MAX_ID_CHARS",
    "Component",
    "Cursor",
    "Detail",
    "Limit",
    "MemoryId",
    "MinScore",
    "SearchMode",
    "UserContext",
    "When",
    "client_interpretation",
    "parse_when",
    "strict",
]

MAX_ID_CHARS = 64
MemoryId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="A memory's id, or a unique prefix of it (4+ characters, as git takes them).",
    ),
]
MinScore = Annotated[
    float | None,
    Field(ge=0.0, le=1.0, description="Only memories with priority at least this."),
]
MinRelevance = Annotated[
    float | None,
    Field(
        ge=0.0,
        le=1.0,
        description="Only hits at least this relevant (0..1); the server's default if unset.",
    ),
]
Component = Annotated[float | None, Field(ge=0.0, le=0.25)]
Detail = Annotated[
    bool,
    Field(
        description="true: every field of each memory (scores, timestamps, model, tokens) "
        "instead of the compact view."
    ),
]
Cursor = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=MAX_CURSOR_CHARS,
        description="next_cursor of the previous page, to read the next one; the listing is "
        "the first call's, so the other arguments (but detail) are not needed.",
    ),
]
SearchMode = Annotated[
    Literal["hybrid", "keyword", "semantic"],
    Field(
        description="hybrid: words and meaning (words only without an embedder); keyword: "
        "words; semantic: meaning (needs the server's AIMEM_EMBEDDER)."
    ),
]
When = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=64,
        description="ISO 8601 time with a timezone, e.g. 2025-06-01T00:00:00Z.",
    ),
]


UserContext = Annotated[
    str | None,
    Field(
        max_length=MAX_USER_CONTEXT_CHARS,
        description="Who or what the memory is about (e.g. a user name).",
    ),
]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT)]


def parse_when(value: str | None, name: str) -> datetime | None:
    """An ISO 8601 time with its timezone, or a one-line error naming the argument."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise ValidationError(
            f"{name} must be an ISO 8601 time with a timezone, such as "
            f"2025-06-01T00:00:00Z; got {value[:40]!r}"
        )
    return when


def strict(tool: Tool) -> Tool:
    """Make a tool reject unknown arguments and coerced types, in its schema too."""
    base = tool.fn_metadata.arg_model
    model: type[ArgModelBase] = type(
        base.__name__,
        (base,),
        {"model_config": ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)},
    )
    tool.fn_metadata.arg_model = model
    tool.parameters = model.model_json_schema(by_alias=True)
    return tool


def client_interpretation(
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
