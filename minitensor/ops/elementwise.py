"""Elementwise ops: arithmetic and the unary math functions.

Each backward returns gradients in the broadcast shape of the output; the
engine sums them back to each input's shape.  Every backward is written with
operators and NumPy functions only, so it runs on arrays (first order) and on
Tensors (``create_graph=True``: the gradient is differentiable again).

Forward mode (``jvp``): a binary op adds the contributions of the operands that
carry a tangent (``plus`` skips the None ones); a unary op's Jacobian is diagonal,
so its JVP is its backward formula applied to the tangent (``jvp = backward``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..autograd.batching import elementwise
from ..autograd.dual import plus
from ..autograd.function import Op
from .activation_backwards import SigmoidBackward, TanhBackward


class Add(Op):
    @staticmethod
    def forward(ctx, a, b):
        return np.add(a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad

    @staticmethod
    def jvp(ctx, da, db):
        return plus(da, db)

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Sub(Op):
    @staticmethod
    def forward(ctx, a, b):
        return np.subtract(a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, backend.negative(grad) if ctx.needs_input_grad[1] else None

    @staticmethod
    def jvp(ctx, da, db):
        return plus(da, None if db is None else -db)

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Mul(Op):
    """a * b;  da = grad * b, db = grad * a (each operand is saved only if the other needs a gradient)."""

    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        return np.multiply(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad * b if ctx.needs_input_grad[0] else None
        gb = grad * a if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.inputs
        return plus(None if da is None else da * b, None if db is None else a * db)

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Div(Op):
    """a / b;  da = grad / b, db = -grad * (a / b) / b (never b * b, which over- or underflows).

    A b broadcast over grad (``x / norm``, ``x / std``) takes its gradient summed to its own shape
    first, ``-(sum(grad * a) / b) / b``: one pass over the broadcast shape and a reduction, where the
    formula takes four and the engine's reduction."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)
        return np.divide(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad / b if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:
            if type(grad) is np.ndarray and type(b) is np.ndarray and b.size < grad.size:
                gb = -(backend.sum_to_shape(grad * a, b.shape) / b) / b
            else:
                gb = -(grad * (a / b)) / b
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.inputs
        return plus(None if da is None else da / b, None if db is None else -(db * ctx.output) / b)

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Pow(Op):
    """a ** b for any mix of Tensor and scalar operands."""

    @staticmethod
    def forward(ctx, a, b):
        out = np.power(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):  # a zero base: inf and NaN as in PyTorch
            ga = grad * _base_grad(a, b, out) if ctx.needs_input_grad[0] else None
            gb = grad * _exponent_grad(a, b, out) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.inputs
        out = ctx.output
        with np.errstate(divide="ignore", invalid="ignore"):
            return plus(
                None if da is None else da * _base_grad(a, b, out),
                None if db is None else db * _exponent_grad(a, b, out),
            )

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def _base_grad(a, b, out):
    """d(a ** b)/da = b * a ** (b - 1); 0 where b == 0 (as PyTorch: x ** 0 is constant, even at x = 0)."""
    if type(a) is np.ndarray and out.dtype.kind == "f":
        if isinstance(b, (int, float)) and b != 0:
            return b * _power_from_output(a, b, out)
        if type(b) is np.ndarray:
            return backend.where(b == 0, 0.0, b * _power_from_output(a, b, out))
    with np.errstate(divide="ignore", invalid="ignore"):
        d = b * a ** (b - 1)
    return backend.where(b == 0, 0.0, d) if not isinstance(b, (int, float)) else (d if b != 0 else 0.0 * a)


def _power_from_output(a: np.ndarray, b, out: np.ndarray) -> np.ndarray:
    """a ** (b - 1) as out / a (out = a ** b; b a number or an array, a and b broadcast to out's
    shape): a division instead of a second ``np.power``, the C library's pow per element.  Where
    that is not the power (a = 0 or inf, out not a normal number: overflowed, or underflowed and
    short of bits) those elements take ``np.power``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.divide(out, a, out=np.empty_like(out))  # (an array, also for 0-d inputs)
    tiny = np.finfo(out.dtype).tiny
    redo = ~np.isfinite(d) | ((out < tiny) & (out > -tiny))
    if redo.any():
        exponent = b if isinstance(b, (int, float)) else np.broadcast_to(b, out.shape)[redo]
        with np.errstate(divide="ignore", invalid="ignore"):
            d[redo] = np.power(np.broadcast_to(a, out.shape)[redo], exponent - 1)
    return d


def _exponent_grad(a, b, out):
    """d(a ** b)/db = a ** b * log(a); 0 where a == 0 and b >= 0 (as PyTorch), not NaN.

    The log is taken of 1 there instead of 0, so no -inf enters the graph (a second
    derivative through ``backend.where`` would otherwise meet 0 * -inf = NaN)."""
    if isinstance(a, (int, float)):  # a Python-scalar base: keep the gradient in the output's dtype
        a = np.asarray(a, dtype=out.dtype)
    masked = np.logical_and(a == 0, b >= 0)
    safe = backend.where(masked, 1.0, a)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = out * (backend.log(safe) if type(safe) is np.ndarray else np.log(safe))  # (a Tensor: recorded)
    return backend.where(masked, 0.0, d)


class Neg(Op):
    @staticmethod
    def forward(ctx, x):
        return np.negative(x)

    @staticmethod
    def backward(ctx, grad):
        return backend.negative(grad)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Exp(Op):
    """e^x;  dx = grad * y.  (``backend.exp``: one vectorised pass for float arrays.)"""

    @staticmethod
    def forward(ctx, x):
        y = backend.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Log(Op):
    """ln x;  dx = grad / x.  (``backend.log``: one vectorised pass for float arrays; log 0 = -inf and
    log of a negative number = NaN, silently as PyTorch.)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.log(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Sqrt(Op):
    @staticmethod
    def forward(ctx, x):
        y = np.sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad / (2 * y)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Abs(Op):
    """|x|; the gradient is grad * sgn(x), sgn 0 at x = ±0 and at NaN, as PyTorch's."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.abs(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if type(grad) is np.ndarray:  # first order: one pass
            return backend.abs_backward(grad, x)
        return grad * backend.sgn(x)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Tanh(Op):
    """tanh(x);  dx = grad * (1 - y^2).  (``backend.tanh`` and its backward: one pass each.)"""

    @staticmethod
    def forward(ctx, x):
        y = backend.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        if type(grad) is np.ndarray:  # first order: one pass
            return backend.tanh_backward(grad, y)
        return TanhBackward.apply(grad, y)  # (beyond first order: the same pass, as an op with its own derivatives)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Sigmoid(Op):
    """1 / (1 + exp(-x));  dx = grad * y * (1 - y).  (``backend.sigmoid`` and its backward: one pass
    each, never overflowing.)"""

    @staticmethod
    def forward(ctx, x):
        y = backend.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        if type(grad) is np.ndarray:  # first order: one pass
            return backend.sigmoid_backward(grad, y)
        return SigmoidBackward.apply(grad, y)  # (beyond first order: the same pass, as an op with its own derivatives)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Relu(Op):
    """max(x, 0), keeping NaN and -0.0;  dx = grad where y > 0 or NaN, else 0 (0 at x = 0), as in
    PyTorch.  (``backend.relu`` and its backward: one pass each.)"""

    @staticmethod
    def forward(ctx, x):
        y = backend.relu(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        if type(grad) is np.ndarray:
            return backend.relu_backward(grad, y)
        return backend.where(y <= 0, 0, grad)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Clamp(Op):
    """Clip to [low, high] (either may be None: no bound);  dx = grad on [low, high], 0 outside (and
    at NaN).  Floats in one pass each way (``backend.hardtanh``, the same clip; its backward leaves
    out the bounds, ``backend.clamp_backward`` keeps them, as PyTorch's clamp)."""

    @staticmethod
    def forward(ctx, x, low=None, high=None):
        ctx.save_for_backward(x)
        ctx.low, ctx.high = -math.inf if low is None else low, math.inf if high is None else high
        if x.dtype.kind == "f":
            return backend.hardtanh(x, ctx.low, ctx.high)
        if high is None:  # one bound: the ufunc, without np.clip's ~4 µs of checks (x itself at a tie: -0.0 stays)
            return np.maximum(low, x)
        return np.minimum(high, x) if low is None else np.clip(x, low, high)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if type(grad) is np.ndarray:
            return backend.clamp_backward(grad, x, ctx.low, ctx.high)
        return grad * np.logical_and(x >= ctx.low, x <= ctx.high)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Cast(Op):
    """Change dtype; the gradient is cast back to the input's dtype by the engine."""

    @staticmethod
    def forward(ctx, x, dtype=None):
        return x.astype(dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once
