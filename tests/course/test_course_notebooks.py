"""The course texts as notebooks: valid nbformat v4 JSON, one code cell per ```python block, and they run.

They run in a Jupyter kernel through nbclient and ipykernel (the test extra installs
them); where those are missing, the code cells run in order in one namespace instead
(what a kernel does, minus the kernel), and the test says so in its name.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from minitensor.course.cli import main
from minitensor.course.notebooks import COURSE_PAGES, default_docs, markdown_to_notebook

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _has_kernel() -> bool:
    try:
        import ipykernel  # noqa: F401
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("notebooks")
    assert main(["notebooks", str(out)]) == 0
    return {name: json.loads((out / (Path(name).stem + ".ipynb")).read_text()) for name in COURSE_PAGES}


def test_the_docs_are_found_beside_the_package() -> None:
    assert default_docs() == DOCS


@pytest.mark.parametrize("name", COURSE_PAGES)
def test_notebook_is_nbformat_v4_with_the_pages_code(notebooks, name: str) -> None:
    nb = notebooks[name]
    assert nb["nbformat"] == 4 and nb["metadata"]["kernelspec"]["name"] == "python3"
    text = (DOCS / name).read_text()
    blocks = re.findall(r"^```python[ \t]*\n(.*?)^```", text, re.S | re.M)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert ["".join(c["source"]) for c in code] == [b.rstrip("\n") for b in blocks]
    for cell in nb["cells"]:
        assert {"id", "cell_type", "metadata", "source"} <= set(cell)
        assert cell["cell_type"] != "code" or (cell["outputs"] == [] and cell["execution_count"] is None)
    prose = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert text.splitlines()[0] in prose  # the title, and the ```text blocks, stay as Markdown
    if _has_kernel():
        import nbformat

        nbformat.validate(nbformat.reads(json.dumps(nb), as_version=4))


def test_text_only_and_trailing_prose() -> None:
    nb = markdown_to_notebook("# T\n\n```python\nx = 1\n```\n\nafter\n")
    assert [("".join(c["source"]), c["cell_type"]) for c in nb["cells"]] == [
        ("# T", "markdown"), ("x = 1", "code"), ("after", "markdown")]  # fmt: skip


@pytest.mark.parametrize("name", COURSE_PAGES)
def test_notebook_executes(notebooks, name: str, tmp_path: Path, monkeypatch) -> None:
    nb = notebooks[name]
    monkeypatch.chdir(tmp_path)
    if _has_kernel():
        import nbclient
        import nbformat

        env_path = os.pathsep.join([str(DOCS.parent), os.environ.get("PYTHONPATH", "")])
        monkeypatch.setenv("PYTHONPATH", env_path)  # the kernel imports this checkout's minitensor
        executed = nbformat.reads(json.dumps(nb), as_version=4)  # (as a file is read: sources joined)
        nbclient.NotebookClient(executed, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()  # fmt: skip
        assert all(c.get("execution_count") for c in executed.cells if c.cell_type == "code")
    else:  # no Jupyter kernel here: the code cells in order, in one namespace
        run_cells(nb, name)


def run_cells(nb: dict, name: str) -> dict:
    """What a kernel does with a notebook, minus the kernel: each code cell in order, one namespace."""
    namespace = {"__name__": f"notebook_{Path(name).stem}"}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"{name} cell {cell['id']}", "exec"), namespace)
    return namespace


def test_cells_run_in_order_in_one_namespace(notebooks, tmp_path: Path, monkeypatch) -> None:
    """The fallback used without a kernel; course.md's later cells use the earlier cells' names."""
    monkeypatch.chdir(tmp_path)
    namespace = run_cells(notebooks["course.md"], "course.md")
    assert namespace["report"]["score"] == 6
