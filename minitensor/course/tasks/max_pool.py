"""Task: 2-D max pooling, forward and backward (the gradient routed to each window's maximum)."""

from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn.functional as F

from ._base import Check, Mutant, Task
from ._helpers import check_program, expect_close, leaf

SOLUTION = '''"""Week 13: max pooling.

y[n, c, i, j] = the largest value of the window of x (N, C, H, W) that starts at
(i * stride, j * stride) and spans kernel_size x kernel_size (no padding): the output
is (N, C, (H - kernel_size) // stride + 1, (W - kernel_size) // stride + 1).
"""

import numpy as np


def max_pool2d_forward(x, kernel_size, stride):
    """Returns (y, cache): y (N, C, H_out, W_out); cache: whatever your backward needs.

    Hint: for each output position, look at its window as (N, C, kernel_size ** 2) and
    remember where its maximum is (np.argmax gives the first of equal maxima, as PyTorch).
    """
    # BEGIN SOLUTION
    n, c, h, w = x.shape
    k = kernel_size
    h_out, w_out = (h - k) // stride + 1, (w - k) // stride + 1
    y = np.empty((n, c, h_out, w_out))
    where = np.empty((n, c, h_out, w_out), dtype=np.int64)
    for i in range(h_out):
        for j in range(w_out):
            window = x[:, :, i * stride : i * stride + k, j * stride : j * stride + k].reshape(n, c, k * k)
            best = np.argmax(window, axis=-1)
            where[:, :, i, j] = best
            y[:, :, i, j] = np.take_along_axis(window, best[..., None], axis=-1)[..., 0]
    return y, (x.shape, k, stride, where)
    # END SOLUTION


def max_pool2d_backward(grad, cache):
    """Returns grad_x (N, C, H, W): each output's gradient goes to the position of its
    window's maximum and only there; where windows overlap (stride < kernel_size), an
    element that is the maximum of several windows gets the sum of their gradients.
    """
    # BEGIN SOLUTION
    shape, k, stride, where = cache
    grad_x = np.zeros(shape)
    n, c, h_out, w_out = grad.shape
    samples, channels = np.arange(n)[:, None], np.arange(c)[None, :]
    for i in range(h_out):
        for j in range(w_out):
            rows, cols = i * stride + where[:, :, i, j] // k, j * stride + where[:, :, i, j] % k
            grad_x[samples, channels, rows, cols] += grad[:, :, i, j]
    return grad_x
    # END SOLUTION
'''

PROGRAMS = {"max_pool2d": lambda ops, x, kernel_size, stride: ops.max_pool2d(x, kernel_size, stride)}
CASES = [((2, 3, 4, 4), 2, 2), ((1, 2, 5, 7), 3, 2), ((2, 1, 6, 3), 3, 3)]  # (shape, kernel_size, stride)


def _forward(student) -> None:
    rng = np.random.default_rng(21)
    for shape, k, s in CASES:
        x = rng.standard_normal(shape)
        y = student.call("max_pool.max_pool2d_forward", x, k, s, pick=0)
        expect_close(y, F.max_pool2d(mt.tensor(x, dtype=mt.float64), k, s).numpy(), "max_pool2d_forward")


def _windows(student) -> None:
    rng = np.random.default_rng(22)
    for shape, k, s in CASES:
        check_program(student, "max_pool2d", [leaf(rng, *shape)], settings={"kernel_size": k, "stride": s})


def _overlaps_and_ties(student) -> None:
    rng = np.random.default_rng(23)
    for shape, k in [((2, 2, 5, 5), 2), ((1, 3, 6, 5), 3)]:  # stride 1: windows overlap
        check_program(student, "max_pool2d", [leaf(rng, *shape)], settings={"kernel_size": k, "stride": 1})
    tied = mt.from_numpy(np.round(rng.standard_normal((2, 2, 4, 6)))).requires_grad_(True)  # many equal maxima
    for k, s in [(2, 2), (3, 1)]:
        check_program(student, "max_pool2d", [tied], settings={"kernel_size": k, "stride": s})


TASK = Task(
    name="max_pool",
    title="Max pooling",
    summary="the max of each window, and its backward: the gradient routed to the maximum, added where windows overlap",
    solution=SOLUTION,
    checks=[
        Check("forward equals F.max_pool2d", 3, _forward),
        Check("gradient to each window's maximum", 4, _windows),
        Check("overlapping windows and ties", 3, _overlaps_and_ties),
    ],
    mutants=[
        Mutant(
            "max-pool backward spreading the gradient over the window (average pooling's)",
            "grad_x[samples, channels, rows, cols] += grad[:, :, i, j]",
            "grad_x[:, :, i * stride : i * stride + k, j * stride : j * stride + k] += grad[:, :, i, j, None, None] "
            "/ (k * k)",
            None,
        ),
        Mutant(
            "max-pool backward overwriting where windows overlap",
            "grad_x[samples, channels, rows, cols] += grad[:, :, i, j]",
            "grad_x[samples, channels, rows, cols] = grad[:, :, i, j]",
            None,
        ),
        Mutant(
            "max pooling choosing the last of equal maxima",
            "best = np.argmax(window, axis=-1)",
            "best = k * k - 1 - np.argmax(window[..., ::-1], axis=-1)",
            None,
        ),
    ],
    programs=PROGRAMS,
)
