"""The grader's reports: readable text, and Gradescope's ``results.json`` (only fields Gradescope defines)::

    {"score": 37, "output": "Total: 37/125 points", "extra_data": {"max_score": 125},
     "tests": [{"name": "elementwise: pow, exp, tanh, relu", "score": 5, "max_score": 5,
                "status": "passed", "output": "passed",
                "extra_data": {"cause": null, "not_graded": false}}, ...]}

(``cause``: the diagnosis label of a failed gradient check, see ``diagnose``;
``not_graded``: the grader itself failed on that check.)  Whatever a student printed is
shown below its check, each line behind ``| ``, so it can never pass for a line of the
report.  ``pending`` lists every check as not graded yet: the CLI writes it first and
rewrites the file after each check, so the file is always complete and valid.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .grader import Result
from .tasks import BY_NAME


def pending(names: list[str]) -> list[Result]:
    """Every check of the tasks ``names`` as not graded (yet): what the report says if grading stops early."""
    return [Result(t, c.name, 0, c.points, "not graded: grading stopped before this check", error=True)
            for t in names for c in BY_NAME[t].checks]  # fmt: skip


def _printed(r: Result, indent: str) -> list[str]:
    if not r.printed:
        return []
    return [f"{indent}your code printed:", *(f"{indent}| {line}" for line in r.printed.rstrip("\n").split("\n"))]


def text_report(results: list[Result]) -> str:
    """A readable report: one line per check, the failures explained, the totals per task."""
    lines, task = [], None
    for r in results:
        if r.task != task:
            task = r.task
            got, full = (sum(x.score for x in results if x.task == task), sum(x.max_score for x in results
                         if x.task == task))  # fmt: skip
            lines.append(f"\n{task}  {got}/{full} points  ({BY_NAME[task].title})")
        mark = "ERROR" if r.error else "PASS" if r.score == r.max_score else "FAIL"
        lines.append(f"  [{mark}] {r.check}  {r.score}/{r.max_score}")
        if r.score != r.max_score:
            lines.append(f"         {r.output}")
        lines += _printed(r, "         ")
    total, full = sum(r.score for r in results), sum(r.max_score for r in results)
    errors = sum(r.error for r in results)
    if errors:
        lines.append(f"\nGrading failed on {errors} check(s): they are marked ERROR and were not graded.")
    lines.append(f"\nTotal: {total}/{full} points")
    return "\n".join(lines).lstrip("\n")


def json_report(results: list[Result]) -> dict:
    """Gradescope's results.json: ``score``, ``output``, ``tests``; the maximum and causes in ``extra_data``."""
    tests = [
        {"name": f"{r.task}: {r.check}", "score": r.score, "max_score": r.max_score,
         "status": "passed" if r.score == r.max_score else "failed",
         "output": "\n".join([r.output, *_printed(r, "")]), "extra_data": {"cause": r.cause, "not_graded": r.error}}
        for r in results
    ]  # fmt: skip
    score, full = sum(r.score for r in results), sum(r.max_score for r in results)
    errors = sum(r.error for r in results)
    return {
        "score": score,
        "output": f"Total: {score}/{full} points" + (f" (grading failed on {errors} check(s))" if errors else ""),
        "extra_data": {"max_score": full},
        "tests": tests,
    }


def write_json(results: list[Result], path: Path) -> None:
    """Write ``json_report`` to ``path`` at once (a new file renamed over the old: never half written)."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as f:
        f.write(json.dumps(json_report(results), indent=2) + "\n")
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)
