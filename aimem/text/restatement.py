r"""The offline interpretation of a content, and the framed form earlier versions stored.

The offline judge interprets a content as the content told in the third person
(``third_person``): a sentence an agent can read out of context, with no label and no
list of synonyms. Before heuristic-v6 it wrote ``User: <content>`` or ``The user's
residence (where they live, home, based; moved): "<content>"``; those slot words helped
recall but filled every search hit and CLI line with boilerplate. Schema 5 rewrites such
rows with ``restate`` and keeps their slot words as recall terms (indexed, never shown),
so an upgraded store reads as a new one.

Pure text: the heuristic judge and both storage backends' migrations use it.

Example:
    >>> restate("  We moved to Portland last month. ")
    'The user and others moved to Portland last month.'
    >>> legacy_recall_terms('The user\'s pet (animal they keep; cat): "My cat is Mochi."')
    'pet animal keep cat'
"""

from __future__ import annotations

import re
import unicodedata

from aimem.text.third_person import third_person

__all__ = ["MAX_CHARS", "legacy_recall_terms", "restate"]

#: An offline interpretation is at most this long.
MAX_CHARS = 500
_EMPTY = "(empty message)"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff]")

#: What heuristic-v1 to v5 wrote: a label and its synonyms, or a bare "User:" prefix.
_LEGACY_EN = re.compile(r"^The user's (?P<label>[^\n()]{1,120}?) \((?P<words>[^()\n]{0,300})\): \"")
_LEGACY_JA = re.compile(
    r"^ユーザーの(?P<label>[^\n(（)）]{1,60}?)[(（](?P<words>[^()（）\n]{0,300})[)）]: "
)
_LEGACY_PLAIN = re.compile(r"^User: ")
_LEGACY_FILLER = frozenset({"they", "them", "the", "user", "about"})


def restate(content: str) -> str:
    """``content`` as one clean third-person statement: at most 500 characters, never empty.

    Deterministic and never raises; the words are the user's own but for the pronouns.
    """
    try:
        text = unicodedata.normalize("NFKC", str(content)[: 8 * MAX_CHARS])
        text = " ".join(_CONTROL.sub(" ", text).split())
        if not text:
            return _EMPTY
        return _fit(third_person(text))
    except Exception:
        return _fit(content) if isinstance(content, str) and content.strip() else _EMPTY


def legacy_recall_terms(interpreted: str) -> str | None:
    """The slot words of an interpretation heuristic-v1 to v5 framed; None if it is not one.

    ``User: ...`` has none (""); ``The user's residence (where they live, home, based;
    moved): "..."`` has "residence where live home based moved".
    """
    m = _LEGACY_EN.match(interpreted) or _LEGACY_JA.match(interpreted)
    if m is None:
        return "" if _LEGACY_PLAIN.match(interpreted) else None
    label = m.group("label").split("'s ")[-1].split("の")[-1]
    words = re.split(r"[\s,;、・()（）]+", f"{label} {m.group('words')}")
    kept = [w for w in words if w and w.lower() not in _LEGACY_FILLER]
    return " ".join(dict.fromkeys(kept))[:MAX_CHARS]


def _fit(text: str) -> str:
    """At most MAX_CHARS characters, cut with an ellipsis."""
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1].rstrip() + "…"
