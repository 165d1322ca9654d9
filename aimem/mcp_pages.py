"""Every ``aimem mcp`` result within one character budget: pages, cursors and cut texts.

The budget (``mcp_max_chars``) counts what the client receives: the text block and the
structured content together. Some clients hand a model only the structured content,
others only the text, so each must be complete: the text is the same JSON, compact
(the SDK's own mirror is indented, and larger than the data), and each half gets half
the budget. A list that does not fit comes in pages: the first call keeps the whole
listing (the memories as they were then, so pages never skip or repeat one) and
``next_cursor`` names where the next page starts. Nothing is dropped to fit: an item
cut off by the budget opens the next page, and a single text too long for any page is
cut with ``truncated: true`` (the resource ``memory://memories/{id}`` has all of it).
"""

from __future__ import annotations

import copy
import json
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp_types import CallToolResult, TextContent

from .exceptions import ValidationError
from .mcp_views import Json

__all__ = ["MAX_CURSOR_CHARS", "Pager", "compact", "result_chars"]

T = TypeVar("T")

#: Texts a result may shorten when one item alone is over the budget.
_CUT_KEYS = frozenset(
    {"content", "interpretation", "interpreted_content", "rationale", "explanation", "core"}
)
#: Id lists a result may shorten as a last resort (it then says ``truncated``).
_LIST_KEYS = ("archived", "superseded", "duplicates")
#: Listings kept for their cursors; an older one's cursor is refused as expired.
KEEP_LISTINGS = 64
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


@dataclass(frozen=True)
class Listing:
    """A listing being paged through: the tool that continues it and every item, in order."""

    tool: str
    items: Sequence[Any]
    #: What the first call looked for (a search's query): a cursor continues only that.
    query: str | None = None


class Pager:
    """A server's budget and the listings its cursors point into (the newest few kept)."""

    def __init__(self, max_chars: int, keep: int = KEEP_LISTINGS) -> None:
        self.max_chars = max_chars
        self.room = max_chars // 2
        self._keep = keep
        self._listings: OrderedDict[str, Listing] = OrderedDict()

    def answer(self, result: Json) -> CallToolResult:
        """The tool result: ``result`` as structured content and as compact JSON text."""
        result = _fit(result, self.room)
        text = compact(result)
        if 2 * len(text) > self.max_chars:  # only a result with nothing left to cut
            raise ValidationError(self._too_small())
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=result
        )

    def _too_small(self) -> str:
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
                f"cursor expired: this server keeps its last {self._keep} listings and forgets "
                f"them when it restarts; call {tool} again without cursor"
            )
        if listing.tool != tool:
            raise ValidationError(
                f"this cursor continues {listing.tool}: call {listing.tool} with it"
            )
        if listing.query is not None and query != listing.query:
            raise ValidationError(
                "this cursor continues a search for another query: repeat that query with it, "
                "or search again without cursor"
            )
        offset = int(match.group(2))
        if offset >= len(listing.items):
            raise ValidationError(f"cursor {cursor!r} points past the end of its listing")
        self._listings.move_to_end(match.group(1))
        return match.group(1), listing, offset

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
    ) -> CallToolResult:
        """``head`` with ``key`` holding the items from ``offset`` that fit, and ``next_cursor``.

        At least one item is shown (its texts cut if it alone is over the budget); the
        first that does not fit starts the next page, which ``continue_with`` serves.
        """
        probe = {key: [], "next_cursor": "x" * MAX_CURSOR_CHARS, **head}
        if len(compact(probe)) > self.room // 2:
            _cut_lists(probe, self.room // 2)
        used = len(compact(probe))
        shown: list[Json] = []
        for item in items[offset:]:
            view = render(item)
            size = len(compact(view)) + (1 if shown else 0)
            if used + size > self.room:
                if not shown and _cut_texts(view, self.room - used):
                    shown.append(view)
                break
            shown.append(view)
            used += size
        if not shown and offset < len(items):  # a cursor that never moves on would loop
            raise ValidationError(self._too_small())
        end = offset + len(shown)
        cursor = None
        if end < len(items):
            if listing_id is None:
                listing_id = secrets.token_urlsafe(12)
                self._listings[listing_id] = Listing(continue_with, items, query)
                while len(self._listings) > self._keep:
                    self._listings.popitem(last=False)
            cursor = f"{listing_id}.{end}"
        return self.answer({**probe, key: shown, "next_cursor": cursor})
