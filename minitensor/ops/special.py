"""Special functions as ops: ``erf``, ``erfc``, ``erfinv``, ``logit``, ``xlogy``, ``sinc``, ``i0``.

Each derivative is again a function here (or an elementary one), so every order is exact::

    d erf x   = 2/sqrt(pi) exp(-x^2)        d erfc x = -2/sqrt(pi) exp(-x^2)
    d erfinv x = sqrt(pi)/2 exp(y^2)        d logit x = 1 / (x (1 - x))
    d sinc x  = (cos(pi x) - sinc x) / x    d i0 x = i1(x),   d i1 x = i0(x) - i1(x) / x
    xlogy(x, y) = x log y (0 where x = 0): dx = log y, dy = x / y

The functions themselves are the backend's (``kernels/erf.py``, ``kernels/erfinv.py``,
``kernels/bessel.py``: numba kernels beside their NumPy references), and so are the first-order
backward passes of erf, erfc and erfinv (one pass each); on Tensors (create_graph) the formulas above
run as Tensor operations.  Integer inputs are computed in the default float dtype.  The gamma family
(``lgamma``, ``digamma``, ``polygamma``) is in ``ops/gamma.py``.

>>> x = mt.tensor([0.0, 0.5], dtype=mt.float64, requires_grad=True)
>>> y = Erf.apply(x)
>>> y.sum().backward()
>>> y.detach().numpy().round(4), x.grad.numpy().round(4)      # erf, and 2/sqrt(pi) exp(-x^2)
(array([0.    , 0.5205]), array([1.1284, 0.8788]))
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd.batching import elementwise
from ..autograd.dual import plus
from ..autograd.function import Op
from .arguments import float_input, number_arg
from .operands import _binary
from .trig import Cos, Sin

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


class Erf(Op):
    """y = erf(x);  dy/dx = 2/sqrt(pi) * exp(-x^2) (differentiable again: exact GELU's composite form uses it)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.erf(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if type(grad) is np.ndarray:  # first order: one pass
            return backend.erf_backward(grad, x)
        return grad * (_TWO_OVER_SQRT_PI * np.exp(-(x * x)))

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Erfc(Op):
    """y = erfc(x) = 1 - erf(x);  dy/dx = -2/sqrt(pi) * exp(-x^2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.erfc(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if type(grad) is np.ndarray:  # first order: one pass
            return backend.erfc_backward(grad, x)
        return grad * (-_TWO_OVER_SQRT_PI * np.exp(-(x * x)))

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Erfinv(Op):
    """y = erfinv(x), the inverse of erf on [-1, 1];  dy/dx = sqrt(pi)/2 * exp(y^2)."""

    @staticmethod
    def forward(ctx, x):
        y = backend.erfinv(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        if type(grad) is np.ndarray:  # first order: one pass
            return backend.erfinv_backward(grad, y)
        return grad * (np.exp(y * y) / _TWO_OVER_SQRT_PI)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Logit(Op):
    """y = log(z / (1 - z)), z = x clamped to [eps, 1 - eps] (eps None: not clamped);  dx = grad / (x (1 - x))
    inside [eps, 1 - eps] and 0 outside (eps None: NaN outside [0, 1]), as PyTorch's."""

    @staticmethod
    def forward(ctx, x, eps=None):
        ctx.save_for_backward(x)
        ctx.eps = eps
        return backend.logit(x, eps)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if type(grad) is np.ndarray:  # first order: one pass
            return backend.logit_backward(grad, x, ctx.eps)
        if ctx.eps is None:  # outside [0, 1] is where x (1 - x) < 0: finite there, nothing to keep out
            spread = x * (1 - x)
            return backend.where(getattr(spread, "_data", spread) < 0, np.nan, grad / spread)
        values = getattr(x, "_data", x)  # (the mask is a constant)
        outside = (values < ctx.eps) | (values > 1 - ctx.eps)
        safe = backend.where(outside, 0.5, x)  # (no infinite slope where the mask discards it: keeps NaN out)
        return backend.where(outside, 0.0, grad / (safe * (1 - safe)))

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Xlogy(Op):
    """x * log(y), 0 where x = 0 (unless y is NaN);  dx = log(y) (0 where x = 0 and y <= 0), dy = x / y."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = x * np.log(y)
        return backend.where((x == 0) & ~np.isnan(y), 0.0, out).astype(out.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        need_x, need_y = ctx.needs_input_grad
        gx = gy = None
        if need_x:
            x_values, y_values = getattr(x, "_data", x), getattr(y, "_data", y)
            masked = (x_values == 0) & (y_values <= 0)
            gx = backend.where(masked, 0.0, grad * np.log(backend.where(masked, 1.0, y)))
        if need_y:
            gy = grad * x / y
        return gx, gy

    @staticmethod
    def jvp(ctx, dx, dy):
        x, y = ctx.inputs
        tx = None
        if dx is not None:
            masked = (getattr(x, "_data", x) == 0) & (getattr(y, "_data", y) <= 0)
            tx = backend.where(masked, 0.0, dx * np.log(backend.where(masked, 1.0, y)))
        return plus(tx, None if dy is None else dy * x / y)

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Sinc(Op):
    """sin(p) / p with p = pi x, 1 at x = 0;  dx = grad * pi (p cos p - sin p) / p^2, 0 at x = 0.

    Near 0 the difference ``p cos p - sin p`` (~ -p^3 / 3) cancels: its rounding error, ~eps p, is
    3 eps / p^2 of the slope (in float32 at x = 2e-4 a quarter of it; PyTorch's formula loses as
    much).  So for ``|p| < SERIES_BELOW`` the slope is its Taylor series
    ``-p/3 + p^3/30 - p^5/840 + p^7/45360 - p^9/3991680`` (the next term is below 6e-9 p^10 of it):
    float32 up to |p| = 1, float64 up to 0.25, where the two errors meet."""

    SERIES_BELOW = {np.dtype(np.float64): 0.25}  # |p|; other float dtypes: 1.0

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sinc(x).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        values = getattr(x, "_data", x)  # (the mask is a constant)
        near = np.abs(values) < Sinc.SERIES_BELOW.get(values.dtype, 1.0) / math.pi
        p = x * math.pi
        q = p * p
        series = p * (-1 / 3 + q * (1 / 30 + q * (-1 / 840 + q * (1 / 45360 - q / 3991680))))
        far = backend.where(near, 1.0, p)  # (the formula away from 0 only)
        formula = (far * Cos.call(far) - Sin.call(far)) / (far * far)
        slope = backend.where(near, series, formula) * math.pi
        return backend.where(values == 0, 0.0, grad * slope)  # (+0 at 0 whatever grad's sign, as PyTorch)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class I0(Op):
    """The modified Bessel function I0;  dx = grad * I1(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.i0(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * I1.call(x)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class I1(Op):
    """The modified Bessel function I1 (i0's derivative);  dx = grad * (I0(x) - I1(x) / x), 1/2 at x = 0."""

    @staticmethod
    def forward(ctx, x):
        y = backend.i1(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        zero = getattr(x, "_data", x) == 0
        slope = I0.call(x) - y / backend.where(zero, 1.0, x)
        return grad * backend.where(zero, 0.5, slope)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def erf(input):  # noqa: A002
    """The error function, ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``: the differentiable op on a Tensor,
    the backend's function on a NumPy array (``minitensor.ops.special.erf`` has long been that)."""
    if isinstance(input, np.ndarray):
        return backend.erf(input)
    return Erf.apply(float_input(input, "erf"))


def erfc(input):  # noqa: A002
    """``1 - erf(x)``, precise where it is tiny (large x)."""
    return Erfc.apply(float_input(input, "erfc"))


def erfinv(input):  # noqa: A002
    """The inverse of ``erf`` on [-1, 1] (±inf at ±1, NaN outside)."""
    return Erfinv.apply(float_input(input, "erfinv"))


def logit(input, eps=None):  # noqa: A002
    """``log(p / (1 - p))``, the inverse of ``sigmoid``; with ``eps``, p is clamped to [eps, 1 - eps] first."""
    x = float_input(input, "logit")
    if eps is not None:
        number_arg(eps, "logit", "eps")
    return Logit.apply(x, eps=None if eps is None else float(eps))


def xlogy(input, other):  # noqa: A002
    """``input * log(other)``, and 0 where input is 0 (unless other is NaN); either may be a number."""
    return _binary(Xlogy, input, other, "xlogy", floating=True)


def sinc(input):  # noqa: A002
    """The normalised sinc, ``sin(pi x) / (pi x)`` (1 at 0)."""
    return Sinc.apply(float_input(input, "sinc"))


def i0(input):  # noqa: A002
    """The modified Bessel function of the first kind of order 0."""
    return I0.apply(float_input(input, "i0"))
