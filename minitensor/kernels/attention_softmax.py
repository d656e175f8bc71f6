"""The masked softmax of attention scores, forward and backward, as row kernels.

Scores ``s`` (..., L, S) (the leading dims: batch and heads) are seen as
(B1, B2, L, S) and processed in blocks of the flattened B1*B2*L rows::

    P  = softmax(scale * s + mask)                 (a fully masked row gives zeros, not NaN)
    dS = scale * P * (dP * dropout - rowsum(dP * dropout * P))

``attention.py`` calls these between its two matrix products (inside its fused
head kernels, and on NumPy's products when they are not fused); each kernel
has its NumPy reference beside it (``_probs_numpy``, ``_probs_backward_numpy``).

>>> s = np.zeros((1, 2, 2))
>>> softmax_scores(s, None, 1.0)
array([[[0.5, 0.5],
        [0.5, 0.5]]])
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import exp_inplace
from ._rows import BLOCK, blocks, row_dot, row_max, row_sum
from ._stacked import shape_4d
from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange


def _transposed(x: np.ndarray) -> np.ndarray:
    """xᵀ over the last two dims as a C-contiguous copy: a transposed *second* operand of a
    stacked ``np.matmul`` is ~30% slower than a contiguous one (a first operand is fine)."""
    return np.ascontiguousarray(np.swapaxes(x, -1, -2))


def _mask_4d(mask: np.ndarray | None, shape: tuple, dtype) -> np.ndarray | None:
    """The additive ``mask`` (broadcastable to the scores' ``shape`` (..., L, S)) as a C-contiguous
    (B1 or 1, B2 or 1, L or 1, S) array in ``dtype``: the kernels broadcast a dim of size 1 by
    indexing (``_mask_row``), so each mask row they read is contiguous (a broadcast view with zero
    strides would make them gather element by element).  Only the broadcast causal or padding
    mask is kept, never one copy per head."""
    if mask is None:
        return None
    mask = np.asarray(mask)
    mask = mask.reshape((1,) * (len(shape) - mask.ndim) + mask.shape)
    # broadcast dims (zero strides) back to size 1, then the leading dims as two
    mask = mask[tuple(slice(0, 1) if step == 0 else slice(None) for step in mask.strides[:-1])]
    if len(shape) > 4 and math.prod(mask.shape[:-3]) not in (1, math.prod(shape[:-3])):
        mask = np.broadcast_to(mask, shape[:-3] + mask.shape[-3:])  # (rare: cannot be kept as two dims)
    b1, b2 = (math.prod(mask.shape[:-3]), mask.shape[-3]) if len(shape) > 2 else (1, 1)
    if mask.shape[-1] != shape[-1]:  # (a mask broadcast over the keys)
        mask = np.broadcast_to(mask, mask.shape[:-1] + shape[-1:])
    return np.ascontiguousarray(mask.reshape(b1, b2, *mask.shape[-2:]), dtype=dtype)


@njit(inline="always")
def _mask_row(mask, i, h, r):
    """Row (i, h, r) of the 4-D mask of ``_mask_4d`` (a dim of size 1 broadcasts)."""
    return mask[i if mask.shape[0] > 1 else 0, h if mask.shape[1] > 1 else 0, r if mask.shape[2] > 1 else 0]


def _as_4d(a: np.ndarray | None, shape: tuple) -> np.ndarray | None:
    """``a`` broadcast to ``shape`` (..., L, S) and viewed as (B1, B2, L, S) (a view, with zero
    strides where it broadcasts, unless there are three or more leading dims)."""
    if a is None:
        return None
    if a.shape != shape:
        a = np.broadcast_to(a, shape)
    return a if a.ndim == 4 else a.reshape(shape_4d(shape))


# ------------------------------------------------------------------ the softmax between the GEMMs
# The kernels see the scores as (B1, B2, L, S) (batch, head, query, key) and work on blocks of
# the flattened B1*B2*L rows: one pass adds the mask (indexed per batch and head, zero strides
# where it broadcasts), the other passes see a plain 2-D block of rows.
@njit
def _add_mask(s, mask, scale, start, stop):
    """s = scale * s + mask for the flattened rows [start, stop) of the 4-D scores (``mask`` from
    ``_mask_4d``).  Where the mask has a row per query, the rows of one head and their mask rows
    are each one contiguous run: a single loop over both (rows are often short, and LLVM's SIMD
    loop only pays on long runs)."""
    _, b2, length, n = s.shape
    flat, mask_flat = s.reshape(-1), mask.reshape(-1)
    row = start
    while row < stop:
        i, h, r = row // (b2 * length), (row // length) % b2, row % length
        count = min(length - r, stop - row)
        x = flat[row * n : (row + count) * n]
        head = (i if mask.shape[0] > 1 else 0) * mask.shape[1] + (h if mask.shape[1] > 1 else 0)
        if mask.shape[2] > 1:
            m = mask_flat[(head * length + r) * n : (head * length + r + count) * n]
            for j in range(x.size):
                x[j] = x[j] * scale + m[j]
        else:
            m = mask_flat[head * n : (head + 1) * n]
            for k in range(count):
                for j in range(n):
                    x[k * n + j] = x[k * n + j] * scale + m[j]
        row += count


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
def _softmax_block(s, mask, scale):
    """s = softmax(scale * s + mask) in place on the 2-D block ``s`` (``mask``: None or 2-D, its rows
    or a single row that broadcasts over them): with a
    mask (or a scale <= 0) the scores are scaled and masked first, else the scaling is fused into
    the softmax's shift."""
    if mask is None and scale > 0:
        _normalize_rows(s, scale)
        return
    _scale_and_mask(s, mask, scale)
    _normalize_rows(s, s.dtype.type(1))


@njit
def _scale_and_mask(s, mask, scale):
    """s = scale * s + mask in place on the 2-D block ``s`` (``mask``: None, scaled only, or 2-D,
    its rows or a single row that broadcasts over them)."""
    for i in range(s.shape[0]):
        x = s[i]
        if mask is None:
            for j in range(x.size):
                x[j] = x[j] * scale
        else:
            m = mask[i if mask.shape[0] > 1 else 0]
            for j in range(x.size):
                x[j] = x[j] * scale + m[j]


@njit(error_model="numpy")
def _softmax_scores_rows(s, mask, scale, start, stop):
    """P for the flattened rows [start, stop) of the 4-D scores (``mask``: 4-D, indexed per batch
    and head, or None)."""
    flat = s.reshape(s.shape[0] * s.shape[1] * s.shape[2], s.shape[3])[start:stop]
    if mask is None:
        _softmax_block(flat, None, scale)
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


_PROBS = Kernel(_probs_numpy, _probs, _probs_parallel, ns=1.5)


def softmax_scores(s: np.ndarray, mask: np.ndarray | None, scale: float) -> np.ndarray:
    """P = softmax(scale * s + mask) over the last dim, in place on the C-contiguous scores ``s``
    (..., L, S); fully masked rows give zeros.  Returns ``s``."""
    if s.size == 0:  # no query or no key (L = 0 or S = 0): nothing to normalise
        return s
    s4 = s.reshape(shape_4d(s.shape))
    mask4 = _mask_4d(mask, s.shape, s.dtype)
    _PROBS.on(s4)(s4, mask4, s.dtype.type(scale))
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
    _softmax_grad_block(p.reshape(rows, n)[start:stop], dp.reshape(rows, n)[start:stop], None, scale)


@njit
def _softmax_grad_block(p, dp, drop, scale):
    """dp <- scale * p * (dp * drop - rowsum(dp * drop * p)) in place on the 2-D block (``drop``: 2-D or None)."""
    rows, n = p.shape
    if drop is not None:
        for i in range(rows):
            for j in range(n):
                dp[i, j] *= drop[i, j]
    dots = np.empty(rows)
    row_dot(dp, p, dots)
    dots = dots.astype(p.dtype)  # (the elementwise pass in p's dtype)
    for i in range(rows):
        for j in range(n):
            dp[i, j] = scale * p[i, j] * (dp[i, j] - dots[i])


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


_PROBS_BACKWARD = Kernel(_probs_backward_numpy, _probs_backward, _probs_backward_parallel, ns=0.4)


def softmax_scores_backward(p: np.ndarray, dp: np.ndarray, dropout, scale: float) -> np.ndarray:
    """dS from the probabilities ``p`` and d(loss)/d(P * dropout) ``dp`` (C-contiguous, overwritten
    and returned): scale * p * (dp * dropout - rowsum(dp * dropout * p))."""
    if p.size == 0:
        return dp
    p4 = p.reshape(shape_4d(p.shape))
    dp4 = dp.reshape(p4.shape)
    drop4 = _as_4d(dropout, p.shape)
    _PROBS_BACKWARD.on(p4)(p4, dp4, drop4, p.dtype.type(scale))
    return dp
