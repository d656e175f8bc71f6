"""The l1, smooth L1 and Huber losses of differences ``d``, one pass each way.

With ``a = |d|`` and ``limit`` (smooth L1's beta, Huber's delta), elementwise::

    kind        loss                                                 slope = d loss / d d
    l1          a                                                    sign(d)
    smooth_l1   (q (a - q / 2)) / limit,  q = min(a, limit)          clip(d / limit, -1, 1)
    huber        q (a - q / 2)                                        clip(d, -limit, limit)

``q (a - q / 2)`` is ``d^2 / 2`` below the limit and ``limit (a - limit / 2)`` above it:
the same roundings as NumPy's ``np.where(a < limit, 0.5 * d * d, limit * (a - 0.5 * limit))``
(halving is exact).  ``robust_loss`` and ``robust_slope`` pick the kernel or the NumPy
reference beside it (``_loss_numpy``, ``_slope_numpy``, several passes each); the two give
the same bits (``tests/kernels/test_robust_loss_kernel.py``).  NaN gives NaN.

>>> robust_loss(np.array([0.5, -3.0]), "huber", 1.0)
array([0.125, 2.5  ])
>>> robust_slope(np.array([0.5, -3.0]), "huber", 1.0, np.array(2.0))
array([ 1., -2.])
"""

from __future__ import annotations

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import njit

KINDS = {"l1": 0, "smooth_l1": 1, "huber": 2}


def robust_loss(d: np.ndarray, kind: str, limit: float) -> np.ndarray:
    """The loss of each difference (a new array of ``d``'s shape and dtype)."""
    code, limit = KINDS[kind], d.dtype.type(limit)
    out = np.empty_like(d)
    run = _LOSS.on(d) if d.flags.c_contiguous else _loss_numpy
    run(d.ravel() if run is _loss else d, code, limit, out, d.dtype.type(0.5))  # (0.5: as `one` below)
    return out


def robust_slope(d: np.ndarray, kind: str, limit: float, grad: np.ndarray) -> np.ndarray:
    """slope(d) * grad: ``grad`` 0-d (a reduced loss's gradient, already scaled for 'mean') or of
    ``d``'s shape."""
    code, limit = KINDS[kind], d.dtype.type(limit)
    out = np.empty_like(d)
    flat = d.flags.c_contiguous and (grad.ndim == 0 or (grad.shape == d.shape and grad.flags.c_contiguous))
    run = _SLOPE.on(d) if flat and grad.dtype == d.dtype else _slope_numpy
    if run is _slope:  # (1-D views; the kernel writes ``out`` through a flat view of its own)
        d, grad = d.ravel(), (grad.reshape(1) if grad.ndim == 0 else grad.ravel())
    run(d, code, limit, grad, out, d.dtype.type(1))  # (1 in d's dtype: a Python number would make
    # numba compute in float64, with other roundings than NumPy's float32 and half the SIMD lanes)
    return out


# ------------------------------------------------------------------ the NumPy references
def _loss_numpy(d, code, limit, out, half) -> None:
    a = np.abs(d)
    if code == 0:
        out[...] = a
        return
    np.copyto(out, np.where(a < limit, 0.5 * d * d, limit * (a - 0.5 * limit)))
    if code == 1:
        out /= limit


def _slope_numpy(d, code, limit, grad, out, one) -> None:
    if code == 0:
        slope = np.sign(d)
    elif code == 1:
        slope = np.clip(d / limit, -1, 1)
    else:
        slope = np.clip(d, -limit, limit)
    np.multiply(slope, grad, out=out)


# ------------------------------------------------------------------ the kernels (1-D, C-contiguous)
@njit(error_model="numpy")
def _loss(d, code, limit, out, half):
    out = out.reshape(d.size)
    for i in range(d.size):
        a = abs(d[i])
        q = a if a < limit else limit  # (NaN: limit, and the loss below is NaN)
        piecewise = q * (a - q * half)
        loss = a if code == 0 else piecewise
        out[i] = loss / limit if code == 1 else loss


@njit(error_model="numpy")
def _slope(d, code, limit, grad, out, one):
    out = out.reshape(d.size)
    for i in range(d.size):
        v = d[i]
        sign = one if v > 0 else (-one if v < 0 else v - v)  # (0 stays 0, NaN stays NaN)
        t = v / limit if code == 1 else v
        top = one if code == 1 else limit
        t = top if t > top else (-top if t < -top else t)
        slope = sign if code == 0 else t
        out[i] = slope * (grad[0] if grad.size == 1 else grad[i])


_LOSS = Kernel(_loss_numpy, _loss)
_SLOPE = Kernel(_slope_numpy, _slope)
