"""Group norm: normalise each sample's groups of channels of (N, C, *) over their channels and
spatial dims, then scale and shift each channel.

The definition, in Tensor ops (``group_norm_definition``), with the C channels of a sample split
into ``groups`` groups of C / groups::

    rows = x.reshape(N, groups, -1)              each row: one group of one sample
    mean = rows.mean(-1)     var = ((rows - mean)^2).mean(-1)    (biased)
    y = (rows - mean) / sqrt(var + eps) * weight[c] + bias[c]

``GroupNorm`` is the fused op: batch norm's passes with statistics per sample and group instead of
per channel (``kernels/batch_norm.py``: one pass for the statistics, one for y, two for the
backward), where the composite took ten passes (a layer norm, a product and a sum, and their
backward).  The backward is batch norm's training formula over each group
(``dx = invstd * (h - mean(h) - xhat * mean(h * xhat))``, ``h = dy * weight``).  With
``create_graph=True`` its gradient is taken through the definition instead, so it is
differentiable again; its forward-mode rule and its vmap rule are the definition's too.

>>> x = mt.tensor([[[1.0, 3.0], [10.0, 30.0]]])        # N = 1, C = 2, L = 2
>>> GroupNorm.apply(x, groups=2, eps=0.0).tolist()       # each channel a group
[[[-1.0, 1.0], [-1.0, 1.0]]]
"""

from __future__ import annotations

from .. import backend
from ..autograd.batching import decompose
from ..autograd.composite import composite_jvp
from ..autograd.function import Op
from .batch_norm import _channels
from .nn_ops import composite, on_arrays, save_with_state


def group_norm_definition(x, weight=None, bias=None, groups: int = 1, eps: float = 1e-5):
    """The definition (Tensor ops) of ``GroupNorm``: x (N, C, *), weight and bias (C,) or None."""
    rows = x.reshape(x.shape[0], groups, -1)
    centred = rows - rows.mean(dim=-1, keepdim=True)
    y = (centred / ((centred * centred).mean(dim=-1, keepdim=True) + eps).sqrt()).reshape(x.shape)
    per_channel = (1, -1) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(per_channel)
    return y if bias is None else y + bias.reshape(per_channel)


class GroupNorm(Op):
    """y = (x - mean[n, g]) * invstd[n, g] * weight[c] + bias[c] for x (N, C, *), the statistics over
    each sample's group g of C / ``groups`` channels; weight and bias (C,) or None."""

    @staticmethod
    def forward(ctx, x, weight=None, bias=None, groups=1, eps=1e-5):
        y, mean, invstd = backend.group_norm_forward(_channels(x), groups, weight, bias, eps, shape=x.shape)
        save_with_state(ctx, x, weight, bias, state=(mean, invstd))
        ctx.groups, ctx.eps = groups, eps
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias, (mean, invstd) = ctx.saved_tensors
        if not on_arrays(grad):  # create_graph: through the definition
            return composite(group_norm_definition, (x, weight, bias), ctx, grad, groups=ctx.groups, eps=ctx.eps)
        dx, dw, db = backend.group_norm_backward(grad, _channels(x), mean, invstd, weight, shape=x.shape)
        need_x, need_w, need_b = ctx.needs_input_grad
        return dx if need_x else None, dw.astype(x.dtype) if need_w else None, db.astype(x.dtype) if need_b else None

    @staticmethod
    def jvp(ctx, dx, dweight, dbias):
        settings = ctx.keywords
        return composite_jvp(
            lambda *xs: group_norm_definition(*xs, groups=settings["groups"], eps=settings["eps"]),
            ctx.inputs,
            (dx, dweight, dbias),
        )

    batch = decompose(group_norm_definition)  # vmap: the definition, whose ops have rules
