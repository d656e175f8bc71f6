"""Grading a workbook offline: per-check points, a readable report, a JSON report.

Each task is graded on its own: the student's file for that task plugs into the
reference workbook (so a missing task elsewhere costs nothing here), except the
milestone, which trains on the student's whole workbook.  A check scores its points
when it raises nothing; ``NotImplementedError`` means "not written yet".

The JSON report is Gradescope's ``results.json`` (only fields Gradescope defines)::

    {"score": 37, "output": "Total: 37/125 points", "extra_data": {"max_score": 125},
     "tests": [{"name": "elementwise: pow, exp, tanh, relu", "score": 5, "max_score": 5,
                "status": "passed", "output": "passed", "extra_data": {"cause": null}}, ...]}

(``cause``: the diagnosis label of a failed gradient check, see ``diagnose``.)
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, SimpleNamespace

import numpy as np

from .tasks import BY_NAME, TASKS
from .tasks._base import Check, CheckFailure, Task
from .workbook import load_directory, mixed


@dataclass
class Result:
    """The outcome of one check."""

    task: str
    check: str
    score: int
    max_score: int
    output: str
    cause: str | None = None


def run_check(task: Task, check: Check, wb: SimpleNamespace) -> Result:
    """Run one check on workbook ``wb``; never raises."""
    cause = None
    try:
        with np.errstate(all="ignore"):
            check.run(wb)
        return Result(task.name, check.name, check.points, check.points, "passed")
    except NotImplementedError as error:
        output = f"not implemented yet ({error})"
    except CheckFailure as error:
        output, cause = str(error), error.cause
    except Exception as error:  # the student's code raised: show where, in their file
        student_file = getattr(vars(wb).get(task.name), "__file__", None)
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == student_file]
        where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
        output = f"{type(error).__name__}: {error}{where}"
    return Result(task.name, check.name, 0, check.points, output, cause)


def grade_module(task: Task, module: ModuleType | str, own: SimpleNamespace | None = None) -> list[Result]:
    """Every check of ``task`` with ``module`` (or an error message: every check fails with it)."""
    if isinstance(module, str):
        return [Result(task.name, c.name, 0, c.points, module) for c in task.checks]
    wb = mixed(task.name, module, own)
    return [run_check(task, check, wb) for check in task.checks]


def grade(directory: Path, names: list[str] | None = None) -> list[Result]:
    """Grade the tasks ``names`` (default: all) of the workbook in ``directory``."""
    unknown = [n for n in names or [] if n not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown task(s) {unknown}; the tasks are {[t.name for t in TASKS]}")
    own = load_directory(directory)
    tasks = [BY_NAME[n] for n in names] if names else TASKS
    return [r for task in tasks for r in grade_module(task, getattr(own, task.name), own)]


def text_report(results: list[Result]) -> str:
    """A readable report: one line per check, the failures explained, the totals per task."""
    lines, task = [], None
    for r in results:
        if r.task != task:
            task = r.task
            got, full = (sum(x.score for x in results if x.task == task), sum(x.max_score for x in results
                         if x.task == task))  # fmt: skip
            lines.append(f"\n{task}  {got}/{full} points  ({BY_NAME[task].title})")
        mark = "PASS" if r.score == r.max_score else "FAIL"
        lines.append(f"  [{mark}] {r.check}  {r.score}/{r.max_score}")
        if r.score != r.max_score:
            lines.append(f"         {r.output}")
    total, full = sum(r.score for r in results), sum(r.max_score for r in results)
    lines.append(f"\nTotal: {total}/{full} points")
    return "\n".join(lines).lstrip("\n")


def json_report(results: list[Result]) -> dict:
    """Gradescope's results.json: ``score``, ``output``, ``tests``; the maximum and causes in ``extra_data``."""
    tests = [
        {"name": f"{r.task}: {r.check}", "score": r.score, "max_score": r.max_score,
         "status": "passed" if r.score == r.max_score else "failed", "output": r.output,
         "extra_data": {"cause": r.cause}}
        for r in results
    ]  # fmt: skip
    score, full = sum(r.score for r in results), sum(r.max_score for r in results)
    return {
        "score": score,
        "output": f"Total: {score}/{full} points",
        "extra_data": {"max_score": full},
        "tests": tests,
    }


def write_json(results: list[Result], path: Path) -> None:
    Path(path).write_text(json.dumps(json_report(results), indent=2) + "\n", encoding="utf-8")
