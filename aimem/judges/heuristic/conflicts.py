"""Which related memories a content may make out of date, read more loosely than supersession.

Supersession archives, so its rules must be sure (``supersession.py``). A memory that
is only *contested* stays active and is ranked below the newer one while both are
(``siblings.current_first``), so this reading may be looser and still do no harm: a
wrong guess reorders two results, a right one stops an agent answering with a stale fact.
It takes every supersession rule (the precise ones and the rest), then the same subject
saying something new about the same thing:

* the same single-valued slot with another value ("I work at Dell" / "I'm a teacher now");
* a change or an end that names the same thing in two words or more ("the swim class
  is back on" after "the swim class is cancelled").

Never for another speaker's or person's fact, an addition ("I also have a cat"), a
question or request with no statement, or a story.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from aimem.judges.heuristic import changes
from aimem.judges.heuristic.clauses import Clause, clauses
from aimem.judges.heuristic.ends import shared_tokens
from aimem.judges.heuristic.statement import Reading
from aimem.judges.heuristic.supersession import verdicts

__all__ = ["find_contested"]

_log = logging.getLogger("aimem")

#: Slots that hold one value at a time (a residence, an employer, a dose of one drug).
_SINGLE = frozenset(
    {"residence", "job", "relationship", "commute", "work hours", "dose", "possession", "pet"}
)
#: Slots whose parameter names which thing (a drug, a pet kind): only the same one counts.
_PARAMETERISED = frozenset({"dose", "possession", "pet", "schedule", "habit"})


def find_contested(content: str, related: Sequence[str]) -> tuple[int, ...]:
    """Positions in ``related`` that ``content`` may make out of date (module docstring).

    Never raises; empty when unsure or on a rule's failure.
    """
    try:
        found = {v.index for v in verdicts(content, related)}
        # Only a stated change, or a single-valued slot, can contest (``_contests``): decided
        # once per clause, so a save with neither reads no related memory at all.
        new = [
            c
            for c in clauses(content)
            if c.mood == "stated"
            and c.subject != "other:beneficiary"
            and (c.reading.change or any(s.kind in _SINGLE for s in c.reading.slots))
            and not changes.ADDED.search(c.low)
        ]
        if not new:
            return tuple(sorted(found))
        for i, text in enumerate(related):
            if i in found or not isinstance(text, str) or text.strip() == content.strip():
                continue
            old = [c for c in clauses(text) if c.mood in ("stated", "planned", "unsettled")]
            if any(_contests(n, o) for n in new for o in old):
                found.add(i)
        return tuple(sorted(found))
    except Exception:  # a rule's bug must not lose a save: contest nothing, and say so
        _log.warning("offline contested-fact reading failed; marking nothing", exc_info=True)
        return ()


def _contests(n: Clause, o: Clause) -> bool:
    """Whether stated clause ``n`` may replace what clause ``o`` holds (module docstring)."""
    if n.subject != o.subject or n.subject == "other:beneficiary":
        return False
    if changes.ADDED.search(n.low):
        return False
    rn, ro = n.reading, o.reading
    if _slot_differs(rn, ro):
        return True
    # words in common count only for a change: no need to find them otherwise
    return rn.change and len(shared_tokens(rn.tokens, ro.tokens)) >= 2


def _slot_differs(rn: Reading, ro: Reading) -> bool:
    """The same single-valued slot (and thing) holds another value in each."""
    for s in rn.slots:
        if s.kind not in _SINGLE:
            continue
        t = ro.slot(s.kind)
        if t is None or not (s.value and t.value) or s.value & t.value:
            continue
        if s.kind in _PARAMETERISED and not (s.param & t.param):
            continue
        return True
    return False
