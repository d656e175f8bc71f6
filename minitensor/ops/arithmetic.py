"""PyTorch's named arithmetic: ``add(other, alpha=1)``, ``sub``, ``mul``, ``div`` and their
in-place forms (``p.data.add_(g, alpha=-lr)`` in older training loops), plus ``clamp_``, ``pow_``
and the in-place forms of the elementwise functions (``exp_``, ``sqrt_`` ...: ``unary_``).

The out-of-place forms are the operators (``x + alpha * other``); the in-place
ones go through ``inplace.py``, which records them in the graph when needed.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from . import inplace, power
from .operands import _operand


def _scaled(other, alpha, fn: str):
    """``alpha * other``, with alpha checked (a number; 1 leaves other as it is)."""
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
        raise TypeError(f"{fn}: alpha must be a number, got {type(alpha).__name__}")
    if alpha == 1:
        return other
    return other * alpha


def add(input, other, *, alpha=1):  # noqa: A002
    """``input + alpha * other``."""
    return _operand(input, other) + _scaled(_operand(other, input), alpha, "add")


def sub(input, other, *, alpha=1):  # noqa: A002
    """``input - alpha * other``."""
    return _operand(input, other) - _scaled(_operand(other, input), alpha, "sub")


def mul(input, other):  # noqa: A002
    return _operand(input, other) * _operand(other, input)


def div(input, other, *, rounding_mode=None):  # noqa: A002
    """``input / other`` (``rounding_mode``: None, or 'trunc'/'floor' for a rounded, non-differentiable result)."""
    if rounding_mode not in (None, "trunc", "floor"):
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    out = _operand(input, other) / _operand(other, input)
    if rounding_mode is None:
        return out
    rounded = np.trunc(out._data) if rounding_mode == "trunc" else np.floor(out._data)
    if all(not isinstance(x, Tensor) or x.dtype.kind in "biu" for x in (input, other)):
        rounded = rounded.astype(np.int64)
    return Tensor._make(rounded, False, None)


def add_(t, other, alpha=1):
    return inplace.arithmetic(t, np.add, "add_", _scaled(_operand(other, t), alpha, "add_"))


def sub_(t, other, alpha=1):
    return inplace.arithmetic(t, np.subtract, "sub_", _scaled(_operand(other, t), alpha, "sub_"))


def mul_(t, other):
    return inplace.arithmetic(t, np.multiply, "mul_", _operand(other, t))


def div_(t, other):
    return inplace.arithmetic(t, np.true_divide, "div_", _operand(other, t), floating=True)


# The in-place forms whose op keeps only its output for backward (each saves y): no copy of the old values
_OUTPUT_ONLY = frozenset(("exp_", "exp2_", "expm1_", "relu_", "rsqrt_", "sigmoid_", "sqrt_", "tanh_"))


def _recomputed(t, name: str, fn, *others, output_only: bool = False):
    """``t`` set in place to ``fn(t, *others)`` (an out-of-place Tensor function), recorded when needed;
    ``output_only``: the op ``fn`` records keeps only its output (as those of ``_OUTPUT_ONLY`` do)."""

    def update(array, *o):
        with no_grad():
            array[...] = fn(Tensor._make(array, False, None), *o)._data

    output_only = output_only or name in _OUTPUT_ONLY
    return inplace.apply_inplace(t, name, update, fn, *others, output_only=output_only)


def clamp_(t, min=None, max=None):  # noqa: A002
    t.detach().clamp(min, max)  # checks the arguments
    return _recomputed(t, "clamp_", lambda old: old.clamp(min, max))


# The elementwise functions that give floats from integers (their in-place forms refuse integer tensors).
FLOATING = {"cos", "exp", "exp2", "expm1", "log", "log10", "log1p", "log2", "reciprocal", "rsqrt", "sigmoid", "sin",
            "sqrt", "tanh"}  # fmt: skip


def unary_(t, name: str):
    """``t.exp_()`` and the other in-place elementwise functions: ``t`` set to ``t.<name>()``."""
    if name in FLOATING:
        inplace.check_castable(t, dtypes.get_default_dtype(), f"{name}_")
    return _recomputed(t, f"{name}_", getattr(Tensor, name))


def pow_(t, exponent):
    inplace.check_castable(t, dtypes.result_type(t, _operand(exponent, t)), "pow_")
    return _recomputed(t, "pow_", power.pow, exponent)
