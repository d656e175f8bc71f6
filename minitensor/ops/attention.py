"""Scaled dot-product attention as fused ops, on NumPy arrays.

For queries ``q`` (..., L, D), keys ``k`` (..., S, D) and values ``v`` (..., S, Dv)
(the leading dims are usually batch and heads)::

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

The math lives in ``minitensor.kernels.attention`` (NumPy's BLAS for the
matrix products, a numba row kernel for the softmax between them, and a
NumPy reference for it); five ops use it:

- ``Attention(q, k, v)``: the op itself, on arrays already split into heads;
- ``MultiheadAttentionCore(*projections)``: the same, but it takes the input
  projections of a multi-head layer as they come out of the GEMMs (heads not
  split, q/k/v possibly packed in one array) and returns the heads merged
  again.  Splitting and merging are free NumPy views inside one op, and the
  gradient of a packed projection is written in place into one array;
- ``SelfAttention(x, weights...)``: a whole self-attention layer (packed
  in-projection, the core, out-projection) as one node;
- ``CrossAttention(x, memory, weights...)``: the same from ``x`` to ``memory``
  (a decoder's attention to the encoder's output), the packed in-projection
  split between the two;
- ``AttentionWeights(q, k)``: P itself, for callers that return the weights.

With ``create_graph=True`` their backward is ``composite_grads`` of the same
attention in Tensor ops (``reference.attention`` and friends: a fully masked
row gives zeros there too), so their gradients can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..kernels.attention import attention_backward, attention_forward, heads_backward, heads_forward
from ..kernels.attention_softmax import _as_4d, _mask_4d, attention_probs, softmax_scores_backward
from ..kernels.column_sums import column_sums
from . import reference
from .nn_ops import affine, composite, on_arrays, save_with_state


def _cast(dropout_mask, dtype):
    return None if dropout_mask is None else dropout_mask.astype(dtype, copy=False)


# ------------------------------------------------------------------ the ops
class Attention(Op):
    """out = (softmax(scale * q @ kᵀ + mask) * dropout_mask) @ v, fused.

    Call as ``Attention.apply(q, k, v, mask=m, scale=s, dropout_mask=d)`` with
    ``m`` an additive float mask or None and ``d`` None or the inverted-dropout
    multiplier (0 or 1/(1-p)) broadcastable to (..., L, S).
    """

    @staticmethod
    def forward(ctx, q, k, v, mask=None, scale=1.0, dropout_mask=None):
        dropout_mask = _cast(dropout_mask, q.dtype)
        out, p = attention_forward(q, k, v, mask, scale, dropout_mask, keep_probs=any(ctx.needs_input_grad))
        save_with_state(ctx, q, k, v, state=(p, mask))
        ctx.scale, ctx.dropout_mask = scale, dropout_mask
        return out

    @staticmethod
    def backward(ctx, grad):
        *qkv, (p, mask) = ctx.saved_tensors
        if not on_arrays(grad):
            settings = {"mask": mask, "scale": ctx.scale, "dropout_mask": ctx.dropout_mask}
            return composite(reference.attention, qkv, ctx, grad, **settings)
        return attention_backward(grad, *qkv, p, ctx.scale, ctx.dropout_mask, ctx.needs_input_grad)


def split_heads(x: np.ndarray, heads: int, parts: int, batch_first: bool) -> list:
    """(N, L, parts*E) or (L, N, parts*E) -> ``parts`` views (N, heads, L, E/heads).

    Part i holds features [i*E, (i+1)*E) of the last dim (e.g. q, k, v of a
    packed projection); head h of a part holds its features [h*d, (h+1)*d).
    """
    d = x.shape[2] // (parts * heads)  # (not -1: N or L may be 0)
    x = x.reshape(x.shape[0], x.shape[1], parts, heads, d)
    x = x.transpose(2, 0, 3, 1, 4) if batch_first else x.transpose(2, 1, 3, 0, 4)
    return list(x)  # (the parts: x[0], x[1], ...)


class MultiheadAttentionCore(Op):
    """Multi-head attention between input projections, heads split and merged inside the op.

    Call as ``MultiheadAttentionCore.apply(*projections, heads=H, batch_first=b,
    mask=m, scale=s, dropout_mask=d)``.  ``projections`` are in the layer's
    layout, (N, L, .) with ``batch_first`` else (L, N, .), and are one of:

    - ``(qkv,)``: q, k and v packed along the last dim, (..., 3E) (self-attention);
    - ``(q, kv)``: q (..., E) and k, v packed, (..., 2E) (key is value);
    - ``(q, k, v)``: three arrays (..., E).

    ``m`` broadcasts to (N, H, L, S); ``d`` is (N, H, L, S) or None.
    Returns the heads' outputs merged back, (N, L, E) or (L, N, E).
    """

    @staticmethod
    def forward(ctx, *projections, heads=1, batch_first=False, mask=None, scale=1.0, dropout_mask=None):
        dropout_mask = _cast(dropout_mask, projections[0].dtype)
        keep = any(ctx.needs_input_grad)
        merged, p = heads_attention(projections, heads, batch_first, mask, scale, dropout_mask, keep)
        save_with_state(ctx, *projections, state=(p, mask))
        ctx.heads, ctx.batch_first, ctx.scale, ctx.dropout_mask = heads, batch_first, scale, dropout_mask
        return merged

    @staticmethod
    def backward(ctx, grad):
        *projections, (p, mask) = ctx.saved_tensors
        if not on_arrays(grad):
            return composite(reference.multi_head_core, projections, ctx, grad, **_core_settings(ctx, mask))
        heads, batch_first = ctx.heads, ctx.batch_first
        q, k, v = _unpack(projections, heads, batch_first)
        grads = [np.empty_like(x) if need else None for x, need in zip(projections, ctx.needs_input_grad)]
        targets = _unpack(grads, heads, batch_first)  # views into grads (None where not needed)
        g = split_heads(grad, heads, 1, batch_first)[0]
        if _in_place((*projections, grad)):
            heads_backward(g, q, k, v, p, ctx.scale, _as_4d(ctx.dropout_mask, p.shape), *targets)
        else:
            need = tuple(t is not None for t in targets)
            attention_backward(g, q, k, v, p, ctx.scale, ctx.dropout_mask, need, out=targets)
        return tuple(grads)


def heads_attention(projections, heads, batch_first, mask, scale, dropout_mask, keep_probs) -> tuple:
    """MultiheadAttentionCore's forward on arrays: (merged heads, P or None when not ``keep_probs``)."""
    q, k, v = _unpack(projections, heads, batch_first)
    n, h, l, d = q.shape
    merged = np.empty((n, l, h * d) if batch_first else (l, n, h * d), dtype=q.dtype)
    out = split_heads(merged, heads, 1, batch_first)[0]
    if not _in_place(projections):  # (e.g. strided input: attention_forward copies what BLAS cannot read)
        return merged, attention_forward(q, k, v, mask, scale, dropout_mask, out=out, keep_probs=keep_probs)[1]
    scores = (n, h, l, k.shape[2])
    p = np.empty(scores, q.dtype) if keep_probs else None
    heads_forward(q, k, v, _mask_4d(mask, scores, q.dtype), scale, _as_4d(dropout_mask, scores), p, out)
    return merged, p


def _in_place(projections) -> bool:
    """Whether the heads of ``projections`` (``split_heads`` views) can go to ``heads_forward`` as
    they are: C-contiguous arrays of one float dtype (then each head is a 2-D array BLAS reads in
    place), as the projections the layers compute always are."""
    dtype = projections[0].dtype
    return dtype.kind == "f" and all(x.flags.c_contiguous and x.dtype == dtype for x in projections)


def _core_settings(ctx, mask) -> dict:
    """The settings of ``reference.multi_head_core`` (the additive mask is kept with the kernel state)."""
    names = ("heads", "batch_first", "scale", "dropout_mask")
    return {"mask": mask, **{name: getattr(ctx, name) for name in names}}


class SelfAttention(Op):
    """A whole multi-head self-attention layer as one node: in-projection, attention, out-projection.

    Call as ``SelfAttention.apply(x, in_weight, in_bias, out_weight, out_bias, heads=H,
    batch_first=b, mask=m, scale=s, dropout_mask=d)`` with ``x`` (N, L, E) when
    ``batch_first`` else (L, N, E), the packed ``in_weight`` (3E, E), ``in_bias`` (3E,)
    or None, ``out_weight`` (E, E), ``out_bias`` (E,) or None; ``m`` and ``d`` as for
    ``MultiheadAttentionCore``::

        qkv = x @ in_weightᵀ + in_bias           one GEMM (q, k, v packed)
        heads = attention of the H heads          (MultiheadAttentionCore's forward)
        y = heads @ out_weightᵀ + out_bias        one GEMM

    Backward runs the steps in reverse.  One graph node instead of three: at
    small sizes the time goes into per-node overhead, not into the math.
    """

    @staticmethod
    def forward(ctx, x, in_weight, in_bias=None, out_weight=None, out_bias=None, heads=1, batch_first=False,
                mask=None, scale=1.0, dropout_mask=None):  # fmt: skip
        dropout_mask = _cast(dropout_mask, x.dtype)
        weights = (in_weight, in_bias, out_weight, out_bias)
        keep = any(ctx.needs_input_grad)
        y, state = self_attention(x, *weights, heads, batch_first, mask, scale, dropout_mask, keep)
        save_with_state(ctx, x, *weights, state=(*state, mask))
        ctx.heads, ctx.batch_first, ctx.scale, ctx.dropout_mask = heads, batch_first, scale, dropout_mask
        ctx.x_shape = x.shape
        return y

    @staticmethod
    def backward(ctx, grad):
        *inputs, (rows, qkv, merged, p, mask) = ctx.saved_tensors
        if not on_arrays(grad):
            return composite(reference.self_attention, inputs, ctx, grad, **_core_settings(ctx, mask))
        _, in_weight, _, out_weight, _ = inputs
        need_x, need_w_in, need_b_in, need_w_out, need_b_out = ctx.needs_input_grad
        e = rows.shape[1]
        g = grad.reshape(-1, e)
        (d_qkv,) = _projection_grads(ctx, (g @ out_weight).reshape(merged.shape), [qkv], p)
        d_rows = d_qkv.reshape(-1, 3 * e)
        return (
            (d_rows @ in_weight).reshape(ctx.x_shape) if need_x else None,
            d_rows.T @ rows if need_w_in else None,
            column_sums(d_rows) if need_b_in else None,
            g.T @ merged.reshape(-1, e) if need_w_out else None,
            column_sums(g) if need_b_out else None,
        )


class CrossAttention(Op):
    """Multi-head attention from ``x`` to ``memory`` (keys and values both from ``memory``) as one
    node: the packed in-projection split between the two, attention, out-projection.

    Call as ``CrossAttention.apply(x, memory, in_weight, in_bias, out_weight, out_bias, heads=H,
    batch_first=b, mask=m, scale=s, dropout_mask=d)`` with ``x`` (N, L, E) and ``memory``
    (N, S, E) when ``batch_first`` else (L, N, E) and (S, N, E); weights, ``m`` and ``d`` as for
    ``SelfAttention`` (``m`` broadcasts to (N, H, L, S))::

        q  = x @ in_weight[:E]ᵀ + in_bias[:E]            one GEMM
        kv = memory @ in_weight[E:]ᵀ + in_bias[E:]       one GEMM (k and v packed)
        heads = attention of the H heads                  (MultiheadAttentionCore's forward)
        y = heads @ out_weightᵀ + out_bias                one GEMM

    The decoder's attention to the encoder's output.  Backward runs the steps in reverse; the
    in-projection's gradient is written as its two blocks of rows into one (3E, E) array.
    """

    @staticmethod
    def forward(ctx, x, memory, in_weight, in_bias=None, out_weight=None, out_bias=None, heads=1,
                batch_first=False, mask=None, scale=1.0, dropout_mask=None):  # fmt: skip
        dropout_mask = _cast(dropout_mask, x.dtype)
        weights = (in_weight, in_bias, out_weight, out_bias)
        keep = any(ctx.needs_input_grad)
        y, state = cross_attention(x, memory, *weights, heads, batch_first, mask, scale, dropout_mask, keep)
        save_with_state(ctx, x, memory, *weights, state=(*state, mask))
        ctx.heads, ctx.batch_first, ctx.scale, ctx.dropout_mask = heads, batch_first, scale, dropout_mask
        ctx.shapes = (x.shape, memory.shape)
        return y

    @staticmethod
    def backward(ctx, grad):
        *inputs, (x_rows, m_rows, q, kv, merged, p, mask) = ctx.saved_tensors
        if not on_arrays(grad):
            return composite(reference.cross_attention, inputs, ctx, grad, **_core_settings(ctx, mask))
        in_weight, out_weight = inputs[2], inputs[4]
        need_x, need_m, need_w_in, need_b_in, need_w_out, need_b_out = ctx.needs_input_grad
        e = x_rows.shape[1]
        g = grad.reshape(-1, e)
        d_q, d_kv = _projection_grads(ctx, (g @ out_weight).reshape(merged.shape), [q, kv], p)
        d_q, d_kv = d_q.reshape(-1, e), d_kv.reshape(-1, 2 * e)
        x_shape, m_shape = ctx.shapes
        return (
            (d_q @ in_weight[:e]).reshape(x_shape) if need_x else None,
            (d_kv @ in_weight[e:]).reshape(m_shape) if need_m else None,
            _stacked_rows((d_q.T, x_rows), (d_kv.T, m_rows)) if need_w_in else None,
            np.concatenate((column_sums(d_q), column_sums(d_kv))) if need_b_in else None,
            g.T @ merged.reshape(-1, e) if need_w_out else None,
            column_sums(g) if need_b_out else None,
        )


def cross_attention(x, memory, in_weight, in_bias, out_weight, out_bias, heads, batch_first, mask, scale,
                    dropout_mask, keep_probs) -> tuple:  # fmt: skip
    """CrossAttention's forward on arrays: (y, (x rows, memory rows, q, kv, merged, P)), P None
    when not ``keep_probs``."""
    e = x.shape[-1]
    x_rows, m_rows = x.reshape(-1, e), memory.reshape(-1, e)  # views unless non-contiguous
    q_bias, kv_bias = (None, None) if in_bias is None else (in_bias[:e], in_bias[e:])
    q = affine(x_rows, in_weight[:e], q_bias, x.shape)
    kv = affine(m_rows, in_weight[e:], kv_bias, memory.shape[:-1] + (2 * e,))
    merged, p = heads_attention((q, kv), heads, batch_first, mask, scale, dropout_mask, keep_probs)
    y = affine(merged.reshape(-1, e), out_weight, out_bias, x.shape)
    return y, (x_rows, m_rows, q, kv, merged, p)


def _projection_grads(ctx, d_merged, projections: list, p) -> list:
    """The gradients of the projection arrays (``[qkv]`` or ``[q, kv]``, C-contiguous as the fused
    layers compute them) from the gradient of the merged heads ``d_merged``: back through the
    heads' attention with the kept P (SelfAttention's and CrossAttention's backward)."""
    heads, batch_first = ctx.heads, ctx.batch_first
    grads = [np.empty_like(x) for x in projections]
    g_heads = split_heads(d_merged, heads, 1, batch_first)[0]
    drop = _as_4d(ctx.dropout_mask, p.shape)
    qkv, targets = _unpack(projections, heads, batch_first), _unpack(grads, heads, batch_first)
    heads_backward(g_heads, *qkv, p, ctx.scale, drop, *targets)
    return grads


def _stacked_rows(*products) -> np.ndarray:
    """The matrix products ``a @ b`` of the (a, b) pairs, one below the other in one new array."""
    rows = [a.shape[0] for a, _ in products]
    out = np.empty((sum(rows), products[0][1].shape[1]), products[0][0].dtype)
    start = 0
    for (a, b), count in zip(products, rows):
        np.matmul(a, b, out=out[start : start + count])
        start += count
    return out


def self_attention(x, in_weight, in_bias, out_weight, out_bias, heads, batch_first, mask, scale, dropout_mask,
                   keep_probs) -> tuple:  # fmt: skip
    """SelfAttention's forward on arrays: (y, (rows, qkv, merged, P)), P None when not ``keep_probs``.
    (Also the encoder layer's inference path: nothing recorded.)"""
    e = x.shape[-1]
    rows = x.reshape(-1, e)  # (M, E): a view unless x is non-contiguous
    qkv = affine(rows, in_weight, in_bias, x.shape[:-1] + (3 * e,))
    merged, p = heads_attention((qkv,), heads, batch_first, mask, scale, dropout_mask, keep_probs)
    return affine(merged.reshape(-1, e), out_weight, out_bias, x.shape), (rows, qkv, merged, p)


_PARTS = {1: (3,), 2: (1, 2), 3: (1, 1, 1)}  # number of projection arrays -> how many of q, k, v each holds


def _unpack(arrays, heads: int, batch_first: bool) -> list:
    """q, k, v (N, H, L or S, d) views of 1, 2 or 3 projection arrays (None stays None)."""
    parts = _PARTS[len(arrays)]
    views = []
    for x, n in zip(arrays, parts):
        views.extend([None] * n if x is None else split_heads(x, heads, n, batch_first))
    return views


class AttentionWeights(Op):
    """P = softmax(scale * q @ kᵀ + mask) over the last dim, as a graph node.

    Call as ``AttentionWeights.apply(q, k, mask=m, scale=s)``; fully masked
    rows are all zeros.
    """

    @staticmethod
    def forward(ctx, q, k, mask=None, scale=1.0):
        p = attention_probs(q, k, mask, scale)
        ctx.save_for_backward(q, k, p, (mask,))  # (the mask with the kernel state: released after backward)
        ctx.scale = scale
        return p

    @staticmethod
    def backward(ctx, grad):
        q, k, p, (mask,) = ctx.saved_tensors
        if not on_arrays(grad):
            return composite(reference.attention_probs, (q, k), ctx, grad, mask=mask, scale=ctx.scale)
        need_q, need_k = ctx.needs_input_grad
        ds = softmax_scores_backward(p, np.array(grad, dtype=p.dtype), None, ctx.scale)
        dq = np.matmul(ds, k) if need_q else None
        dk = np.matmul(np.swapaxes(ds, -1, -2), q) if need_k else None
        return dq, dk
