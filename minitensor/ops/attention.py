"""Scaled dot-product attention: its definition, and the op that computes it fast.

For queries ``q`` (..., L, D), keys ``k`` (..., S, D) and values ``v`` (..., S, Dv)
(the leading dims are usually batch and heads), attention is the twenty lines below,
in the library's own Tensor ops (read them first)::

    scores = scale * q @ kᵀ + mask          (..., L, S)
    P      = softmax(scores, over S)        each row sums to 1
    out    = (P * dropout_mask) @ v         (..., L, Dv)

``mask`` is an *additive* float mask, broadcastable to (..., L, S): 0 where a
query may attend to a key, ``-inf`` where it may not (callers turn bool masks into
this form).  A row whose keys are all ``-inf`` gets all-zero probabilities, so its
output is 0 and it passes no gradient back: no NaN, and the other rows and their
gradients are untouched (PyTorch gives NaN there).

The op ``Attention`` computes the same, fused (``kernels/attention.py``: NumPy's
BLAS for the matrix products, a numba row kernel for the masked softmax between
them), and its backward in one pass, with ``G = d(loss)/d(out)``, ``Pd = P * dropout_mask``::

    dV = Pdᵀ @ G
    dP = (G @ vᵀ) * dropout_mask
    dS = P * (dP - rowsum(dP * P))        the softmax backward
    dQ = scale * dS @ k
    dK = scale * dSᵀ @ q

With ``create_graph=True`` its gradient is that of the definition (``nn_ops.composite``),
so it can be differentiated again.  ``AttentionWeights`` is P itself, for callers that
return the weights.  Multi-head layers split their projections into heads and merge
the heads' outputs with ``split_heads`` and ``merge_heads`` (arrays or Tensors); the
fused multi-head layer nodes are in ``ops/fused/attention.py``.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.composite import composite_jvp
from ..autograd.function import Op
from .nn_ops import composite


# ------------------------------------------------------------------ the definition
def attention(q, k, v, mask=None, scale: float = 1.0, dropout_mask=None):
    """(P * dropout_mask) @ v with P = ``attention_weights(q, k, mask, scale)`` (Tensors)."""
    p = attention_weights(q, k, mask, scale)
    return (p if dropout_mask is None else p * dropout_mask) @ v


def attention_weights(q, k, mask=None, scale: float = 1.0):
    """P = softmax(scale * q @ kᵀ + mask) over the keys; a row whose keys are all masked is 0 (Tensors)."""
    scores = (q @ k.transpose(-1, -2)) * scale
    if mask is not None:
        scores = scores + mask
    top = np.max(scores._data, axis=-1, keepdims=True)  # each row's max: a constant shift (softmax ignores it)
    e = (scores - backend.where(np.isfinite(top), top, 0)).exp()
    total = e.sum(dim=-1, keepdim=True)
    return e / (total + (total._data == 0).astype(total.dtype))  # all masked: 0 / 1, not 0 / 0


# ------------------------------------------------------------------ heads
def split_heads(x, heads: int, parts: int = 1, batch_first: bool = False) -> list:
    """(N, L, parts*E) or (L, N, parts*E) -> ``parts`` views (N, heads, L, E/heads), arrays or Tensors.

    Part i holds features [i*E, (i+1)*E) of the last dim (q, k, v of a packed projection);
    head h of a part holds its features [h*d, (h+1)*d).
    """
    d = x.shape[2] // (parts * heads)  # (not -1: N or L may be 0)
    x = x.reshape(x.shape[0], x.shape[1], parts, heads, d)
    order = (2, 0, 3, 1, 4) if batch_first else (2, 1, 3, 0, 4)  # -> (parts, N, heads, L, d)
    x = x.transpose(order) if isinstance(x, np.ndarray) else np.transpose(x, order)  # (a Tensor's transpose swaps two)
    return [x[i] for i in range(parts)]


def merge_heads(x, batch_first: bool = False):
    """(N, H, L, d) -> (N, L, H*d), or (L, N, H*d) when not ``batch_first`` (an array or a Tensor)."""
    n, h, l, d = x.shape
    return np.transpose(x, (0, 2, 1, 3) if batch_first else (2, 0, 1, 3)).reshape(
        (n, l, h * d) if batch_first else (l, n, h * d)
    )


# ------------------------------------------------------------------ the ops
def _cast(dropout_mask, dtype):
    return None if dropout_mask is None else dropout_mask.astype(dtype, copy=False)


class Attention(Op):
    """out = (softmax(scale * q @ kᵀ + mask) * dropout_mask) @ v, fused (see the module docstring).

    Call as ``Attention.apply(q, k, v, mask=m, scale=s, dropout_mask=d)`` with ``m`` an additive
    float mask or None and ``d`` None or the inverted-dropout multipliers (0 or 1/(1-p))
    broadcastable to (..., L, S).
    """

    @staticmethod
    def forward(ctx, q, k, v, mask=None, scale=1.0, dropout_mask=None):
        dropout_mask = _cast(dropout_mask, q.dtype)
        out, p = backend.attention_forward(q, k, v, mask, scale, dropout_mask, keep_probs=any(ctx.needs_input_grad))
        ctx.save_for_backward(q, k, v, (p, mask))  # (the kernel state last, as a tuple: never a Tensor)
        ctx.scale, ctx.dropout_mask = scale, dropout_mask
        return out

    @staticmethod
    def backward(ctx, grad):
        *qkv, (p, mask) = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):  # create_graph: the definition's gradient
            return composite(attention, qkv, ctx, grad, mask=mask, scale=ctx.scale, dropout_mask=ctx.dropout_mask)
        return backend.attention_backward(grad, *qkv, p, ctx.scale, ctx.dropout_mask, ctx.needs_input_grad)

    @staticmethod
    def jvp(ctx, *tangents):
        (_, mask) = ctx.saved_tensors[-1]
        settings = {"mask": mask, "scale": ctx.scale, "dropout_mask": ctx.dropout_mask}
        return composite_jvp(lambda *qkv: attention(*qkv, **settings), ctx.inputs, tangents)

    @staticmethod
    def batch(b):  # vmap: the batch dim is one more leading dim of q, k, v (a mask broadcasts from the right)
        return b.run(*[b.expanded(i) for i in range(len(b.values))])


class AttentionWeights(Op):
    """P = softmax(scale * q @ kᵀ + mask) over the last dim, as one node (fully masked rows 0).

    Call as ``AttentionWeights.apply(q, k, mask=m, scale=s)``.  Backward: ``dS = scale * P * (G -
    rowsum(G * P))``, then ``dQ = dS @ k`` and ``dK = dSᵀ @ q``.
    """

    @staticmethod
    def forward(ctx, q, k, mask=None, scale=1.0):
        p = backend.attention_probs(q, k, mask, scale)
        ctx.save_for_backward(q, k, p, (mask,))  # (the mask with the kernel state: released after backward)
        ctx.scale = scale
        return p

    @staticmethod
    def backward(ctx, grad):
        q, k, p, (mask,) = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):
            return composite(attention_weights, (q, k), ctx, grad, mask=mask, scale=ctx.scale)
        need_q, need_k = ctx.needs_input_grad
        ds = backend.softmax_scores_backward(p, np.array(grad, dtype=p.dtype), None, ctx.scale)
        dq = np.matmul(ds, k) if need_q else None
        dk = np.matmul(np.swapaxes(ds, -1, -2), q) if need_k else None
        return dq, dk

    @staticmethod
    def jvp(ctx, *tangents):
        (mask,) = ctx.saved_tensors[-1]
        return composite_jvp(lambda q, k: attention_weights(q, k, mask=mask, scale=ctx.scale), ctx.inputs, tangents)

    @staticmethod
    def batch(b):  # vmap: the batch dim is one more leading dim of q, k, v (a mask broadcasts from the right)
        return b.run(*[b.expanded(i) for i in range(len(b.values))])
