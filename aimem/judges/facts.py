"""A conversation's facts worth keeping: the extraction request and the checks on its reply.

``OpenAIJudge.extract_facts`` reads a batch of turns in one call: it renders
``prompts/extract.v2.md`` (each turn in its own data block, ids ``<nonce>-<index>``,
the related memories numbered once for the batch) and asks for ``{"facts": [...]}`` with a
schema that bounds the components (0-5), the turn numbers (the batch's user turns) and
``supersedes`` (the related memories shown). ``Extraction`` holds that request and checks
the reply.

A reply is checked fact by fact with ``JudgeOutput``'s rules plus two guards: the
statement says nothing its user turns (and the context turn each answers) do not
(``faithfulness.invented_reason``), and its interpretation keeps the statement's facts
(``unfaithful_reason``). Any problem gets ONE corrective re-ask for the whole batch; a
fact still unfaithful after it keeps its source turns' text as its statement, flagged,
and a reply still invalid raises ``JudgeError`` (the store then keeps the turns pending).
No fact is a valid answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aimem.judges.faithfulness import invented_reason, unfaithful_reason
from aimem.judges.prompts import PromptTemplate, load_prompt, new_nonce
from aimem.judges.replies import (
    InvalidOutputError,
    JudgeOutput,
    Reply,
    kept_content,
    output_object_schema,
    replace_output,
    reply_list,
    validate_fields,
)
from aimem.judges.requests import related_notes
from aimem.models import Interpretation, Memory
from aimem.saving.messages import Turn
from aimem.validation import MAX_INTERPRETATION_CHARS, MAX_RATIONALE_CHARS, clean_text

if TYPE_CHECKING:  # openai only for annotations: importing it costs most of a second
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.shared_params import ResponseFormatJSONSchema

__all__ = [
    "EXTRACT_PROMPT_VERSION",
    "MAX_SHOWN",
    "Draft",
    "Extraction",
    "Fact",
    "build_extract_messages",
    "facts_response_format",
    "unfaithful_facts",
]

#: The prompt an extraction renders: ``prompts/extract.<version>.md``.
EXTRACT_PROMPT_VERSION = "v2"
#: Related memories one extraction call shows (numbered for ``supersedes``).
MAX_SHOWN = 10
#: The longest statement accepted, as for an interpretation: a runaway reply is re-asked.
MAX_STATEMENT_CHARS = MAX_INTERPRETATION_CHARS
#: Facts one user turn may yield at most (the schema's ``maxItems``): a bound on a runaway.
_FACTS_PER_TURN = 5


@dataclass(frozen=True)
class Fact:
    """One fact a conversation holds: the statement to store, its judgement, its user turns.

    ``interpretation.supersedes`` are positions (from 0) in the related memories shown.
    """

    statement: str
    interpretation: Interpretation
    turns: tuple[int, ...]


@dataclass(frozen=True)
class Draft:
    """A fact as the reply gave it, and why it is unfaithful (None: it is not)."""

    statement: str
    turns: tuple[int, ...]
    output: JudgeOutput
    unfaithful: str | None = None
    invented: bool = False


def _template() -> PromptTemplate:
    return load_prompt("extract", EXTRACT_PROMPT_VERSION)


class Extraction:
    """One extraction call: the request it sends and the checks on the reply it gets."""

    def __init__(
        self,
        turns: Sequence[Turn],
        *,
        user_context: str | None,
        related: Sequence[Memory],
        check_faithfulness: bool,
    ) -> None:
        self.turns = turns
        self.template = _template()
        self.sources = _sources(turns)
        self.shown = min(len(related), MAX_SHOWN)
        self.check_faithfulness = check_faithfulness
        self.messages = build_extract_messages(turns, user_context=user_context, related=related)
        self.schema = facts_response_format(list(self.sources), self.shown, self.template.scale)
        #: What the user said: sizes the reply-length bound.
        self.said = [t.text for t in turns if t.from_user]

    def read(self, reply: Reply) -> list[Draft]:
        """The reply's facts in conversation order, each with its unfaithfulness noted.

        Raises:
            InvalidOutputError: the reply as a whole, or any fact in it, breaks the rules.
        """
        return _parse(reply, self.sources, self.shown, self.template.scale, self.check_faithfulness)

    def settled(self, drafts: Sequence[Draft]) -> list[Draft]:
        """The facts to store: the unfaithful ones kept as said, each rationale naming its turns."""
        settled = []
        for draft in (_kept(d, self.turns) for d in drafts):
            where = ", ".join(f"messages[{i}]" for i in draft.turns)
            rationale = f"From {where}: {draft.output.rationale}"[:MAX_RATIONALE_CHARS]
            output = replace_output(draft.output, rationale=rationale)
            settled.append(Draft(draft.statement, draft.turns, output))
        return settled


def unfaithful_facts(drafts: Sequence[Draft]) -> str:
    """Why facts are unfaithful, one clause each, for the re-ask ("" when none is)."""
    return "; ".join(
        f"the fact from turn {d.turns[0]}: {d.unfaithful}" for d in drafts if d.unfaithful
    )


def facts_response_format(
    user_turns: Sequence[int], shown: int, scale: int | None = 5
) -> ResponseFormatJSONSchema:
    """The extraction answer's schema: facts whose ``turns`` name the batch's user turns.

    Components are integers 0..``scale`` and ``supersedes`` numbers 1..``shown``, as in
    interpret_batch.v3; ``maxItems`` bounds a runaway list, and an empty one is allowed.
    """
    numbers: dict[str, object] = {"type": "integer", "enum": list(user_turns)}
    fact = output_object_schema(
        {
            "statement": {"type": "string"},
            "turns": {"type": "array", "items": numbers, "minItems": 1},
        },
        scale=scale,
        shown=shown,
    )
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "conversation_facts",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "facts": {
                        "type": "array",
                        "items": fact,
                        "maxItems": _FACTS_PER_TURN * max(1, len(user_turns)),
                    }
                },
                "required": ["facts"],
                "additionalProperties": False,
            },
        },
    }


def build_extract_messages(
    turns: Sequence[Turn], *, user_context: str | None, related: Sequence[Memory]
) -> list[ChatCompletionMessageParam]:
    """Render extract.v2: the rubric, then the related memories and every turn in its own block.

    Each turn is headed ``Turn <index> (<role>):`` outside its block, so no text inside a
    turn can pass itself off as another turn or as the user.
    """
    notes = related_notes(related, numbered=True, most=MAX_SHOWN)
    context = user_context or "(none)"
    nonce = new_nonce(context, *notes, *(t.text for t in turns))
    blocks = [
        f'Turn {t.index} ({t.role}):\n<turn id="{nonce}-{t.index}">\n{t.text}\n'
        f'</turn id="{nonce}-{t.index}">'
        for t in turns
    ]
    prompt = _template().render(
        nonce=nonce,
        user_context=context,
        related="\n".join(notes) or "(none)",
        turns="\n\n".join(blocks),
    )
    return [
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": prompt.user},
    ]


def _sources(turns: Sequence[Turn]) -> dict[int, str]:
    """Each user turn's number -> what a fact from it may draw on: it and the turn it answers."""
    sources: dict[int, str] = {}
    before: Turn | None = None
    for turn in turns:
        if turn.from_user:
            context = before.text if before is not None and not before.from_user else ""
            sources[turn.index] = f"{context}\n{turn.text}".strip()
        before = turn
    return sources


def _parse(
    reply: Reply, sources: Mapping[int, str], shown: int, scale: int | None, check: bool
) -> list[Draft]:
    """The reply's facts, each with its unfaithfulness (if any) noted, in conversation order.

    Raises:
        InvalidOutputError: the reply as a whole, or any fact in it, breaks the schema's rules.
    """
    facts = reply_list(reply, "facts", cut_hint="; keep it short")
    drafts: list[Draft] = []
    problems: list[str] = []
    for n, fact in enumerate(facts, start=1):
        try:
            drafts.append(_draft(fact, sources, shown, scale, check))
        except InvalidOutputError as exc:
            problems.append(f"fact {n}: {exc}")
    if problems:
        raise InvalidOutputError("; ".join(problems[:5]))
    per_turn = Counter(turn for d in drafts for turn in d.turns)
    crowded = sorted(turn for turn, n in per_turn.items() if n > _FACTS_PER_TURN)
    if crowded:  # the schema's maxItems, enforced: a runaway reply never floods the store
        raise InvalidOutputError(
            f"at most {_FACTS_PER_TURN} facts per user turn (turn {crowded[0]} has "
            f"{per_turn[crowded[0]]})"
        )
    unique = {d.statement: d for d in reversed(drafts)}  # a repeated statement once, first wins
    return sorted(unique.values(), key=lambda d: (min(d.turns), drafts.index(d)))


def _draft(
    fact: object, sources: Mapping[int, str], shown: int, scale: int | None, check: bool
) -> Draft:
    if not isinstance(fact, dict):
        raise InvalidOutputError("each fact must be a JSON object")
    fields = dict(fact)
    statement, turns = fields.pop("statement", None), fields.pop("turns", None)
    if not isinstance(statement, str) or not statement.strip():
        raise InvalidOutputError("statement: must be a non-empty string")
    if len(statement) > MAX_STATEMENT_CHARS:
        raise InvalidOutputError(f"statement: at most {MAX_STATEMENT_CHARS} characters")
    try:
        statement = clean_text(statement.strip(), "statement")
    except ValueError as exc:
        raise InvalidOutputError(str(exc)) from None
    users = ", ".join(str(i) for i in sources)
    if (
        not isinstance(turns, list)
        or not turns
        or any(isinstance(i, bool) or i not in sources for i in turns)
        or len(set(turns)) != len(turns)
    ):
        raise InvalidOutputError(f"turns: list the user turns it comes from, among {users}")
    output = validate_fields(fields, shown, scale)
    reason, invented = None, False
    if check:
        source = "\n".join(sources[i] for i in sorted(turns))
        reason = invented_reason(source, statement) or _unsupported(source, statement)
        invented = reason is not None
        reason = reason or unfaithful_reason(statement, output.interpreted_content)
    return Draft(statement, tuple(sorted(turns)), output, reason, invented)


def _unsupported(source: str, statement: str) -> str | None:
    """Why no word of ``statement`` comes from its turns; None when one does.

    A fact the turns do not support is invented ("The user owns a yacht" from "I like
    tea."). Only within one script: a statement in English about a Japanese turn is read
    by the other checks.
    """
    from aimem.judges.heuristic.statement import content_tokens  # on use: its vocabularies are big

    words = content_tokens(statement.lower()) - _FRAMING
    if not words or _latin(statement) != _latin(source):
        return None
    if words & content_tokens(source.lower()):
        return None
    return "the statement shares no word with the user turns it names"


#: The store's framing of a fact, never evidence that a turn supports it.
_FRAMING = frozenset({"user", "ユーザー", "ユーザ"})


def _latin(text: str) -> bool:
    return sum(c.isascii() and c.isalpha() for c in text) * 2 > sum(c.isalpha() for c in text)


def _kept(draft: Draft, turns: Sequence[Turn]) -> Draft:
    """A fact still unfaithful after the re-ask: the user's own words stand in for it."""
    if draft.unfaithful is None:
        return draft
    if not draft.invented:  # the statement is sound, its interpretation is not
        output = kept_content(draft.output, draft.statement, draft.unfaithful)
        return Draft(draft.statement, draft.turns, output)
    said = "\n".join(t.text for t in turns if t.index in draft.turns)
    return Draft(said, draft.turns, kept_content(draft.output, said, draft.unfaithful))
