"""``l1_loss``, ``smooth_l1_loss`` and ``huber_loss`` as one fused op.

With ``d = x - y``, ``a = |d|`` and ``limit`` (smooth L1's ``beta``, Huber's ``delta``),
elementwise, as PyTorch::

    kind        loss                                                   d loss / d d
    l1          a                                                      sign(d)   (0 at d = 0)
    smooth_l1   0.5 d^2 / limit where a < limit, else a - 0.5 limit    clip(d / limit, -1, 1)
    huber       0.5 d^2 where a < limit, else limit (a - 0.5 limit)    clip(d, -limit, limit)

then reduced (``'mean'``, ``'sum'`` or ``'none'``).  Backward: ``dx = slope * grad``
(divided by the element count for ``'mean'``), ``dy = -dx``, in one pass
(``kernels/robust_loss.py``, beside its NumPy reference), not the backward of each Tensor op
of the formula.  With ``create_graph=True`` the backward is ``composite`` of ``_plain``, the
same formula in Tensor ops, so second derivatives are right (``1 / limit`` inside the
quadratic piece, 0 elsewhere).
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.function import Op
from .loss import _reduce, _reduce_tensor
from .loss_rules import batched_loss, jvp_by_backward
from .nn_ops import composite, on_arrays, save_with_state


class RobustLoss(Op):
    """Call as ``RobustLoss.apply(x, y, kind=k, limit=m, reduction=r)`` with ``k`` one of
    ``"l1"``, ``"smooth_l1"`` (``m`` > 0: beta), ``"huber"`` (``m`` > 0: delta)."""

    @staticmethod
    def forward(ctx, x, y, kind="l1", limit=1.0, reduction="mean"):
        d = x - y
        save_with_state(ctx, x, y, state=(d,))
        ctx.kind, ctx.limit, ctx.reduction, ctx.count = kind, limit, reduction, d.size
        return _reduce(backend.robust_loss(d, kind, limit), reduction, d.size)

    @staticmethod
    def backward(ctx, grad):
        x, y, (d,) = ctx.saved_tensors
        if not on_arrays(grad):
            settings = {"kind": ctx.kind, "limit": ctx.limit, "reduction": ctx.reduction}
            return composite(_plain, (x, y), ctx, grad, **settings)
        if ctx.reduction == "mean":
            grad = grad / ctx.count if ctx.count else grad * 0
        dx = backend.robust_slope(d, ctx.kind, ctx.limit, np.asarray(grad, d.dtype))
        need_x, need_y = ctx.needs_input_grad
        return (dx if need_x else None), (-dx if need_y else None)

    jvp = jvp_by_backward

    batch = batched_loss  # vmap: every example's losses at once, then each example's reduction


def _plain(x, y, kind="l1", limit=1.0, reduction="mean"):
    """The loss in Tensor ops (the create_graph backward differentiates it)."""
    d = x - y
    a = d.abs()
    if kind == "l1":
        loss = a
    else:
        loss = backend.where(a < limit, 0.5 * d * d, limit * (a - 0.5 * limit))
        loss = loss / limit if kind == "smooth_l1" else loss
    return _reduce_tensor(loss, reduction, d.numel())
