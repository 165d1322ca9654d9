"""The layout keeps the design visible: import rules, no cycles, small modules.

docs/architecture.md describes the layers; this test keeps it true. Imports are read
from the source (every ``import``, at module level and inside functions alike; only
``if TYPE_CHECKING:`` blocks are left out, since they never run).
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import aimem

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "aimem"
MAX_LINES = 600

#: Pure modules: data shapes and decisions, no I/O. They import only each other.
PURE = {
    "aimem.capacity",
    "aimem.context",
    "aimem.saving.messages",
    "aimem.display",
    "aimem.exceptions",
    "aimem.transfer.checks",
    "aimem.ids",
    "aimem.text.keywords",
    "aimem.models",
    "aimem.retrieval.ranking",
    "aimem.scoring",
    "aimem.settings",
    "aimem.text.stemmer",
    "aimem.transfer.export_file",
    "aimem.validation",
    "aimem.vectors",
}
#: Third-party packages pure modules may use: validation and arrays, no I/O.
PURE_LIBRARIES = {"pydantic", "numpy"}
DATABASE_LIBRARIES = {"sqlalchemy", "sqlmodel", "sqlite3", "psycopg", "psycopg2", "asyncpg"}
LLM_LIBRARIES = {"openai", "httpx", "tenacity"}
#: The shells: thin layers over the public API that nothing in the library imports.
SHELLS = ("aimem.cli", "aimem.mcp.server", "aimem.mcp.http", "aimem.mcp.args", "aimem.mcp.errors")
SHELLS += ("aimem.mcp.pages", "aimem.mcp.reads", "aimem.mcp.views", "aimem.mcp.writes")
#: Every public name aimem has had; more may come, none may go.
PUBLIC = {
    "AimemError",
    "AsyncMemoryStore",
    "ConflictError",
    "Embedder",
    "EmbedderMismatchError",
    "EmbeddingError",
    "ExportReport",
    "HeuristicJudge",
    "ImportReport",
    "Interpretation",
    "Judge",
    "JudgeError",
    "LocalEmbedder",
    "Memory",
    "MemoryStore",
    "NotFoundError",
    "OpenAIEmbedder",
    "OpenAIJudge",
    "PruneReport",
    "RelatedMemory",
    "SaveReport",
    "SearchHit",
    "Settings",
    "Stats",
    "StorageError",
    "Usage",
    "ValidationError",
    "__version__",
    "open",
}


@dataclass(frozen=True)
class Import:
    """One import of one module: what it names, where, and whether it runs."""

    module: str  # the importing module
    target: str  # the imported module, absolute
    line: int


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _imports(name: str, path: Path, known: set[str]) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module or ""
            for alias in node.names:
                # "from . import sql" imports a module; "from .x import name" imports x.
                candidate = f"{origin}.{alias.name}"
                yield Import(name, candidate if candidate in known else origin, node.lineno)


MODULES = _modules()
IMPORTS = [i for name, path in MODULES.items() for i in _imports(name, path, set(MODULES))]


def _top(target: str) -> str:
    return target.split(".")[0]


def _is_shell(module: str) -> bool:
    return any(module == s or module.startswith(s + ".") for s in SHELLS)


def test_the_scanner_sees_the_package() -> None:
    assert {"aimem.store", "aimem.storage.base", "aimem.judges.openai"} <= set(MODULES)
    assert any(i.target == "aimem.storage.sql" for i in IMPORTS)


def test_pure_modules_import_only_pure_modules_and_no_io_libraries() -> None:
    bad = [
        i
        for i in IMPORTS
        if i.module in PURE
        and (
            (_top(i.target) == "aimem" and i.target not in PURE | {"aimem"})
            or _top(i.target) in DATABASE_LIBRARIES | LLM_LIBRARIES | {"rich", "mcp"}
        )
    ]
    assert bad == [], bad
    libraries = {
        _top(i.target)
        for i in IMPORTS
        if i.module in PURE
        and _top(i.target) != "aimem"
        and _top(i.target) not in sys.stdlib_module_names
    }
    assert libraries <= PURE_LIBRARIES, libraries


def test_only_storage_touches_a_database() -> None:
    bad = [
        i
        for i in IMPORTS
        if _top(i.target) in DATABASE_LIBRARIES and not i.module.startswith("aimem.storage")
    ]
    assert bad == [], bad


def test_only_the_judge_and_embedder_side_talks_to_an_llm_api() -> None:
    allowed = ("aimem.judges", "aimem.embeddings", "aimem.testing")
    bad = [
        i for i in IMPORTS if _top(i.target) in LLM_LIBRARIES and not i.module.startswith(allowed)
    ]
    assert bad == [], bad


def test_nothing_imports_the_shells_and_the_library_never_imports_testing() -> None:
    into_shells = [i for i in IMPORTS if _is_shell(i.target) and not _is_shell(i.module)]
    assert into_shells == [], into_shells
    into_testing = [
        i for i in IMPORTS if i.target.startswith("aimem.testing") and i.module != "aimem.testing"
    ]
    assert into_testing == [], into_testing


def test_there_is_no_import_cycle_function_local_imports_included() -> None:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for i in IMPORTS:
        if i.target in MODULES and i.target != i.module:
            # A submodule importing its own package's __init__ (for __version__) is not
            # an edge back through everything that __init__ re-exports.
            if i.target == "aimem" and i.module != "aimem":
                continue
            graph[i.module].add(i.target)
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == [], cycles


def test_no_module_is_over_600_lines() -> None:
    sizes = {name: len(p.read_text().splitlines()) for name, p in MODULES.items()}
    assert {n: s for n, s in sizes.items() if s > MAX_LINES} == {}


def _code_strings(source: str) -> Iterator[str]:
    """String literals a module's code uses (docstrings left out: they only talk)."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node.value


def _reaches_bench(source: str) -> bool:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if any(_top(n) in ("bench", "judge_eval") for n in names if n):
                return True
    return any(s == "bench" or "bench/" in s for s in _code_strings(source))


@pytest.mark.parametrize("folder", ["aimem", "notebooks"])
def test_nothing_in_the_library_or_the_notebooks_reaches_into_bench(folder: str) -> None:
    found = []
    for path in (ROOT / folder).rglob("*"):
        if path.suffix == ".py":
            sources = [path.read_text()]
        elif path.suffix == ".ipynb":
            cells = json.loads(path.read_text())["cells"]
            sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        else:
            continue
        if any(_reaches_bench(source) for source in sources):
            found.append(str(path.relative_to(ROOT)))
    assert found == []


def test_public_names_are_kept() -> None:
    assert set(aimem.__all__) >= PUBLIC


def test_docs_architecture_names_every_module() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [
        str(p.relative_to(PACKAGE))
        for p in MODULES.values()
        if p.name != "__init__.py" and p.name not in doc and p.stem not in doc
    ]
    assert missing == [], f"docs/architecture.md does not mention {missing}"


def test_tests_get_their_store_from_the_one_fixture() -> None:
    """Outside SQLite-only files, no test builds a store URL by hand (conftest.store_url)."""
    tests = ROOT / "tests"
    offenders = []
    for path in sorted(tests.rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if "pytestmark = pytest.mark.sqlite_only" in text:
            continue
        if path.name == "test_postgres.py":  # SQLite <-> PostgreSQL round trips, by design
            continue
        if 'f"sqlite:///' in text or '"sqlite:///" +' in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
