"""Task: softmax and log-softmax, forward (stable) and backward."""

from __future__ import annotations

import numpy as np

import minitensor as mt

from ._base import Check, Mutant, Task
from ._helpers import check_program, expect_close, leaf, random_shape, stable

SOLUTION = '''"""Week 6: softmax and log-softmax along ``dim``.

softmax(x)_i = exp(x_i) / sum_j exp(x_j); log_softmax(x) = log(softmax(x)).
exp(1000) overflows: shift x by its max along ``dim`` first (the result is the same).
"""

import numpy as np


def softmax_forward(x, dim):
    """Returns y = softmax(x) along ``dim``, shaped like x; finite for any finite x."""
    # BEGIN SOLUTION
    z = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return z / np.sum(z, axis=dim, keepdims=True)
    # END SOLUTION


def softmax_backward(grad, y, dim):
    """Returns grad_x from ``grad`` and the output ``y``.

    Hint: dy_i/dx_j = y_i * (delta_ij - y_j).  Summed against ``grad``, a term
    ``sum_i grad_i * y_i`` appears in every element of the row.
    """
    # BEGIN SOLUTION
    return y * (grad - np.sum(grad * y, axis=dim, keepdims=True))
    # END SOLUTION


def log_softmax_forward(x, dim):
    """Returns log(softmax(x)) along ``dim``, computed stably (never log of 0, never exp overflow)."""
    # BEGIN SOLUTION
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))
    # END SOLUTION


def log_softmax_backward(grad, out, dim):
    """Returns grad_x from ``grad`` and the output ``out`` = log_softmax(x).

    Hint: softmax(x) = exp(out); d out_i / dx_j = delta_ij - softmax_j.
    """
    # BEGIN SOLUTION
    return grad - np.exp(out) * np.sum(grad, axis=dim, keepdims=True)
    # END SOLUTION
'''

SHAPES = [((3, 5), -1), ((4, 4), 0), ((2, 3, 4), 1)]


def _shapes(rng: np.random.Generator) -> list:
    """The fixed cases, then a random shape with a random dim."""
    shape = random_shape(rng, 2, 3)
    return SHAPES + [(shape, int(rng.integers(-len(shape), len(shape))))]


PROGRAMS = {
    "softmax": lambda ops, x, dim: ops.softmax(x, dim),
    "log_softmax": lambda ops, x, dim: ops.log_softmax(x, dim),
}


def _softmax(student) -> None:
    rng = np.random.default_rng(11)
    for shape, dim in _shapes(rng):
        x = leaf(rng, *shape, transposed=len(shape) == 2)
        got = student.call("softmax.softmax_forward", x.numpy(), dim)
        expect_close(got, x.softmax(dim).numpy(), "softmax_forward")
        check_program(student, "softmax", [x], settings={"dim": dim}, axis=dim,
                      features=lambda t, d=dim: {"the output y": t.softmax(d).numpy()})  # fmt: skip


def _log_softmax(student) -> None:
    rng = np.random.default_rng(12)
    for shape, dim in _shapes(rng):
        x = leaf(rng, *shape, transposed=len(shape) == 2)
        got = student.call("softmax.log_softmax_forward", x.numpy(), dim)
        expect_close(got, x.log_softmax(dim).numpy(), "log_softmax_forward")
        check_program(student, "log_softmax", [x], settings={"dim": dim}, axis=dim,
                      features=lambda t, d=dim: {"softmax(x)": t.softmax(d).numpy()})  # fmt: skip


def _stable(student) -> None:
    big = np.array([[1000.0, 999.0, -1000.0], [-1000.0, -1001.0, -999.5]])
    stable(student.call("softmax.softmax_forward", big, -1), "softmax_forward")
    log_softmax = student.call("softmax.log_softmax_forward", big, -1)
    stable(log_softmax, "log_softmax_forward")
    expect_close(log_softmax, mt.tensor(big, dtype=mt.float64).log_softmax(-1).numpy(),
                 "log_softmax_forward on large inputs")  # fmt: skip


TASK = Task(
    name="softmax",
    title="Softmax and log-softmax",
    summary="a stable forward and the backward of softmax and log-softmax",
    solution=SOLUTION,
    checks=[
        Check("softmax", 4, _softmax),
        Check("log-softmax", 4, _log_softmax),
        Check("stable on large inputs", 2, _stable),
    ],  # fmt: skip
    mutants=[
        Mutant(
            "softmax backward missing the subtracted term",
            "return y * (grad - np.sum(grad * y, axis=dim, keepdims=True))",
            "return y * grad",
            "missing_term",
        ),
        Mutant(
            "log-softmax computed unstably",
            "shifted = x - np.max(x, axis=dim, keepdims=True)",
            "shifted = x",
            "unstable",
        ),
    ],
    programs=PROGRAMS,
)
