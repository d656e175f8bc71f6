"""Smooth activations: the exponential linear units and the log-sigmoid family.

    op          y                                                 dy/dx
    Elu         scale * x                         where x > 0     scale
                scale * alpha * (exp(s * x) - 1)  elsewhere       scale * alpha * s * exp(s * x)
    Mish        x * tanh(softplus(x))                             t + x * sigmoid(x) * (1 - t^2), t = tanh(softplus(x))
    LogSigmoid  log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))    sigmoid(-x)
    Glu         a * sigmoid(b), (a, b) the halves of x along dim  da: s,  db: a * s * (1 - s),  s = sigmoid(b)
    Softsign    x / (1 + |x|)                                     1 / (1 + |x|)^2
    Tanhshrink  x - tanh(x)                                       tanh(x)^2

``Elu`` is PyTorch's one kernel for three layers: ELU (``scale = s = 1``), SELU (``scale`` = 1.0507...,
``alpha`` = 1.6732..., ``s = 1``) and CELU (``scale = 1``, ``s = 1 / alpha``).  The exponential is taken
of ``min(x, 0)`` only, so no large ``x`` overflows in the branch that is not used (nor, under
``create_graph``, in its zero gradient: ``0 * inf`` would be NaN).  ``Elu`` runs forward and its
first-order backward in one kernel pass each (``backend.elu``, ``kernels/elu.py``); each backward
handed Tensors (``create_graph``) is written with
operators, ``backend.where`` (``np.where``, on Tensors too) and ops that answer arrays and Tensors
alike (``Sigmoid.call``, ``Softplus.call``), so second derivatives come from the same lines, and so
do the JVPs: each op is elementwise (a diagonal Jacobian), so its JVP is its backward applied to the
tangent (``jvp = backward``).

>>> Elu.apply(mt.tensor([-1.0, 2.0]), alpha=1.0).tolist()  # doctest: +ELLIPSIS
[-0.632120..., 2.0]
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import elementwise, shift
from ..autograd.composite import composite_jvp
from ..autograd.function import Op
from .elementwise import Sigmoid
from .nn_ops import composite, on_arrays, save_with_state
from .softplus import Softplus

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _negative_part(x):
    """min(x, 0), NaN kept, for arrays and Tensors (``backend.where`` answers both; ``np.minimum`` only arrays)."""
    return backend.where(x > 0, 0.0, x)


class Elu(Op):
    """scale * alpha * (exp(input_scale * x) - 1) where x <= 0, else scale * x.

    ``of_result=True`` (the in-place ``elu_``, ``selu_``, ``celu_``, with ``scale * alpha >= 0``): the
    node keeps y, not x, as PyTorch's in-place forms do; y > 0 exactly where x > 0, and the slope
    elsewhere is ``s * (y + scale * alpha)`` (no exponential)."""

    @staticmethod
    def forward(ctx, x, alpha=1.0, scale=1.0, input_scale=1.0, of_result=False):
        y = backend.elu(x, alpha, scale, input_scale)
        ctx.save_for_backward(y if of_result else x)
        ctx.alpha, ctx.scale, ctx.input_scale, ctx.of_result = alpha, scale, input_scale, of_result
        return y

    @staticmethod
    def backward(ctx, grad):
        (v,) = ctx.saved_tensors  # x, or y with of_result
        settings = ctx.alpha, ctx.scale, ctx.input_scale
        if on_arrays(grad) and on_arrays(v):  # first order: one kernel pass (else the formula, for create_graph)
            return (backend.elu_backward_of_result if ctx.of_result else backend.elu_backward)(grad, v, *settings)
        if ctx.of_result:
            slope = ctx.input_scale * (v + ctx.scale * ctx.alpha)
        else:
            slope = (ctx.scale * ctx.alpha * ctx.input_scale) * backend.exp(_negative_part(v) * ctx.input_scale)
        return backend.where(v > 0, grad * ctx.scale, grad * slope)  # (NaN: NaN, as PyTorch's vectorised loop)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Mish(Op):
    """x * tanh(softplus(x));  dx = grad * (t + x * sigmoid(x) * (1 - t^2)), t = tanh(softplus(x))."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * backend.tanh(Softplus.run(x, beta=1.0, threshold=20.0))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        t = backend.tanh(Softplus.call(x, beta=1.0, threshold=20.0))
        return grad * (t + x * Sigmoid.call(x) * (1 - t * t))

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class LogSigmoid(Op):
    """log(sigmoid(x)), computed as min(x, 0) - log1p(exp(-|x|)) (no overflow);  dx = grad * sigmoid(-x).

    That is ``softplus(beta x) / beta`` with ``beta = -1`` and no threshold, whose slope is sigmoid(-x):
    the softplus kernel (``backend.softplus``) computes both in one pass, and the first-order backward
    is one product."""

    @staticmethod
    def forward(ctx, x):
        y, slope = backend.softplus(x, -1.0, np.inf, keep_slope=ctx.needs_input_grad[0])
        y += 0.0  # (+0 for large x, as PyTorch, where dividing the kernel's +0 by beta = -1 gave -0)
        save_with_state(ctx, x, state=(slope,))
        return y

    @staticmethod
    def backward(ctx, grad):
        x, (slope,) = ctx.saved_tensors
        if on_arrays(grad) and slope is not None:
            return grad * slope
        return grad * Sigmoid.call(-x)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Softsign(Op):
    """x / (1 + |x|);  dx = grad / (1 + |x|)^2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x / (1 + np.abs(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        d = 1 + np.abs(x)
        return grad / (d * d)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Tanhshrink(Op):
    """x - tanh(x);  dx = grad * tanh(x)^2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x - backend.tanh(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        t = backend.tanh(x)
        return grad * (t * t)

    jvp = backward  # elementwise: the Jacobian is diagonal, so J·v is the backward formula applied to v

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def glu(x, dim: int):
    """The gated linear unit's definition in Tensor ops: ``a * sigmoid(b)``, ``a`` and ``b`` the two
    halves of ``x`` along ``dim`` (what ``Glu`` computes; its create_graph and forward-mode paths)."""
    a, b = x.chunk(2, dim)
    return a * b.sigmoid()


class Glu(Op):
    """a * s with s = sigmoid(b), (a, b) the halves of x along ``dim`` (non-negative);
    dx = (grad * s, grad * a * s * (1 - s)), the two halves of one array.

    One node where ``glu``'s definition makes four (two chunks, a sigmoid, a product), one kernel pass
    each way (``backend.glu``, ``kernels/glu.py``; the forward keeps s), where the chunks' backward
    passes filled two arrays of x's size with zeros and added them."""

    @staticmethod
    def forward(ctx, x, dim=0):
        out, s = backend.glu(x, dim, keep=ctx.needs_input_grad[0])
        save_with_state(ctx, x, state=(s,))
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, (s,) = ctx.saved_tensors
        if not (on_arrays(grad) and on_arrays(x)):
            return composite(glu, (x,), ctx, grad, dim=ctx.dim)[0]
        return backend.glu_backward(grad, x, s, ctx.dim)

    @staticmethod
    def jvp(ctx, dx):
        (x,) = ctx.inputs
        if not (on_arrays(dx) and on_arrays(x)):
            return composite_jvp(lambda t: glu(t, ctx.dim), (x,), (dx,))
        _, (s,) = ctx.saved_tensors
        a = np.split(x, 2, axis=ctx.dim)[0]
        da, db = np.split(dx, 2, axis=ctx.dim)
        return da * s + a * (db * (s * (1 - s)))

    batch = shift("dim")  # vmap: the dim moves one up
