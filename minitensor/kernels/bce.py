"""Binary cross-entropy of probabilities (``F.binary_cross_entropy``), one kernel pass each way::

    lp = max(log p, -100),  lq = max(log(1 - p), -100)        (PyTorch's clamp: p = 0 or 1 stays finite)
    loss = -w * (t * lp + (1 - t) * lq)

and, times the incoming gradient (a scalar for the reductions, with 'mean''s 1/n)::

    dp = -w * (t / p - (1 - t) / (1 - p))    each quotient 0 where its log was clamped (or p is 0, resp. 1)
    dt = -w * (lp - lq)
    dw = -(t * lp + (1 - t) * lq)

``logs`` takes the two logs with NumPy's SIMD ``log`` (two passes); the forward kernel clamps
them, forms the loss and its float64 sum (``vector_sum``) in one pass, and the backward kernel
computes the three gradients from the kept logs in one more, where NumPy took about twenty
passes with temporaries.  All arrays are 1-D, of one length and dtype (the op broadcasts and
flattens them); ``w`` may be None.  Each kernel has its NumPy reference beside it;
``tests/kernels/test_bce_kernel.py`` holds them equal.

>>> lp, lq = logs(np.array([0.5, 0.0, 0.9]))
>>> bce(lp, lq, np.array([1.0, 1.0, 0.0]), None, per_element=True)
array([  0.69314718, 100.        ,   2.30258509])
"""

from __future__ import annotations

import numpy as np

from ._sum import vector_sum
from .runtime.dispatch import Kernel
from .runtime.jit import njit

_PIECE = 2048  # losses summed per piece (in the L1 cache)
_FLOOR = np.float32(-100.0)  # (float32 constants keep float32 arithmetic float32; exact in float64)
_ZERO, _ONE = np.float32(0.0), np.float32(1.0)


def logs(p: np.ndarray) -> tuple:
    """(log p, log(1 - p)), unclamped (-inf at p = 0, resp. 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(p), np.log(1 - p)


def bce(lp: np.ndarray, lq: np.ndarray, t: np.ndarray, w, per_element: bool):
    """The losses from ``logs(p)``: per element (an array of t's shape), or their float64 sum."""
    loss = np.empty(t.shape, t.dtype) if per_element else None
    total = _BCE.on(t)(lp.ravel(), lq.ravel(), t.ravel(), None if w is None else w.ravel(),
                None if loss is None else loss.ravel())  # fmt: skip
    return loss if per_element else total


def _bce_numpy(lp, lq, t, w, loss) -> float:
    """Reference (1-D); returns the float64 sum of the losses."""
    each = -(t * np.maximum(lp, -100) + (1 - t) * np.maximum(lq, -100))
    if w is not None:
        each = each * w
    if loss is not None:
        loss[...] = each
    return float(np.sum(each, dtype=np.float64))


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _clamp(v):
    """max(v, -100), NaN staying NaN."""
    return _FLOOR if v < _FLOOR else v


@njit(fastmath={"contract"}, error_model="numpy", read_only=("lp", "lq", "t", "w"))
def _bce(lp, lq, t, w, loss):
    total = 0.0
    scratch = np.empty(min(t.size, _PIECE), t.dtype)
    for start in range(0, t.size, _PIECE):  # (slices indexed from 0: LLVM vectorises these loops)
        stop = min(start + _PIECE, t.size)
        ps, qs, ts, each = lp[start:stop], lq[start:stop], t[start:stop], scratch[: stop - start]
        for j in range(ts.size):
            each[j] = -(ts[j] * _clamp(ps[j]) + (_ONE - ts[j]) * _clamp(qs[j]))
        if w is not None:
            ws = w[start:stop]
            for j in range(ts.size):
                each[j] = each[j] * ws[j]
        if loss is not None:
            out = loss[start:stop]
            for j in range(ts.size):
                out[j] = each[j]
        total += vector_sum(each)
    return total


def bce_backward(p, t, w, lp, lq, grad, need: tuple) -> tuple:
    """``(dp, dt, dw)`` (each None unless ``need[i]``) from ``logs(p)`` and the incoming ``grad``: an
    array of p's shape (reduction 'none') or a scalar (already divided by the count for 'mean')."""
    g, c = (grad.ravel(), p.dtype.type(1)) if np.ndim(grad) else (None, p.dtype.type(grad))
    outs = [np.empty(p.shape, p.dtype) if n else None for n in need]
    arrays = [None if a is None else a.ravel() for a in (p, t, w, lp, lq)]
    _BCE_BACKWARD.on(p)(*arrays, g, c, *(None if o is None else o.ravel() for o in outs))
    return tuple(outs)


def _bce_backward_numpy(p, t, w, lp, lq, g, c, dp, dt, dw) -> None:
    """Reference (1-D)."""
    scale = c if g is None else g * c
    a, b = np.maximum(lp, -100), np.maximum(lq, -100)
    ws = scale if w is None else scale * w
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (masked out: where the log is clamped)
        slope_p = np.where((p > 0) & (lp >= -100), t / p, 0)
        slope_q = np.where((1 - p > 0) & (lq >= -100), (1 - t) / (1 - p), 0)
    for out, value in ((dp, -ws * (slope_p - slope_q)), (dt, -ws * (a - b)), (dw, -scale * (t * a + (1 - t) * b))):
        if out is not None:
            out[...] = value


@njit(inline="always")
def grad_factor(g, c, w, i):
    """The incoming gradient's factor at ``i`` times the weight: ``c``, times ``g[i]`` and ``w[i]``
    where they are arrays (None: numba compiles that case apart).  Also the logits kernels'."""
    scale = c if g is None else g[i] * c
    return scale if w is None else scale * w[i]


@njit(fastmath={"contract"}, error_model="numpy", optional={"dp": "p", "dt": "p", "dw": "p"})
def _bce_backward(p, t, w, lp, lq, g, c, dp, dt, dw):
    if dp is not None:
        out = dp[:]  # (the array out of its Optional, once)
        for i in range(p.size):
            pi, ti, q = p[i], t[i], _ONE - p[i]
            slope_p = ti / pi if (pi > _ZERO) & (lp[i] >= _FLOOR) else _ZERO
            slope_q = (_ONE - ti) / q if (q > _ZERO) & (lq[i] >= _FLOOR) else _ZERO
            out[i] = -grad_factor(g, c, w, i) * (slope_p - slope_q)
    if dt is not None:
        out = dt[:]
        for i in range(p.size):
            out[i] = -grad_factor(g, c, w, i) * (_clamp(lp[i]) - _clamp(lq[i]))
    if dw is not None:
        out = dw[:]
        for i in range(p.size):
            scale = c if g is None else g[i] * c
            out[i] = -scale * (t[i] * _clamp(lp[i]) + (_ONE - t[i]) * _clamp(lq[i]))


# Serial ns per element of the kernels (the ``Kernel``'s ``ns``; measured).
_BCE = Kernel(_bce_numpy, _bce, ns=0.25)
_BCE_BACKWARD = Kernel(_bce_backward_numpy, _bce_backward, ns=0.3)
