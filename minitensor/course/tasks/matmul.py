"""Task: the backward of (batched) matrix multiplication."""

from __future__ import annotations

import numpy as np

from ._base import Check, Mutant, Task
from ._helpers import broadcast_pair, check_program, leaf, random_shape

SOLUTION = '''"""Week 4: matmul.

out = a @ b with a (..., n, k) and b (..., k, m), so out is (..., n, m); the
batch dims ``...`` broadcast (they are summed back for you, as in week 2).
"""

import numpy as np


def matmul_backward(grad, a, b):
    """Returns (grad_a, grad_b): grad_a (..., n, k), grad_b (..., k, m) (batch dims of ``grad``).

    Hint: check the shapes: which product of ``grad`` (n, m) and ``b`` (k, m) is (n, k)?
    ``np.swapaxes(t, -1, -2)`` transposes the last two dims.
    """
    # BEGIN SOLUTION
    grad_a = grad @ np.swapaxes(b, -1, -2)
    grad_b = np.swapaxes(a, -1, -2) @ grad
    return grad_a, grad_b
    # END SOLUTION
'''


PROGRAMS = {"matmul": lambda ops, a, b: ops.matmul(a, b)}


def _plain(student) -> None:
    rng = np.random.default_rng(7)
    for n, k, m in [(3, 4, 2), (2, 3, 3), (4, 4, 4), random_shape(rng, 3, 3)]:
        a, b = leaf(rng, n, k, transposed=True), leaf(rng, k, m)
        check_program(student, "matmul", [a, b])


def _batched(student) -> None:
    rng = np.random.default_rng(8)
    n, k, m = random_shape(rng, 3, 3)
    batch_a, batch_b = broadcast_pair(rng)
    for sa, sb in [((2, 3, 4), (4, 2)), ((2, 1, 3, 3), (3, 3, 3)), ((2, 3, 4), (2, 4, 4)),
                   (batch_a + (n, k), batch_b + (k, m))]:  # fmt: skip
        a, b = leaf(rng, *sa, transposed=True), leaf(rng, *sb)
        check_program(student, "matmul", [a, b])


TASK = Task(
    name="matmul",
    title="Matmul backward",
    summary="the two gradients of a (batched, broadcasting) matrix product",
    solution=SOLUTION,
    checks=[Check("2-D matmul", 5, _plain), Check("batched matmul with broadcast batch dims", 5, _batched)],
    mutants=[
        Mutant(
            "transposed matmul gradient",
            "grad_b = np.swapaxes(a, -1, -2) @ grad",
            "grad_b = np.swapaxes(grad, -1, -2) @ a",
            "transposed",
        )
    ],
    programs=PROGRAMS,
)
