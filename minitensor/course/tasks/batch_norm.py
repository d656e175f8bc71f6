"""Task: batch normalisation in training mode, forward and backward."""

from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn.functional as F

from ._base import Check, Mutant, Task
from ._helpers import check_program, expect_close, leaf

SOLUTION = '''"""Week 14: batch norm (training mode).

For x (N, C) or (N, C, *spatial), each channel c is normalised over the batch and the
spatial positions (every axis but 1) by its mean and (biased) variance, then scaled and
shifted: y = (x - mean) / sqrt(var + eps) * weight[c] + bias[c]; weight and bias are (C,).
"""

import numpy as np


def batch_norm_forward(x, weight, bias, eps):
    """Returns (y, cache): y shaped like x; cache: whatever your backward needs."""
    # BEGIN SOLUTION
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    centred = x - np.mean(x, axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(np.mean(centred * centred, axis=axes, keepdims=True) + eps)
    xhat = centred * rstd
    return xhat * weight.reshape(shape) + bias.reshape(shape), (xhat, rstd, weight.reshape(shape), axes)
    # END SOLUTION


def batch_norm_backward(grad, cache):
    """Returns (grad_x like x, grad_weight (C,), grad_bias (C,)).

    Hint: every x of a channel moves that channel's mean and variance (which the whole
    batch shares), so with g = grad * weight and xhat the normalised x:
    grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat)), means per channel.
    """
    # BEGIN SOLUTION
    xhat, rstd, weight, axes = cache
    g = grad * weight
    grad_x = rstd * (g - np.mean(g, axis=axes, keepdims=True) - xhat * np.mean(g * xhat, axis=axes, keepdims=True))
    return grad_x, np.sum(grad * xhat, axis=axes), np.sum(grad, axis=axes)
    # END SOLUTION
'''


def _xhat(x) -> np.ndarray:
    a = x.numpy()
    axes = (0,) + tuple(range(2, a.ndim))
    c = a - a.mean(axis=axes, keepdims=True)
    return c / np.sqrt((c * c).mean(axis=axes, keepdims=True) + 1e-5)


PROGRAMS = {"batch_norm": lambda ops, x, w, b: ops.batch_norm(x, w, b)}
SHAPES = [(6, 3), (5, 2, 3), (4, 3, 2, 2)]


def _forward(student) -> None:
    rng = np.random.default_rng(31)
    for shape in SHAPES:
        x, w, b = rng.standard_normal(shape) * 2 + 1, rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
        y = student.call("batch_norm.batch_norm_forward", x, w, b, 1e-5, pick=0)
        x64, w64, b64 = (mt.tensor(a, dtype=mt.float64) for a in (x, w, b))
        expect_close(y, F.batch_norm(x64, None, None, w64, b64, training=True).numpy(), "batch_norm_forward")


def _backward(student) -> None:
    rng = np.random.default_rng(32)
    for shape in SHAPES + [(7, 2)]:
        x, w, b = leaf(rng, *shape, transposed=len(shape) == 2), leaf(rng, shape[1]), leaf(rng, shape[1])
        check_program(student, "batch_norm", [x, w, b], axis=0,
                      features=lambda x, w, b: {"1": np.ones(x.shape), "xhat": _xhat(x)})  # fmt: skip


TASK = Task(
    name="batch_norm",
    title="Batch norm",
    summary="normalise each channel over the batch; the backward sees every sample move the channel's statistics",
    solution=SOLUTION,
    checks=[Check("forward equals F.batch_norm", 3, _forward), Check("gradients of x, weight, bias", 7, _backward)],
    mutants=[
        Mutant(
            "batch norm backward treating the batch statistics as constants",
            "grad_x = rstd * (g - np.mean(g, axis=axes, keepdims=True) - xhat * np.mean(g * xhat, axis=axes, "
            "keepdims=True))",
            "grad_x = rstd * g",
            "missing_term",
        ),
        Mutant(
            "(extra) batch norm's weight gradient summed over the batch only, not the spatial positions",
            "np.sum(grad * xhat, axis=axes)",
            "np.sum(grad * xhat, axis=0)",
            None,
        ),
        Mutant(
            "(extra) batch norm statistics per sample instead of per channel",
            "axes = (0,) + tuple(range(2, x.ndim))",
            "axes = tuple(range(1, x.ndim))",
            None,
        ),
    ],
    programs=PROGRAMS,
)
