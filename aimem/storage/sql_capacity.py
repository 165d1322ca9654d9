"""What a write retires: supersession, contested facts, and the capacity manager's SQL.

``capacity.py`` decides (pure); these statements feed it and apply its choice inside
the caller's transaction. A covering index serves both lookups (``schema.py``). A new
memory first retires what it supersedes and marks what it only contests, if it ends
up active itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, false, select, update
from sqlalchemy.sql.elements import BindParameter

from aimem.capacity import Candidate, CapacityPolicy, choose_forgotten, needed_candidates
from aimem.storage.schema import utcnow
from aimem.storage.sql import COUNTS, MEMORIES, NewMemory, m, of_namespace, record

__all__ = [
    "SUPERSEDED",
    "Supersession",
    "apply_capacity",
    "archive_all_unpinned",
    "contest",
    "count_capped",
    "plan_capacity",
    "supersede",
    "supersede_then_apply",
]

#: The archive reason of a memory a later one made out of date.
SUPERSEDED = "superseded"

#: A new or edited memory (its id), what it supersedes, and the creation time older
#: memories must have (a memory judged late never retires newer news).
Supersession = tuple[str, NewMemory, datetime | None]

_NS: BindParameter[str] = bindparam("ns")
_IDS: BindParameter[list[str]] = bindparam("ids", expanding=True)
_COUNT_CAPPED = select(COUNTS.c.capped).where(COUNTS.c.namespace == _NS)
_CAPPED = (
    (m.namespace == _NS)
    & m.archived_at.is_(None)
    & (m.pinned == false())
    & m.priority_score.is_not(None)
)
# The leading columns are fixed by the WHERE clause, so ordering by them changes nothing
# but lets PostgreSQL walk ix_memories_capacity (it does not take "archived_at IS NULL"
# as fixing that column) instead of reading and sorting every active row.
_FORGETTING_ORDER = (
    m.namespace, m.archived_at, m.pinned, m.priority_score, m.created_at, m.id
)  # fmt: skip
_BELOW_MIN = (
    select(m.id, m.priority_score, m.created_at)
    .where(_CAPPED & (m.priority_score < bindparam("threshold")))
    .order_by(*_FORGETTING_ORDER)
)
_LOWEST_ABOVE_MIN = (
    select(m.id, m.priority_score, m.created_at)
    .where(_CAPPED & (m.priority_score >= bindparam("threshold")))
    .order_by(*_FORGETTING_ORDER)
    .limit(bindparam("limit"))
)
_ARCHIVE = (
    update(MEMORIES)
    .where(of_namespace(_NS), m.id.in_(_IDS))
    .values(
        archived_at=bindparam("now"),
        archive_reason=bindparam("reason"),
        version=m.version + 1,
        updated_at=bindparam("now"),
    )
    .returning(m.id, m.version)
)


def count_capped(conn: Connection, namespace: str) -> int:
    """Active, unpinned, judged memories: one row kept exact by triggers, never a count."""
    return int(conn.execute(_COUNT_CAPPED, {"ns": namespace}).scalar_one_or_none() or 0)


def _candidates(conn: Connection, statement: Any, params: dict[str, Any]) -> list[Candidate]:
    return [Candidate(i, float(p), c) for i, p, c in conn.execute(statement, params)]


def plan_capacity(
    conn: Connection,
    namespace: str,
    policy: CapacityPolicy,
    protected: frozenset[str] = frozenset(),
) -> list[tuple[Candidate, str]]:
    """What the capacity rules would archive now, reading only what can be archived.

    Every below-min row, then the few lowest above it, stepping over ``protected`` (a
    memory being restored: spared by the call that restores it, not forever). With
    auto-prune on, below-min rows are archived as they arrive, so the first query
    normally returns at most the memory just saved; nothing here scans the namespace.
    """
    active = count_capped(conn, namespace)
    params: dict[str, Any] = {"ns": namespace, "threshold": policy.min_priority_score}
    below = _candidates(conn, _BELOW_MIN, params)
    wanted = needed_candidates(active - len(below), policy.max_memories, len(protected))
    above = _candidates(conn, _LOWEST_ABOVE_MIN, {**params, "limit": wanted}) if wanted else []
    return choose_forgotten(below + above, active=active, policy=policy, protected=protected)


def _archive(
    conn: Connection, namespace: str, ids: Sequence[str], reason: str, now: datetime
) -> None:
    if not ids:
        return
    params = {"ns": namespace, "ids": list(ids), "now": now, "reason": reason}
    rows = conn.execute(_ARCHIVE, params).all()
    record(conn, namespace, [(i, v) for i, v in rows], "archive", now, {"reason": reason})


def apply_capacity(
    conn: Connection,
    namespace: str,
    policy: CapacityPolicy,
    protected: frozenset[str] = frozenset(),
) -> list[str]:
    """Archive what the capacity rules choose; returns the archived ids in forgetting order."""
    chosen = plan_capacity(conn, namespace, policy, protected)
    now = utcnow()
    for reason in dict.fromkeys(r for _, r in chosen):
        _archive(conn, namespace, [c.id for c, r in chosen if r == reason], reason, now)
    return [c.id for c, _ in chosen]


def archive_all_unpinned(conn: Connection, namespace: str, reason: str) -> list[str]:
    """Archive every active unpinned memory (``compress``); returns their ids."""
    ids = list(
        conn.execute(
            select(m.id).where(
                m.namespace == namespace, m.archived_at.is_(None), m.pinned == false()
            )
        ).scalars()
    )
    _archive(conn, namespace, ids, reason, utcnow())
    return ids


def supersede_then_apply(
    conn: Connection,
    namespace: str,
    policy: CapacityPolicy,
    supersessions: Sequence[Supersession],
    *,
    protected: frozenset[str] = frozenset(),
    capacity: bool = True,
) -> list[str]:
    """Retire what each successor supersedes, then apply the capacity rules (if ``capacity``).

    A successor that does not end up active retires nothing: "whatever lol" saved below
    the threshold, or an edit of an archived memory, leaves the current fact alone. Each
    try runs in a savepoint; a successor the capacity step archived loses its
    supersessions and the step runs again without them. Then each successor still active
    marks what it contests. Returns every id archived.
    """
    archived = _supersede_then_apply(
        conn, namespace, policy, supersessions, protected=protected, capacity=capacity
    )
    contesting = [s for s in supersessions if s[1].contests]
    if contesting:
        ids = [successor for successor, _, _ in contesting]
        active = set(
            conn.execute(select(m.id).where(m.id.in_(ids), m.archived_at.is_(None))).scalars()
        )
        for successor, item, older_than in contesting:
            if successor in active:
                contest(conn, namespace, successor, item, older_than=older_than)
    return archived


def _supersede_then_apply(
    conn: Connection,
    namespace: str,
    policy: CapacityPolicy,
    supersessions: Sequence[Supersession],
    *,
    protected: frozenset[str],
    capacity: bool,
) -> list[str]:
    pending = [s for s in supersessions if s[1].supersedes]
    if pending:
        ids = [successor for successor, _, _ in pending]
        active = set(
            conn.execute(select(m.id).where(m.id.in_(ids), m.archived_at.is_(None))).scalars()
        )
        pending = [s for s in pending if s[0] in active]
    while pending:
        savepoint = conn.begin_nested()
        retired = [
            gone
            for successor, item, older_than in pending
            for gone in supersede(conn, namespace, successor, item, older_than=older_than)
        ]
        archived = apply_capacity(conn, namespace, policy, protected) if capacity else []
        lost = {successor for successor, _, _ in pending} & set(archived)
        if not lost:
            savepoint.commit()
            return retired + archived
        savepoint.rollback()
        pending = [s for s in pending if s[0] not in lost]
    return apply_capacity(conn, namespace, policy, protected) if capacity else []


def supersede(
    conn: Connection,
    namespace: str,
    successor: str,
    item: NewMemory,
    *,
    older_than: datetime | None = None,
) -> list[str]:
    """Retire the active, unpinned memories ``item`` (saved as ``successor``) supersedes.

    Archived with reason ``superseded`` and a link to the successor, one history event
    each (with the judge's reason); ``restore`` undoes it. With ``older_than`` only
    memories created before it (a memory judged late must not retire newer news).
    Returns the ids retired.
    """
    now, reason = utcnow(), item.supersede_reason
    wanted = [i for i in dict.fromkeys(item.supersedes) if i != successor]
    if not wanted:
        return []
    conditions = [
        m.namespace == namespace,
        m.id.in_(wanted),
        m.archived_at.is_(None),
        m.pinned == false(),
    ]
    if older_than is not None:
        conditions.append(m.created_at < older_than)
    rows = conn.execute(
        update(MEMORIES)
        .where(*conditions)
        .values(
            archived_at=now,
            archive_reason=SUPERSEDED,
            superseded_by=successor,
            version=m.version + 1,
            updated_at=now,
        )
        .returning(m.id, m.version)
    ).all()
    detail = {"reason": SUPERSEDED, "by": successor, **({"why": reason} if reason else {})}
    record(conn, namespace, [(i, v) for i, v in rows], "archive", now, detail)
    return [i for i, _ in rows]


def contest(
    conn: Connection,
    namespace: str,
    successor: str,
    item: NewMemory,
    *,
    older_than: datetime | None = None,
) -> None:
    """Mark the active memories ``item`` (saved as ``successor``) contests but does not retire.

    They may be out of date ("I live in Sendai" when "We're in Sapporo now" is saved) but
    the reading was too unsure to archive them. A link, not a change of what they say: no
    new version, no event. Search and context rank the successor first while both are
    active (``ranking.current_first``); an edit of the contested memory clears it.
    """
    wanted = [i for i in dict.fromkeys(item.contests) if i != successor]
    if not wanted:
        return
    conditions = [m.namespace == namespace, m.id.in_(wanted), m.archived_at.is_(None)]
    if older_than is not None:
        conditions.append(m.created_at < older_than)
    conn.execute(update(MEMORIES).where(*conditions).values(contested_by=successor))
