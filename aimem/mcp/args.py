"""The arguments ``aimem mcp`` tools take: strict schemas, their bounds, and their parsing.

Annotations are evaluated here and where the tools are defined (no ``from __future__
import annotations``): the SDK builds each tool's ``inputSchema`` from them. The bound of
a content comes from the store's settings, so the tool modules spell that one type
where the tools are built. ``publish`` then makes what ``tools/list`` sends lean: a
client reads it whole, often into a model's context.
"""

import inspect
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from aimem.exceptions import ValidationError
from aimem.mcp.pages import MAX_CURSOR_CHARS
from aimem.models import Interpretation
from aimem.validation import MAX_LIMIT, MAX_USER_CONTEXT_CHARS

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
    "publish",
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


#: Keys whose value is a schema, a list of schemas, or a map of names to schemas.
_SUBSCHEMA = frozenset({"items", "additionalProperties", "not"})
_SUBSCHEMAS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_NAMED = frozenset({"properties", "$defs"})
_NULL = {"type": "null"}


def _lean(schema: Any, *, output: bool) -> Any:
    """``schema`` without pydantic's generated titles, ``anyOf [T, null]`` as ``type: [T, null]``.

    An output schema also loses its defaults: a result always carries what it means.
    """
    if not isinstance(schema, dict):
        return schema
    lean: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" or (output and key == "default"):
            continue
        if key in _NAMED:
            value = {name: _lean(v, output=output) for name, v in value.items()}
        elif key in _SUBSCHEMAS:
            value = [_lean(v, output=output) for v in value]
        elif key in _SUBSCHEMA:
            value = _lean(value, output=output)
        lean[key] = value
    options = lean.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and _NULL in options:
        [other] = [o for o in options if o != _NULL]
        if isinstance(other.get("type"), str) and not {"enum", "const"} & other.keys():
            del lean["anyOf"]
            lean = {**other, **lean, "type": [other["type"], "null"]}
    return lean


def _once(defs: dict[str, Any], said: set[tuple[str, str]]) -> dict[str, Any]:
    """Shared result models with each description given once, in the first tool listed."""
    out: dict[str, Any] = {}
    for name, schema in defs.items():
        schema = dict(schema)
        if (name, "") in said:
            schema.pop("description", None)
        said.add((name, ""))
        fields = {}
        for field, spec in schema.get("properties", {}).items():
            if (name, field) in said and "description" in spec:
                spec = {k: v for k, v in spec.items() if k != "description"}
            said.add((name, field))
            fields[field] = spec
        out[name] = schema | ({"properties": fields} if fields else {})
    return out


def publish(tools: Sequence[Tool]) -> list[Tool]:
    """The tools as ``tools/list`` sends them: lean schemas, descriptions without indentation.

    A result model shared by several tools (a memory, a hit) describes its fields in the
    first tool that returns it; the others carry its shape only. Results are still checked
    against the models themselves, so nothing here loosens what a tool may answer.
    """
    said: set[tuple[str, str]] = set()
    for tool in tools:
        tool.description = inspect.cleandoc(tool.description or "")
        tool.parameters = _lean(tool.parameters, output=False)
        output = tool.fn_metadata.output_schema
        if output is not None:
            output = _lean(output, output=True)
            if "$defs" in output:
                output["$defs"] = _once(output["$defs"], said)
            tool.fn_metadata.output_schema = output
            tool.__dict__.pop("output_schema", None)  # a cached_property: read it anew
    return list(tools)
