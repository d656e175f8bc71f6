"""Convolution on channels-last rows: each window one row of a small matrix, its products on ``dot_tiles``.

``conv_gemm`` copies an image's windows into im2col columns (C * kh * kw, L) and multiplies them by
the weight on BLAS.  Its products read the columns across their rows, which BLAS does well on large
matrices only: one image's product runs at half the speed of ``dot_tiles`` on this machine.  The
tiles, though, want each window as a *row*, contiguous along its C * kh * kw values; copied from
the image's (C, H, W) planes a window row is kh * kw * C runs of one value (10x the columns' cost).
So the image is first laid out channels last, (H, W, C) with its zero padding: there the values a
window reads in kernel row i are one run of kw * C (kw runs of C with a dilation).  Window by
window::

    image, channels last (H + padding, W + padding, C)        window rows (BLOCK, kh * kw * C)

    row p * sh + i * dh:  . . [q*sw ... q*sw + kw) . .   ->    row t: [i = 0 run][i = 1 run]...
                              (kw pixels x C values)

and the output pixels (p, q .. q + BLOCK) of every output channel are ``dot_rows`` of the weight's
rows (Co, kh * kw * C), in the same (i, j, c) order, with those window rows.

The input gradient of a stride-1 convolution is itself a convolution, of the output gradient with
the weight flipped in space and its two channel dims swapped, padded by ``dilation * (k - 1) -
padding`` (the transposed convolution, ``docs/vision.md``): :func:`input_grad_window` gives its
window, the same kernel runs it.  ``conv_gemm`` calls these per image (``forward_image``), where
``dot_tiles.pays`` for the sums (C * kh * kw, resp. Co * kh * kw, terms) and the weight's rows.
"""

from __future__ import annotations

import numpy as np

from . import dot_tiles
from ._strided import gather
from .im2col import Window
from .runtime.jit import njit

BLOCK = 16  # output pixels per block of window rows: 16 rows of up to 576 values stay in L1


@njit
def scratch(h: int, w: int, c: int, win, like):
    """A zeroed (Hs, Ws, C) scratch of ``like``'s dtype, for one padded (C, h, w) image channels last,
    tall and wide enough for every window of ``win``, and the (BLOCK, kh * kw * C) window rows."""
    hs = max(win.pt + h, (win.oh - 1) * win.sh + (win.kh - 1) * win.dh + 1)
    ws = max(win.pl + w, (win.ow - 1) * win.sw + (win.kw - 1) * win.dw + 1)
    return np.zeros((hs, ws, c), like.dtype), np.empty((BLOCK, win.kh * win.kw * c), like.dtype)


@njit
def channels_last(x, win, image) -> None:
    """image[pt + h, pl + w, c] = x[c, h, w] for the (C, H, W) image x (the padding around it is
    left as it is: 0)."""
    c_count, h_count, w_count = x.shape
    for h in range(h_count):
        row = image[win.pt + h]
        for w in range(w_count):
            pixel = row[win.pl + w]
            for c in range(c_count):
                pixel[c] = x[c, h, w]


@njit(inline="always")
def window_rows(image, win, p: int, q0: int, count: int, rows) -> None:
    """rows[t] = the window of output pixel (p, q0 + t), t < count: value (i, j, c) at
    (i * kw + j) * C + c."""
    c = image.shape[2]
    flat = image.reshape((image.shape[0], image.shape[1] * c))
    run = win.kw * c if win.dw == 1 else c  # a kernel row's values, or one kernel position's
    for t in range(count):
        column = (q0 + t) * win.sw
        target = rows[t]
        for i in range(win.kh):
            source = flat[(p * win.sh + i * win.dh)]
            for j in range(0, win.kw, 1 if win.dw != 1 else win.kw):
                gather(target, (i * win.kw + j) * c, source, (column + j * win.dw) * c, 1, run)


@njit
def weight_rows(weight):
    """The weight (Co, C, kh, kw) as rows (Co, kh * kw * C), each in the windows' (i, j, c) order."""
    co, c, kh, kw = weight.shape
    rows = np.empty((co, kh, kw, c), weight.dtype)
    for o in range(co):
        for k in range(c):
            for i in range(kh):
                for j in range(kw):
                    rows[o, i, j, k] = weight[o, k, i, j]
    return rows.reshape((co, kh * kw * c))


@njit
def flipped_weight_rows(weight):
    """The weight of the input gradient's convolution, as rows (C, kh * kw * Co): the channel dims
    swapped and the kernel flipped, W'[c, o, i, j] = W[o, c, kh - 1 - i, kw - 1 - j] (``weight_rows`` of W')."""
    co, c, kh, kw = weight.shape
    rows = np.empty((c, kh, kw, co), weight.dtype)
    for k in range(c):
        for o in range(co):
            for i in range(kh):
                for j in range(kw):
                    rows[k, i, j, o] = weight[o, k, kh - 1 - i, kw - 1 - j]
    return rows.reshape((c, kh * kw * co))


@njit(inline="always")
def input_grad_window(win, h: int, w: int):
    """The window of the stride-1 input gradient as a convolution of the output gradient: the
    same kernel and dilation, padding ``d * (k - 1) - p`` before each dim (negative: the kernel
    does not take it), an (h, w) output."""
    top, left = win.dh * (win.kh - 1) - win.pt, win.dw * (win.kw - 1) - win.pl
    return Window(win.kh, win.kw, 1, 1, top, left, win.dh, win.dw, h, w)


@njit
def forward_image(x, rows_of_weight, win, image, rows, out) -> None:
    """out (Co, oh * ow) = the convolution of the (C, H, W) image x with the weight's rows
    (``weight_rows``), through the zeroed scratch ``image`` and the window ``rows``
    (``scratch``)."""
    channels_last(x, win, image)
    for p in range(win.oh):
        for q0 in range(0, win.ow, BLOCK):
            count = min(BLOCK, win.ow - q0)
            window_rows(image, win, p, q0, count, rows)
            start = p * win.ow + q0
            dot_tiles.dot_rows(rows_of_weight, rows[:count], out[:, start : start + count], 0.0)
