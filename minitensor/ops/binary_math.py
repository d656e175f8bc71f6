"""Elementwise functions of two (or three) tensors: ``hypot``, ``logaddexp``, ``logaddexp2``, ``copysign``,
``heaviside``, ``float_power``, ``lerp``, ``addcmul``, ``addcdiv``, ``true_divide``.

``Hypot``, ``LogAddExp``, ``LogAddExp2``, ``Copysign`` and ``Lerp`` are ops of their own (stable
forward, one node), ``AddCMul`` and ``AddCDiv`` too (one node, two or three passes where the
composition took five and a temporary each); the others are compositions of existing ops, so their
gradients (of any order) come from those::

    hypot(a, b)      = sqrt(a^2 + b^2)        da = a / out, db = b / out
    logaddexp(a, b)  = log(e^a + e^b)         da = sigmoid(a - b), db = sigmoid(b - a)
    logaddexp2(a, b) = log2(2^a + 2^b)        da = sigmoid((a - b) ln 2)
    copysign(a, b)   = |a| with b's sign      da = out / a (0 where a = 0), db = 0
    lerp(a, b, w)    = a + w (b - a)          addcmul(x, t1, t2, value) = x + value t1 t2

Operands broadcast and promote as PyTorch's (``_binary``); integers give floats where the
function is a float function.  ``heaviside`` is a step function: not differentiable (PyTorch
has no derivative for it), its result carries no gradient.

>>> mt.logaddexp(mt.tensor([0.0, 1000.0]), mt.tensor([0.0, 1000.0])).tolist()
[0.6931471824645996, 1000.6931762695312]
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend, dtypes
from ..autograd import batching
from ..autograd.batching import elementwise
from ..autograd.dual import plus
from ..autograd.function import Op
from ..tensor import Tensor
from .arguments import number_arg, tensor_input
from .arithmetic import div
from .elementwise import Sigmoid
from .nn_ops import on_arrays
from .operands import _binary
from .power import pow as _pow

_LN2 = math.log(2.0)


def _log_add2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log2(2^a + 2^b) as ``max(a, b) + log1p(2^-|a - b|) / ln 2`` by the kernels: NumPy's ``logaddexp2``
    calls the C library per element.  Equal infinities, which the formula would make NaN, give ``a + 1``,
    as NumPy's.  (``logaddexp``: ``backend.logaddexp``, one pass.)"""
    with np.errstate(invalid="ignore"):  # (inf - inf: those elements are replaced below)
        out = np.maximum(a, b) + backend.log1p(backend.exp2(-np.abs(a - b))) / _LN2
    return backend.where(a == b, a + 1.0, out)


class Hypot(Op):
    """sqrt(a^2 + b^2) without overflow;  da = grad * a / out, db = grad * b / out."""

    @staticmethod
    def forward(ctx, a, b):
        out = backend.hypot(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        if on_arrays(grad) and on_arrays(out):  # first order: one kernel pass (else the formula, for create_graph)
            return backend.hypot_backward(grad, a, b, out, *ctx.needs_input_grad)
        scale = grad / out
        return (scale * a if ctx.needs_input_grad[0] else None), (scale * b if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.inputs
        return plus(None if da is None else da * a, None if db is None else db * b) / ctx.output

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class LogAddExp(Op):
    """log(e^a + e^b) without overflow;  da = grad * sigmoid(a - b), db = grad * sigmoid(b - a)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return backend.logaddexp(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        if on_arrays(grad) and on_arrays(a):  # first order: one kernel pass (else the formula, for create_graph)
            return backend.logaddexp_backward(grad, a, b, need_a, need_b)
        return (grad * Sigmoid.call(a - b) if need_a else None), (grad * Sigmoid.call(b - a) if need_b else None)

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.inputs
        return plus(None if da is None else da * Sigmoid.call(a - b), None if db is None else db * Sigmoid.call(b - a))

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class LogAddExp2(Op):
    """log2(2^a + 2^b);  da = grad * sigmoid((a - b) ln 2), db likewise."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _log_add2(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        ga = grad * Sigmoid.call((a - b) * _LN2) if need_a else None
        gb = grad * Sigmoid.call((b - a) * _LN2) if need_b else None
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.inputs
        ta = None if da is None else da * Sigmoid.call((a - b) * _LN2)
        return plus(ta, None if db is None else db * Sigmoid.call((b - a) * _LN2))

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Copysign(Op):
    """|a| with the sign of b (b's sign bit: -0.0 counts as negative);  da = grad * out / a (0 where a = 0),
    b gets no gradient (as PyTorch)."""

    @staticmethod
    def forward(ctx, a, b):
        out = np.copysign(a, b)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        zero = getattr(a, "_data", a) == 0
        return backend.where(zero, 0.0, grad * (out / backend.where(zero, 1.0, a))), None

    @staticmethod
    def jvp(ctx, da, db):  # (b's tangent moves nothing: the sign is piecewise constant)
        if da is None:
            return None
        a, out = ctx.inputs[0], ctx.output
        zero = getattr(a, "_data", a) == 0
        return backend.where(zero, 0.0, da * (out / backend.where(zero, 1.0, a)))

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def hypot(input, other):  # noqa: A002
    """sqrt(input^2 + other^2), elementwise (broadcast), without overflow or underflow on the way."""
    tensor_input(input, "hypot")
    return _binary(Hypot, input, other, "hypot", floating=True)


def logaddexp(input, other):  # noqa: A002
    """log(exp(input) + exp(other)), elementwise, without overflow."""
    tensor_input(input, "logaddexp")
    return _binary(LogAddExp, input, other, "logaddexp", floating=True)


def logaddexp2(input, other):  # noqa: A002
    """log2(2^input + 2^other), elementwise, without overflow."""
    tensor_input(input, "logaddexp2")
    return _binary(LogAddExp2, input, other, "logaddexp2", floating=True)


def copysign(input, other):  # noqa: A002
    """|input| with the sign of ``other`` (a tensor or a number), elementwise."""
    tensor_input(input, "copysign")
    return _binary(Copysign, input, other, "copysign", floating=True)


@batching.per_example  # (reads the values: under vmap, once per example)
def heaviside(input, values):  # noqa: A002
    """0 where input < 0, 1 where input > 0, ``values`` where input == 0 (0 where input is NaN, as PyTorch's);
    not differentiable."""
    tensor_input(input, "heaviside")
    tensor_input(values, "heaviside", "values")
    if input.dtype != values.dtype:
        raise TypeError(
            f"heaviside: input and values must have the same dtype, got {dtypes.torch_name(input.dtype)} and "
            f"{dtypes.torch_name(values.dtype)}"
        )
    try:
        out = backend.where(input._data == 0, values._data, input._data > 0)  # (NaN: 0, as PyTorch's)
    except ValueError:
        raise ValueError(f"heaviside: shapes {input.shape} and {values.shape} cannot be broadcast together") from None
    return Tensor._make(np.asarray(out, dtype=input.dtype), False, None)


def float_power(input, exponent):  # noqa: A002
    """``input ** exponent`` computed in float64 (whatever the inputs' dtypes), as PyTorch's."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(f"float_power: input or exponent must be a Tensor, got {type(input).__name__} and "
                        f"{type(exponent).__name__}")  # fmt: skip
    base = input.to(dtypes.float64) if isinstance(input, Tensor) else float(number_arg(input, "float_power", "input"))
    if isinstance(exponent, Tensor):
        exponent = exponent.to(dtypes.float64)
    else:
        exponent = float(number_arg(exponent, "float_power", "exponent"))
    return _pow(base, exponent)


class Lerp(Op):
    """start + w (end - start) as PyTorch computes it: for |w| >= 0.5, end - (end - start)(1 - w), so
    that w = 1 gives ``end`` exactly;  d start = grad (1 - w), d end = grad w, d w = grad (end - start).
    ``w`` a number or an array (all three broadcast)."""

    @staticmethod
    def forward(ctx, start, end, weight):
        need_weight = ctx.needs_input_grad[2]
        ctx.save_for_backward(start if need_weight else None, end if need_weight else None, weight)
        d = np.subtract(end, start)
        if not isinstance(weight, np.ndarray):
            return np.add(start, weight * d) if abs(weight) < 0.5 else np.subtract(end, d * (1 - weight))
        return backend.where(np.abs(weight) < 0.5, start + weight * d, end - d * (1 - weight))

    @staticmethod
    def backward(ctx, grad):
        start, end, weight = ctx.saved_tensors
        need_start, need_end, need_weight = ctx.needs_input_grad
        return (
            grad * (1 - weight) if need_start else None,
            grad * weight if need_end else None,
            grad * (end - start) if need_weight else None,
        )

    @staticmethod
    def jvp(ctx, d_start, d_end, d_weight):
        start, end, weight = ctx.inputs
        return plus(
            plus(None if d_start is None else d_start * (1 - weight), None if d_end is None else d_end * weight),
            None if d_weight is None else d_weight * (end - start),
        )

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def lerp(input, end, weight):  # noqa: A002
    """``input + weight * (end - input)`` (``Lerp``): weight a number or a tensor (all three broadcast)."""
    tensor_input(input, "lerp")
    tensor_input(end, "lerp", "end")
    if input.dtype != end.dtype:
        raise TypeError(f"lerp: expected end of input's dtype {dtypes.torch_name(input.dtype)}, got "
                        f"{dtypes.torch_name(end.dtype)}")  # fmt: skip
    if isinstance(weight, Tensor):
        if weight.dtype != input.dtype:
            raise TypeError(f"lerp: expected weight of input's dtype {dtypes.torch_name(input.dtype)}, got "
                            f"{dtypes.torch_name(weight.dtype)}")  # fmt: skip
    else:
        weight = float(number_arg(weight, "lerp", "weight"))
    if input.dtype.kind not in "fc":
        raise TypeError(f"lerp: input must be a floating point tensor, got {dtypes.torch_name(input.dtype)}")
    return Lerp.apply(input, end, weight)


class AddCMul(Op):
    """input + value * t1 * t2 (all three broadcast);  d input = grad, d t1 = value grad t2, d t2 = value grad t1.
    First order in the new arrays, in place: the product, scaled, plus input (where the product has
    the result's shape); ``grad * t2`` scaled."""

    @staticmethod
    def forward(ctx, input, t1, t2, value=1):  # noqa: A002
        _, need_t1, need_t2 = ctx.needs_input_grad
        ctx.save_for_backward(t1 if need_t2 else None, t2 if need_t1 else None)
        ctx.value = value
        return _plus(input, _scaled(np.multiply(t1, t2), value))

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        need_input, need_t1, need_t2 = ctx.needs_input_grad
        if on_arrays(grad):  # first order: each gradient one product, scaled in place
            return (
                grad if need_input else None,
                _scaled(grad * t2, ctx.value) if need_t1 else None,
                _scaled(grad * t1, ctx.value) if need_t2 else None,
            )
        scaled = grad * ctx.value
        return grad if need_input else None, scaled * t2 if need_t1 else None, scaled * t1 if need_t2 else None

    @staticmethod
    def jvp(ctx, d_input, d_t1, d_t2):
        _, t1, t2 = ctx.inputs
        d_product = plus(None if d_t1 is None else d_t1 * t2, None if d_t2 is None else t1 * d_t2)
        return plus(d_input, None if d_product is None else d_product * ctx.value)

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class AddCDiv(Op):
    """input + value * t1 / t2 (all three broadcast);  d input = grad, d t1 = value grad / t2,
    d t2 = -d t1 * t1 / t2.  The quotient and ``grad / t2`` scaled in place, as ``AddCMul``'s products."""

    @staticmethod
    def forward(ctx, input, t1, t2, value=1):  # noqa: A002
        _, need_t1, need_t2 = ctx.needs_input_grad
        ctx.save_for_backward(t1 if need_t2 else None, t2 if need_t1 or need_t2 else None)
        ctx.value = value
        return _plus(input, _scaled(np.divide(t1, t2), value))

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        need_input, need_t1, need_t2 = ctx.needs_input_grad
        if not (need_t1 or need_t2):
            return grad if need_input else None, None, None
        if on_arrays(grad):  # first order: grad / t2 scaled in place, and from it the t2 gradient
            d_t1 = _scaled(grad / t2, ctx.value)
            d_t2 = -(d_t1 * t1) / t2 if need_t2 else None
            return grad if need_input else None, d_t1 if need_t1 else None, d_t2
        d_t1 = grad * ctx.value / t2
        return grad if need_input else None, d_t1 if need_t1 else None, -d_t1 * t1 / t2 if need_t2 else None

    @staticmethod
    def jvp(ctx, d_input, d_t1, d_t2):
        _, t1, t2 = ctx.inputs
        d_quotient = plus(None if d_t1 is None else d_t1 / t2, None if d_t2 is None else -(t1 * d_t2) / (t2 * t2))
        return plus(d_input, None if d_quotient is None else d_quotient * ctx.value)

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def _scaled(part, value):
    """``part * value``, in place where ``part`` is an array (a new one of the op's own: not a NumPy
    scalar, which a product of 0-d arrays is)."""
    if value == 1:
        return part
    if type(part) is not np.ndarray:
        return part * value
    return np.multiply(part, value, out=part)


def _plus(input, part):  # noqa: A002
    """``input + part``, into ``part`` where it is an array of the result's shape (a new one of the op's own)."""
    if type(part) is np.ndarray and np.broadcast_shapes(np.shape(input), part.shape) == part.shape:
        return np.add(part, input, out=part)
    return np.add(input, part)


def _three_operands(fn: str, input, tensor1, tensor2, value):  # noqa: A002
    """The three tensors in their promoted dtype (as PyTorch), after checking them and their shapes;
    ``value`` as the result's kind takes it (an integer result truncates it, as PyTorch)."""
    for name, t in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        tensor_input(t, fn, name)
    number_arg(value, fn, "value")
    try:
        np.broadcast_shapes(input.shape, tensor1.shape, tensor2.shape)
    except ValueError:
        raise ValueError(
            f"{fn}: shapes {input.shape}, {tensor1.shape} and {tensor2.shape} cannot be broadcast together"
        ) from None
    dtype = dtypes.result_type(input, tensor1, tensor2)
    if fn == "addcdiv" and dtype.kind != "f":
        dtype = dtypes.get_default_dtype()
    tensors = tuple(t if t.dtype == dtype else t.to(dtype) for t in (input, tensor1, tensor2))
    return tensors, (int(value) if dtype.kind in "iu" else value)


def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """``input + value * tensor1 * tensor2`` (``AddCMul``; all three broadcast)."""
    tensors, value = _three_operands("addcmul", input, tensor1, tensor2, value)
    return AddCMul.apply(*tensors, value=value)


def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """``input + value * tensor1 / tensor2`` (``AddCDiv``; all three broadcast; integer tensor1 and
    tensor2 refused, as PyTorch)."""
    if isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor):
        if tensor1.dtype.kind in "biu" and tensor2.dtype.kind in "biu":
            raise TypeError("addcdiv: integer division of tensors is not supported; pass floating tensor1 or tensor2")
    tensors, value = _three_operands("addcdiv", input, tensor1, tensor2, value)
    return AddCDiv.apply(*tensors, value=value)


def true_divide(input, other):  # noqa: A002
    """``input / other`` (PyTorch's alias of ``div`` without rounding)."""
    return div(input, other)
