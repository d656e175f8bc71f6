"""Activation functions: ``relu``, ``gelu``, ``tanh``, ``sigmoid``, ``softmax``, ``log_softmax``.

Each is one op; ``gelu`` has an exact (erf) and a tanh-approximated form.  A NumPy array
input is converted as ``mt.tensor`` converts it (``_checks.as_input``).

>>> F.gelu(mt.tensor([-1.0, 0.0, 1.0])).tolist()  # doctest: +ELLIPSIS
[-0.158655..., 0.0, 0.841344...]
"""

from __future__ import annotations

import warnings

from ...ops import nn_ops
from ...tensor import Tensor
from ._checks import as_input, check_float


def relu(input: Tensor) -> Tensor:  # noqa: A002
    """max(x, 0), elementwise."""
    input = as_input(input, "input", "relu")  # noqa: A001
    return input.relu()


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """x * Phi(x), Phi the standard normal CDF (``approximate='none'``), or its tanh form (``'tanh'``)."""
    input = as_input(input, "input", "gelu")  # noqa: A001
    check_float(input, "gelu")
    if approximate == "none":
        return nn_ops.Gelu.apply(input)
    if approximate == "tanh":
        return nn_ops.GeluTanh.apply(input)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    input = as_input(input, "input", "tanh")  # noqa: A001
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    input = as_input(input, "input", "sigmoid")  # noqa: A001
    return input.sigmoid()


def _implicit_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's choice when ``dim`` is omitted (with its deprecation warning): 0 for 0-, 1- and 3-dim
    inputs, else 1 (old code meant (C,), (N, C) and (C, H, W) inputs)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    """exp(x) / sum(exp(x)) along ``dim`` (stable: the max is subtracted first).

    ``dim=None`` is PyTorch's deprecated implicit choice (see ``_implicit_softmax_dim``), with its warning;
    ``dtype`` converts the input first.
    """
    input = as_input(input, "input", "softmax")  # noqa: A001
    if dim is None:
        dim = _implicit_softmax_dim("softmax", input.ndim, _stacklevel)
    return (input if dtype is None else input.to(dtype)).softmax(dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    """x - logsumexp(x) along ``dim`` (``dim=None``: PyTorch's implicit choice, with its warning)."""
    input = as_input(input, "input", "log_softmax")  # noqa: A001
    if dim is None:
        dim = _implicit_softmax_dim("log_softmax", input.ndim, _stacklevel)
    return (input if dtype is None else input.to(dtype)).log_softmax(dim)
