"""Resampling the trailing dims of a tensor by a fixed sparse map: the op behind interpolation
(``F.interpolate``) and the reflect, replicate and circular padding modes (``F.pad``).

Each output position along a dim reads a few input positions (taps) with weights
(``kernels/resample.py``): nearest interpolation and the padding modes one tap of weight 1,
(bi)linear two per dim, bicubic four.  ``Resample`` is linear in its input: its gradient is the
transposed map ``ResampleTranspose`` (each output's gradient sent back to its taps, times their
weights, added up where taps are shared), and the transpose's gradient is ``Resample`` again,
so every order of derivative is exact.  Being linear, each op's forward-mode rule is the op
itself applied to the tangent (``jvp = linear``); under ``vmap`` the batch dim is one more
leading dim.

The taps of each use are computed here, once per call, on arrays of the output's size:

- ``pad_taps(n, before, after, mode)``: PyTorch's reflect (``... 2 1 [0 1 2 ... n-1] n-2 ...``),
  replicate (the edge repeated) and circular (wrapped) padding; negative amounts crop;
- ``interpolation_taps(n, out, mode, align_corners, scale)``: PyTorch's source positions
  (``upsample`` kernels): nearest ``floor(i * scale)`` in float32 arithmetic, nearest-exact
  ``floor((i + 0.5) * scale)``, linear and cubic from ``(i + 0.5) * scale - 0.5`` (or
  ``i * (n - 1) / (out - 1)`` with ``align_corners``), cubic with PyTorch's A = -0.75 and its
  reads clamped to the edges.

>>> rows = interpolation_taps(2, 4, "linear", align_corners=False, scale=None)
>>> rows[0].tolist(), rows[1].tolist()     # output 1 reads 3/4 of input 0 and 1/4 of input 1
([[0, 1], [0, 1], [0, 1], [1, 1]], [[1.0, 0.0], [0.75, 0.25], [0.25, 0.75], [0.75, 0.25]])
>>> x = mt.tensor([[[1.0, 2.0, 3.0]]], requires_grad=True)
>>> resample(x, [pad_taps(3, 2, 1, "reflect")])
tensor([[[3., 2., 1., 2., 3., 2.]]], grad_fn=<ResampleBackward>)
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd.batching import Batch, leading
from ..autograd.dual import linear
from ..autograd.function import Op
from .pool_geometry import as_planes, from_planes

_NO_TAPS = (np.zeros((1, 1), np.int64), None)  # the identity along H of a 1-D resampling


class Resample(Op):
    """y = the resampling of x's ``dims`` trailing dims by ``rows`` and ``cols`` (each ``(index,
    weight or None)``, see ``kernels/resample.py``);  dx = ResampleTranspose(dy)."""

    @staticmethod
    def forward(ctx, x, rows=_NO_TAPS, cols=None, dims=2):
        ctx.rows, ctx.cols, ctx.dims, ctx.shape_in = rows, cols, dims, x.shape
        out = backend.resample(as_planes(x, dims), rows, cols)
        return from_planes(out, x.shape[: x.ndim - dims], dims)

    @staticmethod
    def backward(ctx, grad):
        return ResampleTranspose.call(grad, rows=ctx.rows, cols=ctx.cols, dims=ctx.dims, shape=ctx.shape_in)

    jvp = linear  # linear in x
    batch = leading  # vmap: works on the trailing dims, the batch dim is one more leading dim


class ResampleTranspose(Op):
    """The transpose of ``Resample`` (its backward): ``g``'s values times the tap weights added at
    the taps, in zeros of ``shape``;  dg = Resample(dy)."""

    @staticmethod
    def forward(ctx, g, rows=_NO_TAPS, cols=None, dims=2, shape=()):
        ctx.rows, ctx.cols, ctx.dims = rows, cols, dims
        size = ((1,) if dims == 1 else ()) + tuple(shape[len(shape) - dims :])
        return backend.resample_transpose(as_planes(g, dims), rows, cols, size).reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return Resample.call(grad, rows=ctx.rows, cols=ctx.cols, dims=ctx.dims)

    jvp = linear  # linear in g

    @staticmethod
    def batch(b: Batch):  # vmap: one more leading dim, in the output's shape too
        b.settings["shape"] = (b.size, *b.settings["shape"])
        return b.run(*b.values)


def resample(x, taps: list):
    """x resampled along its ``len(taps)`` trailing dims, ``taps[d] = (index, weight or None)`` for
    each of them in order.  One ``Resample`` op for one or two dims; for three, the last two
    first, then the third-from-last (over planes whose width is the last two dims merged)."""
    if len(taps) == 1:
        return Resample.apply(x, rows=_NO_TAPS, cols=taps[0], dims=1)
    if len(taps) == 2:
        return Resample.apply(x, rows=taps[0], cols=taps[1], dims=2)
    inner = resample(x, taps[1:])
    merged = inner.shape[-2] * inner.shape[-1]
    identity = (np.arange(merged, dtype=np.int64)[:, None], None)
    flat = inner.reshape(inner.shape[:-2] + (merged,))
    out = Resample.apply(flat, rows=taps[0], cols=identity, dims=2)
    return out.reshape(out.shape[:-1] + inner.shape[-2:])


# ------------------------------------------------------------------ padding
def pad_taps(n: int, before: int, after: int, mode: str) -> tuple:
    """The taps of padding a dim of size ``n`` by ``before`` and ``after`` (negative: cropping) in
    ``mode`` (reflect, replicate, circular): ``(index (n + before + after, 1), None)``."""
    if mode == "circular":  # PyTorch crops first, then wraps the cropped part
        start, size = max(-before, 0), n - max(-before, 0) - max(-after, 0)
        i = start + np.arange(-max(before, 0), size + max(after, 0)) % size
    else:
        i = np.arange(-before, n + after)
        if mode == "replicate":
            i = np.clip(i, 0, n - 1)
        else:  # reflect: ... 2 1 [0 1 2 ... n-1] n-2 ...
            period = 2 * (n - 1)
            i = np.abs(i) % period if period else np.zeros_like(i)
            i = backend.where(i >= n, period - i, i)
    return i.astype(np.int64)[:, None], None


# ------------------------------------------------------------------ interpolation
def interpolation_taps(
    n: int, out: int, mode: str, align_corners: bool, scale, dtype=np.float64, shortcuts: bool = False
) -> tuple:
    """The taps of interpolating a dim of size ``n`` to ``out`` (PyTorch's arithmetic, see the
    module docstring): ``(index (out, T), weight (out, T) or None)``; ``scale``: the user's
    scale factor for this dim (None: from the sizes); ``dtype``: the input's (the weights are
    computed in it, as PyTorch computes them in the input's precision); ``shortcuts``: nearest
    copies when ``out == n`` and halves the index when ``out == 2 * n``, whatever the scale
    factor (PyTorch's 2-D nearest kernel does; its 1-D and 3-D ones do not)."""
    i = np.arange(out)
    if mode in ("nearest", "nearest-exact"):
        step = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n) / np.float32(out)
        if mode == "nearest-exact":  # (PyTorch: floorf((i + 0.5) * scale), the product in double)
            source = np.floor(((i + 0.5) * np.float64(step)).astype(np.float32)).astype(np.int64)
        elif shortcuts and (out == n or out == 2 * n):
            source = i if out == n else i >> 1
        else:
            source = np.floor(i.astype(np.float32) * step).astype(np.int64)
        return np.minimum(source, n - 1)[:, None], None
    real = np.dtype(dtype).type
    if mode == "linear" and out == n:  # (PyTorch copies, whatever the scale factor says)
        return np.stack([i, i], axis=1), np.stack([np.ones(n, dtype), np.zeros(n, dtype)], axis=1)
    if align_corners:
        step = real(n - 1) / real(out - 1) if out > 1 else real(0)
        source = step * i.astype(dtype)
    else:
        step = real(1.0 / scale) if scale is not None and scale > 0 else real(n) / real(out)
        source = step * (i.astype(dtype) + real(0.5)) - real(0.5)
        if mode == "linear":
            source = np.maximum(source, real(0))
    low = np.minimum(np.floor(source).astype(np.int64), n - 1)
    t = np.clip(source - low.astype(dtype), 0, 1).astype(dtype)
    if mode == "linear":
        high = low + (low < n - 1)
        return np.stack([low, high], axis=1), np.stack([1 - t, t], axis=1).astype(dtype)
    index = np.clip(low[:, None] + np.arange(-1, 3), 0, n - 1)  # cubic: the reads clamped to the edges
    return index, _cubic_weights(t, dtype)


def _cubic_weights(t: np.ndarray, dtype) -> np.ndarray:
    """Keys' cubic convolution weights (A = -0.75, PyTorch's) of the taps at -1, 0, 1, 2 from a
    position ``t`` in [0, 1) past tap 0."""
    a = np.dtype(dtype).type(-0.75)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1).astype(dtype)


def output_sizes(sizes: tuple, size, scale_factor) -> tuple:
    """PyTorch's output size of an interpolation: ``size``, or ``floor(n * scale)`` per dim."""
    if size is not None:
        return tuple(size)
    return tuple(int(math.floor(float(n) * float(s))) for n, s in zip(sizes, scale_factor))
