"""RMS norm: divide each row of the trailing ``n_dims`` dims by its root mean square, then scale.

The definition, in Tensor ops (``rms_norm_definition``), each row of D values (the trailing dims)::

    y = x / sqrt(mean(x^2) + eps) * weight

``RmsNorm`` is the fused op: one pass for the row statistics and one for y, two for the backward
(``kernels/rms_norm.py``), where the definition takes about twelve.  Its backward, with
``g = dy * weight``: ``dx = rstd * (g - x * rstd^2 * mean(g * x))``, ``dweight = sum(dy * x * rstd)``.
With ``create_graph=True`` its gradient is taken through the definition instead, so it is
differentiable again; its forward-mode rule and its vmap rule are the definition's too.

>>> RmsNorm.apply(mt.tensor([[3.0, -3.0], [1.0, 7.0]]), eps=0.0).tolist()  # the RMS: 3, then 5
[[1.0, -1.0], [0.2..., 1.3999...]]
"""

from __future__ import annotations

import math

from .. import backend
from ..autograd.batching import decompose
from ..autograd.composite import composite_jvp
from ..autograd.function import Op
from .nn_ops import composite, on_arrays, save_with_state


def rms_norm_definition(x, weight=None, n_dims: int = 1, eps: float = 1e-6):
    """The definition (Tensor ops) of ``RmsNorm``: x (..., *normalized), weight (normalized) or None."""
    dims = tuple(range(-n_dims, 0))
    y = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
    return y if weight is None else y * weight


class RmsNorm(Op):
    """y = x * rstd * weight over the trailing ``n_dims`` dims of x, rstd = 1 / sqrt(mean(x^2) + eps)
    per row; weight (the trailing dims' shape) or None."""

    @staticmethod
    def forward(ctx, x, weight=None, n_dims=1, eps=1e-6):
        rows = x.reshape(-1, math.prod(x.shape[x.ndim - n_dims :]))
        y, rstd = backend.rms_norm(rows, weight, eps, shape=x.shape)
        save_with_state(ctx, x, weight, state=(rows, rstd))
        ctx.n_dims, ctx.eps = n_dims, eps
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight, (rows, rstd) = ctx.saved_tensors
        if not on_arrays(grad):  # create_graph: through the definition
            return composite(rms_norm_definition, (x, weight), ctx, grad, n_dims=ctx.n_dims, eps=ctx.eps)
        dx, dw = backend.rms_norm_backward(grad, rows, rstd, weight)
        need_x, need_w = ctx.needs_input_grad
        return dx if need_x else None, dw.reshape(weight.shape) if need_w else None

    @staticmethod
    def jvp(ctx, dx, dweight):
        settings = ctx.keywords
        return composite_jvp(
            lambda *xs: rms_norm_definition(*xs, n_dims=settings["n_dims"], eps=settings["eps"]),
            ctx.inputs,
            (dx, dweight),
        )

    batch = decompose(rms_norm_definition)  # vmap: the definition, whose ops have rules
