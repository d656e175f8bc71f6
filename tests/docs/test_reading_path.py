"""docs/reading.md: the teaching core in the order to read it, at most 2,500 lines, each file
opening with a docstring."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reading.md"


def reading_path() -> list:
    """The files of the page's table, in order."""
    table = [line for line in PAGE.read_text().splitlines() if re.match(r"\| \d+ \|", line)]
    return [ROOT / path for line in table for path in re.findall(r"\(\.\./(minitensor/[\w/]+\.py)\)", line)]


def test_the_reading_path_lists_the_core_in_order() -> None:
    names = [str(p.relative_to(ROOT)) for p in reading_path()]
    core = ["minitensor/tensor/tensor.py", "minitensor/autograd/function.py", "minitensor/autograd/engine.py"]
    assert names[:3] == core
    assert names[-1] == "minitensor/nn/transformer_encoder.py" and "minitensor/ops/attention.py" in names
    assert all(p.exists() for p in reading_path())


def test_the_reading_path_is_at_most_2500_lines() -> None:
    total = sum(len(p.read_text().splitlines()) for p in reading_path())
    assert total <= 2500, f"the reading path has {total} lines"


def test_each_file_opens_with_a_docstring_of_what_it_teaches() -> None:
    for path in reading_path():
        docstring = ast.get_docstring(ast.parse(path.read_text()))
        assert docstring and len(docstring.splitlines()) >= 3, path
