"""Piecewise activations: each is a choice between a few linear pieces, and its gradient the slope of
the piece, with PyTorch's choice at the kinks.

    op            y                                              dy/dx
    LeakyRelu     x if x > 0 else slope * x                      1 if x > 0 else slope (slope at 0)
    Hardtanh      clip(x, low, high)                             1 if low < x < high else 0 (0 at both ends)
    Hardsigmoid   clip(x + 3, 0, 6) / 6                          1/6 if -3 < x < 3 else 0
    Hardswish     x * clip(x + 3, 0, 6) / 6                      0 up to -3, x/3 + 1/2 on (-3, 3), 1 from 3
    Threshold     x if x > threshold else value                  1 if x > threshold else 0
    Softshrink    x - lambd above lambd, x + lambd below -lambd, else 0     1 outside [-lambd, lambd], else 0
    Hardshrink    x outside [-lambd, lambd], else 0                          1 outside [-lambd, lambd], else 0
    Prelu         x if x > 0 else w * x  (w: one slope per channel)         dx: 1 or w;  dw: 0 or x
    RreluWithNoise  x * noise  (RReLU in training: noise ~ U(lower, upper) where x <= 0, else 1)   noise

``ReLU6`` is ``Hardtanh(0, 6)``.  Forward and first-order backward run in one pass each
(``backend.leaky_relu`` ..., ``kernels/piecewise.py``); a backward handed Tensors (``create_graph=True``)
takes the formula written here with ``backend.where`` (``np.where`` itself on Tensors), so the
gradient can be differentiated again; the second derivative of a
piecewise-linear function is 0 except through ``Prelu``'s product ``w * x`` and Hardswish's ``x/3``.
NaN passes as in PyTorch: a comparison with NaN is False, so NaN takes the branch PyTorch's kernel
takes.  Forward mode: each is elementwise (a diagonal Jacobian), so its JVP is its backward applied to
the tangent (``jvp = backward``); ``Prelu`` adds its slopes' tangent by the product rule.

>>> LeakyRelu.apply(mt.tensor([-2.0, 3.0]), slope=0.25).tolist()
[-0.5, 3.0]
"""

from __future__ import annotations

import numpy as np

from .. import backend, random
from ..autograd import batching
from ..autograd.batching import elementwise
from ..autograd.dual import plus
from ..autograd.function import Op
from ..tensor import Tensor
from .nn_ops import on_arrays, save_with_state


def _first_order(grad, x) -> bool:
    """A first-order backward (arrays): the kernel's pass; else (Tensors) the formula."""
    return on_arrays(grad) and on_arrays(x)


class LeakyRelu(Op):
    """x where x > 0, else slope * x;  dx = grad where x > 0, else slope * grad.

    ``of_result=True`` (the in-place ``leaky_relu_``, slope >= 0): the node keeps y, not x, as
    PyTorch's in-place form does; y > 0 exactly where x > 0, so the same formula reads y."""

    @staticmethod
    def forward(ctx, x, slope=0.01, of_result=False):
        y = backend.leaky_relu(x, slope)
        ctx.save_for_backward(y if of_result else x)
        ctx.slope = slope
        return y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors  # (or y: the same signs)
        if _first_order(grad, x):
            return backend.leaky_relu_backward(grad, x, ctx.slope)
        return backend.where(x > 0, grad, grad * ctx.slope)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Hardtanh(Op):
    """clip(x, low, high);  dx = grad strictly inside (low, high), else 0 (NaN passes it, as PyTorch).

    ``of_result=True`` (the in-place ``hardtanh_``): the node keeps y, not x, as PyTorch's in-place
    form does; y is strictly inside exactly where x is, so the same formula reads y."""

    @staticmethod
    def forward(ctx, x, low=-1.0, high=1.0, of_result=False):
        y = backend.hardtanh(x, low, high)
        ctx.save_for_backward(y if of_result else x)
        ctx.low, ctx.high = low, high
        return y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors  # (or y: inside the bounds at the same places)
        if _first_order(grad, x):
            return backend.hardtanh_backward(grad, x, ctx.low, ctx.high)
        return backend.where(np.logical_or(x <= ctx.low, x >= ctx.high), 0.0, grad)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Hardsigmoid(Op):
    """clip(x + 3, 0, 6) / 6, a piecewise-linear sigmoid;  dx = grad / 6 on (-3, 3), else 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.hardsigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if _first_order(grad, x):
            return backend.hardsigmoid_backward(grad, x)
        return backend.where(np.logical_and(x > -3.0, x < 3.0), grad / 6.0, 0.0)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Hardswish(Op):
    """x * clip(x + 3, 0, 6) / 6;  dx = 0 up to -3, grad * (x/3 + 1/2) on (-3, 3), grad from 3 on."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.hardswish(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if _first_order(grad, x):
            return backend.hardswish_backward(grad, x)
        return backend.where(x <= -3.0, 0.0, backend.where(x < 3.0, grad * (x / 3.0 + 0.5), grad))

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Threshold(Op):
    """x where x > threshold, else value;  dx = grad where x > threshold, else 0.

    ``of_result=True`` (the in-place ``threshold_``, value <= threshold): the node keeps y, not x;
    y > threshold exactly where x > threshold then, so the same formula reads y."""

    @staticmethod
    def forward(ctx, x, threshold=0.0, value=0.0, of_result=False):
        y = backend.threshold(x, threshold, value)
        ctx.save_for_backward(y if of_result else x)
        ctx.threshold = threshold
        return y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors  # (or y: above the threshold at the same places)
        if _first_order(grad, x):
            return backend.threshold_backward(grad, x, ctx.threshold)
        return backend.where(x <= ctx.threshold, 0.0, grad)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Softshrink(Op):
    """x - lambd above lambd, x + lambd below -lambd, 0 between;  dx = grad outside [-lambd, lambd], else 0."""

    @staticmethod
    def forward(ctx, x, lambd=0.5):
        ctx.save_for_backward(x)
        ctx.lambd = lambd
        return backend.softshrink(x, lambd)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _outside(x, ctx.lambd, grad)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Hardshrink(Op):
    """x outside [-lambd, lambd], 0 inside;  dx = grad outside, else 0."""

    @staticmethod
    def forward(ctx, x, lambd=0.5):
        ctx.save_for_backward(x)
        ctx.lambd = lambd
        return backend.hardshrink(x, lambd)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _outside(x, ctx.lambd, grad)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def _outside(x, lambd: float, grad):
    """grad outside [-lambd, lambd] (NaN is outside), 0 inside: both shrinkages' gradient, as PyTorch's."""
    if _first_order(grad, x):
        return backend.shrink_backward(grad, x, lambd)
    return backend.where(np.logical_and(x >= -lambd, x <= lambd), 0.0, grad)


class Prelu(Op):
    """x where x > 0, else w * x, with ``w`` shaped to broadcast against x (one slope per channel);
    dx = grad where x > 0, else w * grad;  dw = 0 where x > 0, else x * grad (the engine sums it to w's shape)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return backend.where(x > 0, x, w * x)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need_x, need_w = ctx.needs_input_grad
        positive = x > 0
        gx = backend.where(positive, grad, grad * w) if need_x else None
        gw = backend.where(positive, 0.0, grad * x) if need_w else None
        return gx, gw

    @staticmethod
    def jvp(ctx, dx, dw):
        # the product rule of where(x > 0, x, w * x): dx through either piece, dw through w * x
        x, w = ctx.saved_tensors
        positive = x > 0
        return plus(
            None if dx is None else backend.where(positive, dx, w * dx),
            None if dw is None else backend.where(positive, 0.0, x * dw),
        )

    batch = elementwise  # vmap: x and the slopes broadcast as in any elementwise op


class RreluWithNoise(Op):
    """RReLU in training: y = x * noise, ``noise`` drawn from minitensor's generator: U(lower, upper) where
    x <= 0, 1 elsewhere (PyTorch's rule);  dx = grad * noise (a constant, as dropout's mask)."""

    @staticmethod
    def forward(ctx, x, lower=0.125, upper=1.0 / 3.0):
        noise = random.generator().uniform(lower, upper, x.shape).astype(x.dtype, copy=False)
        noise = backend.where(x <= 0, noise, x.dtype.type(1))
        save_with_state(ctx, state=(noise,))
        return x * noise

    @staticmethod
    def backward(ctx, grad):
        ((noise,),) = ctx.saved_tensors
        return grad * noise

    jvp = backward  # dy = dx * noise (a constant)

    @staticmethod
    def batch(b):
        x = b.values[0]  # (batch dim 0)
        mode = batching.randomness[0] if batching.randomness else "different"
        if mode != "same":
            return b.run(x)  # (each example its own noise; "error" mode raised at the draw)
        lower, upper = b.settings.get("lower", 0.125), b.settings.get("upper", 1.0 / 3.0)
        dtype = x._data.dtype
        draw = random.generator().uniform(lower, upper, x.shape[1:]).astype(dtype, copy=False)  # (one, for all)
        return x * Tensor._make(backend.where(x._data <= 0, draw, dtype.type(1)), False, None)
