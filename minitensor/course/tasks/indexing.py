"""Task: the backward of integer indexing (an embedding lookup), repeated indices included."""

from __future__ import annotations

import numpy as np

from ._base import Check, Mutant, Task
from ._helpers import check_program, leaf

SOLUTION = '''"""Week 5: indexing.

out = x[index] with an integer array ``index`` picks rows of ``x`` (dim 0): an
embedding lookup is ``table[token_ids]``.  A row picked twice is used twice.
"""

import numpy as np


def index_backward(grad, shape, index):
    """Returns grad_x of ``shape``: zeros, with each row of ``grad`` added where it was taken.

    ``index``: an int array of any shape; ``grad``: ``index.shape + shape[1:]``.
    Hint: ``g[index] += grad`` is wrong when ``index`` repeats; ``np.add.at`` is not.
    """
    # BEGIN SOLUTION
    g = np.zeros(shape, dtype=grad.dtype)
    np.add.at(g, index, grad)
    return g
    # END SOLUTION
'''


PROGRAMS = {"x[index]": lambda ops, x, index: ops.index(x, index)}


def _rows(student) -> None:
    x = leaf(np.random.default_rng(9), 5, 3, transposed=True)
    for index in ([0, 3, 4], [[1, 2], [4, 0]]):
        check_program(student, "x[index]", [x], settings={"index": index})


def _repeats(student) -> None:
    x = leaf(np.random.default_rng(10), 4, 3)
    for index in ([2, 0, 2, 2], [[1, 1], [3, 1]]):
        check_program(student, "x[index]", [x], settings={"index": index})


TASK = Task(
    name="indexing",
    title="Indexing backward",
    summary="x[index]: scatter the gradient back, adding where an index repeats",
    solution=SOLUTION,
    checks=[Check("distinct rows", 4, _rows), Check("repeated rows (an embedding)", 6, _repeats)],
    mutants=[
        Mutant(
            "overwriting instead of accumulating (repeated index)", "np.add.at(g, index, grad)", "g[index] = grad", None
        ),  # fmt: skip
    ],
    programs=PROGRAMS,
)
