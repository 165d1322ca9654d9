"""Honest edits: does an update or a compress keep the priority the text deserves?

Before issue 13, ``update()`` and ``compress()`` judged the new text against the very
memories it replaced, so novelty collapsed: a one-word edit lowered a memory's priority
and a compressed set lost importance. Uses only API that existed before, so the same
script measures an older checkout (``PYTHONPATH=that/checkout python bench/honest_edits.py``).

Prints one JSON line: for each edit, the priority of the text saved fresh into an empty
store, before the edit and after it; for compress, the mean priority before and after.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path

import aimem

EDITS = [
    ("I'm allergic to penicillin.", "I'm severely allergic to penicillin."),
    ("My daughter Emma starts school in September.", "My daughter Emma starts school in August."),
    ("I take 20 mg of atorvastatin every evening.", "I take 40 mg of atorvastatin every evening."),
    ("Never schedule meetings before 10am.", "Never schedule meetings before 9am."),
]
CONTEXT = ["I work as a nurse at the city hospital.", "My cat is called Miso.", "I live in Leeds."]
GROUPS = [
    ["I'm allergic to penicillin.", "Penicillin gave me hives as a child."],
    ["My daughter Emma is six.", "Emma starts school in September."],
    ["I run most mornings.", "I'm training for a half marathon in May."],
]
MERGED = [
    "I'm allergic to penicillin (hives since childhood).",
    "My daughter Emma is six and starts school in September.",
    "I run most mornings and I'm training for a half marathon in May.",
]


def main() -> None:
    judge = aimem.HeuristicJudge()
    out: dict[str, object] = {"judge": judge.model, "version": judge.version}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, (before, after) in enumerate(EDITS):
            url = f"sqlite:///{Path(tmp) / f'e{n}.db'}"
            with aimem.MemoryStore(url, judge=judge, min_priority_score=0.0) as store:
                fresh = store.save(after).priority_score
                store.delete(store.list()[0].id)
                for text in CONTEXT:
                    store.save(text)
                memory = store.save(before)
                edited = store.update(memory.id, after)
                rows.append(
                    {
                        "edit": after,
                        "fresh": fresh,
                        "before": memory.priority_score,
                        "after": edited.priority_score,
                        "archived_by_its_update": edited.archived_at is not None,
                    }
                )
        url = f"sqlite:///{Path(tmp) / 'c.db'}"
        with aimem.MemoryStore(url, judge=judge, min_priority_score=0.0) as store:
            for group in GROUPS:
                for text in group:
                    store.save(text)
            before = statistics.mean(m.priority_score or 0.0 for m in store.list())
            merged = store.compress(MERGED)
            after = statistics.mean(m.priority_score or 0.0 for m in merged)
    out["edits"] = rows
    out["edit_drop_mean"] = round(statistics.mean(r["fresh"] - r["after"] for r in rows), 4)
    out["compress_mean_before"] = round(before, 4)
    out["compress_mean_after"] = round(after, 4)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
