"""im2col and col2im: the sliding windows of an image laid out as the columns of a matrix, and back.

A convolution multiplies every window of its input (``kh x kw`` pixels of every channel) by the
same weights.  ``im2col`` copies each window into a column, so that the whole convolution becomes
one matrix product (``kernels/conv.py``)::

    x (C=1, H=3, W=3)       windows of 2x2, stride 1      cols (C*kh*kw = 4, L = 2*2 windows)

    a b c                   [a b] [b c]                   a b d e      <- kernel position (0, 0)
    d e f                   [d e] [e f]                   b c e f      <- (0, 1)
    g h i                   [d e] [e f]                   d e g h      <- (1, 0)
                            [g h] [h i]                   e f h i      <- (1, 1)

Row ``(c * kh + i) * kw + j`` of ``cols`` holds pixel ``(i, j)`` of each window of channel ``c``
(PyTorch's ``F.unfold`` layout), column ``p * ow + q`` window ``(p, q)`` of the output grid.  Window
``(p, q)`` starts at row ``p * sh - pt`` and column ``q * sw - pl`` of the input and its pixel
``(i, j)`` is ``dh * i`` rows and ``dw * j`` columns further (dilation): positions outside the
input read 0 (zero padding).  ``col2im`` is the adjoint: it adds every column back onto the pixels
it was copied from (a pixel in several windows gets the sum), which is the gradient of ``im2col``
and PyTorch's ``F.fold``.

The geometry travels as a ``Window``: the kernel size, stride, the padding *before* each dim
(``pt``, ``pl``), the dilation and the size of the output grid (``oh, ow``); padding after the
input is implied by the grid (a window that reaches past the input reads zeros), so asymmetric
padding (``padding='same'`` with an even kernel) needs nothing more.

Each kernel takes an array of *planes* (one channel of one image each, ``(P, H, W)``) and writes
``(P, kh * kw, L)`` columns.  The reference (``_im2col_numpy``) copies one strided slice of the
zero-padded input per kernel position; the numba kernel copies row by row, leaving the padded copy
out; the parallel one splits the planes over the threads.

>>> x = np.arange(9.0).reshape(1, 1, 3, 3)
>>> im2col(x, Window(2, 2, 1, 1, 0, 0, 1, 1, 2, 2))[0]
array([[0., 1., 3., 4.],
       [1., 2., 4., 5.],
       [3., 4., 6., 7.],
       [4., 5., 7., 8.]])
>>> col2im(np.ones((1, 4, 4)), (3, 3), Window(2, 2, 1, 1, 0, 0, 1, 1, 2, 2))[0, 0]
array([[1., 2., 1.],
       [2., 4., 2.],
       [1., 2., 1.]])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._strided import fill, gather, scatter_add, valid_columns
from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange


class Window(NamedTuple):
    """The windows of a convolution over a 2-D input (1-D: ``kh = sh = dh = oh = 1, pt = 0``)."""

    kh: int  # kernel size
    kw: int
    sh: int  # stride
    sw: int
    pt: int  # padding before the rows and before the columns (>= 0)
    pl: int
    dh: int  # dilation
    dw: int
    oh: int  # output grid: oh x ow windows
    ow: int


def window(kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, grid: tuple) -> Window:
    """The ``Window`` of 2-D windows: kernel (kh, kw), stride, padding before the rows and the
    columns, dilation, and the output grid (oh, ow), each a pair of ints."""
    return Window(*kernel, *stride, *padding, *dilation, *grid)


def as_record(win: Window, groups: int) -> np.ndarray:
    """The window and ``groups`` as an int64 array (1, 1, 1, 11): the form a task on BLAS's threads
    reads them in (one record slot: ``runtime/blas_threads.py``)."""
    return np.array([*win, groups], np.int64).reshape(1, 1, 1, 11)


@njit(inline="always")
def from_record(g) -> Window:
    """The ``Window`` of ``as_record``'s array (``g``: its last axis), inside a task; ``g[10]`` is groups."""
    return Window(g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9])


def im2col(x: np.ndarray, win: Window) -> np.ndarray:
    """The columns of every window of ``x`` (N, C, H, W): a new (N, C * kh * kw, oh * ow) array."""
    n, c, h, w = x.shape
    x = np.ascontiguousarray(x)
    cols = np.empty((n, c * win.kh * win.kw, win.oh * win.ow), x.dtype)
    planes = x.reshape(n * c, h, w)
    _IM2COL.on(cols)(planes, win, cols.reshape(n * c, win.kh * win.kw, win.oh * win.ow))
    return cols


def col2im(cols: np.ndarray, size: tuple, win: Window) -> np.ndarray:
    """The adjoint of ``im2col``: (N, C * kh * kw, oh * ow) columns summed back onto a new
    (N, C, H, W) array, ``size = (H, W)``."""
    n, ck, _ = cols.shape
    c = ck // (win.kh * win.kw)
    cols = np.ascontiguousarray(cols)
    out = np.empty((n, c) + tuple(size), cols.dtype)
    _COL2IM.on(cols)(cols.reshape(n * c, win.kh * win.kw, win.oh * win.ow), win, out.reshape((n * c,) + tuple(size)))
    return out


# ------------------------------------------------------------------ the reference
def reach(size: int, k: int, stride: int, before: int, dilation: int, grid: int) -> int:
    """How many positions of a padded dim the windows cover: ``before`` zeros, then the input, then
    zeros up to the end of the last window (the input may also extend past it, unread)."""
    return max(before + size, (grid - 1) * stride + (k - 1) * dilation + 1)


def _seen(start: int, stride: int, count: int) -> slice:
    """The positions of a padded dim that one kernel position sees in ``count`` windows."""
    return slice(start, start + (count - 1) * stride + 1, stride)


def _im2col_numpy(planes: np.ndarray, win: Window, cols: np.ndarray) -> None:
    """Reference: for each kernel position (i, j), the pixel it sees in every window is one strided
    slice of the zero-padded planes."""
    p, h, w = planes.shape
    kh, kw, sh, sw, pt, pl, dh, dw, oh, ow = win
    padded = np.zeros((p, reach(h, kh, sh, pt, dh, oh), reach(w, kw, sw, pl, dw, ow)), planes.dtype)
    padded[:, pt : pt + h, pl : pl + w] = planes
    view = cols.reshape(p, kh, kw, oh, ow)
    for i in range(kh):
        for j in range(kw):
            view[:, i, j] = padded[:, _seen(i * dh, sh, oh), _seen(j * dw, sw, ow)]


def _col2im_numpy(cols: np.ndarray, win: Window, out: np.ndarray) -> None:
    """Reference: each kernel position's columns added back onto its strided slice of the padded
    planes, then the padding cut off."""
    p, h, w = out.shape
    kh, kw, sh, sw, pt, pl, dh, dw, oh, ow = win
    padded = np.zeros((p, reach(h, kh, sh, pt, dh, oh), reach(w, kw, sw, pl, dw, ow)), cols.dtype)
    view = cols.reshape(p, kh, kw, oh, ow)
    for i in range(kh):
        for j in range(kw):
            padded[:, _seen(i * dh, sh, oh), _seen(j * dw, sw, ow)] += view[:, i, j]
    out[...] = padded[:, pt : pt + h, pl : pl + w]


# ------------------------------------------------------------------ the kernels
@njit
def im2col_plane(x, win, cols):
    """The (kh * kw, oh * ow) columns of one (H, W) plane ``x`` into ``cols``: row (i, j) of cols
    holds, window after window, the pixel (i, j) of each (0 where it falls in the padding)."""
    h, w = x.shape
    ow = win.ow
    for i in range(win.kh):
        for j in range(win.kw):
            out = cols[i * win.kw + j]
            offset = j * win.dw - win.pl
            q0, q1 = valid_columns(offset, win.sw, w, ow)
            for p in range(win.oh):
                r = p * win.sh + i * win.dh - win.pt
                base = p * ow
                if r < 0 or r >= h:
                    fill(out, base, base + ow, 0)
                    continue
                fill(out, base, base + q0, 0)
                gather(out, base + q0, x[r], q0 * win.sw + offset, win.sw, q1 - q0)
                fill(out, base + q1, base + ow, 0)


@njit
def col2im_plane(cols, win, x):
    """The adjoint of ``im2col_plane``: the (kh * kw, oh * ow) ``cols`` summed onto the plane ``x``
    (which it overwrites)."""
    h, w = x.shape
    ow = win.ow
    x[:] = 0
    for i in range(win.kh):
        for j in range(win.kw):
            source = cols[i * win.kw + j]
            offset = j * win.dw - win.pl
            q0, q1 = valid_columns(offset, win.sw, w, ow)
            for p in range(win.oh):
                r = p * win.sh + i * win.dh - win.pt
                if 0 <= r < h:
                    scatter_add(x[r], q0 * win.sw + offset, win.sw, source, p * ow + q0, q1 - q0)


@njit
def _im2col_planes(planes, win, cols):
    for k in range(planes.shape[0]):
        im2col_plane(planes[k], win, cols[k])


@njit(parallel=True)
def _im2col_parallel(planes, win, cols):
    for k in prange(planes.shape[0]):
        im2col_plane(planes[k], win, cols[k])


@njit
def _col2im_planes(cols, win, out):
    for k in range(out.shape[0]):
        col2im_plane(cols[k], win, out[k])


@njit(parallel=True)
def _col2im_parallel(cols, win, out):
    for k in prange(out.shape[0]):
        col2im_plane(cols[k], win, out[k])


# (ns: per element of the columns, the side chosen on: ``on(cols)``)
_IM2COL = Kernel(_im2col_numpy, _im2col_planes, _im2col_parallel, ns=0.5)
_COL2IM = Kernel(_col2im_numpy, _col2im_planes, _col2im_parallel, ns=0.5)
