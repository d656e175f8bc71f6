"""Comparisons and logic under PyTorch's function and method names: ``mt.eq(a, b)`` and ``a.eq(b)`` are
``a == b``; ``isnan``, ``isinf``, ``isfinite``, ``isposinf``, ``isneginf``; ``logical_and/or/xor``;
``bitwise_and/or/xor/not`` (``&``, ``|``, ``^``, ``~``).  Each gives a bool tensor (an integer one for
the bitwise ops of integers) and is not differentiable, as in PyTorch.

>>> x = mt.tensor([1.0, float("nan"), 3.0])
>>> mt.eq(x, 3.0).tolist(), x.isnan().tolist()
([False, False, True], [False, True, False])
>>> mt.logical_and(x > 1, x.isfinite()).tolist()
[False, False, True]
"""

from __future__ import annotations

import numpy as np

from ..autograd.batching import elementwise_function
from ..tensor import Tensor
from .arguments import tensor_input


def eq(input: Tensor, other) -> Tensor:  # noqa: A002  (PyTorch's names)
    return tensor_input(input, "eq") == other


def ne(input: Tensor, other) -> Tensor:  # noqa: A002
    return tensor_input(input, "ne") != other


def lt(input: Tensor, other) -> Tensor:  # noqa: A002
    return tensor_input(input, "lt") < other


def le(input: Tensor, other) -> Tensor:  # noqa: A002
    return tensor_input(input, "le") <= other


def gt(input: Tensor, other) -> Tensor:  # noqa: A002
    return tensor_input(input, "gt") > other


def ge(input: Tensor, other) -> Tensor:  # noqa: A002
    return tensor_input(input, "ge") >= other


def _test(ufunc, name: str):
    def test(input: Tensor) -> Tensor:  # noqa: A002
        x = tensor_input(input, name)
        return Tensor._make(ufunc(x._data), False, None)

    test.__name__ = test.__qualname__ = name
    test.__doc__ = f"``{ufunc.__name__}`` of each element: a bool tensor of the input's shape."
    return elementwise_function(test)  # (under vmap: once on the whole batch)


isnan = _test(np.isnan, "isnan")
isinf = _test(np.isinf, "isinf")
isfinite = _test(np.isfinite, "isfinite")
isposinf = _test(np.isposinf, "isposinf")
isneginf = _test(np.isneginf, "isneginf")


def _logical(ufunc, name: str):
    def logical(input: Tensor, other) -> Tensor:  # noqa: A002
        x, y = tensor_input(input, name), tensor_input(other, name, "other")  # (both Tensors, as PyTorch)
        return Tensor._make(ufunc(x._data, y._data), False, None)

    logical.__name__ = logical.__qualname__ = name
    logical.__doc__ = f"``{ufunc.__name__}`` of the two inputs' truth values (non-zero is True), broadcast."
    return elementwise_function(logical)  # (under vmap: once on the whole batch)


logical_and = _logical(np.logical_and, "logical_and")
logical_or = _logical(np.logical_or, "logical_or")
logical_xor = _logical(np.logical_xor, "logical_xor")


def bitwise_and(input: Tensor, other) -> Tensor:  # noqa: A002
    return tensor_input(input, "bitwise_and") & other


def bitwise_or(input: Tensor, other) -> Tensor:  # noqa: A002
    return tensor_input(input, "bitwise_or") | other


def bitwise_xor(input: Tensor, other) -> Tensor:  # noqa: A002
    return tensor_input(input, "bitwise_xor") ^ other


def bitwise_not(input: Tensor) -> Tensor:  # noqa: A002
    return ~tensor_input(input, "bitwise_not")


# name: function (with PyTorch's aliases); each is also a Tensor method (ops/method_forms.py)
FUNCTIONS = {
    "eq": eq, "ne": ne, "not_equal": ne, "lt": lt, "less": lt, "le": le, "less_equal": le, "gt": gt,
    "greater": gt, "ge": ge, "greater_equal": ge, "isnan": isnan, "isinf": isinf, "isfinite": isfinite,
    "isposinf": isposinf, "isneginf": isneginf, "logical_and": logical_and, "logical_or": logical_or,
    "logical_xor": logical_xor, "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
    "bitwise_not": bitwise_not,
}  # fmt: skip
