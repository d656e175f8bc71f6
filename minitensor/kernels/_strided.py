"""The inner loops of the window kernels (``im2col.py``, ``conv_depthwise.py``): one row of a window
at a time, over the columns where it overlaps the input.

Window ``q`` of a row reads input column ``q * stride + offset`` (``offset``: the kernel position's
column minus the padding); ``valid_columns`` gives the windows whose column lies inside the input,
the others read the padding's zeros.  The loops index with unsigned integers (``np.uint64``):
numba checks a signed index for Python's wrap-around of negative indices on every element, which
keeps LLVM from vectorising the loop (measured: the 3x3 columns of a 32-channel 32 x 32 image in
38 µs instead of 182).  Every index they are given is >= 0.
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
