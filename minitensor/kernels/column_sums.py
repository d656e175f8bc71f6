"""``column_sums``: the sum over the rows of a (M, N) array, as one matrix-vector product; and
``sum_to_shape``, a broadcast gradient summed back to its input's shape, on it where it can.

A bias's gradient is the sum of the output gradient's rows.  NumPy's ``g.sum(axis=0)``
on a C-contiguous (M, N) array adds the rows one after another; ``ones(M) @ g`` asks
BLAS for the same sums (sgemv/dgemv), which keeps several partial sums in SIMD
registers.  Measured on a 2-core AVX-512 machine (float32, µs): (512, 64) 10.4 -> 2.1,
(1024, 192) 30.4 -> 9.8, (8192, 512) 401 -> 188; against a float64 sum the error was
2-4x smaller than ``sum(axis=0)``'s.  The reference is ``g.sum(0)``
(``tests/kernels/test_column_sums.py`` holds the two together).

A convolution's bias gradient sums (N, C, H, W) over all but the channels: leading *and* trailing
dims.  As two BLAS products (the planes' sums, then their columns') with their allocations that
costs ~10 µs a call beyond the reading; ``_middle_sums`` (numba, NumPy reference beside it) reads
the array once in memory order, each plane's sum in SIMD lanes, added up per channel in float64.
Measured on the 2-core AMD VM (float32, µs, BLAS products / kernel): LeNet-5's (64, 6, 28, 28)
60 / 33, (64, 16, 5, 5) 15.6 / 5.6, (8, 3, 4) 10.8 / 1.0; at 2^19 values the two are equal, and
beyond BLAS's two threads read memory faster ((64, 64, 32, 32): 228 / 682), so from ``MIDDLE_UNTIL``
on the products run.

>>> column_sums(np.arange(6.0).reshape(3, 2))
array([6., 9.])
>>> sum_to_shape(np.ones((4, 2, 3)), (2, 1))
array([[12.],
       [12.]])
"""

from __future__ import annotations

import math

import numpy as np

from ._sum import vector_sum
from .runtime.dispatch import Kernel
from .runtime.jit import njit

MIDDLE_UNTIL = 2**19  # values from which the BLAS products sum leading and trailing dims faster (above)


def column_sums(g):
    """(N,): the sums of the rows of the 2-D ``g`` (M, N); ``g.sum(0)`` for anything else
    (a Tensor under create_graph, an integer or non-2-D array)."""
    if type(g) is not np.ndarray or g.ndim != 2 or g.dtype.kind != "f":
        return g.sum(0)
    return np.ones(g.shape[0], g.dtype) @ g


def _transposed(a: np.ndarray) -> bool:
    """A 2-D array laid out column by column (a transposed C-contiguous matrix), not row by row."""
    return a.flags.f_contiguous and not a.flags.c_contiguous


def sum_to_shape(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """``grad``, an array of a shape that ``shape`` broadcasts to, summed over the dims broadcasting
    added (leading) or stretched (size 1 in ``shape``), as an array of ``shape`` and grad's dtype.

    A transposed 2-D float ``grad`` (column by column in memory) is summed along one dim as a product
    with ``grad.T`` (rows in memory), without a copy.  On a float ``grad``, stretched dims at the end
    (``repeat_interleave``'s, an ``expand`` of a trailing size-1 dim) are summed as
    ``grad (M, K) @ ones(K)`` (on a contiguous copy if need be):
    NumPy's own sum over a short innermost axis makes one tiny reduction per row (K = 2 on 2^17
    elements: 1.5 ms, the product 0.04 ms); then, when only leading dims are left (added ones, or
    stretched ones: a (1, N) bias's gradient), ``column_sums``."""
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, size in enumerate(shape) if size == 1 and grad.shape[lead + i] != 1
    )
    if grad.size == 0:
        return np.zeros(shape, grad.dtype)
    if len(axes) == 1 and grad.ndim == 2 and grad.dtype.kind == "f" and _transposed(grad):
        # a transposed matrix: the sums of its rows (or columns) are the columns (or rows) of grad.T
        # (C-contiguous), one BLAS product without copying grad (a copy cost as much as the sums)
        t = grad.T
        sums = np.ones(t.shape[0], grad.dtype) @ t if axes == (1,) else t @ np.ones(t.shape[1], grad.dtype)
        return sums.reshape(shape)
    block = _middle_block(grad, axes)
    if block is not None:  # leading and trailing dims summed, one block kept between: (N, C, H, W) -> (C, 1, 1)
        lead, trail = math.prod(grad.shape[: block[0]]), math.prod(grad.shape[block[1] :])
        return middle_sums(grad.reshape(lead, -1, trail)).reshape(shape)
    if grad.dtype.kind == "f" and axes and axes[-1] == grad.ndim - 1:  # the innermost dim is summed
        trailing = 1  # how many of the reduced axes end the array
        while trailing < len(axes) and axes[-1 - trailing] == grad.ndim - 1 - trailing:
            trailing += 1
        kept = grad.shape[: grad.ndim - trailing]
        k = math.prod(grad.shape[grad.ndim - trailing :])
        grad = (np.ascontiguousarray(grad).reshape(-1, k) @ np.ones(k, grad.dtype)).reshape(kept)
        axes = axes[: len(axes) - trailing]
    summed = len(axes)
    if axes == tuple(range(summed)) and grad.flags.c_contiguous and grad.dtype.kind == "f":
        # only leading dims summed (added, or stretched: a (1, N) bias): the sums of the rows
        rows = grad.reshape(math.prod(grad.shape[:summed]), math.prod(grad.shape[summed:]))
        return column_sums(rows).reshape(shape)
    return np.asarray(grad.sum(axis=axes)).reshape(shape)


def _middle_block(grad: np.ndarray, axes: tuple):
    """(start, stop) of the kept dims of ``grad`` where ``axes`` (sorted) are the leading dims up to
    ``start`` and the trailing ones from ``stop``, both present, and ``_middle_sums`` pays (a
    C-contiguous float array of fewer than ``MIDDLE_UNTIL`` values); else None."""
    if grad.dtype.kind != "f" or not grad.flags.c_contiguous or grad.size >= MIDDLE_UNTIL or not axes:
        return None
    start = 0
    while start < len(axes) and axes[start] == start:
        start += 1
    stop = grad.ndim - (len(axes) - start)
    if start == 0 or stop == grad.ndim or axes[start:] != tuple(range(stop, grad.ndim)):
        return None
    return start, stop


def middle_sums(g: np.ndarray) -> np.ndarray:
    """(B,): the sums of the C-contiguous float (A, B, K) ``g`` over its first and last dims."""
    out = np.empty(g.shape[1], g.dtype)
    _MIDDLE_SUMS.on(g)(g, out)
    return out


def _middle_sums_numpy(g: np.ndarray, out: np.ndarray) -> None:
    """Reference: out[j] = the float64 sum of g[:, j, :], rounded to out's dtype."""
    out[...] = g.sum(axis=(0, 2), dtype=np.float64)


@njit
def _middle_sums(g, out):
    """The reference's sums, g read in memory order (each (i, j) row summed in SIMD lanes)."""
    totals = np.zeros(g.shape[1])
    for i in range(g.shape[0]):
        for j in range(g.shape[1]):
            totals[j] += vector_sum(g[i, j])
    out[:] = totals


_MIDDLE_SUMS = Kernel(_middle_sums_numpy, _middle_sums, ns=0.035)
