"""docs/errors.md shows real messages: each ```text block that follows a ```python block
is exactly what that block prints.

tests/docs/test_docs.py already runs every block; this test also compares the output.
After changing a message on purpose, regenerate the page's output blocks with
``python tests/hardening/test_errors_doc.py --update``.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "errors.md"

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)


def pairs(text: str) -> list:
    """(python source, shown output, span of the output's body) for each ```python block
    followed, after blank lines only, by a ```text block."""
    fences = list(_FENCE.finditer(text))
    found = []
    for code, shown in zip(fences, fences[1:]):
        between = text[code.end() : shown.start()]
        if code.group(1).strip() == "python" and shown.group(1).strip() == "text" and not between.strip():
            found.append((code.group(2), shown.group(2), shown.span(2)))
    return found


def run_page(text: str) -> dict:
    """Run every python block in order, in one namespace; return {block source: what it printed}."""
    namespace = {"__name__": "doc_errors"}
    printed = {}
    for match in _FENCE.finditer(text):
        if match.group(1).strip() != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(match.group(2), str(DOC), "exec"), namespace)
        printed[match.group(2)] = out.getvalue()
    return printed


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple:
    text = DOC.read_text(encoding="utf-8")
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("errors_doc"))
    try:
        return text, run_page(text)
    finally:
        os.chdir(cwd)


def test_the_page_shows_its_output_after_most_blocks(page) -> None:
    text, _ = page
    assert len(pairs(text)) >= 8


@pytest.mark.parametrize("index", range(len(pairs(DOC.read_text(encoding="utf-8")))))
def test_each_output_block_is_what_its_code_prints(page, index: int) -> None:
    text, printed = page
    source, shown, _ = pairs(text)[index]
    assert printed[source].rstrip() == shown.rstrip(), f"docs/errors.md output block {index} is stale"


def update() -> None:
    """Rewrite each output block of docs/errors.md with what its code prints now."""
    text = DOC.read_text(encoding="utf-8")
    printed = run_page(text)
    for source, _, (start, end) in reversed(pairs(text)):
        text = text[:start] + printed[source] + text[end:]
    DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__" and "--update" in sys.argv:
    update()
