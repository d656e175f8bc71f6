"""Floor division and remainders: ``a // b``, ``a % b``, ``torch.floor_divide``, ``remainder``, ``fmod``.

Two ways to round a quotient give two remainders, both with ``a = q * b + r``:

- *floor* (``//``, ``%``, ``remainder``): ``q = floor(a / b)``, so ``r`` takes the divisor's
  sign, as Python's ``%``: ``-7 // 2 == -4`` and ``-7 % 2 == 1``;
- *trunc* (``fmod``, C's ``fmod``): ``q = trunc(a / b)``, so ``r`` takes the dividend's sign:
  ``fmod(-7, 2) == -1``.

Gradients, as PyTorch's: ``r = a - q * b`` with ``q`` piecewise constant, so
``dr/da = 1`` and ``dr/db = -q``.  The quotient ``a // b`` is piecewise constant: its
result does not require grad (PyTorch's ``floor_divide`` has no derivative either).
An integer division by zero raises ``RuntimeError: ZeroDivisionError`` as in PyTorch;
floats give inf and nan.

>>> mt.tensor([7, -7]) // 2
tensor([ 3, -4])
>>> mt.tensor([7, -7]) % 2
tensor([1, 1])
>>> mt.fmod(mt.tensor([7, -7]), 2)
tensor([ 1, -1])
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import elementwise
from ..autograd.dual import plus
from ..autograd.function import Op
from ..tensor import Tensor
from . import inplace
from .operands import _binary, _operand, _promoted, _shape_of


def _plain(x):
    """The array of x (a Tensor in a ``create_graph`` backward): the quotient is a constant."""
    return getattr(x, "_data", x)


class _Remainder(Op):
    """r = a - q(a, b) * b;  da = grad, db = -grad * q (the quotient rounded down, ``floor``, or toward 0)."""

    compute = None  # backend.remainder or backend.fmod
    floor = None

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[1] else None)
        return cls.compute(a, b)

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        if not ctx.needs_input_grad[1]:
            return grad, None
        if type(grad) is np.ndarray:  # (one pass; a Tensor gradient, under create_graph, takes the formula)
            return grad, backend.quotient_grad(grad, _plain(a), _plain(b), cls.floor)
        return grad, -grad * backend.quotient(_plain(a), _plain(b), cls.floor)

    @classmethod
    def jvp(cls, ctx, da, db):
        a, b = ctx.inputs
        return plus(da, None if db is None else -db * backend.quotient(_plain(a), _plain(b), cls.floor))

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Remainder(_Remainder):
    """a % b with the divisor's sign (Python's and ``torch.remainder``'s)."""

    compute = staticmethod(backend.remainder)
    floor = True


class Fmod(_Remainder):
    """C's fmod: the remainder with the dividend's sign."""

    compute = staticmethod(backend.fmod)
    floor = False


def check_divisor(a, b, fn: str) -> None:
    """PyTorch's error for an integer division by zero (NumPy would give 0 with a warning)."""
    if getattr(a, "dtype", np.dtype(float)).kind in "biu" or type(a) is int:
        if getattr(b, "dtype", np.dtype(float)).kind in "biu" or type(b) is int:
            if not np.all(_plain(b)):
                raise RuntimeError(f"{fn}: ZeroDivisionError (an integer divided by zero)")


def floor_divide(input, other):  # noqa: A002  (PyTorch's names)
    """``input // other``: the quotient rounded down (not differentiable, as PyTorch's)."""
    a, b = _promoted(_operand(input, other), _operand(other, input))
    check_divisor(a, b, "floor_divide")
    try:
        data = np.floor_divide(_plain(a), _plain(b))
    except ValueError:
        raise ValueError(
            f"floor_divide: shapes {_shape_of(a)} and {_shape_of(b)} cannot be broadcast together"
        ) from None
    return Tensor._make(np.asarray(data), False, None)


def in_place(t, ufunc, op: str, other):
    """``t //= other`` (``ufunc`` np.floor_divide), ``t %= other`` (np.remainder) or ``t.fmod_(other)``
    (np.fmod); ``op`` names it in errors."""
    other = _operand(other, t)
    check_divisor(t, other, op)
    return inplace.arithmetic(t, ufunc, op, other)


def remainder(input, other):  # noqa: A002
    """``input % other``: the remainder with the divisor's sign."""
    check_divisor(_operand(input, other), _operand(other, input), "remainder")
    return _binary(Remainder, input, other, "remainder")


def fmod(input, other):  # noqa: A002
    """C's ``fmod``: the remainder with the dividend's sign."""
    check_divisor(_operand(input, other), _operand(other, input), "fmod")
    return _binary(Fmod, input, other, "fmod")
