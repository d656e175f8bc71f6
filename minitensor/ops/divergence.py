"""``KLDiv``: the Kullback-Leibler divergence loss as one graph node (``F.kl_div``).

Pointwise, for log-probabilities ``x`` and a target ``t`` of the same shape (PyTorch's formulas)::

    loss = xlogy(t, t) - t * x        (t probabilities; xlogy(t, t) = t log t, and 0 at t = 0)
    loss = exp(t) * (t - x)           (log_target: t log-probabilities)

then summed and divided per the reduction ('sum': 1, 'mean': the element count,
'batchmean': the batch size).  Gradients, times the reduction's scale::

    dx = -t                            dt = log(t) + 1 - x   (-x at t = 0, where PyTorch's is NaN)
    dx = -exp(t)                       dt = exp(t) * (t - x + 1)

The forward pass is one kernel pass after NumPy's log (``kernels/divergence.py``); the
backward pass is NumPy.  With ``create_graph`` the gradients come from ``kl_div_plain``, the same
loss in Tensor ops.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.function import Op
from .binary_loss import reduced
from .loss_rules import batched_loss, jvp_by_backward
from .nn_ops import composite, on_arrays, save_with_state
from .shape import where


class KLDiv(Op):
    """KL divergence of ``t`` from exp(``x``), reduced; x and t of one shape and float dtype."""

    @staticmethod
    def forward(ctx, x, t, reduction="mean", log_target=False):
        loss, lt = backend.kl_div(x, t, log_target, per_element=reduction == "none")
        need_x, need_t = ctx.needs_input_grad
        save_with_state(ctx, x, t, state=(lt if need_t or (need_x and log_target) else None,))
        ctx.reduction, ctx.log_target = reduction, log_target
        ctx.denominator = {"sum": 1, "mean": x.size, "batchmean": x.shape[0] if x.ndim else 1}.get(reduction)
        if reduction == "none":
            return loss
        return reduced(loss, ctx.denominator, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, t, (lt,) = ctx.saved_tensors
        if not on_arrays(grad):
            return composite(kl_div_plain, (x, t), ctx, grad, reduction=ctx.reduction, log_target=ctx.log_target)
        scale = grad if ctx.reduction == "none" else np.asarray(grad / max(ctx.denominator, 1), dtype=x.dtype)
        weight = lt if ctx.log_target else t  # d(loss)/d(-x)
        need_x, need_t = ctx.needs_input_grad
        dx = weight * -scale if need_x else None
        dt = None
        with np.errstate(invalid="ignore"):  # (NaN from 0 * inf where PyTorch's formula gives NaN too)
            if need_t and ctx.log_target:
                dt = lt * (t - x + 1) * scale
            elif need_t:
                dt = backend.where(t == 0, -x, lt + 1 - x) * scale
        return dx, dt

    jvp = jvp_by_backward

    batch = batched_loss  # vmap: every example's losses at once, then each example's reduction


def kl_div_plain(x, t, reduction: str = "mean", log_target: bool = False):
    """The same loss in differentiable Tensor ops (the reference, and the create_graph path)."""
    if log_target:
        loss = t.exp() * (t - x)
    else:
        zero = t == 0
        loss = where(zero, 0.0, t * where(zero, 1.0, t).log()) - t * x
    if reduction == "none":
        return loss
    if reduction == "batchmean":
        return loss.sum() / (x.shape[0] if x.ndim else 1)
    return loss.sum() if reduction == "sum" else loss.mean()
