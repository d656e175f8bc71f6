"""Mutation testing of the course's checks: every classic wrong answer loses points on its task,
and the failed gradient checks name what it looks like (the diagnosis) where they can.
"""

from __future__ import annotations

import re

import pytest

from minitensor.course.grader import grade_task
from minitensor.course.tasks import TASKS

MUTANTS = [(task, mutant) for task in TASKS for mutant in task.mutants]

# The classic mistakes the kit must ship (a word of each mutant's name).
CLASSICS = ["sign flip", "missing factor", "transposed matmul", "missing broadcast reduction", "wrong axis",
            "overwriting instead of accumulating a gradient", "softmax backward missing the subtracted term",
            "layer norm missing the mean terms", "log-softmax computed unstably", "visits a shared node twice",
            "Adam without bias correction", "attention without the scale", "mask applied after the softmax",
            "cross-entropy off by a factor of N", "ones_like in place of the real gradient"]  # fmt: skip


def test_the_kit_ships_the_classic_wrong_answers() -> None:
    names = [m.name for _, m in MUTANTS]
    assert len(names) >= 15
    for classic in CLASSICS:
        assert any(classic in name for name in names), classic


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_solution_full_marks_stub_zero(task, sandbox) -> None:
    assert sum(r.score for r in grade_task(task, task.solution_text(), sandbox=sandbox)) == task.points
    assert sum(r.score for r in grade_task(task, task.stub_text(), sandbox=sandbox)) == 0
    stub = task.stub_text()
    marked = re.findall(r"# BEGIN SOLUTION\n(.*?)# END SOLUTION", task.solution, re.S)
    for part in marked:  # (a docstring may state a formula, but not the code)
        lines = [line.strip() for line in part.splitlines() if len(line.strip()) > 12]
        shown = [line for line in lines if line in stub]
        assert len(shown) <= len(lines) // 3, f"the stub of {task.name} gives away {shown}"


@pytest.mark.parametrize(("task", "mutant"), MUTANTS, ids=lambda x: getattr(x, "name", ""))
def test_every_mutant_loses_points_and_no_wrong_cause_is_claimed(task, mutant, sandbox) -> None:
    results = grade_task(task, task.mutant_text(mutant), sandbox=sandbox)
    assert sum(r.score for r in results) < task.points, f"{mutant.name} passes every check of {task.name}"
    failed = [r for r in results if r.score < r.max_score]
    assert all("not implemented" not in r.output for r in failed)  # it ran, and was caught
    claimed = {r.cause for r in failed if r.cause is not None}
    assert claimed == ({mutant.cause} if mutant.cause else set()), [r.output for r in failed]


def test_the_diagnosis_names_at_least_12_of_the_classic_mutants(sandbox) -> None:
    named = 0
    for task, mutant in MUTANTS:
        if any(classic in mutant.name for classic in CLASSICS) and mutant.cause is not None:
            causes = {r.cause for r in grade_task(task, task.mutant_text(mutant), sandbox=sandbox)}
            named += mutant.cause in causes
    assert named >= 12
