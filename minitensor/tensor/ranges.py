"""Evenly spaced values: ``linspace`` and ``logspace``, computed as PyTorch computes them.

``arange`` (a step) lives in ``creation.py``; these take a number of points instead.  PyTorch
fills the first half from ``start`` upwards and the second half from ``end`` downwards, so both
ends are exact and the values are symmetric; the arithmetic is done in the result's dtype
(float32 for the default); for an integer dtype the bounds are truncated to integers first and
the values computed in float64 and truncated, as PyTorch does.

>>> import minitensor as mt
>>> mt.linspace(0, 1, 5).tolist()
[0.0, 0.25, 0.5, 0.75, 1.0]
>>> mt.logspace(0, 3, 4, base=2).tolist()
[1.0, 2.0, 4.0, 8.0]
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from .._device import check_device
from .tensor import Tensor


def _bound(value, name: str, fn: str) -> float:
    """A Python number or a one-element tensor as a float."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"{fn}: {name} must be a number or a one-element tensor, got shape {value.shape}")
        return value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")
    return value


def _steps(steps, fn: str) -> int:
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"{fn}: steps must be an int, got {type(steps).__name__}")
    if steps < 0:
        raise ValueError(f"{fn}: steps must be non-negative, got {steps}")
    return int(steps)


def _result_dtype(dtype, fn: str) -> np.dtype:
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    if dtype.kind not in "fiu":
        raise TypeError(f"{fn}: dtype must be a float or integer dtype, got {dtype}")
    return dtype


def _spaced(start: float, end: float, steps: int, work: np.dtype) -> np.ndarray:
    """``steps`` values from start to end in dtype ``work``: the first half counted up from
    ``start``, the second half down from ``end`` (PyTorch's CPU kernel)."""
    if steps == 1:
        return np.full(1, start, work)
    start, end = work.type(start), work.type(end)  # integer bounds come truncated (PyTorch's casts)
    step = (end - start) / work.type(steps - 1)
    idx = np.arange(steps).astype(work)
    low = start + step * idx
    high = end - step * (work.type(steps - 1) - idx)
    return np.where(np.arange(steps) < steps // 2, low, high).astype(work, copy=False)


def _new(values: np.ndarray, dtype: np.dtype, requires_grad: bool, fn: str) -> Tensor:
    out = Tensor._make(values.astype(dtype, copy=False), False, None)
    if requires_grad:
        if dtype.kind != "f":
            raise TypeError(f"{fn}: only float tensors can require gradients, got dtype {dtype}")
        out.requires_grad_(True)
    return out


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included: shape (steps,).

    Args:
        start, end: numbers (or one-element tensors).
        steps: how many values (0 gives an empty tensor, 1 gives ``[start]``).
        dtype: default: the default float dtype, even for integer bounds (as PyTorch).

    >>> mt.linspace(-1, 1, 3)
    tensor([-1.,  0.,  1.])
    """
    check_device(device, "linspace")
    start, end = _bound(start, "start", "linspace"), _bound(end, "end", "linspace")
    steps, dtype = _steps(steps, "linspace"), _result_dtype(dtype, "linspace")
    work = dtype if dtype.kind == "f" else np.dtype(np.float64)
    if dtype.kind != "f":
        start, end = int(start), int(end)
    return _new(_spaced(start, end, steps, work), dtype, requires_grad, "linspace")


def logspace(
    start, end, steps: int, base: float = 10.0, *, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """``base ** linspace(start, end, steps)``: shape (steps,).

    >>> mt.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    check_device(device, "logspace")
    start, end = _bound(start, "start", "logspace"), _bound(end, "end", "logspace")
    base = _bound(base, "base", "logspace")
    steps, dtype = _steps(steps, "logspace"), _result_dtype(dtype, "logspace")
    work = dtype if dtype.kind == "f" else np.dtype(np.float64)
    if dtype.kind != "f":
        start, end = int(start), int(end)
    exponents = _spaced(start, end, steps, work)
    return _new(np.power(work.type(base), exponents), dtype, requires_grad, "logspace")
