"""What the judge sends: its prompts rendered, and how big each request may be.

Untrusted text travels in data blocks under a fresh nonce (``prompts.new_nonce``); each
related memory is one JSON string per line, so none can span or forge lines. A batch
sends the static rubric once for several items, each in its own blocks (ids
``<nonce>-<n>``). Kept apart from the transport so the stub server and the tests can
render exactly what the judge sends.

How big a request may be: a small model on a laptop CPU decodes ~25 tokens/s, so a batch
of 8 needs ~900 output tokens, longer than a 30 s timeout, and every item would end
pending. So the judge bounds each reply (``max_tokens``, sized to what it asks for, so a
runaway reply ends instead of eating the timeout) and learns the endpoint's pace from the
replies it gets (``Pace``), grouping a batch so each request should take at most half the
timeout.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aimem.judges.prompts import PromptTemplate, new_nonce
from aimem.models import Memory

if TYPE_CHECKING:  # annotations only: importing openai costs most of a second
    from openai.types.chat import ChatCompletionMessageParam

__all__ = [
    "MAX_RELATED",
    "SMALL_MODEL_WEIGHT",
    "JudgeItem",
    "Pace",
    "build_batch_messages",
    "build_messages",
    "estimate_tokens",
    "is_small_model",
    "one_line_json",
    "related_notes",
    "reply_tokens",
    "with_note",
]

#: Related memories shown to the model for judging novelty, and how much of each.
MAX_RELATED = 5
_RELATED_CHARS = 300


#: Line breaks by Unicode's rules that json.dumps(ensure_ascii=False) leaves raw.
_UNICODE_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def one_line_json(text: str) -> str:
    """``text`` as a JSON string that no reader can split into two lines."""
    line = json.dumps(text, ensure_ascii=False)
    for raw, escaped in _UNICODE_BREAKS.items():
        line = line.replace(raw, escaped)
    return line


def related_notes(
    related: Sequence[Memory], *, numbered: bool = False, most: int = MAX_RELATED
) -> list[str]:
    """The related-memory lines a prompt shows (the first ``most``): one JSON string each.

    ``numbered`` prefixes each with its number from 1 (``1. ``), which is how a reply's
    ``supersedes`` names them; one the store found nearly identical to the content is
    marked ``near-duplicate:``.
    """
    return [
        (f"{n}. " if numbered else "")
        + ("near-duplicate: " if getattr(m, "near_duplicate", False) else "")
        + one_line_json((m.interpreted_content or m.content)[:_RELATED_CHARS])
        for n, m in enumerate(related[:most], start=1)
    ]


def build_messages(
    template: PromptTemplate,
    content: str,
    *,
    user_context: str | None = None,
    related: Sequence[Memory] = (),
    numbered: bool = False,
) -> list[ChatCompletionMessageParam]:
    """Render the prompt: static rubric first, then the data blocks under a fresh nonce.

    ``numbered`` (interpret.v2 on) numbers the related memories for ``supersedes``.
    """
    notes = related_notes(related, numbered=numbered)
    context = user_context or "(none)"
    nonce = new_nonce(content, context, *notes)
    prompt = template.render(
        nonce=nonce, content=content, user_context=context, related="\n".join(notes) or "(none)"
    )
    return [
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": prompt.user},
    ]


def with_note(
    messages: list[ChatCompletionMessageParam], note: str | None
) -> list[ChatCompletionMessageParam]:
    """``messages`` with ``note`` appended to the system message (None: unchanged)."""
    if note is None or not messages or messages[0].get("role") != "system":
        return messages
    first = dict(messages[0])
    first["content"] = f"{first.get('content', '')}\n\n{note}"
    return [first, *messages[1:]]  # type: ignore[list-item]


# --- batches ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeItem:
    """One content to judge in a batch, with the related memories shown for its novelty."""

    content: str
    related: Sequence[Memory] = ()


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


# --- request sizes ---------------------------------------------------------------------------

#: Reply tokens allowed per item: one sentence, four scores and a rationale take ~100-200
#: (a Japanese sentence more); a runaway reply stops here instead of eating the timeout.
#: Not sized by the content, so a request's shape never depends on what is judged.
_TOKENS_PER_ITEM = 512
#: Prompt tokens cost this fraction of a reply token's time (prefill is ~4x decode).
_PROMPT_TOKEN_COST = 0.25
#: The share of the timeout one request is planned to take.
_TIMEOUT_SHARE = 0.5
#: The heuristic's share of each component blended into a small model's judgement.
SMALL_MODEL_WEIGHT = 0.5
#: A parameter count in a model name: "1.5b", "8B", "8x7b" (experts x size).
_PARAMETERS = re.compile(r"(?<![0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)\s*b(?![a-z])", re.IGNORECASE)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free upper estimate: UTF-8 bytes / 3 (English ~4, Japanese ~1 per token)."""
    return -(-len(text.encode("utf-8")) // 3)


def reply_tokens(items: int) -> int:
    """A ``max_tokens`` bound for answering ``items`` items: room for each, not for a runaway."""
    return 64 + _TOKENS_PER_ITEM * max(1, items)


def is_small_model(name: str | None) -> bool:
    """Whether a model's name says it has at most 8B parameters (``qwen2.5-1.5b``, ``llama3:8b``).

    Names without a size (``gpt-4o-mini``, ``stub-model``) are not small.
    """
    if not name:
        return False
    sizes = [
        float(m.group(2)) * int(m.group(1) or 1)
        for m in _PARAMETERS.finditer(name.replace("_", "-"))
    ]
    return bool(sizes) and max(sizes) <= 8


@dataclass
class Pace:
    """Seconds per cost unit (a reply token, or four prompt tokens), learnt from replies.

    Unknown until the first reply: then batches are sized by count alone, as before.
    """

    seconds_per_unit: float | None = None

    def observe(self, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        """Fold one reply's time in (the slower of old and new dominates: be safe)."""
        units = prompt_tokens * _PROMPT_TOKEN_COST + completion_tokens
        if units <= 0 or seconds <= 0:
            return
        rate = seconds / units
        old = self.seconds_per_unit
        self.seconds_per_unit = rate if old is None else max(rate, 0.5 * old + 0.5 * rate)

    def timed_out(self, prompt_tokens: int, reply_tokens: int, timeout: float) -> None:
        """A request this big took longer than ``timeout``: the pace is at least that slow."""
        units = prompt_tokens * _PROMPT_TOKEN_COST + reply_tokens
        if units > 0:
            floor = timeout / units
            self.seconds_per_unit = max(self.seconds_per_unit or 0.0, floor)

    def fits(self, prompt_tokens: int, reply_tokens: int, timeout: float) -> bool:
        """Whether a request this big should take at most half of ``timeout`` (unknown: yes)."""
        took = self.seconds(prompt_tokens, reply_tokens)
        return took is None or took <= timeout * _TIMEOUT_SHARE

    def seconds(self, prompt_tokens: int, reply_tokens: int) -> float | None:
        """The expected time of a request, or None while the pace is unknown."""
        if self.seconds_per_unit is None:
            return None
        return self.seconds_per_unit * (prompt_tokens * _PROMPT_TOKEN_COST + reply_tokens)

    def groups(
        self, sizes: Sequence[tuple[int, int]], fixed_prompt: int, timeout: float
    ) -> list[range]:
        """Split items into consecutive groups whose requests fit half of ``timeout``.

        Each item is ``(prompt tokens, expected reply tokens)``; ``fixed_prompt`` is the
        rubric every request carries.
        """
        budget = timeout * _TIMEOUT_SHARE
        groups: list[range] = []
        start, prompt, reply = 0, fixed_prompt, 0
        for i, (item_prompt, item_reply) in enumerate(sizes):
            took = self.seconds(prompt + item_prompt, reply + item_reply)
            if i > start and took is not None and took > budget:
                groups.append(range(start, i))
                start, prompt, reply = i, fixed_prompt, 0
            prompt += item_prompt
            reply += item_reply
        if start < len(sizes):
            groups.append(range(start, len(sizes)))
        return groups
