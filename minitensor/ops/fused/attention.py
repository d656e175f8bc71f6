"""Multi-head attention layers as one graph node each: ``SelfAttention`` and ``CrossAttention``.

The composite they replace is ``nn.functional.multi_head_attention_forward`` (what
``nn.MultiheadAttention`` runs): an input projection, the heads' attention
(``ops/attention.py``), an output projection, as several nodes.  At small sizes the time
goes into per-node overhead, not into the math, so for the common cases (self-attention,
or attention to a ``memory`` whose keys are its values, with the packed ``in_proj_weight``)
``nn/fusion.py`` runs the layer as one of these nodes instead::

    qkv   = x @ in_weightᵀ + in_bias            one GEMM (q, k, v packed; CrossAttention: q from x,
                                                 k and v from memory, the weight split between them)
    heads = attention of the H heads             split and merged as NumPy views, the heads' kernels
    y     = heads @ out_weightᵀ + out_bias      one GEMM

Backward runs the steps in reverse; the gradient of a packed projection is written into one
array.  With ``create_graph=True`` the gradient is the composite's (``definition``, given by
``nn/fusion.py``): tests hold each node equal to it.
"""

from __future__ import annotations

import numpy as np

from ... import backend
from ...autograd import batching
from ..attention import split_heads
from ..nn_ops import Op, affine, save_with_state
from .parts import definition_grads, definition_jvp

_PARTS = {1: (3,), 2: (1, 2)}  # number of projection arrays -> how many of q, k, v each holds


class SelfAttention(Op):
    """Multi-head self-attention as one node (see the module docstring).

    Call as ``SelfAttention.apply(x, in_weight, in_bias, out_weight, out_bias, heads=H,
    batch_first=b, mask=m, scale=s, dropout_mask=d, definition=f)`` with ``x`` (N, L, E) when
    ``batch_first`` else (L, N, E), the packed ``in_weight`` (3E, E), ``in_bias`` (3E,) or None,
    ``out_weight`` (E, E), ``out_bias`` (E,) or None; ``m`` an additive mask broadcastable to
    (N, H, L, L) or None, ``d`` the dropout multipliers (N, H, L, L) or None; ``f(x)`` the
    composite, for ``create_graph``.
    """

    @staticmethod
    def forward(ctx, x, in_weight, in_bias=None, out_weight=None, out_bias=None, heads=1, batch_first=False,
                mask=None, scale=1.0, dropout_mask=None, definition=None):  # fmt: skip
        dropout_mask = _settings(ctx, heads, batch_first, scale, dropout_mask, x.dtype, definition)
        y, state = self_attention(x, in_weight, in_bias, out_weight, out_bias, heads, batch_first, mask, scale,
                                  dropout_mask, keep=True in ctx.needs_input_grad)  # fmt: skip
        save_with_state(ctx, x, in_weight, in_bias, out_weight, out_bias, state=state)
        ctx.x_shape = x.shape
        return y

    @staticmethod
    def backward(ctx, grad):
        *inputs, (rows, qkv, merged, p) = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):
            return definition_grads(ctx.definition, inputs, grad, ctx.needs_input_grad, activations=1)
        _, in_weight, _, out_weight, _ = inputs
        need_x, need_w_in, need_b_in, need_w_out, need_b_out = ctx.needs_input_grad
        e = rows.shape[1]
        g = grad.reshape(-1, e)
        (d_qkv,) = _projection_grads(ctx, (g @ out_weight).reshape(merged.shape), [qkv], p)
        d_rows = d_qkv.reshape(-1, 3 * e)
        return (
            backend.rows_product(d_rows, in_weight.T).reshape(ctx.x_shape) if need_x else None,
            d_rows.T @ rows if need_w_in else None,
            backend.column_sums(d_rows) if need_b_in else None,
            g.T @ merged.reshape(-1, e) if need_w_out else None,
            backend.column_sums(g) if need_b_out else None,
        )

    @staticmethod
    def jvp(ctx, *tangents):
        return definition_jvp(ctx, tangents, activations=1)

    @staticmethod
    def batch(b):  # vmap: the layer's definition, whose ops have rules (module weights may be batched too)
        inputs = [batching.wrap(v, b.level) if is_b else v for v, is_b in zip(b.values, b.batched)]
        return b.settings["definition"](*inputs[:1])


class CrossAttention(Op):
    """Multi-head attention from ``x`` to ``memory`` (keys and values both from ``memory``) as one node.

    Call as ``CrossAttention.apply(x, memory, in_weight, in_bias, out_weight, out_bias, ...)`` with
    ``memory`` (N, S, E) when ``batch_first`` else (S, N, E) and the rest as ``SelfAttention``
    (``f(x, memory)`` the composite).  The in-projection's gradient is written as its two blocks
    of rows into one (3E, E) array.
    """

    @staticmethod
    def forward(ctx, x, memory, in_weight, in_bias=None, out_weight=None, out_bias=None, heads=1,
                batch_first=False, mask=None, scale=1.0, dropout_mask=None, definition=None):  # fmt: skip
        dropout_mask = _settings(ctx, heads, batch_first, scale, dropout_mask, x.dtype, definition)
        y, state = cross_attention(x, memory, in_weight, in_bias, out_weight, out_bias, heads, batch_first, mask,
                                   scale, dropout_mask, keep=True in ctx.needs_input_grad)  # fmt: skip
        save_with_state(ctx, x, memory, in_weight, in_bias, out_weight, out_bias, state=state)
        ctx.shapes = (x.shape, memory.shape)
        return y

    @staticmethod
    def backward(ctx, grad):
        *inputs, (x_rows, m_rows, q, kv, merged, p) = ctx.saved_tensors
        if not isinstance(grad, np.ndarray):
            return definition_grads(ctx.definition, inputs, grad, ctx.needs_input_grad, activations=2)
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
            np.concatenate((backend.column_sums(d_q), backend.column_sums(d_kv))) if need_b_in else None,
            g.T @ merged.reshape(-1, e) if need_w_out else None,
            backend.column_sums(g) if need_b_out else None,
        )

    @staticmethod
    def jvp(ctx, *tangents):
        return definition_jvp(ctx, tangents, activations=2)

    @staticmethod
    def batch(b):  # vmap: the layer's definition, whose ops have rules (module weights may be batched too)
        inputs = [batching.wrap(v, b.level) if is_b else v for v, is_b in zip(b.values, b.batched)]
        return b.settings["definition"](*inputs[:2])


def _settings(ctx, heads, batch_first, scale, dropout_mask, dtype, definition):
    """Keep the attention settings on ``ctx`` for backward; the dropout mask in the activations' dtype."""
    dropout_mask = None if dropout_mask is None else dropout_mask.astype(dtype, copy=False)
    ctx.heads, ctx.batch_first, ctx.scale, ctx.dropout_mask, ctx.definition = (
        heads, batch_first, scale, dropout_mask, definition)  # fmt: skip
    return dropout_mask


# ------------------------------------------------------------------ the steps, on arrays
def self_attention(x, in_weight, in_bias, out_weight, out_bias, heads, batch_first, mask, scale, dropout_mask,
                   keep=True) -> tuple:  # fmt: skip
    """SelfAttention's forward on arrays: (y, (rows, qkv, merged, P)); P is None unless ``keep``."""
    e = x.shape[-1]
    rows = x.reshape(-1, e)  # (M, E): a view unless x is non-contiguous
    qkv = affine(rows, in_weight, in_bias, x.shape[:-1] + (3 * e,))
    merged, p = heads_attention((qkv,), heads, batch_first, mask, scale, dropout_mask, keep)
    return affine(merged.reshape(-1, e), out_weight, out_bias, x.shape), (rows, qkv, merged, p)


def cross_attention(x, memory, in_weight, in_bias, out_weight, out_bias, heads, batch_first, mask, scale,
                    dropout_mask, keep=True) -> tuple:  # fmt: skip
    """CrossAttention's forward on arrays: (y, (x rows, memory rows, q, kv, merged, P)); P None unless ``keep``."""
    e = x.shape[-1]
    x_rows, m_rows = x.reshape(-1, e), memory.reshape(-1, e)  # views unless non-contiguous
    q_bias, kv_bias = (None, None) if in_bias is None else (in_bias[:e], in_bias[e:])
    q = affine(x_rows, in_weight[:e], q_bias, x.shape)
    kv = affine(m_rows, in_weight[e:], kv_bias, memory.shape[:-1] + (2 * e,))
    merged, p = heads_attention((q, kv), heads, batch_first, mask, scale, dropout_mask, keep)
    y = affine(merged.reshape(-1, e), out_weight, out_bias, x.shape)
    return y, (x_rows, m_rows, q, kv, merged, p)


def heads_attention(projections, heads, batch_first, mask, scale, dropout_mask, keep) -> tuple:
    """The heads' attention between packed projections: (merged heads, P or None unless ``keep``)."""
    q, k, v = _unpack(projections, heads, batch_first)
    n, h, l, d = q.shape
    merged = np.empty((n, l, h * d) if batch_first else (l, n, h * d), dtype=q.dtype)
    out = split_heads(merged, heads, 1, batch_first)[0]
    if not all(x.flags.c_contiguous for x in projections):  # (attention_forward copies what BLAS cannot read)
        return merged, backend.attention_forward(q, k, v, mask, scale, dropout_mask, out=out, keep_probs=keep)[1]
    scores = (n, h, l, k.shape[2])
    p = np.empty(scores, q.dtype) if keep else None
    mask, dropout_mask = backend.mask_4d(mask, scores, q.dtype), backend.as_4d(dropout_mask, scores)
    backend.heads_forward(q, k, v, mask, scale, dropout_mask, p, out)
    return merged, p


def _projection_grads(ctx, d_merged, projections: list, p) -> list:
    """The gradients of the projection arrays (``[qkv]`` or ``[q, kv]``) from the gradient of the
    merged heads ``d_merged``: back through the heads' attention with the kept P."""
    heads, batch_first = ctx.heads, ctx.batch_first
    grads = [np.empty_like(x) for x in projections]
    g_heads = split_heads(d_merged, heads, 1, batch_first)[0]
    drop = backend.as_4d(ctx.dropout_mask, p.shape)
    qkv, targets = _unpack(projections, heads, batch_first), _unpack(grads, heads, batch_first)
    backend.heads_backward(g_heads, *qkv, p, ctx.scale, drop, *targets)
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


def _unpack(arrays, heads: int, batch_first: bool) -> list:
    """q, k, v (N, H, L or S, d) views of 1 or 2 projection arrays (``[qkv]`` or ``[q, kv]``)."""
    views = []
    for x, n in zip(arrays, _PARTS[len(arrays)]):
        views.extend(split_heads(x, heads, n, batch_first))
    return views
