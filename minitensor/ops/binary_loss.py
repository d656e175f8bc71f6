"""Binary cross-entropy of probabilities as one graph node (``F.binary_cross_entropy``).

    loss = -w * (t * lp + (1 - t) * lq),  lp = max(log p, -100),  lq = max(log(1 - p), -100)

then the reduction.  Written in Tensor ops it is fifteen graph nodes (the clamped
logs guard p = 0 and p = 1), which at small sizes costs several times the
arithmetic; here forward and first-order backward are NumPy on arrays::

    dp = -w * (t * [p > 0, lp > -100] / p  -  (1 - t) * [q > 0, lq > -100] / q)   (q = 1 - p)
    dt = -w * (lp - lq)
    dw = -(t * lp + (1 - t) * lq)

each times the reduction's scale (1, or 1/n for 'mean').  With ``create_graph``
the gradients come from the plain Tensor form (``bce_plain``, the reference),
so every order of derivative is the composite's.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from .nn_ops import composite, on_arrays


def _clamped_logs(p: np.ndarray) -> tuple:
    """(lp, lq, where lp's slope is 1/p, where lq's slope is 1/(1 - p))."""
    q = 1 - p
    with np.errstate(divide="ignore"):
        lp, lq = np.log(p), np.log(q)
    return np.maximum(lp, -100), np.maximum(lq, -100), (p > 0) & (lp >= -100), (q > 0) & (lq >= -100)


class BinaryCrossEntropy(Op):
    """BCE of probabilities ``p`` and targets ``t`` (same shape), optional ``w`` (broadcast to p)."""

    @staticmethod
    def forward(ctx, p, t, w=None, reduction="mean"):
        lp, lq, _, _ = _clamped_logs(p)
        loss = -(t * lp + (1 - t) * lq)
        if w is not None:
            loss = loss * w
        ctx.save_for_backward(p, t, w)
        ctx.reduction, ctx.count = reduction, loss.size
        if reduction == "none":
            return loss.astype(p.dtype, copy=False)
        total = np.sum(loss, dtype=p.dtype)
        return np.asarray(total / loss.size if reduction == "mean" else total, dtype=p.dtype)

    @staticmethod
    def backward(ctx, grad):
        p, t, w = ctx.saved_tensors
        if not on_arrays(grad):
            return composite(bce_plain, (p, t, w), ctx, grad, reduction=ctx.reduction)
        scale = grad / ctx.count if ctx.reduction == "mean" else grad
        lp, lq, slope_p, slope_q = _clamped_logs(p)
        if w is not None:
            scale = scale * w
        need_p, need_t, need_w = ctx.needs_input_grad
        with np.errstate(divide="ignore", invalid="ignore"):
            dp = -scale * (np.where(slope_p, t / p, 0) - np.where(slope_q, (1 - t) / (1 - p), 0)) if need_p else None
        dt = -scale * (lp - lq) if need_t else None
        dw = -(grad / ctx.count if ctx.reduction == "mean" else grad) * (t * lp + (1 - t) * lq) if need_w else None
        return dp, dt, dw


def bce_plain(p, t, w=None, reduction: str = "mean"):
    """The same loss in differentiable Tensor ops (the reference, and the create_graph path)."""
    loss = -(t * _log(p) + (1 - t) * _log(1 - p))
    if w is not None:
        loss = loss * w
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _log(p):
    """log(p) clamped at -100 (as PyTorch); at p = 0 the value is -100 and the gradient 0 (not NaN)."""
    positive = p > 0
    return where(positive, where(positive, p, 1.0).log().clamp(min=-100), -100.0)


from ..functions import where  # noqa: E402  (functions imports the ops)
