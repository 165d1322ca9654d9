"""What the model must return, how a reply is checked, and what aimem makes of it.

``JudgeOutput`` is both the structured-output schema sent with every request and the
validator of what comes back; ``parse_output`` (one item) and ``parse_batch`` (a batch,
item by item) turn a reply into outputs or raise ``InvalidOutputError`` with a reason
the model can act on in a corrective re-ask. ``RequestEvidence`` gathers what the
requests of one interpretation cost and why they failed.

What aimem changes in a valid answer before it is stored, and how it says so:

* an interpretation still unfaithful after the re-ask is replaced by the content itself,
  flagged at the start of the rationale (``KEPT_CONTENT_FLAG``): nothing is lost, and a
  distorted fact is worse than an unpolished one;
* a small model's components are blended with the offline heuristic's, which on the
  labelled sets ranks better than the model alone (``bench/real_model.py``), and the
  related memories the heuristic's precise rules find out of date are added to the
  model's: a 1.5B model rarely names one (knowledge-update current-first 1/4 against the
  heuristic's 3/4), but a looser rule must not retire what the model kept.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic import ValidationError as PydanticValidationError

from aimem.exceptions import ValidationError
from aimem.judges.transport import UnreadableResponseError
from aimem.models import Interpretation
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
    "BATCH_RESPONSE_FORMAT",
    "KEPT_CONTENT_FLAG",
    "MAX_INTERPRETATION_CHARS",
    "MAX_RATIONALE_CHARS",
    "RESPONSE_FORMAT",
    "RESPONSE_FORMAT_V1",
    "SUPERSESSION_FIELDS",
    "InvalidOutputError",
    "JudgeOutput",
    "Reply",
    "RequestEvidence",
    "batch_response_format",
    "blend",
    "check_supersedes_shown",
    "corrective_messages",
    "describe_validation",
    "kept_content",
    "output_object_schema",
    "parse_batch",
    "parse_output",
    "read_reply",
    "replace_output",
    "reply_list",
    "response_format",
    "scaled_to_fractions",
    "strip_code_fence",
    "validate_fields",
    "with_supersedes",
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


@functools.cache
def _judge_output_schema() -> dict[str, Any]:
    """``JudgeOutput``'s JSON schema, made once: pydantic builds it anew on every call."""
    return JudgeOutput.model_json_schema()


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
    schema = _judge_output_schema()
    properties: dict[str, object] = {
        **(extra or {}),
        **{
            name: {k: copy.deepcopy(v) for k, v in prop.items() if k not in ("title", "default")}
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


def batch_response_format(
    supersession: bool = True,
    scale: int | None = None,
    count: int | None = None,
    shown: int | None = None,
) -> ResponseFormatJSONSchema:
    """The batch answer's schema; ``supersession=False`` for prompts before v2.

    With ``count`` (interpret_batch.v3) the list holds exactly ``count`` answers and each
    index lies in ``1..count``: a grammar engine then cannot drop, add or misnumber one.
    ``scale`` and ``shown`` bound the components and ``supersedes`` as for one item.
    """
    index: dict[str, object] = {"type": "integer"}
    if count is not None:
        index = {"type": "integer", "minimum": 1, "maximum": count}
    item = output_object_schema(
        {"index": index}, supersession=supersession, scale=scale, shown=shown
    )
    answers: dict[str, object] = {"type": "array", "items": item}
    if count is not None:
        answers = {**answers, "minItems": count, "maxItems": count}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "memory_interpretations",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"items": answers},
                "required": ["items"],
                "additionalProperties": False,
            },
        },
    }


BATCH_RESPONSE_FORMAT = batch_response_format()


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


def parse_batch(
    reply: Reply, count: int, shown: Sequence[int] | None = None, scale: int | None = None
) -> tuple[dict[int, JudgeOutput], list[str]]:
    """Validate a batch answer item by item.

    ``shown[i]`` is how many related memories item ``i + 1`` showed: its ``supersedes``
    may name no other (None: no such check). ``scale``: the prompt's component scale.

    Returns ``({item number: output}, problems)``: numbers absent from the dict (missing,
    duplicated, out of range or invalid) must be judged again one at a time.

    Raises:
        InvalidOutputError: the reply as a whole is unusable (refused, cut off, not JSON).
    """
    answers = reply_list(reply, "items")
    outputs: dict[int, JudgeOutput] = {}
    problems: list[str] = []
    seen: dict[int, int] = {}
    for answer in answers:
        number = answer.get("index") if isinstance(answer, dict) else None
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= count:
            problems.append(f"an answer has no valid index (got {number!r})")
            continue
        seen[number] = seen.get(number, 0) + 1
        fields = {k: v for k, v in answer.items() if k != "index"}
        try:
            output = JudgeOutput.model_validate_json(json.dumps(scaled_to_fractions(fields, scale)))
            if shown is not None:
                check_supersedes_shown(output, shown[number - 1])
            outputs[number] = output
        except PydanticValidationError as exc:
            problems.append(f"item {number}: {describe_validation(exc)}")
        except InvalidOutputError as exc:
            problems.append(f"item {number}: {exc}")
    for number, times in seen.items():
        if times > 1:
            outputs.pop(number, None)
            problems.append(f"item {number} was answered {times} times")
    problems += [f"item {n} was not answered" for n in range(1, count + 1) if n not in seen]
    return outputs, problems


# --- evidence of the requests ----------------------------------------------------------------


@dataclass
class RequestEvidence:
    """What the requests of one interpretation cost, and why any failed.

    A ``JudgeError`` carries it (requests sent, the last raw reply, one line per failure),
    and every stored memory its token counts, latency and retries.
    """

    started: float = field(default_factory=time.perf_counter)
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str | None = None
    last_raw: str | None = None
    errors: list[str] = field(default_factory=list)
    timeout: float = 30.0
    #: The capabilities generation the last request was built with.
    built_with: int = 0

    def fail(self, reason: str) -> None:
        """Note one failed request's reason."""
        self.errors.append(f"request {self.requests}: {reason}")

    def error_fields(self) -> dict[str, Any]:
        """What a ``JudgeError`` carries of it."""
        return {"attempts": self.requests, "last_raw": self.last_raw, "errors": self.errors}

    def record(self, reply: Reply) -> None:
        """Fold one reply's tokens, model name and raw text in."""
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.model = reply.model or self.model
        self.last_raw = reply.content if reply.content is not None else reply.refusal

    def per_item(self, items: int) -> RequestEvidence:
        """One item's part of a batch call: tokens split evenly, latency and retries shared."""
        per = max(1, items)
        return RequestEvidence(
            started=self.started,
            requests=self.requests,
            prompt_tokens=-(-self.prompt_tokens // per),
            completion_tokens=-(-self.completion_tokens // per),
            model=self.model,
        )


# --- what aimem changes in a valid answer ----------------------------------------------------

#: How a kept content is flagged in its rationale.
KEPT_CONTENT_FLAG = "[interpretation kept as the content: {reason}]"


def kept_content(output: JudgeOutput, content: str, reason: str) -> JudgeOutput:
    """The model's scores with the content itself as the interpretation, flagged."""
    flag = KEPT_CONTENT_FLAG.format(reason=reason)
    rationale = f"{flag} {output.rationale}".strip()[:MAX_RATIONALE_CHARS]
    kept = content.strip()[:MAX_INTERPRETATION_CHARS]
    return replace_output(output, interpreted_content=kept, rationale=rationale)


def replace_output(output: JudgeOutput, **changes: Any) -> JudgeOutput:
    """A copy of ``output`` with some fields replaced (validated: the rules still hold)."""
    return JudgeOutput.model_validate({**output.model_dump(), **changes})


def blend(fields: dict[str, Any], offline: Interpretation, weight: float) -> dict[str, Any]:
    """``fields`` with each component ``weight * offline + (1 - weight) * model``."""
    if weight <= 0:
        return fields
    return {
        **fields,
        **{
            name: round(weight * getattr(offline, name) + (1 - weight) * fields[name], 6)
            for name in COMPONENTS
        },
    }


def with_supersedes(fields: dict[str, Any], found: Sequence[tuple[int, str]]) -> dict[str, Any]:
    """``fields`` (``supersedes`` counted from 0) plus the offline rules' precise findings.

    ``found`` is ``find_superseded(..., precise=True)``: only an explicit change or end
    tied to the very thing (a move against the residence, "sold the car", a new dose). A
    small model misses updates, but its answer is not overruled by the looser rules (the
    same frame with no change word, a changed count), which are the offline judge's own.
    """
    extra = tuple((i, why) for i, why in found if i not in fields["supersedes"])
    if not extra:
        return fields
    reason = "; ".join(dict.fromkeys(why for _, why in extra))
    return {
        **fields,
        "supersedes": (*fields["supersedes"], *(i for i, _ in extra)),
        "supersede_reason": fields["supersede_reason"] or reason[:MAX_SUPERSEDE_REASON_CHARS],
    }
