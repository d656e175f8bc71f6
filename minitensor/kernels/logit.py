"""``logit(x) = log(z / (1 - z))`` (z: x clamped to [eps, 1 - eps] when eps is given) and its gradient,
each in one pass.

NumPy takes four passes for the value (clip, ``1 - z``, the quotient, ``log``) and four for the
gradient; the kernels compute each element's ``z / (1 - z)`` as NumPy does (the same two roundings)
and its log by ``exp_log.py``'s ``log32``/``log64`` (within 2 ulp).  Gradient (PyTorch's): ``grad / (x (1 - x))``; with
eps, 0 where x is outside [eps, 1 - eps]; without, NaN where x is outside [0, 1] (there
``x (1 - x) < 0``).  The bounds are taken in x's dtype (as NumPy compares a float32 array with a
Python float).  The NumPy references are those formulas (``tests/kernels/test_logit_kernel.py``).

>>> logit(np.array([0.5, 0.75, 0.0, 1.0]), None)
array([0.        , 1.09861229,       -inf,        inf])
>>> logit_backward(np.ones(2), np.array([0.5, 0.1]), 0.2)
array([4., 0.])
"""

from __future__ import annotations

import numpy as np

from ._log import log_consts
from .exp_log import log32, log64
from .runtime.dispatch import Kernel, flat_operand
from .runtime.jit import njit


def logit(x: np.ndarray, eps) -> np.ndarray:
    """log(z / (1 - z)) of a float array, z = x clamped to [eps, 1 - eps] (eps None: z = x)."""
    out = np.empty(x.shape, x.dtype)
    lo, hi = _bounds(eps, x.dtype)
    _LOGIT.on(out)(x.ravel(), lo, hi, out.ravel())
    return out


def logit_backward(grad, x: np.ndarray, eps) -> np.ndarray:
    """grad / (x (1 - x)) of x's shape: 0 outside [eps, 1 - eps], or NaN outside [0, 1] when eps is None."""
    out = np.empty(x.shape, x.dtype)
    lo, hi = _bounds(eps, x.dtype)
    _LOGIT_BACKWARD.on(out)(flat_operand(grad, out), x.ravel(), eps is not None, lo, hi, out.ravel())
    return out


def _bounds(eps, dtype) -> tuple:
    """(eps, 1 - eps) in ``dtype`` (-inf and inf when eps is None: the clamp changes nothing)."""
    return (dtype.type(-np.inf), dtype.type(np.inf)) if eps is None else (dtype.type(eps), dtype.type(1 - eps))


def _logit_numpy(x, lo, hi, out) -> None:
    """Reference (1-D)."""
    z = np.clip(x, lo, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[...] = np.log(z / (1 - z))


@njit(fastmath={"contract"}, error_model="numpy")
def _logit(x, lo, hi, out):
    k = log_consts(x)
    if x.itemsize == 4:
        for i in range(x.size):
            z = _clamped(x[i], lo, hi)
            out[i] = log32(z / (k.one - z), k)
    else:
        for i in range(x.size):
            z = _clamped(x[i], lo, hi)
            out[i] = log64(z / (k.one - z), k)


@njit(inline="always")
def _clamped(v, lo, hi):
    """v clamped to [lo, hi] (NaN stays NaN), always: a test of eps in the loop kept it from being vectorised."""
    return lo if v < lo else (hi if v > hi else v)


def _logit_backward_numpy(grad, x, clamp, lo, hi, out) -> None:
    """Reference (1-D; ``grad`` of x's size or one value)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if clamp:
            outside = (x < lo) | (x > hi)
            safe = np.where(outside, 0.5, x)
            out[...] = np.where(outside, 0.0, grad / (safe * (1 - safe)))
        else:
            spread = x * (1 - x)
            out[...] = np.where(spread < 0, np.nan, grad / spread)


@njit(error_model="numpy")
def _logit_backward(grad, x, clamp, lo, hi, out):
    full = grad.size > 1
    one = x.dtype.type(1)
    for i in range(x.size):
        v, g = x[i], grad[i if full else 0]
        spread = v * (one - v)
        if clamp:
            out[i] = 0 if (v < lo) | (v > hi) else g / spread
        else:
            out[i] = np.nan if spread < 0 else g / spread


_LOGIT = Kernel(_logit_numpy, _logit, ns=1.0)
_LOGIT_BACKWARD = Kernel(_logit_backward_numpy, _logit_backward, ns=0.3)
