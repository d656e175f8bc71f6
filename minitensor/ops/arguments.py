"""Argument checks shared by the op families: each raises before any work runs, naming the function,
the argument, what it expects and what it got.

>>> tensor_input(mt.ones(2), "tan").shape
(2,)
>>> tensor_input([1.0], "tan")
Traceback (most recent call last):
TypeError: tan: input must be a Tensor, got list
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from .. import dtypes
from ..tensor import Tensor


def tensor_input(x, fn: str, name: str = "input") -> Tensor:
    """``x`` itself, when it is a Tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(x).__name__}")
    return x


def floating(x: Tensor) -> Tensor:
    """Integer and bool tensors in the default float dtype (PyTorch's rule for float functions)."""
    return x if x.dtype.kind == "f" else x.to(dtypes.get_default_dtype())


def float_input(x, fn: str, name: str = "input") -> Tensor:
    """A Tensor argument of a float function, integers computed in the default float dtype."""
    return floating(tensor_input(x, fn, name))


def int_arg(value, fn: str, name: str, low: int | None = None) -> int:
    """``value`` as a Python int (not a bool), at least ``low`` when given."""
    if isinstance(value, builtins.bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}: {name} must be an int, got {type(value).__name__} {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{fn}: {name} must be at least {low}, got {value}")
    return operator.index(value)


def bool_arg(value, fn: str, name: str) -> bool:
    if not isinstance(value, (builtins.bool, np.bool_)):
        raise TypeError(f"{fn}: {name} must be a bool, got {type(value).__name__} {value!r}")
    return builtins.bool(value)


def number_arg(value, fn: str, name: str) -> float:
    """A Python or NumPy real number (bools refused)."""
    if isinstance(value, builtins.bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__} {value!r}")
    return value


def choice_arg(value, fn: str, name: str, choices: tuple) -> str:
    if value not in choices:
        raise ValueError(f"{fn}: {name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def matrix_input(x, fn: str, name: str = "A", square: bool = False) -> Tensor:
    """A (batch of) matrices: at least 2 dims, floating (integers refused, as PyTorch's linalg)."""
    tensor_input(x, fn, name)
    if x.ndim < 2:
        raise ValueError(f"{fn}: {name} must have at least 2 dimensions (a matrix or a batch), got shape {x.shape}")
    if x.dtype.kind != "f":
        raise TypeError(f"{fn}: {name} must be a floating point tensor, got dtype {dtypes.torch_name(x.dtype)}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{fn}: {name} must be a batch of square matrices, got shape {x.shape}")
    return x
