"""Argument checks shared by the functional ops: clear TypeErrors before any math runs."""

from __future__ import annotations

import numbers

from ...tensor import Tensor


def check_tensor(value, name: str, fn: str) -> None:
    """Raise TypeError unless ``value`` is a Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(value).__name__}")


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
