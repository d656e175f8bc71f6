"""The inner loops of the window kernels (``im2col.py``, ``conv_depthwise.py``): one row of a window
at a time, over the columns where it overlaps the input.

Window ``q`` of a row reads input column ``q * stride + offset`` (``offset``: the kernel position's
column minus the padding); ``valid_columns`` gives the windows whose column lies inside the input,
the others read the padding's zeros.  The loops index with unsigned integers (``np.uint64``):
numba checks a signed index for Python's wrap-around of negative indices on every element, which
keeps LLVM from vectorising the loop (measured: the 3x3 columns of a 32-channel 32 x 32 image in
38 µs instead of 182).  Every index they are given is >= 0.
Their two arrays never overlap (a scratch filled from an image, or back).  ``copy_run`` (at the
end) copies a contiguous run in vector blocks, for the hottest copy (``conv_gemm.columns``).
"""

from __future__ import annotations

import numpy as np

from .runtime.jit import njit


@njit(inline="always")
def valid_columns(offset: int, stride: int, width: int, ow: int) -> tuple:
    """The windows ``q0 <= q < q1`` whose column ``q * stride + offset`` lies inside ``[0, width)``."""
    q0 = 0 if offset >= 0 else (stride - 1 - offset) // stride
    last = width - 1 - offset
    q1 = 0 if last < 0 else min(ow, last // stride + 1)
    return min(q0, ow), max(q1, min(q0, ow))


@njit(inline="always")
def fill(row, start, stop, value) -> None:
    """row[start:stop] = value."""
    for q in range(np.uint64(start), np.uint64(stop)):
        row[q] = value


@njit(inline="always")
def gather(dst, d0, src, s0, stride, n: int) -> None:
    """dst[d0 + q] = src[s0 + q * stride] for q < n (all indices >= 0)."""
    d, s, step = np.uint64(d0), np.uint64(s0), np.uint64(stride)
    if stride == 1:
        for q in range(np.uint64(n)):
            dst[d + q] = src[s + q]
    else:
        for q in range(np.uint64(n)):
            dst[d + q] = src[s + q * step]


@njit(inline="always")
def scatter(dst, d0, stride, src, s0, n: int) -> None:
    """dst[d0 + q * stride] = src[s0 + q] for q < n (the inverse of ``gather``)."""
    d, s, step = np.uint64(d0), np.uint64(s0), np.uint64(stride)
    if stride == 1:
        for q in range(np.uint64(n)):
            dst[d + q] = src[s + q]
    else:
        for q in range(np.uint64(n)):
            dst[d + q * step] = src[s + q]


@njit(inline="always")
def scatter_add(dst, d0, stride, src, s0, n: int) -> None:
    """dst[d0 + q * stride] += src[s0 + q] for q < n (the adjoint of ``gather``)."""
    d, s, step = np.uint64(d0), np.uint64(s0), np.uint64(stride)
    if stride == 1:
        for q in range(np.uint64(n)):
            dst[d + q] += src[s + q]
    else:
        for q in range(np.uint64(n)):
            dst[d + q * step] += src[s + q]


@njit(inline="always")
def axpy(dst, d0, a, src, s0, stride, n: int) -> None:
    """dst[d0 + q] += a * src[s0 + q * stride] for q < n."""
    d, s, step = np.uint64(d0), np.uint64(s0), np.uint64(stride)
    if stride == 1:
        for q in range(np.uint64(n)):
            dst[d + q] += a * src[s + q]
    else:
        for q in range(np.uint64(n)):
            dst[d + q] += a * src[s + q * step]


# ------------------------------------------------------------------ contiguous runs, in vector blocks
# A loop over a run of n values vectorises in blocks of 32 (4 x 8 lanes, with a test that the two
# arrays do not overlap) and leaves the rest to a scalar loop: a run of 10 (LeNet-5's c3 windows) or
# 16 is copied one value at a time.  The blocks below (of 8) load all their values before storing any, so
# that LLVM makes them vector loads and stores without that test (it may not move a load past a
# store to memory it cannot tell apart).  Measured, the im2col columns of 64 images: runs of 10 in
# 0.56x the time, 28 in 0.56x, 16 in 0.64x, 8 in 0.74x, 32 the same.
# Only the im2col columns take it: inlined into every ``gather`` (as numba inlines, at its own level,
# before LLVM) it made the convolution kernels compile ~50 % longer, and a call that is not inlined
# costs more than the copy.
@njit(inline="always")
def _copy8(dst, d, src, s) -> None:
    """dst[d + r] = src[s + r] for r < 8 (unsigned d and s)."""
    u = np.uint64
    v0, v1, v2, v3 = src[s], src[s + u(1)], src[s + u(2)], src[s + u(3)]
    v4, v5, v6, v7 = src[s + u(4)], src[s + u(5)], src[s + u(6)], src[s + u(7)]
    dst[d] = v0
    dst[d + u(1)] = v1
    dst[d + u(2)] = v2
    dst[d + u(3)] = v3
    dst[d + u(4)] = v4
    dst[d + u(5)] = v5
    dst[d + u(6)] = v6
    dst[d + u(7)] = v7


@njit(inline="always")
def _copy16(dst, d, src, s) -> None:
    """dst[d + r] = src[s + r] for r < 16: two blocks of 8 (as fast as 16 loads before 16 stores)."""
    _copy8(dst, d, src, s)
    _copy8(dst, d + np.uint64(8), src, s + np.uint64(8))


@njit(inline="always")
def copy_run(dst, d0, src, s0, n: int) -> None:
    """dst[d0 + q] = src[s0 + q] for q < n, ``dst`` and ``src`` two arrays that do not overlap (as in
    every caller: a scratch filled from an image, or back): in blocks, the last one overlapping the
    one before it where n is not a multiple of the block (its values are written twice, the same)."""
    d, s, un = np.uint64(d0), np.uint64(s0), np.uint64(n)
    if n < 8:
        for q in range(un):
            dst[d + q] = src[s + q]
    elif n <= 16:
        _copy8(dst, d, src, s)
        _copy8(dst, d + un - np.uint64(8), src, s + un - np.uint64(8))
    else:
        q = np.uint64(0)
        while q + np.uint64(16) <= un:
            _copy16(dst, d + q, src, s + q)
            q += np.uint64(16)
        if q < un:
            _copy16(dst, d + un - np.uint64(16), src, s + un - np.uint64(16))
