"""Small helpers shared by the kernels: reductions over the rows of a 2-D block, and blocks of rows.

Every kernel works on a *block* of rows (a 2-D array) at a time: one call of
a helper does one pass over all rows of the block, so the cost of a call
(~50 ns in numba) is paid per block, not per row.

The reductions are compiled with ``fastmath={"reassoc"}`` (they may add in
any order), which lets LLVM use SIMD lanes for them; numba compiles each
helper with its own flags, so the elementwise loops of the kernels that call
them keep the exact order of their operations.
"""

from __future__ import annotations

from ._jit import njit

BLOCK = 64  # rows per block of a parallel kernel (each block has its own scratch)


@njit(fastmath={"nnan", "nsz", "reassoc"})
def row_max(x, out):
    """out[i] = max(x[i]) for each row of the 2-D ``x`` (a NaN may be skipped: the callers'
    exp pass propagates it)."""
    for i in range(x.shape[0]):
        m = x[i, 0]
        for j in range(x.shape[1]):
            v = x[i, j]
            m = v if v > m else m
        out[i] = m


@njit(fastmath={"reassoc", "contract"})
def row_sum(x, out):
    """out[i] = sum(x[i]), accumulated in float64."""
    for i in range(x.shape[0]):
        total = 0.0
        for j in range(x.shape[1]):
            total += x[i, j]
        out[i] = total


@njit(fastmath={"reassoc", "contract"})
def row_dot(x, y, out):
    """out[i] = sum(x[i] * y[i]), accumulated in float64."""
    for i in range(x.shape[0]):
        total = 0.0
        for j in range(x.shape[1]):
            total += x[i, j] * y[i, j]
        out[i] = total


@njit
def clear(a):
    """a[:] = 0 for a 1-D array, as a plain loop (in a parallel kernel, ``np.zeros`` or ``a[:] = 0``
    would become one more parallel region, each a launch of the thread pool)."""
    for j in range(a.shape[0]):
        a[j] = 0.0


@njit
def add_rows(parts, out):
    """out += the sum of the rows of the 2-D ``parts`` (a plain loop, see ``clear``)."""
    for k in range(parts.shape[0]):
        for j in range(parts.shape[1]):
            out[j] += parts[k, j]


@njit
def rows_of(a, start, stop):
    """``a[start:stop]``, or None when ``a`` is None (numba drops the dead branch at compile time)."""
    if a is None:
        return None
    return a[start:stop]


@njit
def blocks(rows):
    """The number of blocks of ``BLOCK`` rows (the last one may be shorter)."""
    return (rows + BLOCK - 1) // BLOCK
