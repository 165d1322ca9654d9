"""Import paths of earlier releases resolve to the modules that hold their code now.

The layout changed (architecture step 2: packages for ideas), but ``import aimem.memory``
or ``from aimem.mcp_server import build_server`` in a user's code keeps working: each old
name is the new module itself (same object), so attributes read and set through it are
the real ones. No warning is raised; README lists the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

#: Former module -> the module holding its code now.
MOVED = {
    "aimem.aigpt": "aimem.transfer.aigpt",
    "aimem.assembly": "aimem.store",
    "aimem.conversation": "aimem.saving.messages",
    "aimem.conversation_judging": "aimem.saving.conversations",
    "aimem.evaluation": "aimem.judges.evaluation",
    "aimem.export_checks": "aimem.transfer.checks",
    "aimem.judges.amendments": "aimem.judges.replies",
    "aimem.judges.batch": "aimem.judges.requests",
    "aimem.judges.capabilities": "aimem.judges.transport",
    "aimem.judges.evidence": "aimem.judges.replies",
    "aimem.judges.extract": "aimem.judges.facts",
    "aimem.judges.messages": "aimem.judges.requests",
    "aimem.judges.output": "aimem.judges.replies",
    "aimem.judges.request_plan": "aimem.judges.requests",
    "aimem.judging": "aimem.saving.contents",
    "aimem.keywords": "aimem.text.keywords",
    "aimem.mcp_args": "aimem.mcp.args",
    "aimem.mcp_errors": "aimem.mcp.errors",
    "aimem.mcp_http": "aimem.mcp.http",
    "aimem.mcp_pages": "aimem.mcp.pages",
    "aimem.mcp_reads": "aimem.mcp.reads",
    "aimem.mcp_server": "aimem.mcp.server",
    "aimem.mcp_views": "aimem.mcp.views",
    "aimem.mcp_writes": "aimem.mcp.writes",
    "aimem.memory": "aimem.store",
    "aimem.portability": "aimem.transfer.portability",
    "aimem.ranking": "aimem.retrieval.ranking",
    "aimem.relevance": "aimem.retrieval.relevance",
    "aimem.restatement": "aimem.text.restatement",
    "aimem.siblings": "aimem.retrieval.siblings",
    "aimem.stemmer": "aimem.text.stemmer",
    "aimem.sync": "aimem.sync_store",
    "aimem.third_person": "aimem.text.third_person",
}


class OldPathFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a former module name and loads the module that replaced it."""

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(
        self,
        fullname: str,
        path: object = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec loaded by this finder for a former name; None for any other."""
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The module that holds the code now (imported if it was not yet)."""
        module = importlib.import_module(MOVED[spec.name])
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run; the import system stamped the former name's spec: undo that."""
        stamped = module.__spec__
        if stamped is not None and stamped.name in self._specs:
            module.__spec__ = self._specs.pop(stamped.name)


def install() -> None:
    """Put the finder on ``sys.meta_path`` once per process."""
    if not any(isinstance(f, OldPathFinder) for f in sys.meta_path):
        sys.meta_path.append(OldPathFinder())
