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
passes over the array for this; a kernel makes two or three passes over
each row while it is in the L1 cache.  A constant row has ``s - mean = 0``:
``xhat = 0``, never NaN.  Sums are accumulated in float64.

>>> x = np.array([[1.0, 2.0, 4.0]])
>>> y, mean, rstd = layer_norm_forward(x, None, None, 1e-5)
>>> y.round(3), mean, rstd.round(3)
(array([[-1.069, -0.267,  1.336]]), array([2.33333333]), array([0.802]))
"""

from __future__ import annotations

import numpy as np

from ._jit import choose, njit, prange
from ._rows import chunks, row_of, row_sum


def _affine(weight: np.ndarray | None, bias: np.ndarray | None, d: int, dtype) -> tuple:
    """weight and bias as (D,) arrays (ones / zeros for None: one kernel serves all cases)."""
    w = np.ones(d, dtype) if weight is None else weight.reshape(d)
    b = np.zeros(d, dtype) if bias is None else bias.reshape(d)
    return w, b


# ------------------------------------------------------------------ forward
@njit(fastmath={"reassoc", "contract"})
def _squares_about(s, mean):
    """sum((s - mean)^2) as a float64."""
    total = 0.0
    for j in range(s.shape[0]):
        c = s[j] - mean
        total += c * c
    return total


@njit
def _normalize_row(s, w, b, eps, y):
    """y = (s - mean) * rstd * w + b; returns (mean, rstd)."""
    d = s.shape[0]
    mean = row_sum(s) / d
    rstd = 1.0 / np.sqrt(_squares_about(s, mean) / d + eps)
    for j in range(d):
        y[j] = (s[j] - mean) * rstd * w[j] + b[j]
    return mean, rstd


@njit
def _forward_row(x, r, keep, scale, w, b, eps, s, y):
    """One row: s = x + r (times scale where keep, when keep is given), then normalise s into y."""
    if r is None:
        return _normalize_row(x, w, b, eps, y)
    if keep is None:
        for j in range(x.shape[0]):
            s[j] = x[j] + r[j]
    else:
        for j in range(x.shape[0]):
            s[j] = x[j] + r[j] * (scale if keep[j] else 0.0)
    return _normalize_row(s, w, b, eps, y)


@njit
def _forward_rows(x, r, keep, scale, w, b, eps, s, y, mean, rstd):
    for i in range(x.shape[0]):
        mean[i], rstd[i] = _forward_row(x[i], row_of(r, i), row_of(keep, i), scale, w, b, eps, row_of(s, i), y[i])


@njit(parallel=True)
def _forward_rows_parallel(x, r, keep, scale, w, b, eps, s, y, mean, rstd):
    for i in prange(x.shape[0]):
        mean[i], rstd[i] = _forward_row(x[i], row_of(r, i), row_of(keep, i), scale, w, b, eps, row_of(s, i), y[i])


def _forward_rows_numpy(x, r, keep, scale, w, b, eps, s, y, mean, rstd) -> None:
    if r is not None:
        np.add(x, r if keep is None else r * (keep * np.asarray(scale, r.dtype)), out=s)
        x = s
    mean[:] = x.mean(axis=1)
    xhat = x - mean[:, None]
    rstd[:] = 1.0 / np.sqrt(np.mean(xhat * xhat, axis=1) + eps)
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
    run = choose(x, _forward_rows_numpy, _forward_rows, _forward_rows_parallel)
    run(x, residual, keep, x.dtype.type(scale), w, b, float(eps), s, y, mean, rstd)
    return (y, mean, rstd) if residual is None else (y, s, mean, rstd)


# ------------------------------------------------------------------ backward
@njit(fastmath={"reassoc", "contract"})
def _backward_sums(dy, s, mean, rstd, w, dw, db):
    """(sum(g), sum(g * xhat)) with g = dy * w; adds dy * xhat to dw and dy to db."""
    g_total = 0.0
    gx_total = 0.0
    for j in range(s.shape[0]):
        xhat = (s[j] - mean) * rstd
        g = dy[j] * w[j]
        g_total += g
        gx_total += g * xhat
        dw[j] += dy[j] * xhat
        db[j] += dy[j]
    return g_total, gx_total


@njit
def _backward_row(dy, s, mean, rstd, w, dx, dw, db):
    """dx of one row; adds the row's share to the float64 accumulators dw and db."""
    d = s.shape[0]
    g_total, gx_total = _backward_sums(dy, s, mean, rstd, w, dw, db)
    g_mean = g_total / d
    gx_mean = gx_total / d
    for j in range(d):
        xhat = (s[j] - mean) * rstd
        dx[j] = rstd * (dy[j] * w[j] - g_mean - xhat * gx_mean)


@njit
def _backward_rows(dy, s, mean, rstd, w, dx, dw, db):
    for i in range(s.shape[0]):
        _backward_row(dy[i], s[i], mean[i], rstd[i], w, dx[i], dw, db)


@njit(parallel=True)
def _backward_rows_parallel(dy, s, mean, rstd, w, dx, dw, db):
    rows, d = s.shape
    step, count = chunks(rows)
    dw_parts = np.zeros((count, d))
    db_parts = np.zeros((count, d))
    for c in prange(count):
        for i in range(c * step, min(rows, (c + 1) * step)):
            _backward_row(dy[i], s[i], mean[i], rstd[i], w, dx[i], dw_parts[c], db_parts[c])
    dw += dw_parts.sum(axis=0)
    db += db_parts.sum(axis=0)


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
    run = choose(s, _backward_rows_numpy, _backward_rows, _backward_rows_parallel)
    run(grad, s, mean, rstd, w, dx, dw, db)
    return dx, dw.astype(s.dtype), db.astype(s.dtype)
