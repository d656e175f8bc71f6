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

from ._exp import exp_inplace
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
# The kernels see the scores as (B1, B2, L, S) (batch, head, query, key) and work on blocks of
# the flattened B1*B2*L rows: one pass adds the mask (indexed per batch and head, zero strides
# where it broadcasts), the other passes see a plain 2-D block of rows.
@njit
def _add_mask(s, mask, scale, start, stop):
    """s = scale * s + mask for the flattened rows [start, stop) of the 4-D scores."""
    _, b2, length, n = s.shape
    for row in range(start, stop):
        i, h, r = row // (b2 * length), (row // length) % b2, row % length
        for j in range(n):
            s[i, h, r, j] = s[i, h, r, j] * scale if mask is None else s[i, h, r, j] * scale + mask[i, h, r, j]


@njit(error_model="numpy")
def _normalize_rows(s, scale):
    """s = softmax(scale * s) in place for each row of the 2-D block (scale > 0, so the max of the
    scaled row is the scaled max: the scaling rides on the shift); a row whose keys are all masked
    becomes 0."""
    rows, n = s.shape
    top = np.empty(rows, s.dtype)
    row_max(s, top)
    odd = ~np.isfinite(top)  # all -inf (every key masked), +inf or NaN: shifted by 0, as the reference
    unusual = odd & ~(top < 0)  # +inf or NaN (rare): the slow way, from a copy of these rows
    kept = s[unusual] * scale
    top[odd] = 0
    for i in range(rows):
        for j in range(n):
            s[i, j] = (s[i, j] - top[i]) * scale
    exp_inplace(s.reshape(-1))  # (a row of all -inf: exp gives 0)
    total = np.empty(rows)
    row_sum(s, total)
    inv = np.empty(rows, s.dtype)
    k = 0
    for i in range(rows):
        if unusual[i]:
            total[i] = 0.0
            for j in range(n):
                s[i, j] = np.exp(kept[k, j])
                total[i] += s[i, j]
            k += 1
        inv[i] = 1.0 / total[i] if total[i] > 0 else 1.0  # an all-masked row: 0 * 1 = 0, not 0 / 0
    for i in range(rows):
        for j in range(n):
            s[i, j] *= inv[i]


@njit(error_model="numpy")
def _softmax_scores_rows(s, mask, scale, start, stop):
    """P for the flattened rows [start, stop) of the 4-D scores: with a mask (or a scale <= 0) the
    scores are scaled and masked first, else the scaling is fused into the softmax's shift."""
    flat = s.reshape(s.shape[0] * s.shape[1] * s.shape[2], s.shape[3])[start:stop]
    if mask is None and scale > 0:
        _normalize_rows(flat, scale)
    else:
        _add_mask(s, mask, scale, start, stop)
        _normalize_rows(flat, s.dtype.type(1))


@njit(error_model="numpy")
def _probs(s, mask, scale):
    _softmax_scores_rows(s, mask, scale, 0, s.shape[0] * s.shape[1] * s.shape[2])


@njit(parallel=True, error_model="numpy")
def _probs_parallel(s, mask, scale):
    rows = s.shape[0] * s.shape[1] * s.shape[2]
    for k in prange(blocks(rows)):  # the flattened batch x heads x query rows, in blocks
        _softmax_scores_rows(s, mask, scale, k * BLOCK, min(rows, (k + 1) * BLOCK))


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
def _probs_backward_rows(p, dp, drop, scale, start, stop):
    """dp <- scale * p * (dp * drop - rowsum(dp * drop * p)) in place, for the flattened rows [start, stop)."""
    _, b2, length, n = p.shape
    if drop is not None:
        for row in range(start, stop):
            i, h, r = row // (b2 * length), (row // length) % b2, row % length
            for j in range(n):
                dp[i, h, r, j] *= drop[i, h, r, j]
    rows = p.shape[0] * b2 * length
    p2, dp2 = p.reshape(rows, n)[start:stop], dp.reshape(rows, n)[start:stop]
    dots = np.empty(stop - start)
    row_dot(dp2, p2, dots)
    dots = dots.astype(p.dtype)  # (the elementwise pass in p's dtype)
    for i in range(stop - start):
        for j in range(n):
            dp2[i, j] = scale * p2[i, j] * (dp2[i, j] - dots[i])


@njit
def _probs_backward(p, dp, drop, scale):
    _probs_backward_rows(p, dp, drop, scale, 0, p.shape[0] * p.shape[1] * p.shape[2])


@njit(parallel=True)
def _probs_backward_parallel(p, dp, drop, scale):
    rows = p.shape[0] * p.shape[1] * p.shape[2]
    for k in prange(blocks(rows)):
        _probs_backward_rows(p, dp, drop, scale, k * BLOCK, min(rows, (k + 1) * BLOCK))


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
_CHUNK_BYTES = 8 << 20  # scores per chunk when P is not kept (a few MB stay in the last-level cache)


def attention_forward(q, k, v, mask, scale: float, dropout, out=None, keep_probs: bool = True) -> tuple:
    """(out, P): out = (P * dropout) @ v, written into ``out`` (e.g. a view of merged heads) when given.

    With ``keep_probs=False`` (no gradient will need P) the scores are computed a few
    batch entries at a time into one buffer, and P is None: no large temporary (for
    8 x 8 heads of 512 x 512 scores, 64 MB that the OS would zero on every call),
    and each chunk is still in the cache for the second product.
    """
    if keep_probs or q.ndim < 3 or q.shape[-2] * k.shape[-2] * math.prod(q.shape[:-2]) * q.itemsize <= _CHUNK_BYTES:
        p = attention_probs(q, k, mask, scale)
        pd = p if dropout is None else p * dropout
        return np.matmul(pd, v, out=out), p
    k_t = _transposed(k)
    lead = np.broadcast_shapes(q.shape[:-2], k_t.shape[:-2], v.shape[:-2])
    shape = lead + (q.shape[-2], k_t.shape[-1])
    q, k_t, v = (np.broadcast_to(a, lead + a.shape[-2:]) for a in (q, k_t, v))
    mask, dropout = (None if a is None else np.broadcast_to(a, shape) for a in (mask, dropout))
    if out is None:
        out = np.empty(shape[:-1] + v.shape[-1:], np.result_type(q, v))
    step = max(1, _CHUNK_BYTES // (math.prod(shape[1:]) * q.itemsize))
    buffer = np.empty((min(step, lead[0]),) + shape[1:], q.dtype)
    for i in range(0, lead[0], step):
        chunk = slice(i, i + step)
        s = np.matmul(q[chunk], k_t[chunk], out=buffer[: len(range(*chunk.indices(lead[0])))])
        softmax_scores(s, None if mask is None else mask[chunk], scale)
        if dropout is not None:
            s *= dropout[chunk]
        np.matmul(s, v[chunk], out=out[chunk])
    return out, None


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
