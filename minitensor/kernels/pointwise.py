"""Elementwise kernels: the logistic sigmoid and its derivative in one pass each.

NumPy computes the overflow-safe sigmoid ``where(x >= 0, 1 / (1 + e), e / (1 + e))``
with ``e = exp(-|x|)`` in about eight passes over memory, each with a temporary
array; the kernel does it in two (``-|x|`` and its SIMD exp from ``_exp.py``,
then the division), and the backward ``grad * y * (1 - y)`` in one instead of
three.  Each has its NumPy reference beside it (the same formula);
``tests/kernels/test_pointwise_kernel.py`` holds them equal.

>>> sigmoid(np.array([-1.0, 0.0, 40.0])).round(4)
array([0.2689, 0.5   , 1.    ])
"""

from __future__ import annotations

import numpy as np

from ._exp import exp_inplace
from ._jit import choose, njit


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), never overflowing; same shape and dtype as ``x``."""
    out = np.empty_like(x, order="C")
    choose(x, _sigmoid_numpy, _sigmoid)(np.ascontiguousarray(x).reshape(-1), out.reshape(-1))
    return out


def sigmoid_backward(grad: np.ndarray, y: np.ndarray) -> np.ndarray:
    """grad * y * (1 - y) for arrays of one shape (y: the sigmoid's output)."""
    if grad.shape != y.shape or grad.dtype != y.dtype:
        return grad * (y * (1 - y))
    out = np.empty_like(y, order="C")
    g, yc = np.ascontiguousarray(grad).reshape(-1), np.ascontiguousarray(y).reshape(-1)
    choose(y, _sigmoid_backward_numpy, _sigmoid_backward)(g, yc, out.reshape(-1))
    return out


def _sigmoid_numpy(x: np.ndarray, out: np.ndarray) -> None:
    """Reference (1-D): exp of a non-positive number only, so it never overflows."""
    e = np.exp(-np.abs(x))
    out[...] = np.where(x >= 0, 1 / (1 + e), e / (1 + e))


@njit(fastmath={"contract"}, error_model="numpy")
def _sigmoid(x, out):
    for i in range(x.size):
        out[i] = -abs(x[i])
    exp_inplace(out)  # e = exp(-|x|) in (0, 1]; NaN stays NaN
    for i in range(x.size):
        e = out[i]
        out[i] = (1 if x[i] >= 0 else e) / (1 + e)


def _sigmoid_backward_numpy(grad: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """Reference (1-D)."""
    out[...] = grad * (y * (1 - y))


@njit(fastmath={"contract"}, error_model="numpy")
def _sigmoid_backward(grad, y, out):
    for i in range(y.size):
        out[i] = grad[i] * (y[i] * (1 - y[i]))
