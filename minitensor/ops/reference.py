"""The fused ops written plainly in differentiable Tensor ops: their readable reference.

Each function here computes what one fused op of ``nn_ops.py``, ``attention.py``
or ``loss.py`` computes, with the library's own Tensor operations.  The fused
ops run kernels for their forward and first-order backward; with
``create_graph=True`` their backward returns ``composite_grads`` of the function
here instead, so a gradient through a fused op is a graph and can be
differentiated again (second derivatives of a Transformer layer, gradient
penalties, ...).

Arguments are Tensors (the op's inputs), constants (masks, settings) as the op
received them.  Masks and shifts computed from the data (a row's max) are
constants: softmax does not depend on the shift, so its derivatives are exact.
"""

from __future__ import annotations

import math

import numpy as np

from .special import Erf

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


# ------------------------------------------------------------------ layers
def linear(x, weight, bias=None):
    """x @ weightᵀ + bias; x (..., in), weight (out, in), bias (out,) or None."""
    y = x @ weight.T
    return y if bias is None else y + bias


def layer_norm(x, weight=None, bias=None, n_dims: int = 1, eps: float = 1e-5):
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing ``n_dims`` dims (biased var)."""
    dims = tuple(range(x.ndim - n_dims, x.ndim))
    centred = x - x.mean(dim=dims, keepdim=True)
    y = centred / ((centred * centred).mean(dim=dims, keepdim=True) + eps).sqrt()
    if weight is not None:
        y = y * weight
    return y if bias is None else y + bias


def add_layer_norm(x, r, weight=None, bias=None, eps: float = 1e-5, drop=None):
    """layer_norm(x + r * drop) over the last dim; ``drop`` None or the dropout multipliers of r."""
    return layer_norm(x + (r if drop is None else r * drop), weight, bias, 1, eps)


def gelu(x):
    """Exact GELU: x * (1 + erf(x / sqrt 2)) / 2."""
    return x * (0.5 * (1 + Erf.apply(x * _SQRT_HALF)))


def gelu_tanh(x):
    """x/2 * (1 + tanh(sqrt(2/pi) * (c + 0.044715 c^3))), c = x clipped to [-50, 50] (as the kernel)."""
    c = x.clamp(-50.0, 50.0)
    return (0.5 * x) * (1 + (_SQRT_2_OVER_PI * (c + 0.044715 * (c * c * c))).tanh())


ACTIVATIONS = {"relu": lambda x: x.relu(), "gelu": gelu, "gelu_tanh": gelu_tanh}


def feed_forward(x, w1, b1=None, w2=None, b2=None, activation: str = "relu", drop=None):
    """linear(activation(linear(x, w1, b1)) * drop, w2, b2); ``drop`` None or the dropout multipliers."""
    h = ACTIVATIONS[activation](linear(x, w1, b1))
    return linear(h if drop is None else h * drop, w2, b2)


# ------------------------------------------------------------------ attention
def masked_softmax(s):
    """Softmax over the last dim in which a row of all ``-inf`` (every key masked) gives zeros.

    The shift (each row's max, 0 where it is not finite) is a constant taken
    from the data; the denominator of an all-masked row (0) is replaced by 1.
    """
    top = np.max(s._data, axis=-1, keepdims=True)
    e = (s - np.where(np.isfinite(top), top, 0)).exp()
    total = e.sum(dim=-1, keepdim=True)
    return e / (total + (total._data == 0).astype(total.dtype))


def attention_probs(q, k, mask=None, scale: float = 1.0):
    """P = softmax(scale * q @ kᵀ + mask) over the keys, all-masked rows 0."""
    s = (q @ k.transpose(-1, -2)) * scale
    return masked_softmax(s if mask is None else s + mask)


def attention(q, k, v, mask=None, scale: float = 1.0, dropout_mask=None):
    """(P * dropout_mask) @ v with P = ``attention_probs(q, k, mask, scale)``."""
    p = attention_probs(q, k, mask, scale)
    return (p if dropout_mask is None else p * dropout_mask) @ v


def split_heads(x, heads: int, parts: int, batch_first: bool) -> list:
    """(N, L, parts*E) or (L, N, parts*E) -> ``parts`` Tensors (N, heads, L, E/heads)."""
    order = (2, 0, 3, 1, 4) if batch_first else (2, 1, 3, 0, 4)
    x = x.reshape(x.shape[0], x.shape[1], parts, heads, x.shape[2] // (parts * heads)).permute(*order)
    return [x[i] for i in range(parts)]


def merge_heads(x, batch_first: bool):
    """(N, H, L, d) -> (N, L, H*d), or (L, N, H*d) when not ``batch_first``."""
    n, h, l, d = x.shape
    if batch_first:
        return x.permute(0, 2, 1, 3).reshape(n, l, h * d)
    return x.permute(2, 0, 1, 3).reshape(l, n, h * d)


_PARTS = {1: (3,), 2: (1, 2), 3: (1, 1, 1)}  # number of projection Tensors -> how many of q, k, v each holds


def multi_head_core(*projections, heads=1, batch_first=False, mask=None, scale=1.0, dropout_mask=None):
    """Attention between packed or separate q/k/v projections, heads split and merged (see
    ``attention.MultiheadAttentionCore``)."""
    qkv = []
    for x, n in zip(projections, _PARTS[len(projections)]):
        qkv.extend(split_heads(x, heads, n, batch_first))
    return merge_heads(attention(*qkv, mask, scale, dropout_mask), batch_first)


def self_attention(x, in_weight, in_bias=None, out_weight=None, out_bias=None, **settings):
    """linear(multi_head_core(linear(x, in_weight, in_bias), **settings), out_weight, out_bias)."""
    return linear(multi_head_core(linear(x, in_weight, in_bias), **settings), out_weight, out_bias)


def cross_attention(x, memory, in_weight, in_bias=None, out_weight=None, out_bias=None, **settings):
    """Attention from x to memory (keys and values both from memory) with the packed in-projection
    split between them: ``attention.CrossAttention`` in Tensor ops."""
    e = in_weight.shape[1]
    q_bias, kv_bias = (None, None) if in_bias is None else (in_bias[:e], in_bias[e:])
    q, kv = linear(x, in_weight[:e], q_bias), linear(memory, in_weight[e:], kv_bias)
    return linear(multi_head_core(q, kv, **settings), out_weight, out_bias)
