"""Task: layer normalisation over the last dim, forward and backward."""

from __future__ import annotations

import numpy as np

import minitensor.nn.functional as F

from ._base import Check, Mutant, Task
from ._helpers import check_program, expect_close, leaf, random_shape

SOLUTION = '''"""Week 7: layer norm over the last dim (size E).

y = (x - mean) / sqrt(var + eps) * weight + bias, mean and (biased) var over the
last dim of each row; weight and bias are (E,).
"""

import numpy as np


def layer_norm_forward(x, weight, bias, eps):
    """Returns (y, cache): y shaped like x (..., E); cache: whatever your backward needs."""
    # BEGIN SOLUTION
    centred = x - np.mean(x, axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + eps)
    xhat = centred * rstd
    return xhat * weight + bias, (xhat, rstd, weight)
    # END SOLUTION


def layer_norm_backward(grad, cache):
    """Returns (grad_x (..., E), grad_weight (E,), grad_bias (E,)).

    Hint: with g = grad * weight and xhat the normalised x, every x of a row moves
    the row's mean and variance: grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat)),
    means over the last dim.
    """
    # BEGIN SOLUTION
    xhat, rstd, weight = cache
    g = grad * weight
    grad_x = rstd * (g - np.mean(g, axis=-1, keepdims=True) - xhat * np.mean(g * xhat, axis=-1, keepdims=True))
    rows = grad.reshape(-1, grad.shape[-1])
    return grad_x, np.sum(rows * xhat.reshape(rows.shape), axis=0), np.sum(rows, axis=0)
    # END SOLUTION
'''


def _xhat(x) -> np.ndarray:
    a = x.numpy()
    c = a - a.mean(-1, keepdims=True)
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5)


PROGRAMS = {"layer_norm": lambda ops, x, w, b: ops.layer_norm(x, w, b)}


def _forward(student) -> None:
    rng = np.random.default_rng(13)
    for shape in [(3, 6), (2, 3, 5)]:
        x, w, b = leaf(rng, *shape), leaf(rng, shape[-1]), leaf(rng, shape[-1])
        y = student.call("layer_norm.layer_norm_forward", x.numpy(), w.numpy(), b.numpy(), 1e-5, pick=0)
        expect_close(y, F.layer_norm(x, shape[-1:], w, b).numpy(), "layer_norm_forward")


def _backward(student) -> None:
    rng = np.random.default_rng(14)
    for shape in [(3, 6), (2, 3, 5), (4, 4), random_shape(rng, 2, 3)]:
        x, w, b = leaf(rng, *shape, transposed=len(shape) == 2), leaf(rng, shape[-1]), leaf(rng, shape[-1])
        check_program(student, "layer_norm", [x, w, b], features=lambda x, w, b: {"1": np.ones(x.shape),
                                                                                    "xhat": _xhat(x)})  # fmt: skip


TASK = Task(
    name="layer_norm",
    title="Layer norm",
    summary="normalise each row; the backward sees every element move the row's mean and variance",
    solution=SOLUTION,
    checks=[Check("forward equals F.layer_norm", 3, _forward), Check("gradients of x, weight, bias", 7, _backward)],
    mutants=[
        Mutant(
            "layer norm missing the mean terms",
            "grad_x = rstd * (g - np.mean(g, axis=-1, keepdims=True) - xhat * np.mean(g * xhat, axis=-1, keepdims=True)"
            ")",
            "grad_x = rstd * g",
            "missing_term",
        )
    ],
    programs=PROGRAMS,
)
