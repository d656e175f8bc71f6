"""Task: undoing broadcasting, the one place where gradients meet their input's shape."""

from __future__ import annotations

import numpy as np

from ..diagnose import shape_diagnosis
from ._base import Check, CheckFailure, Mutant, Task
from ._helpers import broadcast_pair, check_program, leaf

SOLUTION = '''"""Week 2: undoing broadcasting.

When ``a`` of shape (3,) is added to ``b`` of shape (2, 3), NumPy broadcasts ``a``
to (2, 3): each element of ``a`` is used twice, so its gradient is the sum of the
two.  The rules of week 1 return gradients in the output's shape; this function
sums them back to each input's shape.
"""

import numpy as np


def unbroadcast(grad, shape):
    """Sum ``grad`` (the broadcast shape) back to ``shape`` (the input's shape).

    Two cases: leading dims the input does not have (sum them away), and dims where
    the input has size 1 but the output does not (sum them, keeping the dim).
    Example: grad (4, 2, 3), shape (2, 1) -> sum over dim 0, then over dim 2 (kept).

    Hint: ``np.sum(..., axis=..., keepdims=True)``.
    """
    # BEGIN SOLUTION
    lead = grad.ndim - len(shape)
    grad = np.sum(grad, axis=tuple(range(lead)))
    axes = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    return np.sum(grad, axis=axes, keepdims=True)
    # END SOLUTION
'''

CASES = [((2, 3), (3,)), ((4, 2, 3), (2, 1)), ((3, 1), (1, 4)), ((2, 1, 3), (2, 4, 1)), ((), (2, 3))]


PROGRAMS = {"add": lambda ops, x, y: ops.add(x, y), "(x + y) * y": lambda ops, x, y: ops.mul(ops.add(x, y), y)}


def _shapes(student) -> None:
    rng = np.random.default_rng(3)
    for sa, sb in CASES + [broadcast_pair(rng) for _ in range(3)]:
        out = np.broadcast_shapes(sa, sb)
        grad = rng.standard_normal(out)
        for shape in (sa, sb):
            got = student.call("broadcasting.unbroadcast", grad, shape)
            if got.shape != shape:
                label, text = shape_diagnosis(got.shape, shape)
                raise CheckFailure(f"unbroadcast(grad of shape {out}, {shape}) has shape {got.shape}: {text}", label)


def _gradients(student) -> None:
    rng = np.random.default_rng(4)
    for sa, sb in CASES + [broadcast_pair(rng) for _ in range(3)]:
        a, b = leaf(rng, *sa, transposed=len(sa) == 2), leaf(rng, *sb)
        check_program(student, "add", [a, b])
        check_program(student, "(x + y) * y", [a, b])


TASK = Task(
    name="broadcasting",
    title="Undoing broadcasting",
    summary="unbroadcast: sum a gradient back to its input's shape",
    solution=SOLUTION,
    checks=[Check("shapes come back", 4, _shapes), Check("gradients of broadcast add and mul", 6, _gradients)],
    mutants=[
        Mutant(
            "missing broadcast reduction (size-1 dims)",
            "return np.sum(grad, axis=axes, keepdims=True)",
            "return grad",
            "broadcast_sum",
        )
    ],
    programs=PROGRAMS,
)
