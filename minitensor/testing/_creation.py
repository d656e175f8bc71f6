"""``make_tensor``: a random tensor for tests, as PyTorch's ``torch.testing.make_tensor``.

Values are drawn uniformly from ``[low, high)`` with minitensor's generator (``mt.manual_seed``
makes them reproducible).  The defaults of ``low``/``high`` depend on the dtype, as in PyTorch:
bool [0, 2), unsigned [0, 10), signed integers [-9, 10), floats [-9, 9); bounds outside the
dtype's range are clamped to it.

>>> import minitensor as mt
>>> t = make_tensor(2, 3, dtype=mt.float64, device="cpu", low=-1, high=1)
>>> t.shape, t.dtype, bool(((t.numpy() >= -1) & (t.numpy() < 1)).all())
((2, 3), dtype('float64'), True)
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes, random
from .._args import _shape_arg
from .._device import check_device
from ..tensor import Tensor
from ..type_info import finfo, iinfo


def _bounds(low, high, dtype: np.dtype, lowest: float, highest: float, default_low: float, default_high: float):
    """``low``/``high`` or the defaults, checked and clamped into the dtype's range (PyTorch's ``modify_low_high``)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.kind == "f":
        warnings.warn(
            "Passing `low==high` to `make_tensor` for floating types is deprecated (as in PyTorch); use `mt.full(...)`",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return (math.ceil(low), math.ceil(high)) if dtype.kind in "biu" else (low, high)


def make_tensor(
    *shape,
    dtype,
    device,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format=None,
) -> Tensor:
    """A tensor of ``shape`` (ints or one tuple) filled with values uniform in ``[low, high)``.

    Args:
        dtype, device: required keywords, as in PyTorch (``device`` must be 'cpu').
        low, high: the range (defaults: see the module docstring).
        requires_grad: float dtypes only.
        noncontiguous: a strided view (every other element of a tensor twice as long in its last dim),
            when there are at least two elements.
        exclude_zero: zeros become 1 (bool, integers) or the dtype's ``tiny`` (floats).
        memory_format: not supported together with ``noncontiguous``; otherwise ignored.
    """
    check_device(device, "make_tensor")
    dtype = dtypes.as_dtype(dtype, "make_tensor: dtype")
    shape = _shape_arg(shape, "make_tensor")
    if noncontiguous and memory_format is not None:
        raise ValueError(
            f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    if requires_grad and dtype.kind in "biu":
        raise ValueError(
            f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dtype}"
        )
    noncontiguous = noncontiguous and math.prod(shape) > 1
    full_shape = (*shape[:-1], 2 * shape[-1]) if noncontiguous else shape
    rng = random.generator(None)
    if dtype.kind == "b":
        low, high = _bounds(low, high, dtype, 0, 2, 0, 2)
        data = rng.integers(low, high, full_shape).astype(dtype)
    elif dtype.kind in "iu":
        info = iinfo(dtype)
        low, high = _bounds(low, high, dtype, info.min, info.max + (1 if dtype != dtypes.int64 else 0), -9, 10)
        data = rng.integers(low, high, full_shape, dtype=np.int64).astype(dtype)
    elif dtype.kind == "f":
        info = finfo(dtype)
        low, high = _bounds(low, high, dtype, info.min, info.max, -9, 9)
        if high - low >= info.max:  # the width overflows the dtype: draw half the range and double it
            data = (rng.uniform(low / 2, high / 2, full_shape) * 2).astype(dtype)
        else:
            data = rng.uniform(low, high, full_shape).astype(dtype)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by make_tensor()")
    if noncontiguous:
        data = data[..., 1::2]
    if exclude_zero:
        data[data == 0] = 1 if dtype.kind in "biu" else finfo(dtype).tiny
    out = Tensor._make(data, False, None)
    return out.requires_grad_(True) if requires_grad else out
