"""Softplus and the logistic loss (binary cross-entropy of logits), one pass forward and one backward.

Both are built on ``softplus(z) = log(1 + exp(z)) = max(z, 0) + log1p(exp(-|z|))``: the exp
of a non-positive number never overflows, and ``log1p`` keeps the precision where
``exp(-|z|)`` is tiny.  Its derivative is ``sigmoid(z) = (1 or e) / (1 + e)`` with the same
``e = exp(-|z|)``, so the forward pass computes the slope for the backward pass at the cost of
one division and one more array written (only when a gradient will be needed).  NumPy takes
about ten passes with temporaries for each; the kernels use ``exp`` from ``_exp.py`` on pieces of
``_PIECE`` elements (in the L1 cache) and ``log1p_unit`` from ``_log.py``.

- ``softplus(x, beta, threshold)``: ``x`` where ``beta x > threshold`` (as PyTorch), else
  ``softplus(beta x) / beta``; slope ``1``, else ``sigmoid(beta x)``.  The backward pass is
  ``grad * slope`` (one NumPy multiply).
- ``bce_logits(x, t, w, pw)``: ``loss = w ((1 - t) x + L softplus(-x))`` with
  ``L = 1 + (pw - 1) t`` (``pw``: PyTorch's ``pos_weight``), summed (float64) or kept per
  element.  Backward: ``dx = w (L s - pw t)`` (``w (s - t)`` without pw) and
  ``dt = w ((pw - 1) softplus(-x) - x)`` (``-w x`` without pw), times the incoming gradient,
  from ``s = sigmoid(x)`` (and ``softplus(-x)`` with pw) kept by the forward pass.

All arrays are 1-D and contiguous (the wrappers flatten them with ``ravel()``, a copy
only for a non-contiguous array); ``w`` and ``pw`` are None or
arrays of x's size.  The arithmetic is in x's dtype (``log_consts``).  Each kernel
has its NumPy reference beside it (the same formulas); ``tests/kernels/test_softplus_kernel.py``
holds them equal.

>>> y, slope = softplus(np.array([-30.0, 0.0, 30.0]), 1.0, 20.0, keep_slope=True)
>>> y.round(6), slope.round(6)
(array([ 0.      ,  0.693147, 30.      ]), array([0. , 0.5, 1. ]))
"""

from __future__ import annotations

import numpy as np

from ._exp import exp_inplace
from ._log import log1p_unit, log_consts
from ._sum import vector_sum
from .bce import grad_factor
from .runtime.dispatch import Kernel
from .runtime.jit import njit

_PIECE = 2048  # elements per exp call: the piece's scratch stays in the L1 cache


# ------------------------------------------------------------------ softplus
def softplus(x: np.ndarray, beta: float, threshold: float, keep_slope: bool) -> tuple:
    """``(softplus(x), slope or None)`` for a float array of any shape; the slope d/dx (for the
    backward pass) is computed when ``keep_slope``."""
    out = np.empty(x.shape, x.dtype)
    slope = np.empty(x.shape, x.dtype) if keep_slope else None
    t = x.dtype.type
    flat_slope = None if slope is None else slope.ravel()
    _SOFTPLUS.on(x)(x.ravel(), t(beta), t(threshold), out.ravel(), flat_slope)
    return out, slope


def _softplus_numpy(x, beta, threshold, out, slope) -> None:
    """Reference (1-D)."""
    z = x * beta
    linear = z > threshold
    e = np.exp(-np.abs(z))
    out[...] = np.where(linear, x, (np.maximum(z, 0) + np.log1p(e)) / beta)
    if slope is not None:
        slope[...] = np.where(linear, 1, np.where(z >= 0, 1, e) / (1 + e))


@njit(fastmath={"contract"}, error_model="numpy")
def _softplus(x, beta, threshold, out, slope):
    k = log_consts(x)
    for start in range(0, x.size, _PIECE):  # (slices indexed from 0: LLVM vectorises these loops)
        xs, ys = x[start : start + _PIECE], out[start : start + _PIECE]
        for j in range(xs.size):
            ys[j] = -abs(beta * xs[j])
        exp_inplace(ys)  # e = exp(-|z|)
        if slope is not None:
            ss = slope[start : start + _PIECE]
            for j in range(xs.size):
                z, e = beta * xs[j], ys[j]
                ss[j] = k.one if z > threshold else (k.one if z >= k.zero else e) / (k.one + e)
        for j in range(xs.size):
            v = xs[j]
            z = beta * v
            soft = ((z if z > k.zero else k.zero) + log1p_unit(ys[j], k)) / beta  # (NaN: log1p of NaN)
            ys[j] = v if z > threshold else soft


# ------------------------------------------------------------------ BCE with logits
def bce_logits(x: np.ndarray, t: np.ndarray, w, pw, per_element: bool, keep: tuple) -> tuple:
    """``(loss, s, sp)`` for x, t of one shape (w, pw: None or arrays of that shape).

    ``loss``: the per-element losses (``per_element``) or their float64 sum; ``s`` = sigmoid(x)
    when ``keep[0]``, ``sp`` = softplus(-x) when ``keep[1]`` (else None): what the backward needs.
    """
    loss = np.empty(x.shape, x.dtype) if per_element else None
    s = np.empty(x.shape, x.dtype) if keep[0] else None
    sp = np.empty(x.shape, x.dtype) if keep[1] else None
    flats = [None if a is None else a.ravel() for a in (w, pw)]
    outs = [None if a is None else a.ravel() for a in (loss, s, sp)]
    total = _BCE_LOGITS.on(x)(x.ravel(), t.ravel(), *flats, *outs)
    return (loss if per_element else total), s, sp


def _bce_logits_numpy(x, t, w, pw, loss, s, sp) -> float:
    """Reference (1-D); returns the float64 sum of the losses."""
    e = np.exp(-np.abs(x))
    soft = np.maximum(-x, 0) + np.log1p(e)  # softplus(-x) = -log(sigmoid(x))
    each = (1 - t) * x + (soft if pw is None else (1 + (pw - 1) * t) * soft)
    if w is not None:
        each = each * w
    for out, value in ((loss, each), (s, np.where(x >= 0, 1, e) / (1 + e)), (sp, soft)):
        if out is not None:
            out[...] = value
    return float(np.sum(each, dtype=np.float64))


@njit(fastmath={"contract"}, error_model="numpy", optional={"w": "x", "pw": "x", "loss": "x", "s": "x", "sp": "x"})
def _bce_logits(x, t, w, pw, loss, s, sp):
    k = log_consts(x)
    total = 0.0
    scratch = np.empty(min(x.size, _PIECE), x.dtype)
    for start in range(0, x.size, _PIECE):
        stop = min(start + _PIECE, x.size)
        xs, ts, each = x[start:stop], t[start:stop], scratch[: stop - start]
        for j in range(xs.size):
            each[j] = -abs(xs[j])
        exp_inplace(each)  # e = exp(-|x|)
        if s is not None:
            ss = s[start:stop]
            for j in range(xs.size):
                e = each[j]
                ss[j] = (k.one if xs[j] >= k.zero else e) / (k.one + e)
        for j in range(xs.size):  # softplus(-x)
            v = xs[j]
            each[j] = (-v if v < k.zero else k.zero) + log1p_unit(each[j], k)
        if sp is not None:
            sps = sp[start:stop]
            for j in range(xs.size):
                sps[j] = each[j]
        if pw is not None:
            pws = pw[start:stop]
            for j in range(xs.size):
                each[j] = each[j] * (k.one + (pws[j] - k.one) * ts[j])
        for j in range(xs.size):
            each[j] = (k.one - ts[j]) * xs[j] + each[j]
        if w is not None:
            ws = w[start:stop]
            for j in range(xs.size):
                each[j] = each[j] * ws[j]
        if loss is not None:
            ls = loss[start:stop]
            for j in range(xs.size):
                ls[j] = each[j]
        total += vector_sum(each)
    return total


def bce_logits_backward(x, t, w, pw, s, sp, grad, need: tuple) -> tuple:
    """``(dx, dt)`` (each None unless ``need[i]``) from the forward's ``s`` and ``sp`` and the
    incoming ``grad``: an array of x's shape (reduction 'none') or a scalar (the reduction's
    gradient, already divided by the count for 'mean')."""
    g, c = (grad.ravel(), x.dtype.type(1)) if np.ndim(grad) else (None, x.dtype.type(grad))
    dx = np.empty(x.shape, x.dtype) if need[0] else None
    dt = np.empty(x.shape, x.dtype) if need[1] else None
    args = [None if a is None else a.ravel() for a in (w, pw, s, sp)]
    outs = [None if a is None else a.ravel() for a in (dx, dt)]
    _BCE_LOGITS_BACKWARD.on(x)(x.ravel(), t.ravel(), *args, g, c, *outs)
    return dx, dt


def _bce_logits_backward_numpy(x, t, w, pw, s, sp, g, c, dx, dt) -> None:
    """Reference (1-D)."""
    scale = c if g is None else g * c
    if w is not None:
        scale = scale * w
    if dx is not None:
        dx[...] = (s - t if pw is None else (1 + (pw - 1) * t) * s - pw * t) * scale
    if dt is not None:
        dt[...] = (-x if pw is None else (pw - 1) * sp - x) * scale


@njit(fastmath={"contract"}, error_model="numpy", optional={"s": "x", "sp": "x", "dx": "x", "dt": "x"})
def _bce_logits_backward(x, t, w, pw, s, sp, g, c, dx, dt):
    one = log_consts(x).one
    if dx is not None:
        dxs, ss = dx[:], s[:]  # (the arrays out of their Optional, once)
        for i in range(x.size):
            d = ss[i] - t[i] if pw is None else (one + (pw[i] - one) * t[i]) * ss[i] - pw[i] * t[i]
            dxs[i] = d * grad_factor(g, c, w, i)
    if dt is not None:
        dts = dt[:]
        if pw is None:
            for i in range(x.size):
                dts[i] = -x[i] * grad_factor(g, c, w, i)
        else:
            sps = sp[:]
            for i in range(x.size):
                dts[i] = ((pw[i] - one) * sps[i] - x[i]) * grad_factor(g, c, w, i)


# Serial ns per element (the ``Kernel``'s ``ns``; measured).
_SOFTPLUS = Kernel(_softplus_numpy, _softplus, ns=1.0)
_BCE_LOGITS = Kernel(_bce_logits_numpy, _bce_logits, ns=1.0)
_BCE_LOGITS_BACKWARD = Kernel(_bce_logits_backward_numpy, _bce_logits_backward, ns=0.3)
