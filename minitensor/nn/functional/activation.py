"""Activation functions: ``relu``, ``gelu``, ``tanh``, ``sigmoid``, ``softmax``, ``log_softmax``.

Each is one op; ``gelu`` has an exact (erf) and a tanh-approximated form.

>>> F.gelu(mt.tensor([-1.0, 0.0, 1.0])).tolist()  # doctest: +ELLIPSIS
[-0.158655..., 0.0, 0.841344...]
"""

from __future__ import annotations

from ...ops import nn_ops
from ...tensor import Tensor
from ._checks import check_float, check_tensor


def relu(input: Tensor) -> Tensor:  # noqa: A002
    """max(x, 0), elementwise."""
    check_tensor(input, "input", "relu")
    return input.relu()


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """x * Phi(x), Phi the standard normal CDF (``approximate='none'``), or its tanh form (``'tanh'``)."""
    check_tensor(input, "input", "gelu")
    check_float(input, "gelu")
    if approximate == "none":
        return nn_ops.Gelu.apply(input)
    if approximate == "tanh":
        return nn_ops.GeluTanh.apply(input)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    check_tensor(input, "input", "tanh")
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    check_tensor(input, "input", "sigmoid")
    return input.sigmoid()


def softmax(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """exp(x) / sum(exp(x)) along ``dim`` (stable: the max is subtracted first)."""
    check_tensor(input, "input", "softmax")
    return input.softmax(dim)


def log_softmax(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """x - logsumexp(x) along ``dim``."""
    check_tensor(input, "input", "log_softmax")
    return input.log_softmax(dim)
