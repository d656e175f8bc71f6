"""Task: the backward of sum, mean and max over dims."""

from __future__ import annotations

import numpy as np

from ._base import Check, Mutant, Task
from ._helpers import check_program, leaf, random_shape

SOLUTION = '''"""Week 3: reductions.

``sum(x, dim, keepdim)`` uses each input element once in one output element, so
its gradient is the output's gradient copied back along the reduced dims.
``dim`` is an int, a tuple of ints (possibly negative) or None (every dim).
"""

import numpy as np


def _axes(ndim, dim):
    """The reduced dims as a sorted tuple of non-negative ints."""
    if dim is None:
        return tuple(range(ndim))
    dims = dim if isinstance(dim, tuple) else (dim,)
    return tuple(sorted(d % ndim for d in dims))


def sum_backward(grad, shape, dim, keepdim):
    """out = x.sum(dim, keepdim).  ``grad``: the output's shape; return grad_x of ``shape``.

    Hint: without keepdim, first put the reduced dims back (size 1) with
    ``np.expand_dims``; then ``np.broadcast_to(..., shape)``.
    """
    # BEGIN SOLUTION
    axes = _axes(len(shape), dim)
    if not keepdim:
        grad = np.expand_dims(grad, axes)
    return np.broadcast_to(grad, shape).copy()
    # END SOLUTION


def mean_backward(grad, shape, dim, keepdim):
    """out = x.mean(dim, keepdim): return grad_x of ``shape``.

    Hint: a mean is a sum divided by how many elements each output averages.
    """
    # BEGIN SOLUTION
    count = int(np.prod([shape[d] for d in _axes(len(shape), dim)]))
    return sum_backward(grad, shape, dim, keepdim) / count
    # END SOLUTION


def max_backward(grad, x, out, dim, keepdim):
    """out = x.max(dim, keepdim) (values only): return grad_x, shaped like ``x``.

    Only the elements equal to the maximum receive the gradient (ties share it
    evenly, as PyTorch's full max).
    """
    # BEGIN SOLUTION
    axes = _axes(x.ndim, dim)
    if not keepdim:
        grad, out = np.expand_dims(grad, axes), np.expand_dims(out, axes)
    winners = (x == out).astype(x.dtype)
    return winners * grad / np.sum(winners, axis=axes, keepdims=True)
    # END SOLUTION
'''

SETTINGS = [((4, 4), 1, False), ((4, 4), 0, True), ((2, 3, 4), (0, 2), False), ((3, 3), None, False),
            ((2, 3, 3), -1, False)]  # fmt: skip


def _random_settings(rng: np.random.Generator, n: int) -> list:
    """``n`` random (shape, dim, keepdim): a random shape, one of its dims (maybe negative) or None."""
    settings = []
    for _ in range(n):
        shape = random_shape(rng)
        dims = [None, *range(-len(shape), len(shape))]
        settings.append((shape, dims[int(rng.integers(len(dims)))], bool(rng.integers(2))))
    return settings


PROGRAMS = {
    "sum": lambda ops, x, dim, keepdim: ops.sum(x, dim, keepdim),
    "mean": lambda ops, x, dim, keepdim: ops.mean(x, dim, keepdim),
    "sum of tanh": lambda ops, x, dim, keepdim: ops.sum(ops.tanh(x), dim, keepdim),
    "max": lambda ops, x, dim, keepdim: ops.max(x, dim, keepdim),
}


def _sum_mean(student) -> None:
    rng = np.random.default_rng(5)
    for shape, dim, keepdim in SETTINGS + _random_settings(rng, 3):
        x = leaf(rng, *shape, transposed=len(shape) == 2)
        for program in ("sum", "mean", "sum of tanh"):
            check_program(student, program, [x], settings={"dim": dim, "keepdim": keepdim})


def _max(student) -> None:
    rng = np.random.default_rng(6)
    for shape, dim, keepdim in SETTINGS + _random_settings(rng, 3):
        x = leaf(rng, *shape)
        x._data[...] = rng.permutation(x.numel()).reshape(shape) * 0.1  # distinct values: no ties
        check_program(student, "max", [x], settings={"dim": dim, "keepdim": keepdim})


TASK = Task(
    name="reductions",
    title="Reductions: sum, mean, max",
    summary="the backward of sum, mean and max over any dims, with and without keepdim",
    solution=SOLUTION,
    checks=[Check("sum and mean", 6, _sum_mean), Check("max", 4, _max)],
    mutants=[
        Mutant(
            "reduction over the wrong axis",
            "grad = np.expand_dims(grad, axes)",
            "grad = np.expand_dims(grad, tuple(range(len(axes))))",
            "wrong_axis",
        ),
        Mutant(
            "ones_like in place of the real gradient (sum)",
            "return np.broadcast_to(grad, shape).copy()",
            "return np.broadcast_to(np.ones_like(grad), shape).copy()",
            "ignores_grad",
        ),
    ],
    programs=PROGRAMS,
)
