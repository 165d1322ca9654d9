"""The layout keeps the design visible: import rules, no cycles, packages for ideas.

docs/architecture.md describes the layers; this test keeps it true. Imports are read
from the source: every ``import``, at module level and inside functions alike. The
layering rules look at imports that run; the no-cycle rule counts ``if TYPE_CHECKING:``
imports too (a circle a type checker needs is a circle all the same).
"""

from __future__ import annotations

import ast
import json
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import aimem

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "aimem"
#: Past this, a module is worth a second look (a warning, not a failure): split by idea,
#: never to meet a number. httpx keeps Client and AsyncClient in one 2,000-line module.
LONG_MODULE = 1000
#: Modules directly in aimem/ (``__init__`` not counted); the rest live in packages.
MAX_TOP_LEVEL = 20

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
    "aimem.transfer.lines",
    "aimem.validation",
    "aimem.vectors",
}
#: Third-party packages pure modules may use: validation and arrays, no I/O.
PURE_LIBRARIES = {"pydantic", "numpy"}
DATABASE_LIBRARIES = {"sqlalchemy", "sqlmodel", "sqlite3", "psycopg", "psycopg2", "asyncpg"}
LLM_LIBRARIES = {"openai", "httpx", "tenacity"}
#: The shells: thin layers over the public API that nothing in the library imports.
SHELLS = ("aimem.cli", "aimem.mcp")
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
    runs: bool = True  # False inside ``if TYPE_CHECKING:``


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
        runs = getattr(node, "lineno", None) not in skip
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, node.lineno, runs)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module or ""
            for alias in node.names:
                # "from . import sql" imports a module; "from .x import name" imports x.
                candidate = f"{origin}.{alias.name}"
                yield Import(name, candidate if candidate in known else origin, node.lineno, runs)


MODULES = _modules()
ALL_IMPORTS = [i for name, path in MODULES.items() for i in _imports(name, path, set(MODULES))]
#: The imports that run (the layering rules are about what a process loads).
IMPORTS = [i for i in ALL_IMPORTS if i.runs]


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


def test_there_is_no_import_cycle_type_checking_and_function_local_imports_included() -> None:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for i in ALL_IMPORTS:
        if i.target in MODULES and i.target != i.module:
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


def test_a_module_over_1000_lines_gets_a_warning() -> None:
    sizes = {name: len(p.read_text().splitlines()) for name, p in MODULES.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # shown in the summary, never an error
        for name, size in sorted(sizes.items()):
            if size > LONG_MODULE:
                warnings.warn(f"{name} has {size} lines: does it hold one idea?", stacklevel=1)


def test_at_most_20_modules_sit_directly_in_aimem() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_LEVEL, top


def test_the_mcp_server_is_a_package_like_the_cli() -> None:
    assert list(PACKAGE.glob("mcp_*.py")) == []
    assert (PACKAGE / "mcp" / "__init__.py").is_file()
    assert (PACKAGE / "cli" / "__init__.py").is_file()


def test_the_store_is_one_class_holding_its_parts() -> None:
    """No aimem base class: judging and transfers are collaborators the store holds."""
    from aimem.store import AsyncMemoryStore

    bases = [c for c in AsyncMemoryStore.__mro__[1:] if c.__module__.startswith("aimem")]
    assert bases == []
    assert aimem.AsyncMemoryStore is AsyncMemoryStore


def test_retrieval_never_imports_a_judges_internals() -> None:
    """Retrieval reads texts through ``judges.base.TextReading``, whatever the judge."""
    bad = [
        i
        for i in ALL_IMPORTS
        if i.module.startswith("aimem.retrieval")
        and i.target.startswith("aimem.judges")
        and i.target != "aimem.judges.base"
    ]
    assert bad == [], bad


def test_modules_are_imported_under_names_that_say_what_they_are() -> None:
    """No ``import slots as sv``: an alias of a module is its name (numpy's np aside)."""
    short = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    module = alias.name.split(".")[-1]
                    target = f"{getattr(node, 'module', '') or ''}.{alias.name}".strip(".")
                    is_module = (
                        target in MODULES
                        or alias.name in MODULES
                        or module in {n.split(".")[-1] for n in MODULES}
                    )
                    if (
                        alias.asname
                        and is_module
                        and alias.asname != module
                        and len(alias.asname) <= 5
                        and alias.asname not in {"np", "npt"}
                    ):
                        short.append(f"{name}: {alias.name} as {alias.asname}")
    assert short == [], short


@pytest.mark.parametrize("old", sorted(__import__("aimem.old_paths").old_paths.MOVED))
def test_an_old_module_path_is_the_module_that_holds_its_code_now(old: str) -> None:
    import importlib

    from aimem.old_paths import MOVED

    assert importlib.import_module(old) is importlib.import_module(MOVED[old])


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
