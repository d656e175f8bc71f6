"""Constant padding of the last two dims (``nn.ZeroPad2d``, ``F.pad(x, (l, r, t, b))``) and its
gradient, the crop, each one pass over the planes.

NumPy pads in three steps: the input copied into the middle of a new array, then the margins
filled, slab by slab.  Its copy of a (N, C, 32, 32) float32 input into (N, C, 34, 34) moves one row
of 32 at a time through its general strided loop (~10 ns a row), and a column margin is a slab of
rows one element wide.  Here each output plane is written once, row by row: the left margin, the
input's row, the right margin (``_strided.py``'s loops, which vectorise), the top and bottom rows
filled whole.  The crop (the gradient: the margins' gradients dropped) copies the middle back out
into a new C-contiguous array, where a view of it would be copied by whoever reads it next.  With
several threads the planes are split over them.  The references are the NumPy slicing.

- ``pad_planes(x, top, bottom, left, right, value)``: x (..., H, W) -> (..., H + top + bottom,
  W + left + right), amounts >= 0;
- ``crop_planes(g, top, bottom, left, right)``: g (..., Ho, Wo) -> g[..., top:Ho - bottom, left:Wo - right].

>>> pad_planes(np.ones((1, 2, 2)), 1, 0, 0, 1, 0.0)[0]
array([[0., 0., 0.],
       [1., 1., 0.],
       [1., 1., 0.]])
"""

from __future__ import annotations

import numpy as np

from ._strided import fill, gather
from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange


def pad_planes(x: np.ndarray, top: int, bottom: int, left: int, right: int, value) -> np.ndarray:
    """x (..., H, W) padded with ``value``: ``top`` rows before, ``bottom`` after, ``left`` and
    ``right`` columns (all >= 0); a new C-contiguous array of x's dtype."""
    *lead, h, w = x.shape
    out = np.empty((*lead, h + top + bottom, w + left + right), x.dtype)
    planes = np.ascontiguousarray(x).reshape(-1, h, w)
    fill_value = np.array(value, x.dtype)[()]
    _PAD.on(out)(planes, top, left, fill_value, out.reshape(-1, *out.shape[-2:]))
    return out


def crop_planes(g: np.ndarray, top: int, bottom: int, left: int, right: int) -> np.ndarray:
    """g[..., top:Ho - bottom, left:Wo - right] as a new C-contiguous array (amounts >= 0)."""
    *lead, ho, wo = g.shape
    out = np.empty((*lead, ho - top - bottom, wo - left - right), g.dtype)
    planes = np.ascontiguousarray(g).reshape(-1, ho, wo)
    _CROP.on(out)(planes, top, left, out.reshape(-1, *out.shape[-2:]))
    return out


# ------------------------------------------------------------------ the references
def _pad_numpy(x, top, left, value, out) -> None:
    """out (P, Ho, Wo) = value, with x (P, H, W) at rows top.., columns left.."""
    out[...] = value
    out[:, top : top + x.shape[1], left : left + x.shape[2]] = x


def _crop_numpy(g, top, left, out) -> None:
    """out (P, H, W) = g (P, Ho, Wo) at rows top.., columns left.."""
    out[...] = g[:, top : top + out.shape[1], left : left + out.shape[2]]


# ------------------------------------------------------------------ the kernels, on a range of planes
@njit
def _pad_block(x, top, left, value, out, start, stop):
    h, w = x.shape[1], x.shape[2]
    ho, wo = out.shape[1], out.shape[2]
    for k in range(start, stop):
        src, dst = x[k], out[k]
        for r in range(top):
            fill(dst[r], 0, wo, value)
        for r in range(h):
            row = dst[top + r]
            fill(row, 0, left, value)
            gather(row, left, src[r], 0, 1, w)
            fill(row, left + w, wo, value)
        for r in range(top + h, ho):
            fill(dst[r], 0, wo, value)


@njit
def _pad(x, top, left, value, out):
    _pad_block(x, top, left, value, out, 0, out.shape[0])


@njit(parallel=True)
def _pad_parallel(x, top, left, value, out):
    planes = out.shape[0]
    for b in prange(_blocks(planes)):
        _pad_block(x, top, left, value, out, b * BLOCK, min(planes, (b + 1) * BLOCK))


@njit
def _crop_block(g, top, left, out, start, stop):
    h, w = out.shape[1], out.shape[2]
    for k in range(start, stop):
        src, dst = g[k], out[k]
        for r in range(h):
            gather(dst[r], 0, src[top + r], left, 1, w)


@njit
def _crop(g, top, left, out):
    _crop_block(g, top, left, out, 0, out.shape[0])


@njit(parallel=True)
def _crop_parallel(g, top, left, out):
    planes = out.shape[0]
    for b in prange(_blocks(planes)):
        _crop_block(g, top, left, out, b * BLOCK, min(planes, (b + 1) * BLOCK))


BLOCK = 16  # planes per block of a parallel kernel


@njit(inline="always")
def _blocks(planes: int) -> int:
    return (planes + BLOCK - 1) // BLOCK


# ns: per element of the output (a copy: ~0.15 ns an element, ~3 ns a row of a small plane)
_PAD = Kernel(_pad_numpy, _pad, _pad_parallel, ns=0.3)
_CROP = Kernel(_crop_numpy, _crop, _crop_parallel, ns=0.3)
