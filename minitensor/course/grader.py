"""Grading a workbook: per-check points, from the student's code run where it cannot touch the score.

This process never imports a student's file (sandbox.py says how they run instead).
Each task is graded on its own: its checks talk to one child process that loads the
student's file for that task among the reference solutions (so a missing task elsewhere
costs nothing here), except the milestone, whose child loads the whole workbook.  A
check runs here: it makes its inputs, gets the student's results through ``Student``,
compares them with minitensor's own and scores its points when nothing fails.

Whatever the student's code does can only fail its own checks:

- it raises: the check fails with the exception and the line of the student's file
  (``NotImplementedError`` reads "not implemented yet");
- it runs past the check's time limit: its process is killed and the check fails,
  saying where the code was; past the memory limit, it gets a MemoryError, the same;
- it ends its process, or sends anything but the plain data asked for: the check
  fails, and the next check gets a fresh process.

What it prints is kept, capped, with the check's result.  Only a failure of the grader
itself (its helper process cannot start, a bug) marks a check ``error``: not graded.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .sandbox import GiB, GradingError, LimitExceeded, Limits, Sandbox, StudentProblem, StudentRaised
from .tasks import BY_NAME, TASKS
from .tasks._base import Check, CheckFailure, Task
from .tasks._helpers import malformed
from .workbook import read_directory


@dataclass
class Result:
    """The outcome of one check (``error``: not graded, the grader failed; ``printed``: the student's output)."""

    task: str
    check: str
    score: int
    max_score: int
    output: str
    cause: str | None = None
    printed: str = ""
    error: bool = False


class LoadFailure(StudentProblem):
    """The student's file for the task is missing or could not be loaded."""


class _Session:
    """The child processes grading one task: started when a check first needs one (again after one died)."""

    def __init__(self, sandbox: Sandbox, task: Task, sources: dict, limits: Limits) -> None:
        self.sandbox, self.task, self.sources, self.limits = sandbox, task, sources, limits
        self.children: dict = {}  # whole workbook? -> ChildProcess
        self.problems: dict = {}  # whole workbook? -> {task: why its file is not loaded}
        self.used: list = []  # the children the current check used (for their output)

    def child(self, whole: bool, deadline: float):
        mine = self.task.name
        if not whole and isinstance(self.sources[mine], str):
            raise LoadFailure(self.sources[mine])
        if not whole and mine in self.problems.get(False, {}):
            raise LoadFailure(self.problems[False][mine])
        child = self.children.get(whole)
        if child is None or not child.alive:
            files = {n: s for n, s in self.sources.items() if not isinstance(s, str) and (whole or n == mine)}
            child = self.children[whole] = self.sandbox.fork(self.limits.memory)
            self.used.append(child)
            try:
                problems = child.hello({"task": mine, "sources": files}, deadline)
            except StudentProblem as problem:
                what = "your workbook" if whole else f"{mine}.py"
                problems = {mine: f"{what} could not be loaded: {_text(problem, self.task, self.limits)}"}
            missing = {n: s for n, s in self.sources.items() if isinstance(s, str) and (whole or n == mine)}
            self.problems[whole] = {n: m for n, m in {**missing, **problems}.items() if n in BY_NAME}
            if not whole and mine in self.problems[whole]:
                raise LoadFailure(self.problems[whole][mine])
        if child not in self.used:
            self.used.append(child)
        return child

    def printed(self) -> str:
        """What the student's code printed during the check; the children that died are closed."""
        text = "".join(child.printed() for child in self.used)
        for child in self.used:
            if not child.alive:
                child.close()
        self.used = []
        return text

    def close(self) -> None:
        for child in self.children.values():
            child.close()


class Student:
    """A check's view of the student's code: run in a child process, called with plain data.

    ``call("softmax.softmax_forward", x, -1)`` returns the result as an array;
    ``probe(name, **data)`` runs a probe (probes.py) and returns its plain data;
    ``problems()`` lists the files of the workbook that are missing or did not load.
    The time the student's code takes (loading it included) counts against the check's
    time limit, ``seconds``; the grader's own work does not.  Past it: ``LimitExceeded``.
    """

    def __init__(self, session: _Session, whole: bool, seconds: float) -> None:
        self.task, self._session, self._whole, self._left = session.task, session, whole, seconds

    def probe(self, name: str, **data):
        start = time.monotonic()
        try:
            return self._session.child(self._whole, start + self._left).ask(name, data, start + self._left)
        finally:
            self._left -= time.monotonic() - start

    def call(self, function: str, *args, pick: int | None = None) -> np.ndarray:
        value = self.probe("call", function=function, args=list(args), pick=pick)
        if not isinstance(value, np.ndarray):
            raise malformed(f"{function}: not an array")
        return value

    def problems(self) -> list:
        start = time.monotonic()
        try:
            self._session.child(self._whole, start + self._left)
        finally:
            self._left -= time.monotonic() - start
        found = self._session.problems[self._whole]
        return [found[t.name] for t in TASKS if t.name in found]


def _text(problem: StudentProblem, task: Task, limits: Limits) -> str:
    """The report's words for what the student's code did."""
    if isinstance(problem, StudentRaised) and problem.kind == "NotImplementedError":
        return f"not implemented yet ({problem.message})"
    if isinstance(problem, StudentRaised) and problem.kind == "MemoryError":
        limit = "none set" if limits.memory is None else f"{limits.memory / GiB:g} GiB"
        return f"out of memory (the limit: {limit}): {problem}"
    if isinstance(problem, LimitExceeded):
        where = f": your code was at {problem.where}" if problem.where else ""
        return f"time limit of {limits.time_for(task.name):g} s exceeded{where}"
    return str(problem)


def run_check(session: _Session, check: Check) -> Result:
    """Run one check of the session's task; never raises."""
    task, limits = session.task, session.limits
    cause, error = None, False
    try:
        with np.errstate(all="ignore"):
            check.run(Student(session, check.whole_workbook, limits.time_for(task.name)))
        output = "passed"
    except CheckFailure as failure:
        output, cause = str(failure), failure.cause
    except StudentProblem as problem:
        output = _text(problem, task, limits)
    except GradingError as failure:
        output, error = f"not graded: {failure}", True
    except Exception as failure:  # the grader's own bug: say so, never blame the student
        frame = traceback.extract_tb(failure.__traceback__)[-1]
        output = f"not graded: the grader failed ({type(failure).__name__}: {failure} at {Path(frame.filename).name}" \
                 f":{frame.lineno})"  # fmt: skip
        error = True
    score = check.points if output == "passed" else 0
    return Result(task.name, check.name, score, check.points, output, cause, session.printed(), error)


def grade_sources(sources: dict, names: list[str] | None = None, limits: Limits | None = None,
                  sandbox: Sandbox | None = None, on_result=None) -> list[Result]:  # fmt: skip
    """Grade the tasks ``names`` (default: all) of a workbook given as ``{task: (path, text) or why missing}``.

    ``limits``: each check's time and memory limits; ``sandbox``: the helper to fork
    children from (default: one started and stopped here); ``on_result(result)`` is
    called as each check is graded.
    """
    unknown = [n for n in names or [] if n not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown task(s) {unknown}; the tasks are {[t.name for t in TASKS]}")
    limits = limits or Limits()
    sources = {t.name: sources.get(t.name, f"{t.name}.py is missing") for t in TASKS}
    results, own = [], sandbox is None
    sandbox = sandbox or Sandbox()
    try:
        for task in [BY_NAME[n] for n in names] if names else TASKS:
            session = _Session(sandbox, task, sources, limits)
            try:
                for check in task.checks:
                    results.append(run_check(session, check))
                    if on_result is not None:
                        on_result(results[-1])
            finally:
                session.close()
    finally:
        if own:
            sandbox.close()
    return results


def grade(directory: Path, names: list[str] | None = None, limits: Limits | None = None, **kw) -> list[Result]:
    """Grade the tasks ``names`` (default: all) of the workbook in ``directory`` (see ``grade_sources``)."""
    return grade_sources(read_directory(directory), names, limits, **kw)


def grade_task(task: Task, text: str, limits: Limits | None = None, sandbox: Sandbox | None = None) -> list[Result]:
    """Every check of ``task`` with ``text`` as the student's file, the solutions as the other files of the
    workbook (for the milestone): the tests' mutants and hostile files."""
    sources = {t.name: (f"<solution {t.name}>", t.solution_text()) for t in TASKS}
    sources[task.name] = (f"{task.name}.py", text)
    return grade_sources(sources, [task.name], limits, sandbox)
