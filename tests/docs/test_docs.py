"""Every ```python block in README.md and docs/*.md runs, so the docs cannot go stale.

The blocks of one file run in order in one namespace (later blocks may use names
from earlier ones), in a fresh temporary directory.  A traceback points at the
Markdown file and its line.  A block that shows a failure must catch it itself
(``try: ... except GradcheckError: ...``).  To show code that must not run, fence
it as ```text.  Any new file in docs/ is picked up automatically.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# A fence at the start of a line, its info string, its body, and the closing fence.
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(text: str) -> list:
    """(first line number, source) of each ```python block of a Markdown text."""
    blocks = []
    for m in _FENCE.finditer(text):
        if m.group(1).strip() == "python":
            blocks.append((text.count("\n", 0, m.start(2)) + 1, m.group(2)))
    return blocks


def run_blocks(path: Path) -> int:
    """Execute the python blocks of ``path`` in one namespace; return how many ran."""
    namespace = {"__name__": f"doc_{path.stem}"}
    blocks = python_blocks(path.read_text(encoding="utf-8"))
    for line, source in blocks:
        # Pad with blank lines so the line numbers in a traceback are the file's.
        code = compile("\n" * (line - 1) + source, str(path), "exec")
        exec(code, namespace)
    return len(blocks)


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    run_blocks(path)


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_python_fence_is_skipped(path: Path) -> None:
    """```py, ```python3 or ```Python would silently not run: only ```python is allowed."""
    infos = [m.group(1).strip() for m in _FENCE.finditer(path.read_text(encoding="utf-8"))]
    wrong = [info for info in infos if info.lower().startswith("py") and info != "python"]
    assert not wrong, f"{path.name}: use ```python (run by this test) or ```text, not {wrong}"


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_block_is_empty(path: Path) -> None:
    """An empty block shows nothing; after a ```python block it claims the code prints nothing, and
    the check of the output blocks (tests/hardening/test_errors_doc.py) would pass on empty == empty."""
    text = path.read_text(encoding="utf-8")
    empty = [text.count("\n", 0, m.start()) + 1 for m in _FENCE.finditer(text) if not m.group(2).strip()]
    assert not empty, f"{path.name}: empty code block(s) at line(s) {empty}"


@pytest.mark.parametrize("name", ["README.md", "docs/autograd.md", "docs/gradcheck.md"])
def test_core_docs_have_code(name: str) -> None:
    assert len(python_blocks((ROOT / name).read_text(encoding="utf-8"))) >= 1


def test_blocks_share_a_namespace_and_report_doc_lines(tmp_path: Path) -> None:
    doc = tmp_path / "demo.md"
    doc.write_text("Intro\n\n```python\nx = 2\n```\n\ntext\n\n```python\ny = x + 1\nassert y == 4\n```\n")
    assert [line for line, _ in python_blocks(doc.read_text())] == [4, 10]
    with pytest.raises(AssertionError) as info:
        run_blocks(doc)
    assert info.traceback[-1].lineno + 1 == 11  # pytest's line numbers are 0-based
    assert str(info.traceback[-1].path) == str(doc)
