"""Scaled dot-product attention as one fused op, on NumPy arrays.

For queries ``q`` (..., L, D), keys ``k`` (..., S, D) and values ``v`` (..., S, Dv)
(the leading dims are usually batch and heads, or batch*heads flattened)::

    scores = scale * q @ kᵀ + mask          (..., L, S)
    P      = softmax(scores, over S)        each row sums to 1
    out    = (P * dropout_mask) @ v         (..., L, Dv)

``mask`` is an *additive* float mask, broadcastable to (..., L, S): 0 where a
query may attend to a key, ``-inf`` where it may not (the callers turn bool
masks into this form).  A row whose keys are all ``-inf`` gets all-zero
probabilities, so its output is 0 and it passes no gradient back: no NaN, and
the other rows and their gradients are untouched.

The mask is a setting, not an input: it receives no gradient.

Backward, with ``G = d(loss)/d(out)`` and ``Pd = P * dropout_mask``::

    dV = Pdᵀ @ G
    dP = (G @ vᵀ) * dropout_mask
    dS = P * (dP - rowsum(dP * P))        the softmax backward
    dQ = scale * dS @ k
    dK = scale * dSᵀ @ q

``Attention`` computes ``out`` without handing ``P`` to the graph (the fast path
that layers use); ``AttentionWeights`` returns ``P`` itself, for callers that
must also return the attention weights.  Both use the two helpers below, which
are the NumPy reference for the compiled kernel.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def attention_probs(q: np.ndarray, k: np.ndarray, mask: np.ndarray | None, scale: float) -> np.ndarray:
    """P = softmax(scale * q @ kᵀ + mask) over the last dim; fully masked rows give zeros.

    Args:
        q: (..., L, D) queries.
        k: (..., S, D) keys.
        mask: additive float mask broadcastable to the scores (..., L, S), or None.
        scale: factor applied to the dot products.

    Returns:
        (..., L, S) probabilities in q's dtype.
    """
    s = np.matmul(q, _swap(k))
    s *= scale
    if mask is not None:
        s += mask
    row_max = np.max(s, axis=-1, keepdims=True)
    s -= np.where(np.isfinite(row_max), row_max, 0)  # a row of all -inf stays -inf
    np.exp(s, out=s)
    total = np.sum(s, axis=-1, keepdims=True)
    s /= np.where(total > 0, total, 1)  # all-masked row: 0 / 1 = 0, not 0 / 0
    return s


def softmax_backward(p: np.ndarray, dp: np.ndarray) -> np.ndarray:
    """dS = P * (dP - rowsum(dP * P)); overwrites and returns ``dp``."""
    dp -= np.sum(dp * p, axis=-1, keepdims=True)
    dp *= p
    return dp


class Attention(Function):
    """out = (softmax(scale * q @ kᵀ + mask) * dropout_mask) @ v, fused.

    Call as ``Attention.apply(q, k, v, mask=m, scale=s, dropout_mask=d)`` with
    ``m`` an additive float mask or None and ``d`` None or the inverted-dropout
    multiplier (0 or 1/(1-p)) broadcastable to (..., L, S).
    """

    @staticmethod
    def forward(ctx, q, k, v, mask=None, scale=1.0, dropout_mask=None):
        p = attention_probs(q, k, mask, scale)
        if dropout_mask is not None:
            dropout_mask = dropout_mask.astype(p.dtype, copy=False)
        pd = p if dropout_mask is None else p * dropout_mask
        ctx.save_for_backward(q, k, v, p)
        ctx.scale, ctx.dropout_mask = scale, dropout_mask
        return np.matmul(pd, v)

    @staticmethod
    def backward(ctx, grad):
        q, k, v, p = ctx.saved_tensors
        need_q, need_k, need_v = ctx.needs_input_grad
        dm = ctx.dropout_mask
        dv = None
        if need_v:
            dv = np.matmul(_swap(p if dm is None else p * dm), grad)
        if not (need_q or need_k):
            return None, None, dv
        dp = np.matmul(grad, _swap(v))
        if dm is not None:
            dp *= dm
        ds = softmax_backward(p, dp)
        ds *= ctx.scale
        dq = np.matmul(ds, k) if need_q else None
        dk = np.matmul(_swap(ds), q) if need_k else None
        return dq, dk, dv


class AttentionWeights(Function):
    """P = softmax(scale * q @ kᵀ + mask) over the last dim, as a graph node.

    Call as ``AttentionWeights.apply(q, k, mask=m, scale=s)``; fully masked
    rows are all zeros.
    """

    @staticmethod
    def forward(ctx, q, k, mask=None, scale=1.0):
        p = attention_probs(q, k, mask, scale)
        ctx.save_for_backward(q, k, p)
        ctx.scale = scale
        return p

    @staticmethod
    def backward(ctx, grad):
        q, k, p = ctx.saved_tensors
        need_q, need_k = ctx.needs_input_grad
        ds = softmax_backward(p, grad * ctx.scale)
        dq = np.matmul(ds, k) if need_q else None
        dk = np.matmul(_swap(ds), q) if need_k else None
        return dq, dk
