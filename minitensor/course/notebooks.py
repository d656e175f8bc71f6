"""The course texts (docs/*.md) as Jupyter notebooks, written as nbformat v4 JSON by hand.

Each ```python block becomes a code cell; the text around it (other fences
included, e.g. ```text output) becomes a markdown cell.  No dependency: a notebook
is a small JSON document.

>>> nb = markdown_to_notebook("# Title\\n\\n```python\\nx = 1\\n```\\n")
>>> [c["cell_type"] for c in nb["cells"]]
['markdown', 'code']
"""

from __future__ import annotations

import json
import re
from pathlib import Path

COURSE_PAGES = [
    "autograd.md",
    "gradcheck.md",
    "backprop_by_hand.md",
    "tutorial.md",
    "course.md",
    "vision.md",
]  # the course texts, in order
_PYTHON = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$\n?", re.S | re.M)


def _lines(text: str) -> list:
    """A cell's ``source``: the text as a list of lines that keep their newlines (the file format)."""
    return text.splitlines(keepends=True)


def markdown_to_notebook(text: str) -> dict:
    """An nbformat 4.5 notebook (a dict) from a Markdown page."""
    cells, start = [], 0
    for m in _PYTHON.finditer(text):
        prose = text[start : m.start()].strip("\n")
        if prose.strip():
            cells.append({"cell_type": "markdown", "metadata": {}, "source": _lines(prose)})
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                      "source": _lines(m.group(1).rstrip("\n"))})  # fmt: skip
        start = m.end()
    if text[start:].strip():
        cells.append({"cell_type": "markdown", "metadata": {}, "source": _lines(text[start:].strip("\n"))})
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i}"
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def default_docs() -> Path:
    """The docs/ folder of a source checkout (beside the package)."""
    return Path(__file__).resolve().parents[2] / "docs"


def write_notebooks(out_dir: Path, docs: Path | None = None, pages: list[str] | None = None) -> list[Path]:
    """Write ``<page>.ipynb`` into ``out_dir`` for each course page; returns the paths written."""
    docs = Path(docs) if docs is not None else default_docs()
    names = pages or COURSE_PAGES
    missing = [n for n in names if not (docs / n).is_file()]
    if missing:
        raise FileNotFoundError(f"notebooks: no {missing} in {docs} (pass --docs, the docs/ folder of minitensor)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        notebook = markdown_to_notebook((docs / name).read_text(encoding="utf-8"))
        path = out_dir / (Path(name).stem + ".ipynb")
        path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
