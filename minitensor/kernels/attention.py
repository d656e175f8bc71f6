"""Scaled dot-product attention on stacked heads: the matrix products on BLAS, everything
between them in one row kernel.

For queries ``q`` (..., L, D), keys ``k`` (..., S, D), values ``v`` (..., S, Dv)
(the leading dims: batch and heads)::

    scores = q @ kᵀ                                  BLAS (np.matmul, one GEMM per head)
    P      = softmax(scale * scores + mask)          row kernel, in place, parallel over rows
    out    = (P * dropout) @ v                       BLAS

``mask`` is an additive float mask broadcastable to (..., L, S) (0: may
attend, -inf: may not; bool masks, key padding and the causal mask arrive in
this form).  A row whose keys are all masked has all-zero probabilities, so
its output is 0 and it passes no gradient back: no NaN.  ``dropout`` is None
or the inverted-dropout multipliers (0 or 1/(1-p)) of the same shape as P.

Backward, with ``G = d(loss)/d(out)``::

    dV = (P * dropout)ᵀ @ G                          BLAS
    dP = G @ vᵀ                                      BLAS
    dS = scale * P * (dP * dropout - rowsum(dP * dropout * P))      row kernel, in place
    dQ = dS @ k,   dK = dSᵀ @ q                      BLAS

Why not one numba kernel with the matrix products inside (``np.dot`` in a
``prange`` over heads)?  numba's ``np.dot`` needs SciPy's BLAS, and SciPy is
not a dependency; NumPy's ``np.matmul`` on stacked matrices calls BLAS once
per head just as well.  What a kernel wins is the softmax between the
products: NumPy makes five passes over the (..., L, S) scores (scale+mask,
max, subtract+exp, sum, divide), the kernel one per row while it sits in
the L1 cache, with a SIMD ``exp`` (``_exp.py``).

>>> q = k = v = np.eye(2)[None]               # one head, L = S = D = 2
>>> out, p = attention_forward(q, k, v, None, 1.0, None)
>>> p.round(3)
array([[[0.731, 0.269],
        [0.269, 0.731]]])
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import exp_shifted
from ._jit import choose, njit, prange
from ._rows import chunks, row_dot, row_max


def _transposed(x: np.ndarray) -> np.ndarray:
    """xᵀ over the last two dims as a C-contiguous copy: a transposed *second* operand of a
    stacked ``np.matmul`` is ~30% slower than a contiguous one (a first operand is fine)."""
    return np.ascontiguousarray(np.swapaxes(x, -1, -2))


def _shape_4d(shape: tuple) -> tuple:
    """(..., L, S) -> (B1, B2, L, S): the leading dims as two (the kernels index batch and head)."""
    lead = shape[:-2]
    b1, b2 = (math.prod(lead[:-1]), lead[-1]) if lead else (1, 1)
    return b1, b2, shape[-2], shape[-1]


def _as_4d(a: np.ndarray | None, shape: tuple) -> np.ndarray | None:
    """``a`` broadcast to ``shape`` (..., L, S) and viewed as (B1, B2, L, S) (a view, with zero
    strides where it broadcasts, unless there are three or more leading dims)."""
    if a is None:
        return None
    return np.broadcast_to(a, shape).reshape(_shape_4d(shape))


# ------------------------------------------------------------------ the softmax between the GEMMs
@njit(error_model="numpy")
def _probs_row(s, m, scale, bits):
    """s = softmax(scale * s + m) in place (m: a mask row or None); all-masked rows -> 0."""
    n = s.shape[0]
    if m is None:
        for j in range(n):
            s[j] *= scale
    else:
        for j in range(n):
            s[j] = s[j] * scale + m[j]
    top = row_max(s)
    if np.isfinite(top):
        total = exp_shifted(s, top, s, bits)
    else:  # all -inf (every key masked), +inf or NaN: shift by 0, as the NumPy reference
        total = 0.0
        for j in range(n):
            s[j] = np.exp(s[j])
            total += s[j]
    inv = 1.0 / total if total > 0 else 1.0  # an all-masked row: 0 * 1 = 0, not 0 / 0
    for j in range(n):
        s[j] *= inv


@njit
def _row_or_none(a, i, h, j):
    """``a[i, h, j]``, or None for a None array (a dead branch numba drops)."""
    if a is None:
        return None
    return a[i, h, j]


@njit
def _row_index(r, b2, length):
    """Row ``r`` of the flattened (B1, B2, L) rows -> (b1, b2, i)."""
    return r // (b2 * length), (r // length) % b2, r % length


@njit(error_model="numpy")
def _probs(s, mask, scale):
    b1, b2, length, n = s.shape
    bits = np.empty(n, np.int64)
    for r in range(b1 * b2 * length):
        i, h, j = _row_index(r, b2, length)
        _probs_row(s[i, h, j], _row_or_none(mask, i, h, j), scale, bits)


@njit(parallel=True, error_model="numpy")
def _probs_parallel(s, mask, scale):
    b1, b2, length, n = s.shape
    rows = b1 * b2 * length
    step, count = chunks(rows)
    for c in prange(count):
        bits = np.empty(n, np.int64)
        for r in range(c * step, min(rows, (c + 1) * step)):
            i, h, j = _row_index(r, b2, length)
            _probs_row(s[i, h, j], _row_or_none(mask, i, h, j), scale, bits)


def _probs_numpy(s, mask, scale) -> None:
    s *= scale
    if mask is None:  # finite scores: the plain stable softmax
        s -= s.max(axis=-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=-1, keepdims=True)
        return
    s += mask
    row_max_ = s.max(axis=-1, keepdims=True)
    s -= np.where(np.isfinite(row_max_), row_max_, 0)  # a row of all -inf stays -inf
    np.exp(s, out=s)
    total = s.sum(axis=-1, keepdims=True)
    s /= np.where(total > 0, total, 1)  # all-masked row: 0 / 1 = 0, not 0 / 0


def softmax_scores(s: np.ndarray, mask: np.ndarray | None, scale: float) -> np.ndarray:
    """P = softmax(scale * s + mask) over the last dim, in place on the C-contiguous scores ``s``
    (..., L, S); fully masked rows give zeros.  Returns ``s``."""
    s4 = s.reshape(_shape_4d(s.shape))
    mask4 = _as_4d(mask, s.shape)
    if mask4 is not None and mask4.dtype != s.dtype:
        mask4 = mask4.astype(s.dtype)
    choose(s4, _probs_numpy, _probs, _probs_parallel)(s4, mask4, s.dtype.type(scale))
    return s


def attention_probs(q: np.ndarray, k: np.ndarray, mask: np.ndarray | None, scale: float) -> np.ndarray:
    """P = softmax(scale * q @ kᵀ + mask) over the last dim, (..., L, S) in q's dtype."""
    return softmax_scores(np.matmul(q, _transposed(k)), mask, scale)


# ------------------------------------------------------------------ the softmax backward
@njit
def _probs_backward_row(p, dp, drop, scale):
    """dp <- scale * p * (dp * drop - rowsum(dp * drop * p)), in place (drop: a row or None)."""
    n = p.shape[0]
    if drop is not None:
        for j in range(n):
            dp[j] *= drop[j]
    total = row_dot(dp, p)
    for j in range(n):
        dp[j] = scale * p[j] * (dp[j] - total)


@njit
def _probs_backward(p, dp, drop, scale):
    b1, b2, length, _ = p.shape
    for r in range(b1 * b2 * length):
        i, h, j = _row_index(r, b2, length)
        _probs_backward_row(p[i, h, j], dp[i, h, j], _row_or_none(drop, i, h, j), scale)


@njit(parallel=True)
def _probs_backward_parallel(p, dp, drop, scale):
    b1, b2, length, _ = p.shape
    for r in prange(b1 * b2 * length):
        i, h, j = _row_index(r, b2, length)
        _probs_backward_row(p[i, h, j], dp[i, h, j], _row_or_none(drop, i, h, j), scale)


def _probs_backward_numpy(p, dp, drop, scale) -> None:
    if drop is not None:
        dp *= drop
    dp -= np.sum(dp * p, axis=-1, keepdims=True)
    dp *= p
    dp *= scale


def softmax_scores_backward(p: np.ndarray, dp: np.ndarray, dropout, scale: float) -> np.ndarray:
    """dS from the probabilities ``p`` and d(loss)/d(P * dropout) ``dp`` (C-contiguous, overwritten
    and returned): scale * p * (dp * dropout - rowsum(dp * dropout * p))."""
    p4 = p.reshape(_shape_4d(p.shape))
    dp4 = dp.reshape(p4.shape)
    drop4 = _as_4d(dropout, p.shape)
    choose(p4, _probs_backward_numpy, _probs_backward, _probs_backward_parallel)(p4, dp4, drop4, p.dtype.type(scale))
    return dp


# ------------------------------------------------------------------ forward and backward
def attention_forward(q, k, v, mask, scale: float, dropout, out=None) -> tuple:
    """(out, P): out = (P * dropout) @ v, written into ``out`` (e.g. a view of merged heads) when given."""
    p = attention_probs(q, k, mask, scale)
    pd = p if dropout is None else p * dropout
    return np.matmul(pd, v, out=out), p


def attention_backward(grad, q, k, v, p, scale: float, dropout, need=(True, True, True), out=(None, None, None)):
    """(dq, dk, dv) from d(loss)/d(out) ``grad``; each written into its ``out`` array when given,
    None when not needed."""
    need_q, need_k, need_v = need
    dq = dk = dv = None
    if need_v:
        pd = p if dropout is None else p * dropout
        dv = np.matmul(np.swapaxes(pd, -1, -2), grad, out=out[2])
    if need_q or need_k:
        ds = softmax_scores_backward(p, np.matmul(grad, _transposed(v)), dropout, scale)
        dq = np.matmul(ds, k, out=out[0]) if need_q else None
        dk = np.matmul(np.swapaxes(ds, -1, -2), q, out=out[1]) if need_k else None
    return dq, dk, dv
