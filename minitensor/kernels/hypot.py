"""``hypot(a, b) = sqrt(a^2 + b^2)`` without overflow, and its gradients, each in one pass.

NumPy's ``np.hypot`` calls the C library per element (~5 ns); the kernel:

- float32: ``sqrt(a^2 + b^2)`` in float64, where no square overflows or underflows: one rounding
  to float32 at the end (within half an ulp and a hair, as the C library's);
- float64: ``m sqrt(1 + (s / m)^2)`` with ``m = max(|a|, |b|)``, ``s`` the other (within ~2 ulp);
- an infinite operand gives inf even beside NaN, as C's ``hypot`` (and PyTorch's); ``0, 0`` gives 0.

Backward (PyTorch's formulas): ``da = grad * a / out``, ``db = grad * b / out`` (NaN where out = 0,
as PyTorch), both from one pass over ``grad``, ``a``, ``b`` and the saved ``out``.

The NumPy references (``np.hypot`` and the formulas) are the definitions
(``tests/kernels/test_hypot_kernel.py``).  Arrays of one shape (broadcast ones are copied by
``ravel()``; a gradient that is one value throughout is read as that value, ``dispatch.flat_operand``).

>>> hypot(np.array([3.0, np.inf, 0.0]), np.array([4.0, np.nan, 0.0]))
array([ 5., inf,  0.])
"""

from __future__ import annotations

import math

import numpy as np

from .runtime.dispatch import Kernel, flat_operand
from .runtime.jit import njit


def hypot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sqrt(a^2 + b^2) of float arrays of one dtype (broadcast together); NumPy's for anything else."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype.kind != "f" or a.dtype != b.dtype:
        return np.hypot(a, b)
    if a.shape != b.shape:
        a, b = np.broadcast_arrays(a, b)
    out = np.empty(a.shape, a.dtype)
    _HYPOT.on(out)(a.ravel(), b.ravel(), out.ravel())
    return out


def hypot_backward(grad, a: np.ndarray, b: np.ndarray, out: np.ndarray, need_a: bool, need_b: bool) -> tuple:
    """``(grad * a / out or None, grad * b / out or None)``, of out's shape (``need_a``, ``need_b``)."""
    if not all(type(x) is np.ndarray and x.shape == out.shape and x.dtype == out.dtype for x in (a, b)):
        scale = grad / out
        return (scale * a if need_a else None), (scale * b if need_b else None)
    da = np.empty(out.shape, out.dtype) if need_a else None
    db = np.empty(out.shape, out.dtype) if need_b else None
    flat = (None if d is None else d.ravel() for d in (da, db))
    _HYPOT_BACKWARD.on(out)(flat_operand(grad, out), a.ravel(), b.ravel(), out.ravel(), *flat)
    return da, db


def _hypot_numpy(a, b, out) -> None:
    """Reference (1-D)."""
    out[...] = np.hypot(a, b)


@njit(error_model="numpy")
def _hypot(a, b, out):
    if a.itemsize == 4:
        for i in range(a.size):
            x, y = np.float64(a[i]), np.float64(b[i])
            h = math.sqrt(x * x + y * y)
            out[i] = np.inf if (abs(x) == np.inf) | (abs(y) == np.inf) else h
    else:
        for i in range(a.size):
            x, y = abs(a[i]), abs(b[i])
            m, s = max(x, y), min(x, y)
            r = s / m if m > 0 else 0.0
            h = m * math.sqrt(1.0 + r * r)
            out[i] = np.inf if (x == np.inf) | (y == np.inf) else (h if x == x and y == y else np.nan)


def _hypot_backward_numpy(grad, a, b, out, da, db) -> None:
    """Reference (1-D; ``grad`` of out's size or one value)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = grad / out
    if da is not None:
        da[...] = scale * a
    if db is not None:
        db[...] = scale * b


@njit(error_model="numpy")
def _hypot_backward(grad, a, b, out, da, db):
    full = grad.size > 1
    for i in range(out.size):
        scale = grad[i if full else 0] / out[i]
        if da is not None:
            da[i] = scale * a[i]
        if db is not None:
            db[i] = scale * b[i]


_HYPOT = Kernel(_hypot_numpy, _hypot, ns=0.15)
_HYPOT_BACKWARD = Kernel(_hypot_backward_numpy, _hypot_backward, ns=0.15)
