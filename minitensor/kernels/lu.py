"""Stacks of small square matrices by LU factorisation: determinants, log-determinants, solves, inverses.

``np.linalg`` calls LAPACK once per matrix of a stack, and each call costs more than the arithmetic
of a small matrix: for 512 matrices of 16 x 16 (float32) ``det`` took 1.0 ms, ``inv`` 3.4 ms, where
the factorisation is ~1,400 multiply-adds a matrix.  For matrices of at most ``SMALL_N`` rows these
kernels factor each matrix of the stack in a copy of their own (Doolittle, with partial pivoting, as
LAPACK's ``getrf``)::

    P A = L U       at step j the row with the largest |a_ij| (i >= j) is swapped to row j, then
                    row i -= l_ij row j below it, l_ij = a_ij / a_jj (kept where the zero was made)
    det A         = sign(P) prod_j U_jj                  (PyTorch's formula)
    log |det A|   = sum_j log |U_jj|, its sign sign(P) prod_j sign(U_jj)
    A X = B:        X = U^-1 (L^-1 (P B)): rows of X by forward, then back substitution (A^-1: B = I)

A zero pivot means a singular matrix: its determinant is 0 (log |det| -inf, sign 0), and ``solve``
marks it in ``singular`` (the caller then asks NumPy, which raises).  The references are NumPy's
(``np.linalg.det``, ``slogdet``, ``solve``: the same factorisation, rounding apart; NumPy's
determinant is ``sign * exp(log |det|)``).  Stacks with a NaN or an infinity go to NumPy whole
(pivoting among NaNs is LAPACK's business), as do larger matrices (LAPACK's blocked loops).

>>> det(np.array([[2.0, 0.0], [1.0, 4.0]]))
array(8.)
>>> solve(np.array([[2.0, 0.0], [1.0, 4.0]]), np.array([[2.0], [9.0]]))
array([[1.],
       [2.]])
"""

from __future__ import annotations

import math

import numpy as np

from .runtime.dispatch import Kernel
from .runtime.jit import njit

# Rows up to which the kernels run: on an AMD EPYC (Zen 3, 2026-12-01) they took 0.35-0.8x LAPACK's time for
# 2 to 32 rows (det, inverse; stacks of 2^17 elements), and the same time at 48 rows.
SMALL_N = 32


# ------------------------------------------------------------------ the factorisation, one matrix
@njit(fastmath={"contract"})
def _factor(m, order):
    """LU of the (n, n) ``m`` in place (L's multipliers below the diagonal, U on and above it) and
    ``order``: row i of P A is row order[i] of A.  Returns sign(P) (1.0 or -1.0), or 0.0 at a zero
    pivot (a singular matrix: the factorisation stops there)."""
    n = m.shape[0]
    sign = 1.0
    for i in range(n):
        order[i] = i
    for j in range(n):
        pivot, largest = j, abs(m[j, j])
        for i in range(j + 1, n):
            if abs(m[i, j]) > largest:
                pivot, largest = i, abs(m[i, j])
        if largest == 0:
            return 0.0
        if pivot != j:
            for c in range(n):
                m[j, c], m[pivot, c] = m[pivot, c], m[j, c]
            order[j], order[pivot] = order[pivot], order[j]
            sign = -sign
        top = m[j]
        for i in range(j + 1, n):
            row = m[i]
            f = row[j] / top[j]
            row[j] = f
            for c in range(np.uint64(j + 1), np.uint64(n)):  # (unsigned: vectorised)
                row[c] -= f * top[c]
    return sign


@njit
def _scratch(a):
    """(m, order): a matrix and a permutation for one matrix of the stack ``a`` at a time."""
    return np.empty(a.shape[1:], a.dtype), np.empty(a.shape[1], np.int64)


@njit
def _factored(a, s, m, order):
    """Matrix s of the stack factored into ``m`` and ``order`` (``_factor``, on a copy): sign(P), 0.0 where
    it is singular, NaN where it holds a NaN or an infinity (not factored)."""
    finite = True
    for r in range(m.shape[0]):
        for c in range(m.shape[1]):
            m[r, c] = a[s, r, c]
            finite &= np.isfinite(m[r, c])
    return _factor(m, order) if finite else np.nan


# ------------------------------------------------------------------ determinants
@njit(fastmath={"contract"}, read_only=("a",))
def _det(a, out, odd):
    """out[s] = det a[s] for the (count, n, n) stack ``a``; odd[s] = True (out[s] not set) where a[s]
    holds a NaN or an infinity."""
    m, order = _scratch(a)
    for s in range(a.shape[0]):
        d = _factored(a, s, m, order)
        odd[s] = d != d
        for j in range(a.shape[1] if d != 0 and not odd[s] else 0):
            d *= m[j, j]
        out[s] = d


def _det_numpy(a, out, odd) -> None:
    odd[...] = False
    out[...] = np.linalg.det(a)


@njit(read_only=("a",))
def _slogdet(a, sign, logabs, odd):
    """sign[s], logabs[s] = the sign and log |det| of a[s] (log |det| summed in float64); odd as for ``_det``."""
    m, order = _scratch(a)
    for s in range(a.shape[0]):
        sg = _factored(a, s, m, order)
        odd[s] = sg != sg
        total = 0.0
        for j in range(a.shape[1] if sg != 0 and not odd[s] else 0):
            u = m[j, j]
            total += math.log(abs(u))
            if u < 0:
                sg = -sg
        sign[s], logabs[s] = sg, total if sg != 0 else -np.inf


def _slogdet_numpy(a, sign, logabs, odd) -> None:
    odd[...] = False
    sign[...], logabs[...] = np.linalg.slogdet(a)


# ------------------------------------------------------------------ solves
@njit(fastmath={"contract"}, read_only=("a", "b"), any_layout=("b",))
def _solve(a, b, out, odd):
    """out[s] = a[s]^-1 b[s] for the stacks a (count, n, n), b (count, n, k) (any strides: an identity
    broadcast over the stack for an inverse); odd[s] = True (out[s] not set) where a[s] is singular or
    holds a NaN or an infinity."""
    n, k = a.shape[1], b.shape[2]
    m, order = _scratch(a)
    for s in range(a.shape[0]):
        odd[s] = not abs(_factored(a, s, m, order)) > 0  # (singular: 0; NaN or infinity: NaN)
        if odd[s]:
            continue
        x = out[s]
        for i in range(n):  # forward: L y = P b (L's diagonal is 1)
            row = x[i]
            source = b[s, order[i]]
            for q in range(k):
                row[q] = source[q]
            for j in range(i):
                f = m[i, j]
                done = x[j]
                for q in range(np.uint64(k)):  # (unsigned: vectorised)
                    row[q] -= f * done[q]
        for i in range(n - 1, -1, -1):  # back: U x = y
            row = x[i]
            for j in range(i + 1, n):
                f = m[i, j]
                done = x[j]
                for q in range(np.uint64(k)):
                    row[q] -= f * done[q]
            u = m[i, i]
            for q in range(np.uint64(k)):
                row[q] /= u


def _solve_numpy(a, b, out, odd) -> None:
    odd[...] = False
    out[...] = np.linalg.solve(a, b)  # (LinAlgError for a singular matrix)


_DET = Kernel(_det_numpy, _det)
_SLOGDET = Kernel(_slogdet_numpy, _slogdet)
_SOLVE = Kernel(_solve_numpy, _solve)


# ------------------------------------------------------------------ entry points
# Each runs the kernel on a C-contiguous (count, n, n) stack, then NumPy on the matrices it marked odd
# (NaN or infinity, or singular for a solve: NumPy raises there).
def _small(a: np.ndarray, b: np.ndarray | None = None) -> bool:
    """Whether the kernels take these stacks: square matrices of at most ``SMALL_N`` rows (else LAPACK's
    blocked loops), float32 or float64, ``b`` (if any) a stack of matrices of a's dtype and rows."""
    return (
        0 < a.shape[-1] <= SMALL_N
        and a.dtype in (np.float32, np.float64)
        and (b is None or (b.dtype == a.dtype and b.ndim >= 2 and b.shape[-2] == a.shape[-1]))
    )


def _stack(a: np.ndarray) -> np.ndarray:
    """``a`` (..., n, n) as a C-contiguous (count, n, n) stack (a view where it is one already)."""
    return np.ascontiguousarray(a).reshape(-1, *a.shape[-2:])


def det(a: np.ndarray) -> np.ndarray:
    """det A for a (..., n, n): an array of shape (...), in a's dtype."""
    if not _small(a):
        return np.asarray(np.linalg.det(a))
    stack = _stack(a)
    out, odd = np.empty(stack.shape[0], a.dtype), np.empty(stack.shape[0], np.bool_)
    _DET.on(stack)(stack, out, odd)
    if odd.any():
        out[odd] = np.linalg.det(stack[odd])
    return out.reshape(a.shape[:-2])


def slogdet(a: np.ndarray) -> tuple:
    """(sign, log |det A|) for a (..., n, n): two arrays of shape (...), in a's dtype."""
    if not _small(a):
        sign, logabs = np.linalg.slogdet(a)
        return np.asarray(sign), np.asarray(logabs)
    stack = _stack(a)
    sign, logabs = np.empty(stack.shape[0], a.dtype), np.empty(stack.shape[0], a.dtype)
    odd = np.empty(stack.shape[0], np.bool_)
    _SLOGDET.on(stack)(stack, sign, logabs, odd)
    if odd.any():
        sign[odd], logabs[odd] = np.linalg.slogdet(stack[odd])
    return sign.reshape(a.shape[:-2]), logabs.reshape(a.shape[:-2])


def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """X with A X = B for a (..., n, n) and b (..., n, k) (batch dims broadcast), as ``np.linalg.solve``
    (which raises ``LinAlgError`` for a singular A)."""
    if not _small(a, b):
        return np.linalg.solve(a, b)
    lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    stack = _stack(np.broadcast_to(a, lead + a.shape[-2:]))
    rhs = np.broadcast_to(b, lead + b.shape[-2:]).reshape(-1, *b.shape[-2:])  # (a view where b is not copied)
    return _solved(stack, rhs).reshape(lead + b.shape[-2:])


def inv(a: np.ndarray) -> np.ndarray:
    """A^-1 for a (..., n, n), as ``np.linalg.inv`` (which raises ``LinAlgError`` for a singular A)."""
    if not _small(a):
        return np.linalg.inv(a)
    stack = _stack(a)
    return _solved(stack, np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), stack.shape)).reshape(a.shape)


def _solved(stack: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The solutions X (count, n, k) of the stacks, NumPy's where the kernel marked a matrix odd."""
    out = np.empty(stack.shape[:2] + rhs.shape[-1:], stack.dtype)
    odd = np.empty(stack.shape[0], np.bool_)
    _SOLVE.on(stack)(stack, rhs, out, odd)
    if odd.any():
        out[odd] = np.linalg.solve(stack[odd], rhs[odd])
    return out
