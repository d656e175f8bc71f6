"""The gated linear unit (``F.glu``) forward and backward, each in one pass over x's memory.

``x`` split in halves ``a`` and ``b`` along ``dim``::

    out = a * s,   s = sigmoid(b)                      (the forward keeps s when a gradient is needed)
    da = grad * s,   db = grad * a * s * (1 - s)       (the two halves of one dx)

Any ``dim``: a C-contiguous ``x`` seen as ``(outer, 2, inner)`` (the dims before ``dim``, the two
halves, the rest of ``dim`` and the dims after it) has ``a = x[:, 0]`` and ``b = x[:, 1]``, each
``(outer, inner)`` with contiguous rows, so one kernel serves every ``dim`` without copying.
NumPy took five passes forward and seven backward (the halves, the sigmoid, products, the copy into
dx).  The sigmoid is ``pointwise.py``'s ``(1 or e) / (1 + e)``, ``e = exp(-|b|)``, with the SIMD exp
of ``_exp.py`` inlined.  The NumPy references are the definitions
(``tests/kernels/test_glu_kernel.py``); a gradient that is one value throughout (``sum``'s) is
read as that value (``dispatch.flat_operand``).

>>> out, s = glu(np.array([[1.0, 2.0, 0.0, 0.0]]), 1, keep=True)
>>> out, s
(array([[0.5, 1. ]]), array([[0.5, 0.5]]))
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import exp32, exp64
from .pointwise import _logistic
from .runtime.dispatch import Kernel, flat_operand
from .runtime.jit import njit

_ONE = np.float32(1.0)


def _halves(x: np.ndarray, dim: int) -> tuple:
    """(x as (outer, 2, inner), the output's shape) for the halves along ``dim`` (non-negative)."""
    outer = math.prod(x.shape[:dim])
    inner = x.shape[dim] // 2 * math.prod(x.shape[dim + 1 :])
    shape = x.shape[:dim] + (x.shape[dim] // 2,) + x.shape[dim + 1 :]
    return np.ascontiguousarray(x).reshape(outer, 2, inner), shape


def glu(x: np.ndarray, dim: int, keep: bool) -> tuple:
    """``(a * sigmoid(b), sigmoid(b) or None)`` of a float ``x`` whose ``dim`` (non-negative, even
    size) splits into ``a`` and ``b``; ``keep``: return sigmoid(b) for ``glu_backward``."""
    x3, shape = _halves(x, dim)
    out = np.empty(shape, x.dtype)
    s = np.empty(shape, x.dtype) if keep else None
    rows = (x3.shape[0], x3.shape[2])
    _GLU.on(x3)(x3, out.reshape(rows), None if s is None else s.reshape(rows))
    return out, s


def glu_backward(grad, x: np.ndarray, s: np.ndarray, dim: int) -> np.ndarray:
    """dx (x's shape, C-contiguous) from ``grad`` (broadcasting to the output's shape) and the kept ``s``."""
    x3, shape = _halves(x, dim)
    s2 = s.reshape(x3.shape[0], x3.shape[2])
    g = flat_operand(grad, s)
    g2 = g.reshape(1, 1) if g.size == 1 else g.reshape(s2.shape)
    dx = np.empty(x3.shape, x.dtype)
    _GLU_BACKWARD.on(x3)(g2, x3, s2, dx)
    return dx.reshape(x.shape)


def _glu_numpy(x3, out, s) -> None:
    """Reference ((outer, 2, inner) in, (outer, inner) out)."""
    sig = 1 / (1 + np.exp(-x3[:, 1]))
    out[...] = x3[:, 0] * sig
    if s is not None:
        s[...] = sig


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _glu_rows(x3, out, s, exp):
    for o in range(x3.shape[0]):
        a, b, y = x3[o, 0], x3[o, 1], out[o]
        for i in range(a.size):
            t = _logistic(b[i], exp)
            y[i] = a[i] * t
            if s is not None:
                s[o, i] = t


@njit(fastmath={"contract"}, error_model="numpy")
def _glu(x3, out, s):
    if x3.itemsize == 4:
        _glu_rows(x3, out, s, exp32)
    else:
        _glu_rows(x3, out, s, exp64)


def _glu_backward_numpy(g, x3, s, dx) -> None:
    """Reference (``g``: the gradient as (outer, inner), or its one value as (1, 1))."""
    dx[:, 0] = g * s
    dx[:, 1] = g * x3[:, 0] * (s * (1 - s))


@njit(fastmath={"contract"}, error_model="numpy")
def _glu_backward(g, x3, s, dx):
    full = g.size > 1
    for o in range(x3.shape[0]):
        a, t, da, db = x3[o, 0], s[o], dx[o, 0], dx[o, 1]
        for i in range(a.size):
            gi = g[o, i] if full else g[0, 0]
            da[i] = gi * t[i]
            db[i] = gi * a[i] * (t[i] * (_ONE - t[i]))


_GLU = Kernel(_glu_numpy, _glu, ns=0.5)
_GLU_BACKWARD = Kernel(_glu_backward_numpy, _glu_backward, ns=0.3)
