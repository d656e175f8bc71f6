"""Softmax and log-softmax along one dim, forward and backward, one fused pass per row.

The kernels work on a C-contiguous (rows, D) array, the dim being the last
one; ``softmax_forward`` and friends move any other dim there (a copy) and back.

Forward (``m`` the row max; a row whose max is not finite is shifted by 0,
as in NumPy, so a row of all -inf gives NaN, like PyTorch)::

    softmax:      y = exp(x - m) / sum(exp(x - m))
    log_softmax:  y = (x - m) - log(sum(exp(x - m)))

Backward, from the saved output ``y`` and the upstream gradient ``g``::

    softmax:      dx = y * (g - sum(g * y))
    log_softmax:  dx = g - exp(y) * sum(g)

NumPy needs four or five passes over the array for each (max, subtract,
exp, sum, divide); a kernel does them on a block of 64 rows at a time while
it sits in the L1/L2 cache, with the SIMD ``exp`` of ``_exp.py``, and splits
the blocks over threads when the array is large.

>>> y = softmax_forward(np.array([[1.0, 2.0, 3.0]]), -1)
>>> y.round(4)
array([[0.09  , 0.2447, 0.6652]])
"""

from __future__ import annotations

import math

import numpy as np

from ._exp import exp_inplace, exp_into
from ._jit import choose, njit, prange
from ._rows import BLOCK, blocks, row_dot, row_max, row_sum


# ------------------------------------------------------------------ layout
def _as_rows(x: np.ndarray, dim: int) -> tuple:
    """(C-contiguous (rows, D) array with ``dim`` last, shape to restore)."""
    if x.ndim <= 1:
        moved = x.reshape(1, -1)
    else:
        moved = x if dim % x.ndim == x.ndim - 1 else np.moveaxis(x, dim, -1)
    rows = np.ascontiguousarray(moved).reshape(math.prod(moved.shape[:-1]), moved.shape[-1])
    return rows, moved.shape


def _from_rows(rows: np.ndarray, moved_shape: tuple, dim: int, like: np.ndarray) -> np.ndarray:
    if like.ndim <= 1:
        return rows.reshape(like.shape)
    return np.moveaxis(rows.reshape(moved_shape), -1, dim)


def _run(x: np.ndarray, dim: int, implementations: tuple, *others: np.ndarray, ns: float) -> np.ndarray:
    """Apply the chosen row function of ``implementations`` = (reference, serial, parallel) to
    ``x`` (and ``others`` of x's shape, e.g. the gradient) along ``dim``; ``ns``: the serial
    kernel's time per element (``_jit.choose``)."""
    rows, moved_shape = _as_rows(x, dim)
    other_rows = [_as_rows(o, dim)[0] for o in others]
    out = np.empty_like(rows)
    choose(rows, *implementations, ns=ns)(rows, *other_rows, out)
    return _from_rows(out, moved_shape, dim, x)


# ------------------------------------------------------------------ softmax forward
@njit(error_model="numpy")
def _shifted_rows(x, out):
    """out = x - max(x) per row; returns the rows whose max is not finite (shifted by 0 instead,
    NumPy's semantics).  The arithmetic stays in x's dtype (float32: 16 SIMD lanes)."""
    top = np.empty(x.shape[0], x.dtype)
    row_max(x, top)
    odd = ~np.isfinite(top)
    top[odd] = 0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] - top[i]
    return odd


@njit(error_model="numpy")
def _softmax_block(x, out):
    rows, n = x.shape
    odd = _shifted_rows(x, out)
    exp_inplace(out.reshape(-1))
    total = np.empty(rows)
    row_sum(out, total)
    inv = np.empty(rows, out.dtype)
    for i in range(rows):
        if odd[i]:  # +inf, NaN or all -inf: exp of the unshifted row, the slow way
            total[i] = 0.0
            for j in range(n):
                out[i, j] = np.exp(x[i, j])
                total[i] += out[i, j]
        inv[i] = 1.0 / total[i]
    for i in range(rows):
        for j in range(n):
            out[i, j] *= inv[i]


@njit(error_model="numpy")
def _softmax_rows(x, out):
    _softmax_block(x, out)


@njit(parallel=True, error_model="numpy")
def _softmax_rows_parallel(x, out):
    for b in prange(blocks(x.shape[0])):
        _softmax_block(x[b * BLOCK : (b + 1) * BLOCK], out[b * BLOCK : (b + 1) * BLOCK])


def _softmax_rows_numpy(x: np.ndarray, out: np.ndarray) -> None:
    m = np.max(x, axis=1, keepdims=True, initial=-np.inf)  # initial: a size-0 row has no max
    np.subtract(x, np.where(np.isfinite(m), m, 0), out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=1, keepdims=True)


def softmax_forward(x: np.ndarray, dim: int) -> np.ndarray:
    """softmax(x) along ``dim``, in x's dtype."""
    return _run(x, dim, (_softmax_rows_numpy, _softmax_rows, _softmax_rows_parallel), ns=1.8)


# ------------------------------------------------------------------ softmax backward
@njit
def _softmax_backward_block(y, g, dx):
    dots = np.empty(y.shape[0])
    row_dot(g, y, dots)
    dots = dots.astype(y.dtype)  # (the elementwise pass in y's dtype)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            dx[i, j] = y[i, j] * (g[i, j] - dots[i])


@njit
def _softmax_backward_rows(y, g, dx):
    _softmax_backward_block(y, g, dx)


@njit(parallel=True)
def _softmax_backward_rows_parallel(y, g, dx):
    for b in prange(blocks(y.shape[0])):
        rows = slice(b * BLOCK, (b + 1) * BLOCK)
        _softmax_backward_block(y[rows], g[rows], dx[rows])


def _softmax_backward_rows_numpy(y: np.ndarray, g: np.ndarray, dx: np.ndarray) -> None:
    np.multiply(g, y, out=dx)
    s = dx.sum(axis=1, keepdims=True)
    np.subtract(g, s, out=dx)
    dx *= y


def softmax_backward(y: np.ndarray, grad: np.ndarray, dim: int) -> np.ndarray:
    """d(loss)/dx from the softmax output ``y`` and d(loss)/dy ``grad``."""
    implementations = (_softmax_backward_rows_numpy, _softmax_backward_rows, _softmax_backward_rows_parallel)
    return _run(y, dim, implementations, grad, ns=0.3)


# ------------------------------------------------------------------ log-softmax forward
@njit(error_model="numpy")
def _log_softmax_block(x, out):
    rows, n = x.shape
    odd = _shifted_rows(x, out)  # out = x - max
    e = np.empty_like(out)
    exp_into(out.reshape(-1), e.reshape(-1))
    total = np.empty(rows)
    row_sum(e, total)
    log_total = np.empty(rows, out.dtype)
    for i in range(rows):
        if odd[i]:  # +inf, NaN or all -inf: the sum of exp of the unshifted row
            total[i] = 0.0
            for j in range(n):
                total[i] += np.exp(x[i, j])
        log_total[i] = np.log(total[i])
    for i in range(rows):
        for j in range(n):
            out[i, j] -= log_total[i]


@njit(error_model="numpy")
def _log_softmax_rows(x, out):
    _log_softmax_block(x, out)


@njit(parallel=True, error_model="numpy")
def _log_softmax_rows_parallel(x, out):
    for b in prange(blocks(x.shape[0])):
        _log_softmax_block(x[b * BLOCK : (b + 1) * BLOCK], out[b * BLOCK : (b + 1) * BLOCK])


def _log_softmax_rows_numpy(x: np.ndarray, out: np.ndarray) -> None:
    m = np.max(x, axis=1, keepdims=True, initial=-np.inf)
    np.subtract(x, np.where(np.isfinite(m), m, 0), out=out)
    if x.shape[1]:  # (the log of an empty sum would warn)
        out -= np.log(np.sum(np.exp(out), axis=1, keepdims=True))


def log_softmax_forward(x: np.ndarray, dim: int) -> np.ndarray:
    """log(softmax(x)) along ``dim``, in x's dtype."""
    return _run(x, dim, (_log_softmax_rows_numpy, _log_softmax_rows, _log_softmax_rows_parallel), ns=1.8)


# ------------------------------------------------------------------ log-softmax backward
@njit
def _log_softmax_backward_block(y, g, dx):
    rows, n = y.shape
    total = np.empty(rows)
    row_sum(g, total)
    total = total.astype(y.dtype)
    exp_into(y.reshape(-1), dx.reshape(-1))  # dx = exp(y) = softmax (y <= 0)
    for i in range(rows):
        for j in range(n):
            dx[i, j] = g[i, j] - dx[i, j] * total[i]


@njit
def _log_softmax_backward_rows(y, g, dx):
    _log_softmax_backward_block(y, g, dx)


@njit(parallel=True)
def _log_softmax_backward_rows_parallel(y, g, dx):
    for b in prange(blocks(y.shape[0])):
        rows = slice(b * BLOCK, (b + 1) * BLOCK)
        _log_softmax_backward_block(y[rows], g[rows], dx[rows])


def _log_softmax_backward_rows_numpy(y: np.ndarray, g: np.ndarray, dx: np.ndarray) -> None:
    np.exp(y, out=dx)
    dx *= g.sum(axis=1, keepdims=True)
    np.subtract(g, dx, out=dx)


def log_softmax_backward(y: np.ndarray, grad: np.ndarray, dim: int) -> np.ndarray:
    """d(loss)/dx from the log-softmax output ``y`` and d(loss)/dy ``grad``."""
    implementations = (
        _log_softmax_backward_rows_numpy,
        _log_softmax_backward_rows,
        _log_softmax_backward_rows_parallel,
    )
    return _run(y, dim, implementations, grad, ns=1.2)
