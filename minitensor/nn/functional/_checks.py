"""Argument checks shared by the functional ops: clear TypeErrors before any math runs."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ... import dtypes
from ...tensor import Tensor


def check_tensor(value, name: str, fn: str) -> None:
    """Raise TypeError unless ``value`` is a Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(value).__name__}")


def as_input(value, name: str, fn: str, like=None) -> Tensor:
    """A data input (not a weight) as a Tensor: the rule every layer and function of ``nn`` follows.

    A Tensor is returned as it is.  A NumPy array is converted as ``mt.tensor`` converts it (a
    copy that does not require grad), except that a float array takes the dtype ``like`` when
    given: the dtype of the layer's parameters, or of the Tensor it meets (a loss's input), so
    a float64 array fed to a float32 layer is float32, as the layer expects.  Anything else
    (a list, a number) raises TypeError, as in PyTorch.
    """
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        dtype = like if like is not None and value.dtype.kind == "f" and dtypes.is_floating(like) else None
        return Tensor(value, dtype=dtype)
    raise TypeError(f"{fn}: {name} must be a Tensor or a NumPy array, got {type(value).__name__}")


def float_like(*values):
    """The dtype of the first float Tensor among ``values`` (the ``like`` of ``as_input``), or None."""
    for v in values:
        if isinstance(v, Tensor) and v.dtype.kind == "f":
            return v.dtype
    return None


def check_probability(p, name: str, fn: str) -> float:
    """``p`` as a float in [0, 1]: TypeError for a non-number, ValueError outside the range (or NaN)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{fn}: {name} must be a probability (a number in [0, 1]), got {type(p).__name__} {p!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}: {name} must be a probability in [0, 1], got {p!r}")
    return float(p)


def check_float(input: Tensor, fn: str) -> None:  # noqa: A002
    """Raise TypeError unless ``input`` is a float tensor."""
    if input.dtype.kind != "f":
        raise TypeError(f"{fn}: input must be a float tensor, got dtype {input.dtype}")


def check_same_dtype(input: Tensor, param: Tensor, name: str, fn: str) -> None:  # noqa: A002
    """Raise TypeError when a parameter's dtype differs from the input's (no silent casts)."""
    if param.dtype != input.dtype:
        raise TypeError(
            f"{fn}: input dtype {input.dtype} does not match {name} dtype {param.dtype}; "
            f"convert one of them (module.to({input.dtype}) or input.to({param.dtype}))"
        )


REDUCTIONS = ("none", "mean", "sum")


def reduction_of(size_average, reduce, reduction: str, fn: str) -> str:
    """A loss's ``reduction``, checked.  PyTorch's deprecated ``size_average`` and ``reduce`` (old tutorials'
    ``size_average=False``) decide it when either is given, with PyTorch's warning: both True (or None):
    ``'mean'``; ``reduce`` True and ``size_average`` False: ``'sum'``; ``reduce`` False: ``'none'``."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
            UserWarning,
            stacklevel=3,
        )
    if reduction not in REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    return reduction


def check_number(value, name: str, fn: str) -> float:
    """``value`` as a float: TypeError for anything but a real number (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__} {value!r}")
    return float(value)
