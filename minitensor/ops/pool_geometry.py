"""Where the windows of a pooling lie, and the checks of its arguments (PyTorch's rules).

A pooling of ``dims`` (1 or 2) trailing dims slides a window of ``kernel_size`` by ``stride``
over the input padded by ``padding`` on both sides, its taps ``dilation`` apart.  Along one dim
of size ``n`` the number of outputs is PyTorch's::

    out = floor((n + 2 * padding - dilation * (kernel_size - 1) - 1) / stride) + 1
    (ceil_mode: rounded up instead, but the last window must start inside the input or the
    left padding: if (out - 1) * stride >= n + padding, one fewer)

Output ``i``'s window starts at ``i * stride - padding``.  The kernels (``kernels/pool.py``, ``window_mean.py``)
only see the part inside the input: per output its first tap inside, how many taps are
inside, and the dilation (``Windows``).  Adaptive pooling (``adaptive``) splits ``n`` into
``out`` windows ``[floor(i * n / out), ceil((i + 1) * n / out))``.

>>> output_size(5, kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=True)
3
>>> sliding(5, 3, kernel_size=2, stride=2, padding=0, dilation=1)    # [0, 1], [2, 3], [4]
Windows(start=array([0, 2, 4]), count=array([2, 2, 1]), step=1)
>>> adaptive(5, 3)                                                   # [0, 2), [1, 4), [3, 5)
Windows(start=array([0, 1, 3]), count=array([2, 3, 2]), step=1)
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from ..tensor import Tensor


class Windows(NamedTuple):
    """The windows along one dim, as the kernels take them: per output the first input position
    inside the input (``start``, int64), how many taps lie inside (``count``), their distance.
    ``sliding`` and ``adaptive`` keep the windows they made for the next call with the same
    arguments (computing them again would be a third of a small pooling's time), so their arrays
    are read-only."""

    start: np.ndarray
    count: np.ndarray
    step: int


def _windows(start: np.ndarray, count: np.ndarray, step: int) -> Windows:
    start.flags.writeable = count.flags.writeable = False
    return Windows(start, count, int(step))


IDENTITY = _windows(np.zeros(1, np.int64), np.ones(1, np.int64), 1)  # the H of a 1-D pooling: one row


def output_size(n: int, kernel_size: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """The number of windows along a dim of size ``n`` (see the module docstring)."""
    span = n + 2 * padding - dilation * (kernel_size - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= n + padding:
        out -= 1
    return out


@functools.lru_cache(maxsize=256)
def sliding(n: int, out: int, kernel_size: int, stride: int, padding: int, dilation: int) -> Windows:
    """The ``out`` windows of a sliding pooling along a dim of size ``n``, clipped to the input."""
    first = np.arange(out, dtype=np.int64) * stride - padding
    skip = np.maximum(-first + dilation - 1, 0) // dilation  # taps before the input (in the padding)
    last = np.minimum(first + (kernel_size - 1) * dilation, n - 1)
    start = first + skip * dilation
    count = np.maximum((last - start) // dilation + 1, 0)
    return _windows(start, count, dilation)


def padded_extent(n: int, out: int, kernel_size: int, stride: int, padding: int) -> np.ndarray:
    """Per output, the size of its window inside the padded input (PyTorch's ``count_include_pad``
    divisor: the padding counts, what lies past it, with ``ceil_mode``, does not)."""
    first = np.arange(out, dtype=np.int64) * stride - padding
    return np.minimum(first + kernel_size, n + padding) - first


@functools.lru_cache(maxsize=256)
def adaptive(n: int, out: int) -> Windows:
    """The ``out`` windows of adaptive pooling along a dim of size ``n``."""
    i = np.arange(out, dtype=np.int64)
    start = (i * n) // out
    stop = -((-(i + 1) * n) // out)  # ceil((i + 1) * n / out)
    return _windows(start, stop - start, 1)


# ------------------------------------------------------------------ arguments
def int_tuple(value, dims: int, name: str, fn: str) -> tuple:
    """An int or a sequence of ``dims`` ints as a tuple of ``dims`` ints (TypeError/ValueError
    naming the argument otherwise)."""
    if type(value) is int:  # (the common case, without the generators below)
        return (value,) * dims
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims
    if len(values) != dims or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in values):
        raise TypeError(f"{fn}: {name} must be an int or a tuple of {dims} ints, got {value!r}")
    return tuple(int(v) for v in values)


def check_input(input, fn: str, dims: int) -> None:  # noqa: A002  (PyTorch's name)
    """``input`` is a float Tensor of ``dims + 1`` (unbatched) or ``dims + 2`` dims whose dims but the
    batch are non-empty (ValueError/TypeError naming what it got)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (dims + 1, dims + 2):
        raise ValueError(
            f"{fn}: input must have {dims + 1} (unbatched) or {dims + 2} (batched) dims, "
            f"got shape {tuple(input.shape)} ({input.ndim} dims)"
        )
    if input.dtype.kind != "f":
        raise TypeError(f"{fn}: input must be a float tensor, got dtype {input.dtype}")
    if any(s == 0 for s in input.shape[input.ndim - dims - 1 :]):
        raise ValueError(f"{fn}: input's dims other than the batch must be non-empty, got shape {tuple(input.shape)}")


def sliding_settings(fn: str, input, dims: int, kernel_size, stride, padding, dilation, ceil_mode) -> tuple:  # noqa: A002
    """Checked ``(kernel, stride, padding, dilation, out)`` tuples of a sliding pooling of ``input``:
    positive kernel, stride and dilation, padding at most half the kernel (PyTorch's rule, the
    dilation aside), at least one output along each dim (each a ValueError naming the argument)."""
    kernel = int_tuple(kernel_size, dims, "kernel_size", fn)
    stride = kernel if stride is None or (isinstance(stride, (tuple, list)) and not stride) else stride
    stride = int_tuple(stride, dims, "stride", fn)
    padding = int_tuple(padding, dims, "padding", fn)
    dilation = int_tuple(dilation, dims, "dilation", fn)
    out = _checked_output(
        fn, tuple(input.shape[input.ndim - dims :]), kernel, stride, padding, dilation, bool(ceil_mode)
    )
    return kernel, stride, padding, dilation, out


@functools.lru_cache(maxsize=256)
def _checked_output(fn: str, sizes: tuple, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
                    ceil_mode: bool) -> tuple:  # fmt: skip
    """``sliding_settings``' checks and output size (kept for the next call with the same arguments:
    a tenth of a small pooling's time; a refused call raises each time)."""
    dims = len(sizes)
    for name, values in (("kernel_size", kernel), ("stride", stride), ("dilation", dilation)):
        if min(values) <= 0:
            raise ValueError(f"{fn}: {name} must be positive, got {values if dims > 1 else values[0]}")
    if min(padding) < 0:
        raise ValueError(f"{fn}: padding must be non-negative, got {padding if dims > 1 else padding[0]}")
    for k, p in zip(kernel, padding):
        if p > k // 2:
            raise ValueError(f"{fn}: padding must be at most half of kernel_size, got padding={p} and kernel_size={k}")
    out = tuple(
        output_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation)
    )
    if min(out) < 1:
        raise ValueError(
            f"{fn}: the kernel does not fit: input of spatial size {sizes} padded by {padding} gives output size "
            f"{out} for kernel_size={kernel}, dilation={dilation}, stride={stride}"
        )
    return out


def adaptive_sizes(fn: str, input, dims: int, output_size) -> tuple:  # noqa: A002
    """The output size of an adaptive pooling: ints >= 0, a None keeping the input's size."""
    sizes = tuple(input.shape[input.ndim - dims :])
    values = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * dims
    if len(values) != dims:
        raise ValueError(f"{fn}: output_size must be an int or {dims} ints (or None), got {output_size!r}")
    out = []
    for v, n in zip(values, sizes):
        if v is None:
            out.append(n)
        elif isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{fn}: output_size must be ints (or None), got {output_size!r}")
        elif v < 0:
            raise ValueError(f"{fn}: output_size must be non-negative, got {output_size!r}")
        else:
            out.append(int(v))
    return tuple(out)


# ------------------------------------------------------------------ planes
def as_planes(x, dims: int):
    """x (..., H, W) (``dims`` = 2) or (..., L) (``dims`` = 1) as planes (P, H, W) (H = 1 for 1-D):
    a view when x is contiguous.  Works on arrays and Tensors."""
    spatial = x.shape[x.ndim - dims :]
    return x.reshape((math.prod(x.shape[: x.ndim - dims]),) + ((1,) if dims == 1 else ()) + tuple(spatial))


def from_planes(planes, lead: tuple, dims: int):
    """Planes (P, Ho, Wo) back to (*lead, Ho, Wo), or (*lead, Wo) for 1-D."""
    return planes.reshape(tuple(lead) + tuple(planes.shape[3 - dims :]))
