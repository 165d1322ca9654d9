"""A conversation's turns -> memories ready to write, before the save's one transaction.

Two ways, by what the judge can do:

* a judge with ``extract_facts`` (``OpenAIJudge``) reads each batch of turns in one call
  and states the facts worth keeping, each scored; a failed batch keeps its user turns
  raw as pending memories when ``on_judge_error`` allows, so nothing is lost;
* any other judge (the offline heuristic, a custom one) judges each user turn's text as
  ``save_many`` would (one call per batch for a batching judge), and the turns scoring
  at least ``min_priority_score`` are kept verbatim; chit-chat ("thanks!") is dropped.

Either way a fact may make a memory out of date: a stored one (the related memories the
judge was shown) or an earlier one of the same conversation, shown to the judge with a
placeholder id and named to the store by position (``NewMemory.supersedes_earlier``),
since its id exists only once inserted. Exact duplicates of active memories are
reinforced, not saved again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from aimem.exceptions import AimemError, JudgeError
from aimem.judges.base import judge_source
from aimem.judges.facts import MAX_SHOWN, Fact
from aimem.models import Interpretation, Memory, RelatedMemory, SaveReport
from aimem.saving.contents import Judging, judge_crash
from aimem.saving.messages import Turn, batches
from aimem.storage import NewMemory
from aimem.vectors import Vector

__all__ = ["ConversationPlan", "judge_in_order", "plan_conversation"]

#: Id prefix of a memory of this conversation not stored yet, as a judge is shown it.
_UNSAVED = "conversation:"
#: Earlier memories of the same conversation shown to the judge of a later turn or batch.
_EARLIER = 5

#: One entry per candidate memory, in conversation order: one to insert, an active exact
#: duplicate (already reinforced), or None (judged not worth keeping).
_Entry = NewMemory | Memory | None
#: ``find(content, reinforce=True)``: the active memory holding ``content``, if any.
FindDuplicate = Callable[..., Awaitable[Memory | None]]


@dataclass(frozen=True)
class ConversationPlan:
    """What a conversation will write: new memories, and the duplicates it reinforced."""

    items: list[NewMemory]
    known: dict[str, Memory]
    #: Every memory's content, new or known, in conversation order.
    order: list[str]

    def report(self, memories: Sequence[Memory], archived: list[Memory]) -> SaveReport:
        """The save's report, once ``items`` are inserted as ``memories``."""
        saved = {m.content: m for m in memories} | self.known
        return SaveReport(
            memories=[saved[c] for c in self.order],
            archived=archived,
            duplicates=[m.id for m in self.known.values()],
        )


async def plan_conversation(
    judging: Judging,
    turns: Sequence[Turn],
    user_context: str | None,
    find_duplicate: FindDuplicate,
) -> ConversationPlan:
    """Judge a validated conversation (``conversation.check_messages``); nothing is written.

    Raises:
        JudgeError: the judge failed and ``on_judge_error="raise"``.
        ValidationError: the judge's answer breaks the stored-field rules.
    """
    extracting = judging.settings.interpretation_enabled and callable(
        getattr(judging.judge, "extract_facts", None)
    )
    if extracting:
        entries, turn_of = await _extracted(judging, turns, user_context, find_duplicate)
        return _plan(entries, turn_of)
    return _plan(await _user_turns(judging, turns, user_context, find_duplicate))


async def judge_in_order(
    judging: Judging, contents: Sequence[str], user_context: str | None
) -> list[NewMemory]:
    """``save_many``'s contents judged in order: a later one may retire an earlier one.

    "I live in Leeds" then "we moved to York" in one call: the second is judged with the
    first shown as an unsaved related memory, and names it by position
    (``NewMemory.supersedes_earlier``), as a conversation's later turn does. Only earlier
    contents sharing a word or a slot with it are shown: unrelated ones cost tokens.
    """
    if len(contents) < 2:
        return await judging.judge_all(contents, user_context)
    from aimem.judges.heuristic.statement import read  # on use: its vocabularies are big

    readings = [read(c) for c in contents]
    topics = [frozenset(r.tokens) | {f"#slot:{s.kind}" for s in r.slots} for r in readings]
    earlier = [[_unsaved(j, contents[j]) for j in shown] for shown in _recent_sharing(topics)]
    judged = await judging.judge_all(contents, user_context, earlier=earlier)
    return _plan(judged).items


def _recent_sharing(topics: Sequence[frozenset[str]]) -> list[list[int]]:
    """For each position, the ``_EARLIER`` latest earlier ones sharing a topic, latest first.

    Each topic remembers only its ``_EARLIER`` latest positions: a later one sharing the
    topic outranks any older, so nothing beyond them can make the cut. Comparing every
    pair instead made a 20,000-item ``save_many`` quadratic before it was even judged.
    """
    latest: dict[str, list[int]] = {}
    shown: list[list[int]] = []
    for i, words in enumerate(topics):
        candidates = {j for word in words for j in latest.get(word, ())}
        shown.append(sorted(candidates, reverse=True)[:_EARLIER])
        for word in words:
            kept = latest.setdefault(word, [])
            kept.append(i)
            if len(kept) > _EARLIER:
                del kept[0]
    return shown


async def _user_turns(
    judging: Judging, turns: Sequence[Turn], user_context: str | None, find: FindDuplicate
) -> list[_Entry]:
    """Each distinct user turn judged as ``save_many`` would, kept if it scores enough."""
    texts = list(dict.fromkeys(t.text for t in turns if t.from_user))
    known = {t: m for t in texts if (m := await find(t, reinforce=False)) is not None}
    fresh = [i for i, t in enumerate(texts) if t not in known]
    earlier = [
        [_unsaved(j, texts[j]) for j in reversed(fresh[max(n - _EARLIER, 0) : n])]
        for n in range(len(fresh))
    ]
    judged = await judging.judge_all([texts[i] for i in fresh], user_context, earlier=earlier)
    # Repeats are reinforced only once the judgement held: a failure that raises writes nothing.
    known = {t: await find(t) or m for t, m in known.items()}
    by_index = dict(zip(fresh, judged, strict=True))
    floor = judging.settings.min_priority_score
    return [known[t] if t in known else _kept(by_index[i], floor) for i, t in enumerate(texts)]


def _kept(item: NewMemory, floor: float) -> NewMemory | None:
    """A judged turn worth storing: pending (not judged yet) or scoring at least ``floor``."""
    interp = item.interpretation
    return item if interp is None or interp.priority_score >= floor else None


@dataclass(frozen=True)
class _Found:
    """A fact (or a user turn kept raw when its batch failed) before it is embedded."""

    content: str
    interpretation: Interpretation | None
    turn: int
    shown: Sequence[Memory] = ()
    vector: Vector | None = None


async def _extracted(
    judging: Judging, turns: Sequence[Turn], user_context: str | None, find: FindDuplicate
) -> tuple[list[_Entry], list[int]]:
    """The judge's facts, batch by batch in order (a later batch sees the earlier facts).

    A user turn that repeats an active memory word for word is a duplicate too, looked up
    after judging so that a judge failure that raises has written nothing. Returns the
    entries and each one's (first) user turn, by which they are ordered.
    """
    users = [t for t in turns if t.from_user]
    vectors = await judging.retriever.embed([u.text for u in users])
    vector = {u.index: None if vectors is None else vectors[i] for i, u in enumerate(users)}
    stored = {u.index: await judging.retriever.related(u.text, vector[u.index]) for u in users}
    floor = judging.settings.min_priority_score
    found: list[_Found | None] = []
    for batch in batches(turns, judging.settings.judge_batch_size):
        said = [t for t in batch if t.from_user]
        earlier = [
            _unsaved(n, f.content, f.interpretation)
            for n, f in reversed(list(enumerate(found)))
            if f is not None and f.interpretation is not None
        ][:_EARLIER]
        shown = [*_merged([stored[u.index] for u in said], MAX_SHOWN - len(earlier)), *earlier]
        try:
            facts = await _extract(judging, batch, user_context, shown)
        except JudgeError as exc:
            if not judging._may_pend(True, exc):
                raise
            found += [_Found(u.text, None, u.index, vector=vector[u.index]) for u in said]
            continue
        found += [
            _Found(_statement(f, batch, judging), f.interpretation, f.turns[0], shown)
            if f.interpretation.priority_score >= floor
            else None
            for f in facts
        ]
    statements = [f.content for f in found if f is not None and f.interpretation is not None]
    made = await judging.retriever.embed(statements)
    embedded: Iterator[Vector | None] = iter(made if made is not None else [None] * len(statements))
    source = judge_source(judging.judge)
    entries: list[_Entry] = []
    turn_of: list[int] = []
    for f in found:
        turn_of.append(-1 if f is None else f.turn)
        if f is None:
            entries.append(None)
            continue
        if f.interpretation is None:
            item = judging.new_memory(f.content, None, "pending", user_context, f.vector)
        else:
            item = judging.new_memory(
                f.content, f.interpretation, source, user_context, next(embedded), f.shown
            )
        entries.append(await find(item.content) or item)
    held = {e.content for e in entries if e is not None}
    for u in users:
        if u.text not in held and (repeated := await find(u.text)) is not None:
            entries.append(repeated)
            turn_of.append(u.index)
            held.add(u.text)
    return entries, turn_of


async def _extract(
    judging: Judging, batch: Sequence[Turn], user_context: str | None, shown: Sequence[Memory]
) -> list[Fact]:
    """One extraction call; anything but a list of facts is the judge failing."""
    try:
        facts = await judging.judge.extract_facts(  # type: ignore[attr-defined]
            batch, user_context=user_context, related=shown
        )
    except AimemError:
        raise
    except Exception as exc:
        raise judge_crash(exc) from exc
    if not isinstance(facts, list) or not all(isinstance(f, Fact) for f in facts):
        raise JudgeError("The judge's extract_facts returned something other than a list of Facts")
    return facts


def _statement(fact: Fact, batch: Sequence[Turn], judging: Judging) -> str:
    """The fact's statement, or its first user turn's text if the statement is over the limit."""
    if len(fact.statement) <= judging.settings.max_content_chars:
        return fact.statement
    return next(t.text for t in batch if t.index == fact.turns[0])


def _merged(lists: Sequence[Sequence[Memory]], limit: int) -> list[Memory]:
    """Several turns' related memories, taken in turn (each turn's closest first), once each."""
    merged: dict[str, Memory] = {}
    for rank in range(max((len(r) for r in lists), default=0)):
        for related in lists:
            if rank < len(related) and len(merged) < limit:
                merged.setdefault(related[rank].id, related[rank])
    return list(merged.values())


def _unsaved(n: int, content: str, interpretation: Interpretation | None = None) -> RelatedMemory:
    """Entry ``n`` of this conversation as a judge is shown it: a memory not stored yet."""
    now = datetime.now(UTC)
    return RelatedMemory(
        id=f"{_UNSAVED}{n}",
        namespace="",
        content=content,
        interpreted_content=interpretation.interpreted_content if interpretation else content,
        emotional_impact=None,
        user_relevance=None,
        novelty=None,
        utility=None,
        priority_score=None,
        rationale="",
        user_context=None,
        score_source="pending",
        model=None,
        prompt_version=None,
        created_at=now,
        updated_at=now,
        last_accessed_at=now,
        access_count=0,
        pinned=False,
        version=1,
        archived_at=None,
        archive_reason=None,
    )


def _plan(entries: Sequence[_Entry], turn_of: Sequence[int] = ()) -> ConversationPlan:
    """Entries -> what to insert: repeats once, and supersessions of unsaved ones by position.

    An unsaved memory's placeholder id names its position in ``entries``; ``turn_of`` (the
    user turn of each entry) orders them when given, stably.
    """
    content_of = {n: e.content for n, e in enumerate(entries) if e is not None}
    ordered = sorted(range(len(entries)), key=lambda n: turn_of[n] if turn_of else n)
    first: dict[str, NewMemory | Memory] = {}
    for e in (entries[n] for n in ordered):
        if e is not None:
            first.setdefault(e.content, e)
    known = {c: e for c, e in first.items() if isinstance(e, Memory)}
    items = [e for e in first.values() if isinstance(e, NewMemory)]
    position = {item.content: p for p, item in enumerate(items)}
    planned = []
    for p, item in enumerate(items):
        stored: list[str] = []
        earlier: list[int] = []
        for target in item.supersedes:
            if not target.startswith(_UNSAVED):
                stored.append(target)
                continue
            content = content_of.get(int(target.removeprefix(_UNSAVED)))
            if content in known:
                stored.append(known[content].id)
            elif content is not None and position[content] < p:
                earlier.append(position[content])
        if earlier or len(stored) != len(item.supersedes):
            item = replace(item, supersedes=tuple(stored), supersedes_earlier=tuple(earlier))
        planned.append(item)
    return ConversationPlan(planned, known, list(first))
