"""Scaled dot-product attention on stacked heads: the matrix products on BLAS, everything
between them in one row kernel.

For queries ``q`` (..., L, D), keys ``k`` (..., S, D), values ``v`` (..., S, Dv)
(the leading dims: batch and heads)::

    scores = q @ kᵀ                                  BLAS (np.matmul, one GEMM per head)
    P      = softmax(scale * scores + mask)          row kernel, in place, parallel over heads x rows
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
max, subtract+exp, sum, divide), the kernel makes them over blocks of 64
rows of one head while they sit in the L1/L2 cache, with a SIMD ``exp``
(``_exp.py``), and splits the blocks of all heads over threads.

>>> q = k = v = np.eye(2)[None]               # one head, L = S = D = 2
>>> out, p = attention_forward(q, k, v, None, 1.0, None)
>>> p.round(3)
array([[[0.731, 0.269],
        [0.269, 0.731]]])
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import exp_rows_inplace
from ._jit import choose, njit, prange
from ._rows import BLOCK, blocks, row_dot, row_max, row_sum


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
def _probs_block(s, m, scale):
    """s = softmax(scale * s + m) in place, for a block of rows of one head (m: the mask's rows or
    None); a row whose keys are all masked becomes 0."""
    rows, n = s.shape
    for i in range(rows):
        for j in range(n):
            s[i, j] = s[i, j] * scale if m is None else s[i, j] * scale + m[i, j]
    top = np.empty(rows)
    total = np.empty(rows)
    row_max(s, top)
    exp_rows_inplace(s, top, np.empty(n, np.int64))  # (rows with a non-finite max are left alone)
    row_sum(s, total)
    for i in range(rows):
        if not np.isfinite(top[i]):  # all -inf (every key masked), +inf or NaN: shift by 0, as the reference
            total[i] = 0.0
            for j in range(n):
                s[i, j] = np.exp(s[i, j])
                total[i] += s[i, j]
        inv = 1.0 / total[i] if total[i] > 0 else 1.0  # an all-masked row: 0 * 1 = 0, not 0 / 0
        for j in range(n):
            s[i, j] *= inv


@njit
def _head_rows(a, i, h, start, stop):
    """``a[i, h, start:stop]``, or None for a None array (a dead branch numba drops)."""
    if a is None:
        return None
    return a[i, h, start:stop]


@njit(error_model="numpy")
def _probs(s, mask, scale):
    b1, b2, length, _ = s.shape
    for i in range(b1):
        for h in range(b2):
            _probs_block(s[i, h], _head_rows(mask, i, h, 0, length), scale)


@njit(parallel=True, error_model="numpy")
def _probs_parallel(s, mask, scale):
    b1, b2, length, _ = s.shape
    per_head = blocks(length)
    for t in prange(b1 * b2 * per_head):  # blocks of rows of every head: the flattened batch x heads x rows
        i, h, start = t // (b2 * per_head), (t // per_head) % b2, (t % per_head) * BLOCK
        _probs_block(s[i, h, start : start + BLOCK], _head_rows(mask, i, h, start, start + BLOCK), scale)


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
def _probs_backward_block(p, dp, drop, scale):
    """dp <- scale * p * (dp * drop - rowsum(dp * drop * p)), in place, for a block of rows of one head."""
    rows, n = p.shape
    if drop is not None:
        for i in range(rows):
            for j in range(n):
                dp[i, j] *= drop[i, j]
    dots = np.empty(rows)
    row_dot(dp, p, dots)
    for i in range(rows):
        for j in range(n):
            dp[i, j] = scale * p[i, j] * (dp[i, j] - dots[i])


@njit
def _probs_backward(p, dp, drop, scale):
    b1, b2, length, _ = p.shape
    for i in range(b1):
        for h in range(b2):
            _probs_backward_block(p[i, h], dp[i, h], _head_rows(drop, i, h, 0, length), scale)


@njit(parallel=True)
def _probs_backward_parallel(p, dp, drop, scale):
    b1, b2, length, _ = p.shape
    per_head = blocks(length)
    for t in prange(b1 * b2 * per_head):
        i, h, start = t // (b2 * per_head), (t // per_head) % b2, (t % per_head) * BLOCK
        stop = start + BLOCK
        _probs_backward_block(p[i, h, start:stop], dp[i, h, start:stop], _head_rows(drop, i, h, start, stop), scale)


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
