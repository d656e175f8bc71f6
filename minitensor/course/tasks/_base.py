"""What a task is: its workbook file (solution text with the parts to fill in marked), its checks, its mutants.

A task's ``SOLUTION`` is the full text of the student's file, with every part the
student writes between two marker lines::

    def exp_backward(grad, out):
        # BEGIN SOLUTION
        return grad * out
        # END SOLUTION

``stub_text`` replaces each marked part by ``raise NotImplementedError(...)`` (the
nbgrader convention), so one text gives both the student's file and the teacher's.
A ``Mutant`` is a classic wrong answer: one exact replacement in the solution text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

_MARKED = re.compile(r"^( *)# BEGIN SOLUTION\n.*?^ *# END SOLUTION\n", re.S | re.M)
_MARKERS = re.compile(r"^ *# (BEGIN|END) SOLUTION\n", re.M)


@dataclass
class Check:
    """One graded check: ``run(student)`` raises ``CheckFailure`` (or anything) when it fails.

    ``run`` runs in the grader: it makes the inputs, gets the student's results from
    ``student`` (grader.Student: their code runs in a child process) and compares them
    with minitensor's own.  ``whole_workbook``: the student's code is their whole
    workbook (the milestone), not their file for this task among the reference ones.
    """

    name: str
    points: int
    run: Callable
    whole_workbook: bool = False


@dataclass
class Mutant:
    """A plausible wrong answer: ``new`` in place of ``old`` (which occurs once) in the solution.

    ``cause`` is what the diagnosis should name (a ``diagnose`` label), or None when
    the mistake is caught but no gradient pattern tells what it is.
    """

    name: str
    old: str
    new: str
    cause: str | None


@dataclass
class Task:
    """One exercise: ``name`` is also the workbook's file name (``name.py``).

    ``programs``: ``{name: fn(ops, *tensors, **settings) -> Tensor}``, small graphs the
    checks differentiate: run on the student's ops in the child process, and on
    minitensor's own (``ops.reference_ops()``) in the grader for the reference.
    ``probes``: ``{name: fn(wb, **data) -> data}``, what else the checks need run on the
    student's workbook in the child (see probes.py).
    """

    name: str
    title: str
    summary: str
    solution: str
    checks: list
    mutants: list = field(default_factory=list)
    programs: dict = field(default_factory=dict)
    probes: dict = field(default_factory=dict)

    @property
    def points(self) -> int:
        return sum(c.points for c in self.checks)

    def stub_text(self) -> str:
        """The student's file: every marked part replaced by ``raise NotImplementedError``."""
        message = f'raise NotImplementedError("{self.name}: write this part")\n'
        return _MARKED.sub(lambda m: m.group(1) + message, self.solution)

    def solution_text(self) -> str:
        """The teacher's file: the solution without the marker lines."""
        return _MARKERS.sub("", self.solution)

    def mutant_text(self, mutant: Mutant) -> str:
        """The solution with one classic mistake in it."""
        text = self.solution_text()
        if text.count(mutant.old) != 1:
            raise ValueError(f"mutant {mutant.name!r}: its text occurs {text.count(mutant.old)} times in {self.name}")
        return text.replace(mutant.old, mutant.new)


class CheckFailure(AssertionError):
    """A check failed; ``message`` says how, ``cause`` is the diagnosis label (or None)."""

    def __init__(self, message: str, cause: str | None = None) -> None:
        super().__init__(message)
        self.cause = cause
