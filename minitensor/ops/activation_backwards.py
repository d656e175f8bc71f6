"""The backwards of tanh and the sigmoid as ops of their own, as PyTorch's ``tanh_backward`` and
``sigmoid_backward``: what ``Tanh`` and ``Sigmoid`` (ops/elementwise.py) return beyond first order
(``create_graph=True``, forward mode), so that the backward, its tangent and its own backward are one
kernel pass each.  Written as Tensor ops, ``grad * (1 - y * y)`` was three passes and its tangent
seven: a Hessian-vector product through a 512 x 2048 tanh layer ran ten of them for the layer's
backward, now six.  Each op's derivatives are PyTorch's (derivatives.yaml).
"""

from __future__ import annotations

from .. import backend
from ..autograd.batching import elementwise
from ..autograd.dual import plus
from ..autograd.function import Op


class TanhBackward(Op):
    """grad * (1 - y^2), tanh's backward from its output y (grad and y of one shape, or broadcasting).

    d grad = g (1 - y^2) (this op again);  d y = -2 g grad y;  tangent: the same two with the tangents."""

    @staticmethod
    def forward(ctx, grad, y):
        ctx.save_for_backward(grad if ctx.needs_input_grad[1] else None, y)  # (grad: for y's gradient)
        return backend.tanh_backward(grad, y)

    @staticmethod
    def backward(ctx, g):
        grad, y = ctx.saved_tensors
        need_grad, need_y = ctx.needs_input_grad
        return TanhBackward.call(g, y) if need_grad else None, g * grad * y * -2 if need_y else None

    @staticmethod
    def jvp(ctx, d_grad, d_y):
        grad, y = ctx.inputs
        return plus(
            None if d_grad is None else TanhBackward.call(d_grad, y), None if d_y is None else grad * y * d_y * -2
        )

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class SigmoidBackward(Op):
    """grad * y (1 - y), the sigmoid's backward from its output y (grad and y of one shape, or broadcasting).

    d grad = g y (1 - y) (this op again);  d y = g grad (1 - 2y);  tangent: the same two with the tangents."""

    @staticmethod
    def forward(ctx, grad, y):
        ctx.save_for_backward(grad if ctx.needs_input_grad[1] else None, y)  # (grad: for y's gradient)
        return backend.sigmoid_backward(grad, y)

    @staticmethod
    def backward(ctx, g):
        grad, y = ctx.saved_tensors
        need_grad, need_y = ctx.needs_input_grad
        return SigmoidBackward.call(g, y) if need_grad else None, g * grad * (1 - 2 * y) if need_y else None

    @staticmethod
    def jvp(ctx, d_grad, d_y):
        grad, y = ctx.inputs
        return plus(
            None if d_grad is None else SigmoidBackward.call(d_grad, y),
            None if d_y is None else grad * (1 - 2 * y) * d_y,
        )

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once
