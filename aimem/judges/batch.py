"""Several interpretations in one chat call: the batch prompt and the batch answer.

The static rubric is sent once per batch instead of once per item, which is most of a
single call's prompt. Each item keeps its own related memories and its own data block
(ids ``<nonce>-<n>``), and the answer is validated item by item with the same
``JudgeOutput`` rules as a single call. Items the answer gets wrong (missing,
duplicated, invalid) are reported back so the judge can ask for them one at a time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import ValidationError as PydanticValidationError

from aimem.judges.output import (
    InvalidOutputError,
    JudgeOutput,
    Reply,
    check_supersedes_shown,
    describe_validation,
    output_object_schema,
    reply_list,
    scaled_to_fractions,
)
from aimem.judges.prompts import PromptTemplate, new_nonce
from aimem.models import Memory

if TYPE_CHECKING:  # annotations only: importing openai costs most of a second
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.shared_params import ResponseFormatJSONSchema

__all__ = [
    "BATCH_RESPONSE_FORMAT",
    "JudgeItem",
    "batch_response_format",
    "build_batch_messages",
    "parse_batch",
]


@dataclass(frozen=True)
class JudgeItem:
    """One content to judge in a batch, with the related memories shown for its novelty."""

    content: str
    related: Sequence[Memory] = ()


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


def build_batch_messages(
    template: PromptTemplate,
    items: Sequence[JudgeItem],
    *,
    user_context: str | None,
    related_notes: Sequence[Sequence[str]],
) -> list[ChatCompletionMessageParam]:
    """Render the batch prompt: rubric once, then items numbered from 1, each in its own blocks.

    ``related_notes[i]`` are item i's related-memory lines, already one JSON string each.
    """
    context = user_context or "(none)"
    every_text = [
        context,
        *(i.content for i in items),
        *(n for notes in related_notes for n in notes),
    ]
    nonce = new_nonce(*every_text)
    blocks = []
    for number, (item, notes) in enumerate(zip(items, related_notes, strict=True), start=1):
        tag = f"{nonce}-{number}"
        blocks.append(
            f"Item {number}\n"
            f"Related memories already stored:\n"
            f'<related-memories id="{tag}">\n{chr(10).join(notes) or "(none)"}\n'
            f'</related-memories id="{tag}">\n'
            f'<memory-data id="{tag}">\n{item.content}\n</memory-data id="{tag}">'
        )
    prompt = template.render(nonce=nonce, user_context=context, items="\n\n".join(blocks))
    return [
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": prompt.user},
    ]


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
