"""Reductions built from the basic ones: ``std_mean``, ``var_mean``, ``nansum``, ``nanmean``, ``aminmax``,
``count_nonzero``.

Each is a composition of existing ops (``Tensor.std``/``var``/``mean``, ``where``, ``sum``, ``amin``/
``amax``), so its gradients of every order come from those:

- ``std_mean``/``var_mean(dim, unbiased, keepdim, *, correction)``: the tuple ``(std, mean)`` /
  ``(var, mean)``; ``correction`` as ``var``'s (1: unbiased, PyTorch's default);
- ``nansum``: the sum with NaN taken as 0 (the gradient is 0 there); ``nanmean``: that sum over
  the count of numbers (NaN for a slice of NaN only);
- ``aminmax(*, dim, keepdim)``: the named tuple ``(min, max)``, ties sharing the gradient as
  ``amin``/``amax``;
- ``count_nonzero(dim)``: int64 counts, not differentiable.

>>> mt.var_mean(mt.tensor([1.0, 2.0, 4.0]))
(tensor(2.3333), tensor(2.3333))
>>> mt.nansum(mt.tensor([1.0, float("nan"), 2.0]))
tensor(3.)
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import dtypes
from .._args import _axes
from ..autograd import batching
from ..tensor import Tensor
from .arguments import bool_arg, tensor_input
from .shape import where

AminmaxResult = namedtuple("aminmax", ["min", "max"])


def _spread_args(input, dim, unbiased, correction, fn: str) -> tuple:  # noqa: A002
    """(dim, correction) of PyTorch's overloads: ``f(x, unbiased)``, ``f(x, dim, unbiased)``, ``correction=``."""
    tensor_input(input, fn)
    if isinstance(dim, bool):  # std_mean(x, True): the old (input, unbiased) overload
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{fn}: give unbiased or correction, not both (got {unbiased!r} and {correction!r})")
    if correction is None:
        correction = 1 if unbiased is None or bool_arg(unbiased, fn, "unbiased") else 0
    return dim, correction


def std_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:  # noqa: A002
    """``(std, mean)`` over ``dim`` (None: all), the std with ``correction`` (default 1: unbiased)."""
    dim, correction = _spread_args(input, dim, unbiased, correction, "std_mean")
    return input.std(dim, keepdim=keepdim, correction=correction), input.mean(dim, keepdim)


def var_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:  # noqa: A002
    """``(var, mean)`` over ``dim`` (None: all), the variance with ``correction`` (default 1: unbiased)."""
    dim, correction = _spread_args(input, dim, unbiased, correction, "var_mean")
    return input.var(dim, keepdim=keepdim, correction=correction), input.mean(dim, keepdim)


def _numbers(input, fn: str, dtype):  # noqa: A002
    """The input in ``dtype`` with NaN replaced by 0 (integers have none), and the mask of its numbers."""
    x = tensor_input(input, fn) if dtype is None else input.to(dtype)
    if x.dtype.kind != "f":
        return x, None
    numbers = ~np.isnan(x._data)
    return where(numbers, x, 0.0), numbers


@batching.per_example  # (reads the values: under vmap, once per example)
def nansum(input, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002
    """The sum over ``dim`` with NaN counted as 0 (integers and bools sum in int64, as ``sum``)."""
    x, _ = _numbers(input, "nansum", dtype)
    if x.dtype.kind in "biu":
        x = x.to(dtypes.int64)
    return x.sum(dim, keepdim)


@batching.per_example  # (reads the values: under vmap, once per example)
def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002
    """The mean over ``dim`` of the elements that are not NaN (a float input, or ``dtype``)."""
    tensor_input(input, "nanmean")
    if dtype is None and input.dtype.kind != "f":
        raise TypeError(f"nanmean: input must be a floating point tensor (or pass dtype=), got {input.dtype}")
    x, numbers = _numbers(input, "nanmean", dtype)
    count = np.sum(numbers, axis=_axes(dim, x.ndim), keepdims=keepdim)
    with np.errstate(invalid="ignore", divide="ignore"):
        return x.sum(dim, keepdim) / Tensor._make(np.asarray(count, dtype=x.dtype), False, None)


def aminmax(input, *, dim=None, keepdim: bool = False):  # noqa: A002
    """The named tuple ``(min, max)`` over ``dim`` (an int, or None: all elements)."""
    tensor_input(input, "aminmax")
    if input.numel() == 0:
        raise ValueError(f"aminmax: cannot reduce an empty tensor (shape {input.shape})")
    if dim is None and keepdim:
        dims = tuple(range(input.ndim))
        return AminmaxResult(input.amin(dims, True), input.amax(dims, True))
    return AminmaxResult(input.amin(dim, keepdim), input.amax(dim, keepdim))


@batching.per_example  # (reads the values: under vmap, once per example)
def count_nonzero(input, dim=None):  # noqa: A002
    """How many elements are not zero, over ``dim`` (an int, a tuple, or None: all): int64, no gradient."""
    tensor_input(input, "count_nonzero")
    axes = _axes(dim, input.ndim)
    return Tensor._make(np.asarray(np.count_nonzero(input._data, axis=axes), dtype=np.int64), False, None)
