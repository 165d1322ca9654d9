"""Every ``aimem mcp`` result within one character budget: pages, cursors and cut texts.

The budget (``mcp_max_chars``) counts what the client receives: the text block and the
structured content together. Some clients hand a model only the structured content,
others only the text, so each must be complete: the text is the same JSON, compact
(the SDK's own mirror is indented, and larger than the data), and each half gets half
the budget. A list that does not fit comes in pages: the first call keeps the listing's
order as its memories' ids (16 bytes each, never their texts) and ``next_cursor`` names
where the next page starts. Each later page reads its memories from the store, so pages
never skip or repeat one and a deleted memory is never served again; a memory's history
is re-read by position (its events are only appended). Kept listings are bounded in
number and in bytes. Nothing is dropped to fit: an item cut off by the budget opens the
next page, and a single text too long for any page is cut with ``truncated: true`` (the
resource ``memory://memories/{id}`` has all of it).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import secrets
import uuid
from array import array
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp_types import CallToolResult, TextContent

from aimem.exceptions import ValidationError
from aimem.mcp.views import Json
from aimem.models import Memory

__all__ = ["MAX_CURSOR_CHARS", "Listing", "Pager", "compact", "result_chars"]

T = TypeVar("T")

#: Texts a result may shorten when one item alone is over the budget.
_CUT_KEYS = frozenset(
    {"content", "interpretation", "interpreted_content", "rationale", "explanation", "core"}
)
#: Id lists a result may shorten as a last resort (it then says ``truncated``).
_LIST_KEYS = ("archived", "superseded", "duplicates")
#: Listings kept for their cursors; an older one's cursor is refused as expired.
KEEP_LISTINGS = 64
#: Bytes of ids and scores all kept listings may hold (16 MiB: a million listed memories).
KEEP_BYTES = 16 * 2**20
_UUID_BYTES = 16
_ID_BYTES = 100  # what an id kept as a str costs (object, text, pointer)
MAX_CURSOR_CHARS = 40
_CURSOR = re.compile(r"^([A-Za-z0-9_-]{16})\.([0-9]{1,7})$")


def compact(value: Any) -> str:
    """JSON as the client holds it: no spaces, non-ASCII kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def result_chars(result: Json) -> int:
    """Characters the client receives for ``result``: the text block plus the structured JSON."""
    return 2 * len(compact(result))


def _texts(value: Any) -> list[tuple[Json, str]]:
    """Every (owner, key) of a cuttable text in ``value``, nested views included."""
    found: list[tuple[Json, str]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _CUT_KEYS and isinstance(item, str) and item:
                found.append((value, key))
            elif isinstance(item, dict | list):
                found += _texts(item)
    elif isinstance(value, list):
        for item in value:
            found += _texts(item)
    return found


def _cut_texts(view: Json, room: int) -> bool:
    """Shorten the longest texts of ``view`` in place until its JSON fits ``room``."""
    while (over := len(compact(view)) - room) > 0:
        texts = _texts(view)
        if not texts:
            return False
        owner, key = max(texts, key=lambda t: len(t[0][t[1]]))
        if not owner.get("truncated"):
            owner["truncated"] = True
            continue
        text: str = owner[key]
        keep = len(text) - over - 1  # each character cut saves at least one of JSON
        owner[key] = text[:keep] + "…" if keep > 0 else ""
    return True


def _cut_lists(result: Json, room: int) -> None:
    """Shorten the result's id lists, longest first, until it fits ``room`` (or they are empty)."""
    while (over := len(compact(result)) - room) > 0:
        lists = [k for k in _LIST_KEYS if isinstance(result.get(k), list) and result[k]]
        if not lists:
            return
        longest = max(lists, key=lambda k: len(result[k]))
        result[longest] = result[longest][: -max(1, over // 40)]  # an id takes 39 characters
        result["truncated"] = True


def _fit(result: Json, room: int) -> Json:
    """``result`` within ``room`` JSON characters: id lists kept to half, then texts cut."""
    if len(compact(result)) <= room:
        return result
    result = copy.deepcopy(result)
    bare = copy.deepcopy(result)
    for owner, key in _texts(bare):
        owner[key] = ""
    if len(compact(bare)) > room // 2:
        _cut_lists(result, len(compact(result)) - (len(compact(bare)) - room // 2))
    if not _cut_texts(result, room):
        _cut_lists(result, room)
    return result


def _digest(query: str | None) -> bytes | None:
    """What a cursor checks its follow-up against, without keeping the query's text."""
    return None if query is None else hashlib.sha256(query.encode("utf-8")).digest()


def _pack(ids: Sequence[str]) -> bytes | tuple[str, ...]:
    """Ids in as few bytes as they allow: 16 each for aimem's UUIDs, else as they are."""
    digits = "".join(ids).replace("-", "")
    try:
        packed = bytes.fromhex(digits)
    except ValueError:
        return tuple(ids)
    canonical = all(len(i) == 36 and i[8:24:5] == "----" for i in ids)
    if not canonical or len(packed) != _UUID_BYTES * len(ids) or packed.hex() != digits:
        return tuple(ids)  # not in aimem's form (upper case, braces): kept as given
    return packed


@dataclass(frozen=True)
class Listing:
    """What a cursor continues: the tool, how many items, and which memories in what order.

    ``ids`` is empty for a listing its tool re-reads by position (a memory's history),
    packed UUIDs otherwise (a tuple only for ids not in aimem's form); ``scores`` are a
    search's. Nothing a memory says is kept, and ``query`` is a digest.
    """

    tool: str
    size: int
    ids: bytes | tuple[str, ...] = b""
    scores: array[float] | None = None
    query: bytes | None = None
    #: A search hit's relevance, beside its score.
    relevances: array[float] | None = None

    @property
    def kept(self) -> int:
        """Bytes this listing holds (ids and scores), what ``KEEP_BYTES`` bounds."""
        ids = len(self.ids) if isinstance(self.ids, bytes) else _ID_BYTES * len(self.ids)
        scores = sum(len(a) for a in (self.scores, self.relevances) if a is not None)
        return ids + 8 * scores

    def ids_from(self, offset: int) -> Iterator[str]:
        """The listed ids from ``offset`` on, in order."""
        if isinstance(self.ids, tuple):
            yield from self.ids[offset:]
            return
        for n in range(offset * _UUID_BYTES, len(self.ids), _UUID_BYTES):
            yield str(uuid.UUID(bytes=self.ids[n : n + _UUID_BYTES]))

    def score(self, position: int) -> float | None:
        """A search hit's score, kept since it cannot be read back from the store."""
        return self.scores[position] if self.scores is not None else None

    def relevance(self, position: int) -> float | None:
        """A search hit's relevance, kept as its score is."""
        return self.relevances[position] if self.relevances is not None else None


class _Sheet:
    """One page being filled: its head, the views taken so far and the characters they use."""

    def __init__(self, pager: Pager, head: Json, key: str) -> None:
        probe = {key: [], "next_cursor": "x" * MAX_CURSOR_CHARS, **head}
        if len(compact(probe)) > pager.room // 2:
            _cut_lists(probe, pager.room // 2)
        self.pager, self.probe, self.key = pager, probe, key
        self.used = len(compact(probe))
        self.shown: list[Json] = []
        self.full = False

    def add(self, view: Json) -> bool:
        """Take ``view`` if it fits (the first one cut to fit); False once it does not.

        Raises:
            ValidationError: not even the first view fits, its texts cut: a cursor that
                never moves on would loop.
        """
        size = len(compact(view)) + (1 if self.shown else 0)
        if self.used + size <= self.pager.room:
            self.shown.append(view)
            self.used += size
            return True
        self.full = True
        if self.shown:
            return False
        if not _cut_texts(view, self.pager.room - self.used):
            raise ValidationError(self.pager.too_small())
        self.shown.append(view)
        return True

    def answer(self, cursor: str | None) -> CallToolResult:
        return self.pager.answer({**self.probe, self.key: self.shown, "next_cursor": cursor})


class Pager:
    """A server's budget and the listings its cursors point into (the newest few kept)."""

    def __init__(
        self, max_chars: int, keep: int = KEEP_LISTINGS, keep_bytes: int = KEEP_BYTES
    ) -> None:
        self.max_chars = max_chars
        self.room = max_chars // 2
        self._keep = keep
        self._keep_bytes = keep_bytes
        self._kept = 0
        self._listings: OrderedDict[str, Listing] = OrderedDict()

    @property
    def kept_bytes(self) -> int:
        """Bytes the kept listings hold now (at most ``keep_bytes``, or the newest one's)."""
        return self._kept

    def listings(self) -> list[Listing]:
        """The kept listings, oldest first (what a test inspects)."""
        return list(self._listings.values())

    def answer(self, result: Json) -> CallToolResult:
        """The tool result: ``result`` as structured content and as compact JSON text."""
        result = _fit(result, self.room)
        text = compact(result)
        if 2 * len(text) > self.max_chars:  # only a result with nothing left to cut
            raise ValidationError(self.too_small())
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=result
        )

    def too_small(self) -> str:
        """Why a page cannot be made: even one item, its texts cut, is over the budget."""
        return (
            f"the answer does not fit the server's budget (AIMEM_MCP_MAX_CHARS, "
            f"{self.max_chars}) even with its texts cut: call without detail, or raise it"
        )

    def resume(self, tool: str, cursor: str, query: str | None = None) -> tuple[str, Listing, int]:
        """The listing and position a cursor names, or a one-line error saying what to do."""
        match = _CURSOR.match(cursor)
        listing = self._listings.get(match.group(1)) if match else None
        if match is None:
            raise ValidationError(
                f"cursor {cursor[:40]!r} is not one this server gave: pass next_cursor "
                "exactly as received"
            )
        if listing is None:
            raise ValidationError(
                f"cursor expired: this server keeps its last {self._keep} listings (fewer when "
                f"they are long) and forgets them when it restarts; call {tool} again without "
                "cursor"
            )
        if listing.tool != tool:
            raise ValidationError(
                f"this cursor continues {listing.tool}: call {listing.tool} with it"
            )
        if listing.query is not None and _digest(query) != listing.query:
            raise ValidationError(
                "this cursor continues a search for another query: repeat that query with it, "
                "or search again without cursor"
            )
        offset = int(match.group(2))
        if offset >= listing.size:
            raise ValidationError(f"cursor {cursor!r} points past the end of its listing")
        self._listings.move_to_end(match.group(1))
        return match.group(1), listing, offset

    def _keep_listing(self, listing: Listing) -> str:
        """Keep ``listing`` for its cursors, forgetting the oldest past the count or bytes."""
        listing_id = secrets.token_urlsafe(12)
        self._listings[listing_id] = listing
        self._kept += listing.kept
        while len(self._listings) > 1 and (
            len(self._listings) > self._keep or self._kept > self._keep_bytes
        ):
            self._kept -= self._listings.popitem(last=False)[1].kept
        return listing_id

    def page(
        self,
        head: Json,
        key: str,
        items: Sequence[T],
        render: Callable[[T], Json],
        *,
        continue_with: str,
        offset: int = 0,
        listing_id: str | None = None,
        query: str | None = None,
        id_of: Callable[[T], str] | None = None,
        score_of: Callable[[T], float] | None = None,
        relevance_of: Callable[[T], float] | None = None,
    ) -> CallToolResult:
        """``head`` with ``key`` holding the items from ``offset`` that fit, and ``next_cursor``.

        At least one item is shown (its texts cut if it alone is over the budget); the
        first that does not fit starts the next page, which ``continue_with`` serves:
        with ``more`` when ``id_of`` names each item's memory (only ids are kept), else
        by calling this again with the items re-read and the cursor's offset.
        """
        sheet = _Sheet(self, head, key)
        end = offset
        for item in items[offset:]:
            if sheet.full or not sheet.add(render(item)):
                break
            end += 1
        if end >= len(items):
            return sheet.answer(None)
        if listing_id is None:
            ids = _pack([id_of(i) for i in items]) if id_of else b""
            scores = array("d", (score_of(i) for i in items)) if score_of else None
            fits = array("d", (relevance_of(i) for i in items)) if relevance_of else None
            listing = Listing(continue_with, len(items), ids, scores, _digest(query), fits)
            listing_id = self._keep_listing(listing)
        return sheet.answer(f"{listing_id}.{end}")

    async def more(
        self,
        head: Json,
        key: str,
        resumed: tuple[str, Listing, int],
        get: Callable[[str], Awaitable[Memory | None]],
        render: Callable[[Memory, float | None, float | None], Json],
    ) -> CallToolResult:
        """The next page of a listing kept by id: each memory read now, deleted ones left out.

        ``get`` reads a memory (None when it is gone); ``render`` gets the memory, its
        score and its relevance in the listing (a search's, else None).
        """
        listing_id, listing, offset = resumed
        sheet = _Sheet(self, head, key)
        end = offset
        for memory_id in listing.ids_from(offset):
            if sheet.full:
                break
            memory = await get(memory_id)
            view = (
                None
                if memory is None
                else render(memory, listing.score(end), listing.relevance(end))
            )
            if view is not None and not sheet.add(view):
                break
            end += 1
        return sheet.answer(f"{listing_id}.{end}" if end < listing.size else None)
