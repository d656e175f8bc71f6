"""Small helpers shared by the row kernels: reductions of one row, and optional rows.

The reductions are compiled with ``fastmath={"reassoc"}`` (they may add in
any order), which lets LLVM use SIMD lanes for them; numba compiles each
helper with its own flags, so the elementwise loops of the kernels that call
them keep the exact order of their operations.
"""

from __future__ import annotations

from ._jit import njit

CHUNKS = 64  # a parallel kernel splits its rows into at most this many blocks, each with its own scratch


@njit(fastmath={"nnan", "nsz", "reassoc"})
def row_max(x):
    """max(x) of a non-empty 1-D array (a NaN may be skipped: the caller's exp pass propagates it)."""
    m = x[0]
    for j in range(x.shape[0]):
        v = x[j]
        m = v if v > m else m
    return m


@njit(fastmath={"reassoc", "contract"})
def row_sum(x):
    """sum(x) as a float64."""
    total = 0.0
    for j in range(x.shape[0]):
        total += x[j]
    return total


@njit(fastmath={"reassoc", "contract"})
def row_dot(x, y):
    """sum(x * y) as a float64."""
    total = 0.0
    for j in range(x.shape[0]):
        total += x[j] * y[j]
    return total


@njit
def row_of(a, i):
    """``a[i]``, or None when ``a`` is None (numba drops the dead branch at compile time)."""
    if a is None:
        return None
    return a[i]


@njit
def chunks(rows):
    """``(step, count)``: rows ``[c * step, min(rows, (c + 1) * step))`` form block ``c < count``."""
    step = (rows + CHUNKS - 1) // CHUNKS
    return step, (rows + step - 1) // step
