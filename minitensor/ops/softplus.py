"""``softplus`` (a smooth relu, ``log(1 + exp(beta * x)) / beta``) and ``silu`` (``x * sigmoid(x)``).

Where ``beta * x > threshold`` softplus is ``x`` itself (as PyTorch).  Below, it is
computed as ``(max(z, 0) + log1p(exp(-|z|))) / beta`` with ``z = beta * x``: the same
function, without the overflow of ``exp(z)``.  Its derivative is ``sigmoid(beta * x)``
(1 above the threshold).  SiLU's derivative is ``s * (1 + x * (1 - s))``, ``s = sigmoid(x)``.

Both run fused kernels (``kernels/softplus.py``, ``kernels/pointwise.py``): the forward pass
also keeps the slope (softplus) or the sigmoid (SiLU) when a gradient will be needed, so the
first-order backward is one pass with no exp.  With ``create_graph`` the backward is the
formula in Tensor ops, differentiable again.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import elementwise
from ..autograd.function import Op
from ..tensor import Tensor
from .elementwise import Sigmoid
from .nn_ops import on_arrays, save_with_state


class Softplus(Op):
    """log1p(exp(beta * x)) / beta, linear above ``threshold``;  dx = grad * sigmoid(beta * x)."""

    @staticmethod
    def forward(ctx, x, beta=1.0, threshold=20.0):
        ctx.beta, ctx.threshold = beta, threshold
        y, slope = backend.softplus(x, beta, threshold, keep_slope=ctx.needs_input_grad[0])
        save_with_state(ctx, x, state=(slope,))
        return y

    @staticmethod
    def backward(ctx, grad):
        x, (slope,) = ctx.saved_tensors
        if on_arrays(grad):
            return grad * slope
        z = x * ctx.beta
        return backend.where(z > ctx.threshold, grad, grad * Sigmoid.call(z))

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Silu(Op):
    """x * sigmoid(x);  dx = grad * s * (1 + x * (1 - s)), s = sigmoid(x) (kept by the forward pass)."""

    @staticmethod
    def forward(ctx, x):
        y, s = backend.silu(x, keep_sigmoid=ctx.needs_input_grad[0])
        save_with_state(ctx, x, state=(s,))
        return y

    @staticmethod
    def backward(ctx, grad):
        x, (s,) = ctx.saved_tensors
        if on_arrays(grad):
            return backend.silu_backward(np.asarray(grad), x, s)
        s = Sigmoid.call(x)  # (a Tensor in the graph under create_graph)
        return grad * (s * (1 + x * (1 - s)))

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def softplus(input, beta: float = 1.0, threshold: float = 20.0):  # noqa: A002
    """``log(1 + exp(beta * x)) / beta`` elementwise, ``x`` where ``beta * x > threshold``."""
    for name, value in (("beta", beta), ("threshold", threshold)):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TypeError(f"softplus: {name} must be a number, got {type(value).__name__}")
    if input.dtype.kind != "f":
        raise TypeError(f"softplus: expected a floating point input, got dtype {input.dtype}")
    return Softplus.apply(input, beta=float(beta), threshold=float(threshold))


def silu(input):  # noqa: A002
    """``x * sigmoid(x)`` (also called swish), elementwise."""
    if not isinstance(input, Tensor):
        raise TypeError(f"silu: input must be a Tensor, got {type(input).__name__}")
    if input.dtype.kind != "f":
        raise TypeError(f"silu: expected a floating point input, got dtype {input.dtype}")
    return Silu.apply(input)
