"""``exp2(x) = 2^x`` in one vectorised pass, exact for integers.

``exp(x ln 2)`` loses precision for large ``|x|`` (the rounding of ``x ln 2`` is
multiplied by ``|x ln 2|``: ~40 float32 ulp at ``x = 120``).  The kernel splits
``x = k + r`` with ``k`` the nearest integer and ``|r| <= 1/2`` (exact), so::

    2^x = 2^r * 2^k,   2^r = exp(r ln 2)   (the SIMD exp of ``_exp.py``; |r ln 2| <= 0.35)

and ``2^k`` is built from its bits in two factors (each a normal float, so that results
near overflow and in the subnormal range come out right).  Within ~1.5 ulp of the exact
value; integers give exact powers of 2.  ``inf`` gives inf, ``-inf`` 0, NaN NaN.  The
NumPy reference is ``np.exp2`` (the C library, per element).  ``exp2_backward``: ``grad * y * ln 2``
from the output ``y`` in one pass (NumPy's two; a gradient that is one value throughout, ``sum``'s,
read as that value: ``dispatch.flat_operand``).

>>> exp2(np.array([0.0, 10.0, -1.0, 0.5]))
array([1.00000000e+00, 1.02400000e+03, 5.00000000e-01, 1.41421356e+00])
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import near_zero32, near_zero64, scale32, scale64
from .runtime.dispatch import Kernel, flat_operand
from .runtime.jit import njit

_LN2 = math.log(2.0)


def exp2(x: np.ndarray) -> np.ndarray:
    """2 ** x elementwise (a new array of ``x``'s shape and dtype)."""
    return _EXP2.map(x)


def _exp2_numpy(x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(over="ignore"):  # (silently inf, as PyTorch)
        np.exp2(x, out=out)


@njit(inline="always", fastmath={"contract"})
def _exp2_32(v):
    f = np.float32
    k = np.floor(v + f(0.5))
    k = k if k < f(130.0) else f(130.0)  # (beyond: inf or 0 anyway; NaN and inf are handled last)
    k = k if k > f(-160.0) else f(-160.0)
    r = v - k
    y = scale32(near_zero32(r * f(_LN2)), k)
    y = y if v < f(130.0) else f(np.inf)  # (NaN is kept in the last line)
    y = y if v > f(-160.0) else f(0.0)
    return y if v == v else v


@njit(inline="always", fastmath={"contract"})
def _exp2_64(v):
    k = np.floor(v + 0.5)
    k = k if k < 1030.0 else 1030.0
    k = k if k > -1100.0 else -1100.0
    r = v - k
    y = scale64(near_zero64(r * _LN2), k)
    y = y if v < 1030.0 else np.inf
    y = y if v > -1100.0 else 0.0
    return y if v == v else v


@njit(fastmath={"contract"}, error_model="numpy")
def _exp2(x, out):
    if x.itemsize == 4:
        for i in range(x.size):
            out[i] = _exp2_32(x[i])
    else:
        for i in range(x.size):
            out[i] = _exp2_64(x[i])


_EXP2 = Kernel(_exp2_numpy, _exp2)


def exp2_backward(grad: np.ndarray, y: np.ndarray) -> np.ndarray:
    """grad * y * ln 2 (y = exp2(x), a float array; grad broadcasts to it); a new array of y's shape."""
    out = np.empty(y.shape, y.dtype)
    _EXP2_BACKWARD.on(y)(flat_operand(grad, y), y.ravel(), y.dtype.type(_LN2), out.ravel())
    return out


def _exp2_backward_numpy(grad, y, ln2, out) -> None:
    """Reference (1-D; ``grad`` of y's size or one value)."""
    out[...] = grad * y * ln2


@njit
def _exp2_backward(grad, y, ln2, out):
    full = grad.size > 1
    for i in range(y.size):
        out[i] = grad[i if full else 0] * y[i] * ln2


_EXP2_BACKWARD = Kernel(_exp2_backward_numpy, _exp2_backward)
