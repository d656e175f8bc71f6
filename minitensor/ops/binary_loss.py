"""Binary cross-entropy as one graph node: of probabilities (``F.binary_cross_entropy``), and of
logits (``F.binary_cross_entropy_with_logits``, ``BinaryCrossEntropyWithLogits`` below).

Of probabilities:

    loss = -w * (t * lp + (1 - t) * lq),  lp = max(log p, -100),  lq = max(log(1 - p), -100)

then the reduction.  Written in Tensor ops it is fifteen graph nodes (the clamped
logs guard p = 0 and p = 1), which at small sizes costs several times the
arithmetic; here forward and first-order backward are one kernel pass each (``kernels/bce.py``)::

    dp = -w * (t * [p > 0, lp > -100] / p  -  (1 - t) * [q > 0, lq > -100] / q)   (q = 1 - p)
    dt = -w * (lp - lq)
    dw = -(t * lp + (1 - t) * lq)

each times the reduction's scale (1, or 1/n for 'mean').  With ``create_graph``
the gradients come from the plain Tensor form (``bce_plain``, the reference),
so every order of derivative is the composite's.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.function import Op
from .loss_rules import batched_loss, jvp_by_backward
from .nn_ops import composite, on_arrays, save_with_state
from .shape import where
from .softplus import softplus


class BinaryCrossEntropy(Op):
    """BCE of probabilities ``p`` and targets ``t`` (same shape), optional ``w`` (broadcast to p).

    Forward and first-order backward are one kernel pass each (``kernels/bce.py``), after NumPy's
    log p and log(1 - p), which the forward keeps for the backward."""

    @staticmethod
    def forward(ctx, p, t, w=None, reduction="mean"):
        p_, t_, w_ = _broadcast(p, t, w)
        lp, lq = backend.bce_logs(p_)
        loss = backend.bce(lp, lq, t_, w_, per_element=reduction == "none")
        save_with_state(ctx, p, t, w, state=(lp, lq) if any(ctx.needs_input_grad) else (None, None))
        ctx.reduction, ctx.count = reduction, t_.size
        if reduction == "none":
            return loss
        return reduced(loss, t_.size if reduction == "mean" else 1, p.dtype)

    @staticmethod
    def backward(ctx, grad):
        p, t, w, (lp, lq) = ctx.saved_tensors
        if not on_arrays(grad):
            return composite(bce_plain, (p, t, w), ctx, grad, reduction=ctx.reduction)
        if ctx.reduction == "mean":
            grad = grad / max(ctx.count, 1)  # (no division by 0 for an empty input)
        return backend.bce_backward(*_broadcast(p, t, w), lp, lq, grad, ctx.needs_input_grad)

    jvp = jvp_by_backward

    batch = batched_loss  # vmap: every example's losses at once, then each example's reduction


def reduced(total: float, count: int, dtype) -> np.ndarray:
    """The 0-d result ``total / count`` in ``dtype``; NaN for the mean of nothing, as in PyTorch."""
    return np.asarray(total / count if count else np.nan, dtype=dtype)


def _broadcast(p: np.ndarray, t: np.ndarray, w) -> tuple:
    """p, t and w (None, or cast to p's dtype) broadcast to the loss's shape (views)."""
    if w is None:
        return p, t, None
    shape = np.broadcast_shapes(p.shape, np.shape(w))
    return np.broadcast_to(p, shape), np.broadcast_to(t, shape), np.broadcast_to(w, shape).astype(p.dtype, copy=False)


class BinaryCrossEntropyWithLogits(Op):
    """BCE of ``sigmoid(x)`` from logits ``x`` and targets ``t`` (same shape), computed stably::

        loss = w * ((1 - t) * x + (1 + (pw - 1) * t) * softplus(-x))

    ``w`` (weight) and ``pw`` (pos_weight): None or constant arrays of x's dtype that broadcast to
    x's shape (they get no gradient).  One kernel pass forward (it also keeps ``sigmoid(x)`` for the
    backward pass, and ``softplus(-x)`` when t's gradient has a pos_weight), one backward::

        dx = w * ((1 + (pw - 1) * t) * sigmoid(x) - pw * t)    (w * (sigmoid(x) - t) without pw)
        dt = w * ((pw - 1) * softplus(-x) - x)                  (-w * x without pw)

    times the reduction's scale.  With ``create_graph`` the gradients come from ``bce_logits_plain``.
    """

    @staticmethod
    def forward(ctx, x, t, w=None, pw=None, reduction="mean"):
        need_x, need_t = ctx.needs_input_grad[:2]
        full = [None if a is None else np.broadcast_to(a, x.shape) for a in (w, pw)]
        loss, s, sp = backend.bce_logits(x, t, *full, reduction == "none", keep=(need_x, need_t and pw is not None))
        save_with_state(ctx, x, t, w, pw, state=(s, sp))
        ctx.reduction, ctx.count = reduction, x.size
        if reduction == "none":
            return loss
        return reduced(loss, x.size if reduction == "mean" else 1, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, t, w, pw, (s, sp) = ctx.saved_tensors
        if not on_arrays(grad):
            return composite(bce_logits_plain, (x, t, w, pw), ctx, grad, reduction=ctx.reduction)
        if ctx.reduction == "mean":
            grad = grad / max(ctx.count, 1)  # (no division by 0 for an empty input)
        full = [None if a is None else np.broadcast_to(a, x.shape) for a in (w, pw)]
        dx, dt = backend.bce_logits_backward(x, t, *full, s, sp, grad, ctx.needs_input_grad[:2])
        return dx, dt, None, None

    jvp = jvp_by_backward

    batch = batched_loss  # vmap: every example's losses at once, then each example's reduction


def bce_logits_plain(x, t, w=None, pw=None, reduction: str = "mean"):
    """BCE with logits in differentiable Tensor ops (the reference, and the create_graph path)."""
    soft = softplus(-x)  # log(1 + exp(-x)) = -log(sigmoid(x))
    loss = (1 - t) * x + (soft if pw is None else (1 + (pw - 1) * t) * soft)
    if w is not None:
        loss = loss * w
    return _reduce(loss, reduction)


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def bce_plain(p, t, w=None, reduction: str = "mean"):
    """The same loss in differentiable Tensor ops (the reference, and the create_graph path)."""
    loss = -(t * _log(p) + (1 - t) * _log(1 - p))
    if w is not None:
        loss = loss * w
    return _reduce(loss, reduction)


def _log(p):
    """log(p) clamped at -100 (as PyTorch); at p = 0 the value is -100 and the gradient 0 (not NaN)."""
    positive = p > 0
    return where(positive, where(positive, p, 1.0).log().clamp(min=-100), -100.0)
