"""What the model must return, and how one reply is read and validated.

``JudgeOutput`` is both the structured-output schema sent with every request and the
validator of what comes back; ``parse_output`` turns a reply into one or raises
``InvalidOutputError`` with a reason the model can act on in a corrective re-ask.
Shared by the single and the batch judging paths.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic import ValidationError as PydanticValidationError

from aimem.exceptions import ValidationError
from aimem.judges.transport import UnreadableResponseError
from aimem.scoring import COMPONENT_MAX, COMPONENTS
from aimem.validation import (
    MAX_COUNT,
    MAX_INTERPRETATION_CHARS,
    MAX_RATIONALE_CHARS,
    MAX_SUPERSEDE_REASON_CHARS,
    MAX_SUPERSEDES,
    check_label,
    clean_text,
    parse_json,
)

if TYPE_CHECKING:  # annotations only: importing openai costs most of a second
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.shared_params import ResponseFormatJSONSchema

__all__ = [
    "MAX_INTERPRETATION_CHARS",
    "MAX_RATIONALE_CHARS",
    "RESPONSE_FORMAT",
    "RESPONSE_FORMAT_V1",
    "SUPERSESSION_FIELDS",
    "InvalidOutputError",
    "JudgeOutput",
    "Reply",
    "check_supersedes_shown",
    "corrective_messages",
    "describe_validation",
    "output_object_schema",
    "parse_output",
    "read_reply",
    "response_format",
    "scaled_to_fractions",
    "strip_code_fence",
    "validate_fields",
]

# A model answer longer than MAX_INTERPRETATION_CHARS / MAX_RATIONALE_CHARS (the stored
# bounds, from validation.py) is re-asked: restating even the longest allowed content fits,
# a runaway reply (which would bloat the row and every later prompt) does not. So is one
# with a control character: the stored-text rule is the same for a model as for a caller.


class JudgeOutput(BaseModel):
    """What the model must return; its schema is sent as the structured-output format.

    Ranges are checked by validators, never clamped: a bad value is re-asked. Its own
    schema has no number bounds (some grammar engines reject or ignore them); from
    interpret.v3 the schema sent asks for integers 0-5 with bounds, which grammar engines
    do enforce, and ``scaled_to_fractions`` maps them to these fields' 0.0-0.25 before
    validation. Strict mode refuses numbers sent as strings.
    """

    model_config = ConfigDict(strict=True)

    interpreted_content: str = Field(description="One sentence: what to remember about the user.")
    emotional_impact: float = Field(description="0.0 to 0.25")
    user_relevance: float = Field(description="0.0 to 0.25")
    novelty: float = Field(description="0.0 to 0.25")
    utility: float = Field(description="0.0 to 0.25")
    rationale: str = Field(description="One short sentence explaining the scores.")
    #: Numbers (from 1, as the prompt shows them) of the related memories this item makes
    #: out of date. Defaults keep replies to prompts before interpret.v2 valid.
    supersedes: list[int] = Field(default_factory=list)  # the prompt says what they are
    supersede_reason: str = ""

    @field_validator("interpreted_content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        if len(value) > MAX_INTERPRETATION_CHARS:
            raise ValueError(
                f"is {len(value)} characters: write one sentence, at most "
                f"{MAX_INTERPRETATION_CHARS}"
            )
        return _clean(value.strip())

    @field_validator("rationale")
    @classmethod
    def _short(cls, value: str) -> str:
        if len(value) > MAX_RATIONALE_CHARS:
            raise ValueError(f"is {len(value)} characters: at most {MAX_RATIONALE_CHARS}")
        return _clean(value)

    @field_validator("supersedes")
    @classmethod
    def _numbers(cls, value: list[int]) -> list[int]:
        if len(value) > MAX_SUPERSEDES or len(set(value)) != len(value):
            raise ValueError("list each related-memory number at most once")
        if any(n < 1 for n in value):
            raise ValueError("related memories are numbered from 1")
        return value

    @field_validator("supersede_reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        if len(value) > MAX_SUPERSEDE_REASON_CHARS:
            raise ValueError(f"is {len(value)} characters: at most {MAX_SUPERSEDE_REASON_CHARS}")
        return _clean(value.strip())

    @field_validator(*COMPONENTS)
    @classmethod
    def _in_range(cls, value: float) -> float:
        if not (math.isfinite(value) and 0.0 <= value <= COMPONENT_MAX):
            raise ValueError(f"must be a number from 0.0 to {COMPONENT_MAX}, got {value!r}")
        return value


def _clean(value: str) -> str:
    """The stored-text rule, as a reason the model can act on in its re-ask."""
    try:
        return clean_text(value, "the text")
    except ValidationError as exc:
        raise ValueError(str(exc)) from None


#: The fields interpret.v2 added; a v1 prompt's schema leaves them out.
SUPERSESSION_FIELDS = ("supersedes", "supersede_reason")


def output_object_schema(
    extra: dict[str, object] | None = None,
    *,
    supersession: bool = True,
    scale: int | None = None,
    shown: int | None = None,
) -> dict[str, object]:
    """``JudgeOutput`` as a closed JSON-schema object (``extra`` properties first).

    Titles, defaults and the class docstring are left out: they would only cost prompt
    tokens. Strict structured output requires every property listed and the object
    closed. ``supersession=False`` is the schema of prompts before interpret.v2.

    ``scale`` (interpret.v3 on) asks for each component as an integer from 0 to
    ``scale`` with the bounds in the schema: grammar engines such as llama.cpp enforce
    integer bounds but not number ones, so a small model cannot answer out of range.
    ``shown`` bounds ``supersedes`` to the related memories the prompt numbered.
    """
    schema = JudgeOutput.model_json_schema()
    properties: dict[str, object] = {
        **(extra or {}),
        **{
            name: {k: v for k, v in prop.items() if k not in ("title", "default")}
            for name, prop in schema["properties"].items()
            if supersession or name not in SUPERSESSION_FIELDS
        },
    }
    if scale is not None:
        for name in COMPONENTS:
            properties[name] = {"type": "integer", "minimum": 0, "maximum": scale}
    if supersession and shown is not None:
        numbers: dict[str, object] = {"type": "integer", "minimum": 1, "maximum": max(1, shown)}
        properties["supersedes"] = {"type": "array", "items": numbers}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def response_format(
    supersession: bool = True, scale: int | None = None, shown: int | None = None
) -> ResponseFormatJSONSchema:
    """The single-item structured-output format for a prompt's schema."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "memory_interpretation",
            "strict": True,
            "schema": output_object_schema(supersession=supersession, scale=scale, shown=shown),
        },
    }


RESPONSE_FORMAT = response_format(supersession=True)
RESPONSE_FORMAT_V1 = response_format(supersession=False)


def scaled_to_fractions(fields: object, scale: int | None) -> object:
    """Read a reply's components on the prompt's integer scale as DESIGN's fractions.

    With ``scale`` set (interpret.v3), a JSON integer ``n`` in ``0..scale`` is
    ``n / scale * 0.25``; a JSON number with a decimal point in ``[0, 0.25]`` is read as
    it is (a model that answers in DESIGN's own units means the same thing).
    Anything else is left for the validator to refuse.

    Raises:
        InvalidOutputError: an integer outside the scale, or a number the scale cannot
            mean (e.g. 1.0 or 0.5), so the re-ask names the scale.
    """
    if scale is None or not isinstance(fields, dict):
        return fields
    converted = dict(fields)
    for name in COMPONENTS:
        value = converted.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if isinstance(value, int):
            if not 0 <= value <= scale:
                raise InvalidOutputError(
                    f"{name}: must be an integer from 0 to {scale}, got {value}"
                )
            converted[name] = value / scale * COMPONENT_MAX
        elif not (math.isfinite(value) and 0.0 <= value <= COMPONENT_MAX):
            raise InvalidOutputError(f"{name}: must be an integer from 0 to {scale}, got {value}")
    return converted


def check_supersedes_shown(output: JudgeOutput, shown: int) -> None:
    """A reply may only name related memories the prompt showed (numbered 1..shown).

    Raises:
        InvalidOutputError: it names another; the re-ask says which numbers exist.
    """
    invented = [n for n in output.supersedes if n > shown]
    if invented:
        known = f"numbers 1 to {shown}" if shown else "none were shown"
        raise InvalidOutputError(
            f"supersedes: {invented} are not related memories shown ({known}); use [] when unsure"
        )


class InvalidOutputError(Exception):
    """The reply arrived but is not a valid interpretation; worth one corrective re-ask."""


@dataclass(frozen=True)
class Reply:
    """The parts of one chat completion the judge uses."""

    content: str | None
    refusal: str | None
    finish_reason: str | None
    model: str | None
    prompt_tokens: int
    completion_tokens: int


def corrective_messages(
    reply: Reply, problem: str, scale: int | None = None
) -> list[ChatCompletionMessageParam]:
    """The model's bad reply and what was wrong with it, for the one re-ask."""
    units = (
        f"an integer from 0 to {scale}"
        if scale is not None
        else f"a number from 0.0 to {COMPONENT_MAX}"
    )
    return [
        {"role": "assistant", "content": reply.content or reply.refusal or ""},
        {
            "role": "user",
            "content": f"Your reply was invalid: {problem}. Reply again with only the JSON "
            f"object; each component is {units}.",
        },
    ]


def read_reply(completion: object) -> Reply:
    """Pull what we need out of a completion; anything not shaped like one is unreadable."""
    try:
        choice = completion.choices[0]  # type: ignore[attr-defined]
        message = choice.message
        content, refusal = message.content, getattr(message, "refusal", None)
        finish_reason = choice.finish_reason
    except (AttributeError, IndexError, TypeError) as exc:
        raise UnreadableResponseError("not a chat completion") from exc
    usage = getattr(completion, "usage", None)
    model = getattr(completion, "model", None)
    return Reply(
        content=content if isinstance(content, str) else None,
        refusal=refusal if isinstance(refusal, str) else None,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        model=_model_name(model),
        prompt_tokens=_count(getattr(usage, "prompt_tokens", 0)),
        completion_tokens=_count(getattr(usage, "completion_tokens", 0)),
    )


def _model_name(value: object) -> str | None:
    """The reply's model name if it is one aimem can store, else None (the judge's own)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return check_label(value, "model")
    except ValidationError:
        return None


def _count(value: object) -> int:
    """A token count as reported, or 0 when it is not a plausible one."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    return 0


def parse_output(
    reply: Reply, shown: int = MAX_SUPERSEDES, scale: int | None = None
) -> JudgeOutput:
    """Validate a reply; raise ``InvalidOutputError`` with a reason the model can act on.

    ``shown`` is how many related memories the prompt numbered: ``supersedes`` may name
    no other. ``scale`` is the prompt's integer scale for components (None: fractions).
    """
    if reply.refusal:
        raise InvalidOutputError(f"the model refused ({reply.refusal})")
    if reply.finish_reason == "length":
        raise InvalidOutputError("the reply was cut off (finish_reason=length); keep it short")
    text = strip_code_fence(reply.content or "")
    if not text:
        raise InvalidOutputError("the reply was empty")
    try:
        data = parse_json(text)
    except ValueError:  # not JSON, nested too deeply, or a number too long
        try:  # pydantic's own account of what is wrong with the JSON
            JudgeOutput.model_validate_json(text)
        except PydanticValidationError as exc:
            raise InvalidOutputError(describe_validation(exc)) from None
        raise InvalidOutputError("the reply was not JSON") from None
    return validate_fields(data, shown, scale)


def validate_fields(data: object, shown: int, scale: int | None) -> JudgeOutput:
    """One answer's fields (already parsed JSON) as a ``JudgeOutput``, or the reason not."""
    try:
        output = JudgeOutput.model_validate_json(json.dumps(scaled_to_fractions(data, scale)))
    except PydanticValidationError as exc:
        raise InvalidOutputError(describe_validation(exc)) from None
    check_supersedes_shown(output, shown)
    return output


def strip_code_fence(text: str) -> str:
    """Unwrap JSON from a Markdown fence, which some local models add even when told not to."""
    text = text.strip()
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        text = text[3:-3].removeprefix("json").strip()
    return text


def reply_list(reply: Reply, key: str, *, cut_hint: str = "") -> list[Any]:
    """The ``key`` list of a reply's JSON object: what a batch or an extraction answers.

    Raises:
        InvalidOutputError: refused, cut off, not JSON, or no such list (named for the re-ask).
    """
    if reply.refusal:
        raise InvalidOutputError(f"the model refused ({reply.refusal})")
    if reply.finish_reason == "length":
        raise InvalidOutputError(f"the reply was cut off (finish_reason=length){cut_hint}")
    try:
        data = parse_json(strip_code_fence(reply.content or ""))
    except ValueError:
        raise InvalidOutputError("the reply was not JSON") from None
    found = data.get(key) if isinstance(data, dict) else None
    if not isinstance(found, list):
        raise InvalidOutputError(f'the reply has no "{key}" list')
    return found


def describe_validation(exc: PydanticValidationError) -> str:
    """A validation error as one line the model can act on (no URLs, no input echoes)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}"
        for err in exc.errors(include_url=False)
    )
