"""The notebooks run offline in the test suite; the models display as HTML and as rich tables.

Each notebook runs in a real ipykernel started from this interpreter (no kernelspec to
install: the kernel manager below always launches ``sys.executable``), with no OpenAI
settings and HTTP(S) proxies pointing at a closed port, so any attempt to leave the
machine fails instead of passing quietly. Each notebook saves its key figure as a PNG
into ``AIMEM_FIGURE_DIR`` (the test's ``tmp_path``), to be looked at by eye.

What a notebook's text says must be what its data says: every number in a markdown
cell is either printed or displayed by a code cell, or written in an ``assert`` that
ran (``_unchecked_numbers``). The ``notebooks`` extra runs them from a shell too,
with the README's own ``jupyter nbconvert`` command line.
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from _stores import store_url
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from rich.console import Console
from traitlets import default

import aimem
from aimem.render import hits_html, memories_html, show
from aimem.testing import OpenAIStub

ROOT = Path(__file__).parents[1]
NOTEBOOKS = ROOT / "notebooks"
NAMES = ["01_quickstart", "02_capacity_and_forgetting", "03_judge_quality"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# -- Running a notebook --------------------------------------------------------------------


class _ThisPython(KernelSpecManager):
    """Whatever kernel a notebook names, run it on this interpreter (no kernelspec lookup)."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        return KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name=f"Python ({sys.executable})",
            language="python",
            name=kernel_name,
        )


class _VenvKernelManager(AsyncKernelManager):
    @default("kernel_spec_manager")
    def _kernel_spec_manager_default(self) -> KernelSpecManager:
        return _ThisPython()


def _read(name: str) -> Any:
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def _run(notebook: Any, timeout: int = 60) -> Any:
    """Run ``notebook`` top to bottom in a fresh kernel, as Jupyter would; return it."""
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        kernel_manager_class=_VenvKernelManager,  # owned by the client: shut down after
        resources={"metadata": {"path": str(NOTEBOOKS)}},  # the kernel's working directory
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    return notebook


def _outputs(notebook: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            yield index, output


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No way out but loopback; figures go to ``tmp_path`` (conftest unsets OpenAI settings)."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")  # the discard port: nothing listens
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("AIMEM_FIGURE_DIR", str(tmp_path))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # the notebooks' temporary stores
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # debugpy's frozen-modules note
    return tmp_path


def _assert_clean_run(notebook: Any) -> None:
    """No error output and nothing on stderr (warnings from matplotlib or aimem included)."""
    problems = [
        f"cell {i}: {out.get('ename') or out.get('name')}: {out.get('evalue') or out.get('text')}"
        for i, out in _outputs(notebook)
        if out["output_type"] == "error"
        or (out["output_type"] == "stream" and out["name"] == "stderr")
    ]
    assert not problems, "\n".join(problems)


def _assert_png(path: Path) -> None:
    assert path.is_file(), f"{path.name} was not saved"
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 10_000, f"{path.name} is only {len(data)} bytes"
    width, height = int.from_bytes(data[16:20]), int.from_bytes(data[20:24])  # IHDR
    assert width >= 400 and height >= 250, (width, height)


def test_the_notebooks_extra_brings_nbconvert() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    names = {re.split(r"[<>=!~\[;\s]", r, maxsplit=1)[0].lower() for r in extras["notebooks"]}
    assert {"nbconvert", "nbclient", "nbformat", "ipykernel", "matplotlib"} <= names
    assert "aimem[notebooks]" in extras["dev"]


@pytest.mark.skipif(importlib.util.find_spec("nbconvert") is None, reason="needs [notebooks]")
def test_the_readme_nbconvert_command_runs(offline: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [command] = re.findall(r"`([^`]*jupyter nbconvert[^`]*)`", readme)
    argv = shlex.split(command)
    assert Path(argv[0]).name == "jupyter" and argv[1] == "nbconvert"
    argv[0] = str(Path(sys.executable).with_name("jupyter"))  # this venv's, wherever it is
    written = offline / "executed"
    argv[argv.index("--output-dir") + 1] = str(written)  # the test's folder, not /tmp
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR"):  # no user kernelspec or config
        monkeypatch.setenv(name, str(offline / name.lower()))
    result = subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=300, env=dict(os.environ)
    )
    assert result.returncode == 0, result.stderr
    [executed] = written.glob("*.ipynb")
    notebook = nbformat.read(executed, as_version=4)
    assert executed.name == Path(argv[-1]).name == "01_quickstart.ipynb"
    _assert_clean_run(notebook)
    assert all(c.execution_count for c in notebook.cells if c.cell_type == "code")


def test_the_kernel_is_this_interpreter(offline: Path) -> None:
    notebook = new_notebook(cells=[new_code_cell("import sys; print(sys.executable)")])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    [output] = _run(notebook).cells[0].outputs
    assert output["text"].strip() == sys.executable


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebooks_have_no_outputs(name: str) -> None:
    notebook = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, cell["id"]


# -- What the text says, checked against what the code computed ----------------------------

#: A number as prose writes it: ``150``, ``0.3``, ``1,000``; not a part of ``FTS5``,
#: ``v1``, ``gpt-4o`` or ``127.0.0.1``.
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?![\w]|[.,]\d)")
#: Numbers written as words ("twenty memories"); "one" is left out, as in "one colour".
_WORDS = {
    word: value
    for value, word in enumerate(
        "two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split(),
        start=2,
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "hundred": 100}
_WORD = re.compile(rf"\b({'|'.join(_WORDS)})\b", re.IGNORECASE)


def _numbers(text: str) -> list[tuple[str, float]]:
    """Each number in ``text`` (digits or a word), as written and as a value."""
    found = [(m, float(m.replace(",", ""))) for m in _NUMBER.findall(text)]
    return found + [(w, float(_WORDS[w.lower()])) for w in _WORD.findall(text)]


def _claims(markdown: str) -> list[tuple[str, float]]:
    """The numbers a markdown cell states; addresses and list markers are not claims."""
    markdown = re.sub(r"https?://\S+", "", markdown)
    markdown = re.sub(r"^\s*\d+\.\s", "", markdown, flags=re.MULTILINE)
    return _numbers(markdown)


def _evidence(notebook: Any) -> set[float]:
    """The numbers an executed notebook backs: in its text outputs or in its asserts.

    A run stops at the first failing cell, so each assert of a clean run held (those in
    a branch not taken count too: keep claims out of them).
    """
    values: set[float] = set()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            texts = [output.get("text", "")] if output.get("name") == "stdout" else []
            texts += [data[kind] for kind in ("text/plain", "text/markdown") if kind in data]
            values.update(value for text in texts for _, value in _numbers(text))
        flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # a cell may await
        tree = compile(cell.source, "<cell>", "exec", flags=flags)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                values.update(
                    float(c.value)
                    for c in ast.walk(node)
                    if isinstance(c, ast.Constant)
                    and isinstance(c.value, int | float)
                    and not isinstance(c.value, bool)
                )
    return values


def _unchecked_numbers(notebook: Any) -> list[str]:
    """Numbers in markdown cells that no output shows and no assert checks."""
    evidence = _evidence(notebook)
    return [
        f"cell {index}: {written!r}"
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "markdown"
        for written, value in _claims(cell.source)
        if value not in evidence
    ]


def _assert_numbers_checked(notebook: Any) -> None:
    """Every stated number is backed, and the check would catch one that is not."""
    assert _unchecked_numbers(notebook) == [], "markdown numbers its data does not back"
    evidence = _evidence(notebook)
    index, cell = next(
        (i, c)
        for i, c in enumerate(notebook.cells)
        if c.cell_type == "markdown" and _claims(c.source)
    )
    written = _claims(cell.source)[0][0]
    wrong = copy.deepcopy(notebook)
    unbacked = next(str(n) for n in range(7919, 10**9, 7919) if n not in evidence)
    wrong.cells[index].source = cell.source.replace(written, unbacked, 1)
    assert f"cell {index}: {unbacked!r}" in _unchecked_numbers(wrong)


def test_numbers_the_data_does_not_back_are_caught() -> None:
    notebook = new_notebook(
        cells=[
            new_markdown_cell(
                "## Twenty memories\n\n1. saved 20, kept 14 of `max_memories=100` (0.3 by "
                "default), on http://127.0.0.1:8000/v1 with FTS5 and gpt-4o; 1,000 at most."
            ),
            new_code_cell("assert 0.3 == default and kept == 14\nsaved = 20\nsaved"),
            new_code_cell("print(f'{limit:,} at most, max {cap}')"),
        ]
    )
    notebook.cells[1].outputs = [
        {"output_type": "execute_result", "data": {"text/plain": "20"}, "metadata": {}}
    ]
    notebook.cells[2].outputs = [
        {"output_type": "stream", "name": "stdout", "text": "1,000 at most, max 100\n"}
    ]
    assert [w for w, _ in _claims(notebook.cells[0].source)] == [
        "20", "14", "100", "0.3", "1,000", "Twenty"
    ]  # fmt: skip
    assert _unchecked_numbers(notebook) == []
    notebook.cells[0].source = notebook.cells[0].source.replace("kept 14", "kept 15")
    notebook.cells[0].source = notebook.cells[0].source.replace("Twenty", "Nineteen")
    assert _unchecked_numbers(notebook) == ["cell 0: '15'", "cell 0: 'Nineteen'"]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_offline(name: str, offline: Path) -> None:
    started = time.perf_counter()
    notebook = _run(_read(name))
    _assert_clean_run(notebook)
    _assert_numbers_checked(notebook)
    _assert_png(offline / f"{name}.png")
    # Figures and tables are displayed too, not only saved.
    kinds = {kind for _, out in _outputs(notebook) for kind in out.get("data", {})}
    assert "image/png" in kinds
    if name == "03_judge_quality":
        text = "".join(out.get("text", "") for _, out in _outputs(notebook))
        assert "pairwise accuracy" in text
        assert "No OPENAI_API_KEY or OPENAI_BASE_URL set: skipping the LLM judge." in text
    else:
        assert "text/html" in kinds
    assert time.perf_counter() - started < 30


def test_judge_notebook_evaluates_the_llm_judge_when_an_endpoint_is_set(
    offline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An OpenAI-compatible stub on loopback stands in for the model; it scores like the
    # heuristic judge, so the LLM part has something band-shaped to plot.
    heuristic = aimem.HeuristicJudge()

    def scorer(content: str) -> dict[str, float]:
        i = heuristic.score(content)
        return {
            "emotional_impact": i.emotional_impact,
            "user_relevance": i.user_relevance,
            "novelty": i.novelty,
            "utility": i.utility,
        }

    with OpenAIStub(scorer=scorer) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("AIMEM_MODEL", "stub-model")
        notebook = _run(_read("03_judge_quality"))
        calls = stub.chat_calls
    _assert_clean_run(notebook)
    assert calls == 150
    text = "".join(out.get("text", "") for _, out in _outputs(notebook))
    assert "stub-model: 150 judged, 0 failed" in text
    images = [out for _, out in _outputs(notebook) if "image/png" in out.get("data", {})]
    assert len(images) == 2  # the heuristic's figure and the LLM's


# -- HTML and rich display -----------------------------------------------------------------

HOSTILE = '<script>alert("x")</script> & [bold]not markup[/bold] I\'m allergic to penicillin'


@pytest.fixture
def store(tmp_path: Path) -> Iterator[aimem.MemoryStore]:
    with aimem.MemoryStore(
        store_url(tmp_path / "render.db"),
        judge=aimem.HeuristicJudge(),
        max_memories=2,
        namespace="render",
    ) as s:
        yield s


def _rich_text(renderable: object) -> str:
    console = Console(record=True, width=200, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_memory_html_escapes_user_text_and_shows_its_fields(store: aimem.MemoryStore) -> None:
    memory = store.save(HOSTILE, user_context="<b>alex</b>")
    page = memory._repr_html_()
    assert "<script>" not in page and "<b>alex</b>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "&lt;b&gt;alex&lt;/b&gt;" in page
    assert memory.id in page
    assert f"{memory.priority_score:.2f}" in page
    for name in ("emotional impact", "user relevance", "novelty", "utility"):
        assert name in page
    assert f"{memory.utility:.2f}" in page
    assert "heuristic" in page  # who scored it


def test_lists_of_memories_and_hits_escape_user_text(store: aimem.MemoryStore) -> None:
    store.save(HOSTILE)
    memories = store.list()
    hits = store.search("penicillin", explain=True)
    assert hits
    for page in (
        memories_html(memories, title="<i>t</i>"),
        hits_html(hits, title="<i>t</i>"),
        show(memories).html,
        show(hits)._repr_html_(),
    ):
        assert "<script>" not in page and "<i>t</i>" not in page
        assert "&lt;script&gt;" in page
        assert memories[0].id in page  # the full id, on hover
    assert f"{hits[0].score:.4f}" in hits_html(hits)
    assert "relevance" in hits_html(hits)  # the explanation column


def test_each_model_has_html_with_its_key_fields(store: aimem.MemoryStore) -> None:
    report = store.save_many_with_report(
        [
            "I'm allergic to penicillin.",
            "My sister's wedding is on June 3rd.",
            "Never book flights without asking me first.",
            "lol",
        ]
    )
    assert report.archived
    save_page = report._repr_html_()
    assert "Saved (4)" in save_page and f"Archived ({len(report.archived)})" in save_page

    hit = store.search("wedding")[0]
    hit_page = hit._repr_html_()
    assert f"{hit.score:.4f}" in hit_page and hit.memory.id in hit_page

    stats = store.stats()
    stats_page = stats._repr_html_()
    assert "namespace render" in stats_page
    assert f"{stats.count} of {stats.max_memories}" in stats_page
    assert f"{stats.mean_priority:.2f}" in stats_page

    store.pin(store.list()[-1].id)
    store.unpin(store.list()[-1].id)
    preview = store.prune(dry_run=True)
    assert "Nothing to archive." in preview._repr_html_()
    restored = store.restore(report.archived[0].id)
    assert not restored.archived
    pruned = store.prune()
    page = pruned._repr_html_()
    assert "toward the cap" in page and "max_memories 2" in page


def test_prune_report_html_lists_what_was_archived_and_why(tmp_path: Path) -> None:
    url = store_url(tmp_path / "prune.db")
    with aimem.MemoryStore(url, judge=aimem.HeuristicJudge(), auto_prune=False) as s:
        kept = s.save("I'm allergic to penicillin.")
        low = s.save("<script>lol</script>")
        report = s.prune()
    assert [m.id for m in report.archived] == [low.id]
    page = report._repr_html_()
    assert "Archived (1)" in page and low.id in page and kept.id not in page
    assert "&lt;script&gt;lol&lt;/script&gt;" in page and "<script>" not in page
    assert report.archived[0].archive_reason and report.archived[0].archive_reason in page
    text = _rich_text(report)
    assert "Archived (1)" in text and low.id in text


def test_rich_renders_each_model_with_markup_shown_literally(store: aimem.MemoryStore) -> None:
    memory = store.save(HOSTILE)
    text = _rich_text(memory)
    assert memory.id in text and "[bold]not markup[/bold]" in text
    assert f"{memory.priority_score:.2f}" in text

    hit = store.search("penicillin")[0]
    assert f"{hit.relevance:.2f}" in _rich_text(hit)

    stats_text = _rich_text(store.stats())
    assert "namespace render" in stats_text and "mean priority" in stats_text

    report = store.save_many_with_report(["My sister's wedding is on June 3rd.", "lol", "ok"])
    save_text = _rich_text(report)
    assert "Saved (3)" in save_text and "Archived" in save_text

    assert "Nothing to archive." in _rich_text(store.prune(dry_run=True))
    assert "[bold]not markup[/bold]" in _rich_text(show(store.list(), title="kept"))


def test_import_report_displays(store: aimem.MemoryStore, tmp_path: Path) -> None:
    store.save("I'm allergic to penicillin.")
    path = tmp_path / "export.jsonl"
    store.export_to(path)
    with aimem.MemoryStore(
        store_url(tmp_path / "other.db"), judge=aimem.HeuristicJudge(), namespace="render"
    ) as other:
        report = other.import_from(path, dry_run=True)
    assert report.ok
    assert "Would import 1 memories" in report._repr_html_()
    assert "Would import 1 memories" in _rich_text(report)


def test_show_handles_empty_lists_and_refuses_other_things() -> None:
    assert "none" in show([], title="<hits>").html
    assert "&lt;hits&gt;" in show([], title="<hits>").html
    with pytest.raises(TypeError, match="show\\(\\) takes"):
        show([1, 2])
