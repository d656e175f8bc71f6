"""The rest of PyTorch's everyday elementwise math, as its functions and methods.

- ``log1p``, ``expm1``: ops of their own, which keep the precision near 0 that
  ``log(1 + x)`` and ``exp(x) - 1`` lose;  d log1p = 1 / (1 + x), d expm1 = exp(x) = expm1(x) + 1.
  ``np.log1p`` / ``np.expm1`` call the C library element by element (~25 ns each), so
  both are vectorised kernels (``kernels/log1p.py``, ``kernels/expm1.py``: within a few
  ulp of the exact value, ``tests/kernels/test_log1p_kernel.py`` and ``test_expm1_kernel.py``);
- ``exp2``: an op of its own (``kernels/exp2.py``: exact for integers, where ``exp(x ln 2)``
  is ~40 float32 ulp off at x = 120);  d exp2 = exp2(x) ln 2;
- ``log2``, ``log10``: ops of their own, exact on powers of two and of ten (``log(x) / ln 2``
  gave -14.999999 for 2^-15 in float32, and log10(1000.0) was 2.9999999999999996);
  d log2 = 1 / (x ln 2), d log10 = 1 / (x ln 10);
- ``rsqrt`` and ``frac``: ops of their own (one node each; frac's gradient passes unchanged,
  as PyTorch's);
- ``square``, ``reciprocal``, ``neg``:
  compositions of existing ops (their gradients, of any order, come from those);
- ``sign`` (and ``sgn``, the same for real numbers), ``floor``, ``ceil``, ``round``, ``trunc`` (and
  ``fix``): piecewise constant, so their gradient is 0 everywhere, as PyTorch's (``Constant``: the
  values pass, the gradient does not); ``signbit`` is a bool tensor (no gradient);
- ``deg2rad``, ``rad2deg``: products with a constant;
- ``nan_to_num``: an op of its own (``NanToNum``): NaN and ±inf replaced by numbers, the gradient
  passing where the input was finite and 0 where it was replaced (as PyTorch's).

Integer inputs of the float functions are computed in the default float dtype, as PyTorch.

>>> mt.log1p(mt.tensor([1e-10], dtype=mt.float64)).item()
1e-10
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd import batching
from ..autograd.batching import elementwise
from ..autograd.function import Op
from ..tensor import Tensor
from .arguments import float_input, number_arg, tensor_input
from .arguments import floating as _floating
from .nn_ops import on_arrays


class Log1p(Op):
    """log(1 + x);  dx = grad / (1 + x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.log1p(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x + 1)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Expm1(Op):
    """exp(x) - 1;  dx = grad * (y + 1), y the output."""

    @staticmethod
    def forward(ctx, x):
        y = backend.expm1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (y + 1)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Exp2(Op):
    """2 ** x;  dx = grad * y * ln 2, y the output."""

    @staticmethod
    def forward(ctx, x):
        y = backend.exp2(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        if on_arrays(grad) and on_arrays(y) and y.dtype.kind == "f":  # first order: one pass
            return backend.exp2_backward(grad, y)
        return grad * y * math.log(2.0)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Log2(Op):
    """log2 x;  dx = grad / (x ln 2).  Exact on powers of two (``kernels/exp_log.py``)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.log2(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x * math.log(2.0))

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Log10(Op):
    """log10 x;  dx = grad / (x ln 10).  Exact on powers of ten (``kernels/exp_log.py``)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.log10(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x * math.log(10.0))

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Rsqrt(Op):
    """1 / sqrt(x);  dx = -grad * y^3 / 2, y the output (one node where ``1 / x.sqrt()`` made two)."""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore", invalid="ignore"):  # (0: inf, negative: NaN, silently as PyTorch)
            y = 1 / np.sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (y * y * y * -0.5)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Frac(Op):
    """x - trunc(x);  dx = grad (slope 1 between the jumps, as PyTorch's: one node and no pass
    where ``x - trunc(x)`` made three nodes)."""

    @staticmethod
    def forward(ctx, x):
        return backend.frac(x)  # (inf gives NaN, silently as PyTorch)

    @staticmethod
    def backward(ctx, grad):
        return grad

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Constant(Op):
    """A piecewise-constant function (``ufunc``: sign, floor ...) of x; its gradient is 0."""

    @staticmethod
    def forward(ctx, x, ufunc=None):
        return ufunc(x)

    @staticmethod
    def backward(ctx, grad):
        if on_arrays(grad):  # zeros, as PyTorch: even for NaN (np.zeros: np.zeros_like of sum's view took 3x longer)
            return np.zeros(grad.shape, grad.dtype)
        return grad * 0

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class NanToNum(Op):
    """x with NaN, inf and -inf replaced by ``nan``, ``posinf``, ``neginf``;  dx = grad where x is finite, else 0."""

    @staticmethod
    def forward(ctx, x, nan=0.0, posinf=None, neginf=None):
        ctx.save_for_backward(x)
        return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return backend.where(np.isfinite(getattr(x, "_data", x)), grad, 0.0)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def log1p(input):  # noqa: A002
    return Log1p.apply(_floating(input))


def expm1(input):  # noqa: A002
    return Expm1.apply(_floating(input))


def log2(input):  # noqa: A002
    return Log2.apply(_floating(input))


def log10(input):  # noqa: A002
    return Log10.apply(_floating(input))


def exp2(input):  # noqa: A002
    return Exp2.apply(_floating(input))


def rsqrt(input):  # noqa: A002
    return Rsqrt.apply(_floating(input))


def square(input):  # noqa: A002
    return input * input


def reciprocal(input):  # noqa: A002
    return 1.0 / _floating(input)


def neg(input):  # noqa: A002
    return -input


def frac(input):  # noqa: A002
    """x - trunc(x): the fractional part, with x's sign."""
    return Frac.apply(input)


def sign(input):  # noqa: A002
    """1, -1, or 0 at ±0 and NaN (PyTorch's; ``np.sign`` gives NaN at NaN)."""
    return Constant.apply(input, ufunc=backend.sgn)


def floor(input):  # noqa: A002
    return Constant.apply(input, ufunc=np.floor)


def ceil(input):  # noqa: A002
    return Constant.apply(input, ufunc=np.ceil)


def round(input):  # noqa: A001, A002  (PyTorch's name; halves to even, as PyTorch and NumPy)
    return Constant.apply(input, ufunc=np.round)


def trunc(input):  # noqa: A002
    return Constant.apply(input, ufunc=np.trunc)


def sgn(input):  # noqa: A002
    """The sign (PyTorch's ``sgn``: ``sign`` for real numbers)."""
    return sign(input)


def fix(input):  # noqa: A002
    """``trunc`` under NumPy's name (rounds toward zero)."""
    return trunc(input)


@batching.per_example  # (reads the values: under vmap, once per example)
def signbit(input):  # noqa: A002
    """True where the sign bit is set (negative numbers and -0.0): a bool tensor, no gradient."""
    return Tensor._make(np.signbit(tensor_input(input, "signbit")._data), False, None)


def deg2rad(input):  # noqa: A002
    """Degrees to radians (integers give the default float dtype)."""
    return float_input(input, "deg2rad") * (math.pi / 180.0)


def rad2deg(input):  # noqa: A002
    """Radians to degrees (integers give the default float dtype)."""
    return float_input(input, "rad2deg") * (180.0 / math.pi)


def nan_to_num(input, nan: float = 0.0, posinf=None, neginf=None):  # noqa: A002
    """NaN, inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0, the dtype's largest
    and its lowest finite value)."""
    tensor_input(input, "nan_to_num")
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None:
            number_arg(value, "nan_to_num", name)
    if input.dtype.kind != "f":
        return input.clone()
    return NanToNum.apply(input, nan=nan, posinf=posinf, neginf=neginf)


NAMES = ("log1p", "expm1", "log2", "log10", "exp2", "rsqrt", "square", "reciprocal", "neg", "frac", "sign",
         "floor", "ceil", "round", "trunc")  # fmt: skip
