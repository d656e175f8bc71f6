"""``logaddexp(a, b) = log(e^a + e^b)`` without overflow, and its two gradients, each in one pass.

NumPy's ``np.logaddexp`` calls the C library per element; its formula in NumPy passes took six
(difference, abs, exp, log1p, max, add) and the gradients six more.  The kernels compute, per element::

    d = -|a - b|          out = max(a, b) + log1p(e^d)          (e^d in [0, 1]: no overflow)
    da = grad * sigmoid(a - b),   db = grad * sigmoid(b - a)    (sigmoid(a - b) = 1 / (1 + e^d) where
                                                                 a >= b, e^d / (1 + e^d) where a < b)

with ``_exp.py``'s exp and ``_log.py``'s ``log1p_unit`` (both vectorised; within 2 ulp).  Equal
infinities (``inf - inf`` is NaN) give ``a + log 2``, as NumPy's; there the gradients are NaN, as
PyTorch's (sigmoid of NaN).  The NumPy references are those formulas
(``tests/kernels/test_logaddexp_kernel.py``).

>>> logaddexp(np.array([0.0, 1000.0, -np.inf]), np.array([0.0, 0.0, -np.inf])).tolist()
[0.6931471805599453, 1000.0, -inf]
"""

from __future__ import annotations

import numpy as np

from ._exp import exp32, exp64
from ._log import log1p_unit, log_consts
from .runtime.dispatch import Kernel, flat_operand
from .runtime.jit import njit

_LN2 = 0.6931471805599453


def logaddexp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log(e^a + e^b) of float arrays of one dtype (broadcast together)."""
    if a.shape != b.shape:
        a, b = np.broadcast_arrays(a, b)
    out = np.empty(a.shape, a.dtype)
    _LOGADDEXP.on(out)(a.ravel(), b.ravel(), out.ravel())
    return out


def logaddexp_backward(grad, a: np.ndarray, b: np.ndarray, need_a: bool, need_b: bool) -> tuple:
    """``(grad * sigmoid(a - b) or None, grad * sigmoid(b - a) or None)``, of the broadcast shape."""
    if a.shape != b.shape:
        a, b = np.broadcast_arrays(a, b)
    da = np.empty(a.shape, a.dtype) if need_a else None
    db = np.empty(a.shape, a.dtype) if need_b else None
    flat = (None if d is None else d.ravel() for d in (da, db))
    _LOGADDEXP_BACKWARD.on(a)(flat_operand(grad, a), a.ravel(), b.ravel(), *flat)
    return da, db


def _logaddexp_numpy(a, b, out) -> None:
    """Reference (1-D)."""
    with np.errstate(invalid="ignore"):  # (inf - inf: replaced below)
        value = np.maximum(a, b) + np.log1p(np.exp(-np.abs(a - b)))
    out[...] = np.where(a == b, a + a.dtype.type(_LN2), value)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def logaddexp64(x, y, k):
    """log(e^x + e^y) of two float64 numbers (``k``: float64 ``log_consts``), branch-free: a loop of
    them vectorises (also the running log-sum-exps of ``cumsum.py``)."""
    value = max(x, y) + log1p_unit(exp64(-abs(x - y)), k)
    return x + _LN2 if x == y else value


@njit(fastmath={"contract"}, error_model="numpy")
def _logaddexp(a, b, out):
    k = log_consts(a)
    if a.itemsize == 4:
        ln2 = a.dtype.type(_LN2)
        for i in range(a.size):
            x, y = a[i], b[i]
            value = max(x, y) + log1p_unit(exp32(-abs(x - y)), k)
            out[i] = x + ln2 if x == y else value
    else:
        for i in range(a.size):
            out[i] = logaddexp64(a[i], b[i], k)


def _logaddexp_backward_numpy(grad, a, b, da, db) -> None:
    """Reference (1-D; ``grad`` of a's size or one value): PyTorch's ``grad * sigmoid(±(a - b))``."""
    with np.errstate(invalid="ignore", over="ignore"):
        if da is not None:
            da[...] = grad / (1 + np.exp(b - a))
        if db is not None:
            db[...] = grad / (1 + np.exp(a - b))


@njit(fastmath={"contract"}, error_model="numpy")
def _logaddexp_backward(grad, a, b, da, db):
    full = grad.size > 1
    one = a.dtype.type(1)
    for i in range(a.size):
        x, y = a[i], b[i]
        e = exp32(-abs(x - y)) if a.itemsize == 4 else exp64(-abs(x - y))
        big, small = one / (one + e), e / (one + e)  # sigmoid of the larger minus the smaller, and of its negation
        g = grad[i if full else 0]
        if da is not None:
            da[i] = g * (big if x >= y else small) if x - y == x - y else g * (x - y)  # (NaN: NaN)
        if db is not None:
            db[i] = g * (small if x >= y else big) if x - y == x - y else g * (x - y)


_LOGADDEXP = Kernel(_logaddexp_numpy, _logaddexp, ns=1.0)
_LOGADDEXP_BACKWARD = Kernel(_logaddexp_backward_numpy, _logaddexp_backward, ns=0.5)
