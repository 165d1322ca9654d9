"""Facts that change inside long conversations: is the stale turn retired, and the rest kept?

Data: JSON Lines, one conversation per line: ``turns`` (OpenAI-style ``role``/``content``),
``changes`` (``{"old_turn": i, "new_turn": j}``: turn ``j`` changes the fact of user turn
``i``) and ``still_true`` (user turns whose facts hold to the end), indexes into
``turns``. Each conversation gets its own namespace and is stored two ways:

  turns         every user turn saved in order with ``save`` (an agent saving as it goes)
  conversation  the whole conversation with one ``save_conversation`` call

and then, over the memories whose content is the turn's text:

  stale retired    the old turn of a change is archived as superseded
  still-true kept  a still-true turn that was stored is still active
  kept (stored)    how many still-true turns the judge stored at all (chit-chat is dropped)

Usage: python bench/conversation_updates.py DATA.jsonl [--min-score 0.3]
No conversation set ships yet: a synthetic one written to tune on gives tuning figures.
Prints a table on stderr and one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import aimem


def _measure(store: aimem.MemoryStore, chat: dict[str, Any], res: dict[str, list[int]]) -> None:
    turns = chat["turns"]
    by_content = {m.content: m for m in store.list(include_archived=True)}
    for change in chat["changes"]:
        m = by_content.get(turns[change["old_turn"]]["content"])
        res["stale_retired"].append(int(m is not None and m.archive_reason == "superseded"))
    for i in chat["still_true"]:
        m = by_content.get(turns[i]["content"])
        res["still_true_stored"].append(int(m is not None))
        if m is not None:
            res["still_true_kept"].append(int(m.archive_reason != "superseded"))


def run(chats: list[dict[str, Any]], overrides: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'chats.db'}"
        for mode in ("turns", "conversation"):
            res: dict[str, list[int]] = defaultdict(list)
            for n, chat in enumerate(chats):
                kw = {"judge": aimem.HeuristicJudge(), "namespace": f"{mode}{n}", **overrides}
                with aimem.MemoryStore(url, **kw) as store:
                    if mode == "turns":
                        for turn in chat["turns"]:
                            if turn["role"] == "user":
                                store.save(turn["content"])
                    else:
                        store.save_conversation(chat["turns"])
                    _measure(store, chat, res)
            for key, values in res.items():
                out[f"{mode}_{key}"] = round(sum(values) / len(values), 4) if values else None
            out[f"{mode}_n_changes"] = len(res["stale_retired"])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--min-score", type=float, default=0.3)
    args = parser.parse_args(argv)
    chats = [json.loads(x) for x in args.data.read_text("utf-8").splitlines() if x.strip()]
    start = time.perf_counter()
    result = run(chats, {"min_priority_score": args.min_score, "max_memories": 10_000})
    for mode in ("turns", "conversation"):
        print(
            f"{mode:>12}: stale retired {result[f'{mode}_stale_retired']}  "
            f"still-true kept {result[f'{mode}_still_true_kept']}  "
            f"(stored {result[f'{mode}_still_true_stored']}; "
            f"{result[f'{mode}_n_changes']} changes)",
            file=sys.stderr,
        )
    result |= {"data": args.data.name, "conversations": len(chats)}
    result["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
