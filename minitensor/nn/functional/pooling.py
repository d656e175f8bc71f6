"""Pooling over the last one or two dims, as PyTorch's ``torch.nn.functional``: max, average,
adaptive, power-average (LP) pooling and max unpooling.

Inputs are (N, C, L) or unbatched (C, L) for the 1-D forms, (N, C, H, W) or (C, H, W) for the
2-D ones (N may be 0).  The windows (``ops/pool_geometry.py``) and the ops (``ops/pooling.py``)
are shared by all of them: a 1-D pooling is the 2-D one over planes of height 1.

>>> x = mt.arange(16.0).reshape(1, 1, 4, 4)
>>> F.max_pool2d(x, 2)
tensor([[[[ 5.,  7.],
          [13., 15.]]]])
>>> F.avg_pool2d(x, 2, stride=1).shape
(1, 1, 3, 3)
>>> F.adaptive_avg_pool2d(x, 1).flatten().tolist()
[7.5]
"""

from __future__ import annotations

import numpy as np

from ... import backend
from ...autograd.batching import batched, like, physical
from ...ops import pool_geometry as geometry
from ...ops.pool_geometry import IDENTITY
from ...ops.pooling import AvgPool, PutFlat, max_pool
from ...tensor import Tensor
from ._checks import as_input


def _input(input, fn: str, dims: int) -> Tensor:  # noqa: A002  (PyTorch's name)
    input = as_input(input, "input", fn)  # noqa: A001
    geometry.check_input(input, fn, dims)
    return input


def _rows_cols(windows: list, dims: int) -> tuple:
    return (IDENTITY, windows[0]) if dims == 1 else tuple(windows)


# ------------------------------------------------------------------ max
def _max_pool(fn: str, dims: int, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):  # noqa: A002
    input = _input(input, fn, dims)  # noqa: A001
    kernel, stride, padding, dilation, out = geometry.sliding_settings(
        fn, input, dims, kernel_size, stride, padding, dilation, ceil_mode
    )
    sizes = input.shape[input.ndim - dims :]
    windows = [geometry.sliding(*args) for args in zip(sizes, out, kernel, stride, padding, dilation)]
    return max_pool(input, dims, *_rows_cols(windows, dims), return_indices=return_indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):  # noqa: A002
    """The max of each window of ``kernel_size`` along the last dim of (N, C, L) or (C, L).

    ``stride`` defaults to ``kernel_size``; ``padding`` (at most half the kernel) pads with -inf;
    ``dilation`` spaces the window's taps; ``ceil_mode`` lets a last partial window count.
    With ``return_indices``: ``(values, indices)``, each index the position in L of its maximum
    (the first of equal maxima; the gradient goes there).
    """
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):  # noqa: A002
    """The max of each ``kernel_size`` window of the last two dims of (N, C, H, W) or (C, H, W).

    Arguments as ``max_pool1d``, each an int or an (h, w) pair; ``indices`` are flat positions
    ``h * W + w`` in each (H, W) plane, as PyTorch's (what ``max_unpool2d`` takes).

    >>> y, i = F.max_pool2d(mt.tensor([[[[1.0, 2.0], [4.0, 3.0]]]]), 2, return_indices=True)
    >>> y.item(), i.item()
    (4.0, 2)
    """
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _adaptive_max(fn: str, dims: int, input, output_size, return_indices):  # noqa: A002
    input = _input(input, fn, dims)  # noqa: A001
    out = geometry.adaptive_sizes(fn, input, dims, output_size)
    windows = [geometry.adaptive(n, o) for n, o in zip(input.shape[input.ndim - dims :], out)]
    return max_pool(input, dims, *_rows_cols(windows, dims), return_indices=return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):  # noqa: A002
    """Max pooling of (N, C, L) or (C, L) into ``output_size`` windows
    ``[floor(i L / out), ceil((i + 1) L / out))``."""
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    """Max pooling of (N, C, H, W) or (C, H, W) to ``output_size`` (an int, or (h, w) where None
    keeps that dim's size)."""
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


# ------------------------------------------------------------------ average
def _avg_pool(fn: str, dims: int, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor):  # noqa: A002
    input = _input(input, fn, dims)  # noqa: A001
    kernel, stride, padding, _, out = geometry.sliding_settings(
        fn, input, dims, kernel_size, stride, padding, 1, ceil_mode
    )
    if divisor is not None and (isinstance(divisor, bool) or not isinstance(divisor, (int, np.integer))):
        raise TypeError(f"{fn}: divisor_override must be an int or None, got {divisor!r}")
    if divisor is not None and divisor == 0:
        raise ValueError(f"{fn}: divisor_override must not be zero, got 0")
    sizes = input.shape[input.ndim - dims :]
    windows = [geometry.sliding(n, o, k, s, p, 1) for n, o, k, s, p in zip(sizes, out, kernel, stride, padding)]
    if divisor is not None:
        divisors = np.full(out, float(divisor))
    elif count_include_pad:
        extents = [geometry.padded_extent(*args) for args in zip(sizes, out, kernel, stride, padding)]
        divisors = _outer(extents)
    else:
        divisors = _outer([w.count for w in windows])
    return _mean(input, dims, windows, divisors)


def _outer(sizes: list) -> np.ndarray:
    return sizes[0].astype(np.float64) if len(sizes) == 1 else np.multiply.outer(sizes[0], sizes[1]).astype(np.float64)


def _mean(input: Tensor, dims: int, windows: list, divisors: np.ndarray) -> Tensor:  # noqa: A002
    rows, cols = [w[:2] for w in _rows_cols(windows, dims)]  # ((start, count) along H, along W)
    divisors = divisors.reshape((1,) * (2 - divisors.ndim) + divisors.shape)  # (Ho, Wo), Ho = 1 in 1-D
    return AvgPool.apply(input, rows=rows, cols=cols, divisor=divisors, dims=dims)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):  # noqa: A002
    """The mean of each window of ``kernel_size`` along the last dim of (N, C, L) or (C, L).

    ``padding`` adds zeros on both sides; ``count_include_pad`` counts them in the divisor (else
    each window is divided by the number of its elements inside the input)."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(
    input,  # noqa: A002
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """The mean of each ``kernel_size`` window of the last two dims of (N, C, H, W) or (C, H, W);
    ``divisor_override`` divides every window's sum by that number instead."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)  # fmt: skip


def _adaptive_avg(fn: str, dims: int, input, output_size):  # noqa: A002
    input = _input(input, fn, dims)  # noqa: A001
    out = geometry.adaptive_sizes(fn, input, dims, output_size)
    windows = [geometry.adaptive(n, o) for n, o in zip(input.shape[input.ndim - dims :], out)]
    return _mean(input, dims, windows, _outer([w.count for w in windows]))


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """Average pooling of (N, C, L) or (C, L) into ``output_size`` windows
    ``[floor(i L / out), ceil((i + 1) L / out))``, each divided by its size."""
    return _adaptive_avg("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """Average pooling of (N, C, H, W) or (C, H, W) to ``output_size`` (an int, or (h, w) where None
    keeps that dim's size); ``output_size=1`` is global average pooling."""
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


# ------------------------------------------------------------------ power average
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """``(sum of x^p over each window)^(1/p)``, p = ``norm_type``, along the last dim; PyTorch's
    formula: ``(sign(s) * relu(|s|) * kernel_size)^(1/p)`` with ``s = avg_pool1d(x^p)``."""
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """``lp_pool1d`` over windows of the last two dims of (N, C, H, W) or (C, H, W)."""
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def _lp_pool(fn: str, dims: int, input, norm_type, kernel_size, stride, ceil_mode):  # noqa: A002
    input = _input(input, fn, dims)  # noqa: A001
    if isinstance(norm_type, bool) or not isinstance(norm_type, (int, float, np.integer, np.floating)):
        raise TypeError(f"{fn}: norm_type must be a number, got {norm_type!r}")
    kernel = geometry.int_tuple(kernel_size, dims, "kernel_size", fn)
    s = _avg_pool(fn, dims, input**norm_type, kernel, stride, 0, ceil_mode, True, None)
    return (s.sign() * s.abs().relu() * float(np.prod(kernel))) ** (1.0 / norm_type)


# ------------------------------------------------------------------ unpooling
def _max_unpool(fn: str, dims: int, input, indices, kernel_size, stride, padding, output_size):  # noqa: A002
    input = _input(input, fn, dims)  # noqa: A001
    if not isinstance(indices, Tensor) or indices.dtype != np.int64:
        got = indices.dtype if isinstance(indices, Tensor) else type(indices).__name__
        raise TypeError(f"{fn}: indices must be an int64 Tensor (max pooling's), got {got}")
    if indices.shape != input.shape:
        raise ValueError(f"{fn}: indices must have input's shape {tuple(input.shape)}, got {tuple(indices.shape)}")
    kernel = geometry.int_tuple(kernel_size, dims, "kernel_size", fn)
    stride = geometry.int_tuple(kernel if stride is None else stride, dims, "stride", fn)
    padding = geometry.int_tuple(padding, dims, "padding", fn)
    sizes = input.shape[input.ndim - dims :]
    default = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(sizes, stride, padding, kernel))
    out = default
    if output_size is not None:
        given = tuple(output_size)
        given = given[len(given) - dims :] if len(given) in (dims, input.ndim) else None
        if given is None or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in given):
            raise ValueError(f"{fn}: output_size must be {dims} ints (or the full shape), got {output_size!r}")
        for d, (v, n, s) in enumerate(zip(given, default, stride)):
            if not n - s < v < n + s:
                raise ValueError(
                    f"{fn}: output_size {tuple(given)} is invalid: its dim {d} must be between {n - s} and "
                    f"{n + s} (exclusive) for kernel_size={kernel}, stride={stride}, padding={padding}"
                )
        out = tuple(int(v) for v in given)
    vmapped = physical(input).ndim - input.ndim  # the batch dims of vmap input carries (0 outside vmap)
    if batched((indices,)) and physical(indices).ndim - indices.ndim != vmapped:
        raise ValueError(f"{fn}: inside vmap, indices must be batched as input is (over the same dims), or not at all")
    index = physical(indices)._data  # (inside vmap, every example's: the batch dims lead)
    count = int(np.prod(out))
    low, high = backend.index_range(index) if index.size else (0, 0)
    if low < 0 or high >= count:
        bad = int(high if high >= count else low)
        raise ValueError(f"{fn}: indices holds {bad}, outside the output's {'x'.join(map(str, out))} positions")
    if vmapped:  # vmap: all the examples at once, the batch dims leading (the same indices for all if unbatched)
        value = physical(input)
        index = np.broadcast_to(index, value.shape)
        return like(input, PutFlat.apply(value, index=index, dims=dims, shape=value.shape[: value.ndim - dims] + out))
    shape = input.shape[: input.ndim - dims] + out
    return PutFlat.apply(input, index=index, dims=dims, shape=shape)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa: A002
    """The inverse of ``max_pool1d`` (with ``return_indices``): zeros with each value put back at its
    index.  The output's length defaults to ``(L - 1) * stride - 2 * padding + kernel_size``."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa: A002
    """The inverse of ``max_pool2d`` (with ``return_indices``): zeros of the un-pooled size with each
    value put at its flat index ``h * W + w``."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)
