"""Layer norm of each row of a (rows, D) array, forward and backward; optionally fused with
the residual sum before it (``LayerNorm(x + dropout(r))``, the "add & norm" of a Transformer).

Forward, for each row ``s`` (``s = x``, or ``s = x + r * keep * scale`` when fused)::

    mean = sum(s) / D         rstd = 1 / sqrt(sum((s - mean)^2) / D + eps)
    xhat = (s - mean) * rstd  y = xhat * weight + bias

Only ``mean`` and ``rstd`` (one number per row) are saved besides ``s``;
backward recomputes ``xhat``.  With ``g = dy * weight``::

    dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
    dweight = sum over rows of dy * xhat      dbias = sum over rows of dy

(and ``dr = dx * keep * scale`` for the residual).  NumPy needs about ten
passes over the array for this; a kernel makes two or three passes over a
block of 64 rows while it is in the L1/L2 cache.  A constant row has ``s - mean = 0``:
``xhat = 0``, never NaN.  Sums are accumulated in float64.

>>> x = np.array([[1.0, 2.0, 4.0]])
>>> y, mean, rstd = layer_norm_forward(x, None, None, 1e-5)
>>> y.round(3), mean, rstd.round(3)
(array([[-1.069, -0.267,  1.336]]), array([2.33333333]), array([0.802]))
"""

from __future__ import annotations

import numpy as np

from ._jit import choose, njit, prange
from ._rows import BLOCK, add_rows, blocks, clear, row_sum, rows_of


def _affine(weight: np.ndarray | None, bias: np.ndarray | None, d: int, dtype) -> tuple:
    """weight and bias as (D,) arrays (ones / zeros for None: one kernel serves all cases)."""
    w = np.ones(d, dtype) if weight is None else weight.reshape(d)
    b = np.zeros(d, dtype) if bias is None else bias.reshape(d)
    return w, b


# ------------------------------------------------------------------ forward
@njit(fastmath={"reassoc", "contract"})
def _squares_about(x, mean, out):
    """out[i] = sum((x[i] - mean[i])^2), in float64."""
    for i in range(x.shape[0]):
        total = 0.0
        for j in range(x.shape[1]):
            c = x[i, j] - mean[i]
            total += c * c
        out[i] = total


@njit
def _normalize_block(s, w, b, eps, y, mean, rstd):
    """y = (s - mean) * rstd * w + b for each row of the block; mean and rstd saved (in s's dtype:
    the elementwise pass stays in it).  The sums are accumulated in float64."""
    rows, d = s.shape
    sums = np.empty(rows)
    row_sum(s, sums)
    mean[:] = sums / d
    _squares_about(s, mean, sums)
    rstd[:] = 1.0 / np.sqrt(sums / d + eps)
    for i in range(rows):
        for j in range(d):
            y[i, j] = (s[i, j] - mean[i]) * rstd[i] * w[j] + b[j]


@njit
def _forward_block(x, r, keep, scale, w, b, eps, s, y, mean, rstd):
    """Normalise x, or s = x + r (times scale where keep, when keep is given) into y."""
    if r is None:
        _normalize_block(x, w, b, eps, y, mean, rstd)
        return
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if keep is None:
                s[i, j] = x[i, j] + r[i, j]
            else:
                s[i, j] = x[i, j] + r[i, j] * (scale if keep[i, j] else 0.0)
    _normalize_block(s, w, b, eps, y, mean, rstd)


@njit
def _forward_rows(x, r, keep, scale, w, b, eps, s, y, mean, rstd):
    _forward_block(x, r, keep, scale, w, b, eps, s, y, mean, rstd)


@njit(parallel=True)
def _forward_rows_parallel(x, r, keep, scale, w, b, eps, s, y, mean, rstd):
    for k in prange(blocks(x.shape[0])):
        start, stop = k * BLOCK, (k + 1) * BLOCK
        _forward_block(
            x[start:stop], rows_of(r, start, stop), rows_of(keep, start, stop), scale, w, b, eps,
            rows_of(s, start, stop), y[start:stop], mean[start:stop], rstd[start:stop],
        )  # fmt: skip


def _forward_rows_numpy(x, r, keep, scale, w, b, eps, s, y, mean, rstd) -> None:
    if r is not None:
        np.add(x, r if keep is None else r * (keep * np.asarray(scale, r.dtype)), out=s)
        x = s
    mean[:] = x.mean(axis=1, dtype=np.float64)  # float64 sums, as the kernel: a constant row's mean is exact
    xhat = x - mean[:, None]
    rstd[:] = 1.0 / np.sqrt(np.mean(xhat * xhat, axis=1, dtype=np.float64) + eps)
    xhat *= rstd[:, None]
    np.multiply(xhat, w, out=y)
    y += b


def layer_norm_forward(x, weight, bias, eps: float, residual=None, keep=None, scale: float = 1.0) -> tuple:
    """Normalise the rows of ``x`` (rows, D) (of ``x + residual``, when given).

    Args:
        x: (rows, D), C-contiguous.
        weight, bias: (D,) (any shape of D elements) or None.
        eps: added to the variance.
        residual: None, or (rows, D) added to x first.
        keep: None, or a (rows, D) bool dropout mask on ``residual`` (its kept
            elements are multiplied by ``scale``).

    Returns:
        ``(y, mean, rstd)`` without a residual, ``(y, s, mean, rstd)`` with
        one (``s`` = the sum that was normalised).
    """
    rows, d = x.shape
    w, b = _affine(weight, bias, d, x.dtype)
    y = np.empty_like(x)
    s = None if residual is None else np.empty_like(x)
    mean = np.empty(rows, x.dtype)
    rstd = np.empty(rows, x.dtype)
    run = choose(x, _forward_rows_numpy, _forward_rows, _forward_rows_parallel, ns=0.4)
    run(x, residual, keep, x.dtype.type(scale), w, b, float(eps), s, y, mean, rstd)
    return (y, mean, rstd) if residual is None else (y, s, mean, rstd)


# ------------------------------------------------------------------ backward
@njit(fastmath={"reassoc", "contract"})
def _backward_sums(dy, s, mean, rstd, w, g_total, gx_total, dw, db):
    """Per row: sum(g) and sum(g * xhat) with g = dy * w; adds dy * xhat to dw and dy to db."""
    for i in range(s.shape[0]):
        a = 0.0
        c = 0.0
        for j in range(s.shape[1]):
            xhat = (s[i, j] - mean[i]) * rstd[i]
            g = dy[i, j] * w[j]
            a += g
            c += g * xhat
            dw[j] += dy[i, j] * xhat
            db[j] += dy[i, j]
        g_total[i] = a
        gx_total[i] = c


@njit
def _backward_block(dy, s, mean, rstd, w, dx, dw, db):
    """dx of a block of rows; adds the block's share to the float64 accumulators dw and db."""
    rows, d = s.shape
    g_total = np.empty(rows)
    gx_total = np.empty(rows)
    _backward_sums(dy, s, mean, rstd, w, g_total, gx_total, dw, db)
    g_mean = (g_total / d).astype(s.dtype)  # (the elementwise pass in s's dtype)
    gx_mean = (gx_total / d).astype(s.dtype)
    for i in range(rows):
        for j in range(d):
            xhat = (s[i, j] - mean[i]) * rstd[i]
            dx[i, j] = rstd[i] * (dy[i, j] * w[j] - g_mean[i] - xhat * gx_mean[i])


@njit
def _backward_rows(dy, s, mean, rstd, w, dx, dw, db):
    _backward_block(dy, s, mean, rstd, w, dx, dw, db)


@njit(parallel=True)
def _backward_rows_parallel(dy, s, mean, rstd, w, dx, dw, db):
    count = blocks(s.shape[0])
    dw_parts = np.empty((count, s.shape[1]))  # partial sums per block of rows
    db_parts = np.empty((count, s.shape[1]))
    for k in prange(count):
        clear(dw_parts[k])
        clear(db_parts[k])
        start, stop = k * BLOCK, (k + 1) * BLOCK
        _backward_block(
            dy[start:stop], s[start:stop], mean[start:stop], rstd[start:stop], w, dx[start:stop],
            dw_parts[k], db_parts[k],
        )  # fmt: skip
    add_rows(dw_parts, dw)
    add_rows(db_parts, db)


def _backward_rows_numpy(dy, s, mean, rstd, w, dx, dw, db) -> None:
    xhat = (s - mean[:, None]) * rstd[:, None]
    dw += (dy * xhat).sum(axis=0)
    db += dy.sum(axis=0)
    g = dy * w
    dx[:] = rstd[:, None] * (g - g.mean(axis=1, keepdims=True) - xhat * np.mean(g * xhat, axis=1, keepdims=True))


def layer_norm_backward(grad, s, mean, rstd, weight) -> tuple:
    """``(dx, dweight, dbias)`` of layer norm, from d(loss)/dy ``grad`` (rows, D), the normalised
    input ``s`` and the saved ``mean`` and ``rstd``; dweight and dbias are (D,) in s's dtype."""
    rows, d = s.shape
    w, _ = _affine(weight, None, d, s.dtype)
    grad = np.ascontiguousarray(grad, dtype=s.dtype).reshape(rows, d)
    dx = np.empty_like(s)
    dw = np.zeros(d)
    db = np.zeros(d)
    run = choose(s, _backward_rows_numpy, _backward_rows, _backward_rows_parallel, ns=0.6)
    run(grad, s, mean, rstd, w, dx, dw, db)
    return dx, dw.astype(s.dtype), db.astype(s.dtype)
