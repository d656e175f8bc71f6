"""docs/performance.md stays one page a user can trust: short, every benchmark command it shows
runs as written, every kernel file it names exists, and every link (to benchmarks/results/, the
dated run logs, and back) leads somewhere.

The code blocks of the page are run by tests/docs/test_docs.py; the numbers are measurements
and are not checked here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "performance.md"
RESULTS = ROOT / "benchmarks" / "results"
MAX_LINES = 300  # a page of current numbers; dated runs go to benchmarks/results/

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_COMMAND = re.compile(r"^python (benchmarks/\w+\.py)((?: --[\w-]+(?: \w+)?)*)", re.M)


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def relative_links(path: Path) -> list:
    """(target path, anchor or None) of each link of a Markdown file that is not a URL."""
    links = []
    for target in _LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        links.append(((path.parent / file).resolve() if file else path, anchor or None))
    return links


def result_files() -> list:
    return sorted(RESULTS.glob("*.md"))


def test_the_page_is_a_page() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_LINES, f"docs/performance.md has {text.count(chr(10))} lines"
    dated_logs = re.findall(r"^\*\*Results, 20\d\d-\d\d-\d\d.*", text, re.M)
    assert not dated_logs, f"dated run logs belong in benchmarks/results/: {dated_logs}"
    assert "../benchmarks/results/README.md" in text


@pytest.mark.parametrize("path", [PAGE, *result_files()], ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve(path: Path) -> None:
    for target, anchor in relative_links(path):
        assert target.exists(), f"{path.name} links to missing {target}"
        if anchor is not None and target.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", target.read_text(encoding="utf-8"), re.M)
            assert anchor in {slug(h) for h in headings}, f"{path.name}: no heading #{anchor} in {target.name}"


def test_every_results_file_is_in_the_index() -> None:
    index = (RESULTS / "README.md").read_text(encoding="utf-8")
    listed = {target.name for target, _ in relative_links(RESULTS / "README.md")}
    missing = [p.name for p in result_files() if p.name != "README.md" and p.name not in listed]
    assert not missing, f"benchmarks/results/README.md does not list {missing}"
    assert "docs/performance.md" in index


def test_benchmark_commands_name_real_scripts_and_options() -> None:
    commands = _COMMAND.findall(PAGE.read_text(encoding="utf-8"))
    assert len(commands) >= 5  # bench_ops, bench_encoder, bench_load, bench_busy_core, bench_startup
    for script, options in commands:
        source = (ROOT / script).read_text(encoding="utf-8")
        for option in re.findall(r"--[\w-]+", options):
            assert f'"{option}"' in source, f"{script} has no option {option}"


def test_kernel_files_in_the_table_exist() -> None:
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("| kernel (`minitensor/kernels/`)", 1)[1].split("\n\n", 1)[0]
    named = {name for row in table.splitlines()[2:] for name in re.findall(r"`(\w+\.py)`", row)}
    assert len(named) >= 20
    present = {p.name for p in (ROOT / "minitensor" / "kernels").rglob("*.py")}
    assert not named - present, f"the kernel table names files that are not in minitensor/kernels/: {named - present}"


def test_slug_matches_github() -> None:
    assert slug("5. The profiler") == "5-the-profiler"
    assert slug("Threads that fit the machine") == "threads-that-fit-the-machine"
    assert slug("1. A picture of the graph: `make_dot`") == "1-a-picture-of-the-graph-make_dot"
