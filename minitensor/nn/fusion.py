"""The one place that hands a layer of standard sub-modules to a fused graph node (``ops/fused/``).

Each Transformer layer's ``forward`` is its definition: PyTorch's composite, module by module
(a ``TransformerEncoderLayer`` is ``_sa_block``, ``_ff_block`` and two norms).  Before running
it, the layer asks here whether the whole layer can run as one fused node instead.  It can
when its sub-modules are the standard ones (``nn.Linear``, ``nn.LayerNorm`` over the last dim,
``nn.Dropout``, ReLU or GELU, an ``nn.MultiheadAttention`` with the packed ``in_proj_weight``),
none of them has a hook (hooks need the module calls), and the input is batched; otherwise the
functions here return None and the composite runs.

The fused node computes exactly the composite.  It draws the dropout masks in the order the
composite draws them (the same seed gives the same masks) and keeps the composite as its
``definition``: with ``create_graph=True`` its gradient is the composite's, computed with the
random generator rewound so that the composite draws the same masks (``random.replaying``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import random
from ..ops.fused.decoder_layer import DecoderLayer
from ..ops.fused.encoder_layer import EncoderLayer
from ..ops.nn_ops import dropout_multipliers
from ..tensor import Tensor
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .dropout import Dropout
from .functional.activation import gelu, relu
from .functional.attention import attention_dropout, merged_mask
from .hooks import has_hooks
from .linear import Linear
from .normalization import LayerNorm


def encoder_layer(layer, src: Tensor, src_mask, src_key_padding_mask, is_causal: bool) -> Tensor | None:
    """``layer(src, ...)`` as one ``EncoderLayer`` node, or None when the layer must run its composite."""
    m, shape, dtype = layer._modules, src.shape, src.dtype
    norm1 = _norm_weights(shape, m["dropout1"], m["norm1"])
    norm2 = _norm_weights(shape, m["dropout3"], m["norm2"])
    feed = _feed_forward_weights(shape, m["linear1"], layer.activation, m["dropout2"], m["linear2"])
    if norm1 is None or norm2 is None or feed is None or not _standard_attention(m["self_attn"], shape, dtype):
        return None
    state = random.snapshot() if layer.training else None  # (before any dropout mask is drawn)
    settings = {"norm_first": layer.norm_first}
    attention_weights, settings["attention"] = _attention_args(m["self_attn"], shape, dtype, src_mask,
                                                               src_key_padding_mask, is_causal)  # fmt: skip
    settings["norm1"], settings["mask1"] = _norm_settings(layer, m["norm1"], m["dropout1"], shape, dtype)
    ff_weights, kind = feed
    settings["feed_forward"] = _feed_forward_settings(kind, m["dropout2"], shape[:-1] + ff_weights[0].shape[:1], dtype)
    settings["norm2"], settings["mask3"] = _norm_settings(layer, m["norm2"], m["dropout3"], shape, dtype)

    def definition(x: Tensor) -> Tensor:  # the composite, on the same dropout masks
        with random.replaying(state):
            return layer._composite(x, src_mask, src_key_padding_mask, is_causal)

    settings["definition"] = definition
    return EncoderLayer.apply(src, *attention_weights, *norm1, *ff_weights, *norm2, layer=settings)


def decoder_layer(layer, tgt: Tensor, memory: Tensor, masks: tuple, causal: tuple) -> Tensor | None:
    """``layer(tgt, memory, ...)`` as one ``DecoderLayer`` node, or None when the layer must run its composite.

    ``masks``: (tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask); ``causal``:
    (tgt_is_causal, memory_is_causal).
    """
    m, shape, dtype = layer._modules, tgt.shape, tgt.dtype
    self_attn, cross_attn = m["self_attn"], m["multihead_attn"]
    norms = [_norm_weights(shape, m[f"dropout{i}"], m[f"norm{i}"]) for i in (1, 2, 3)]
    feed = _feed_forward_weights(shape, m["linear1"], layer.activation, m["dropout"], m["linear2"])
    standard = _standard_attention(self_attn, shape, dtype) and _standard_attention(cross_attn, shape, dtype)
    if None in norms or feed is None or not standard:
        return None
    state = random.snapshot() if layer.training else None
    tgt_mask, memory_mask, tgt_pad, memory_pad = masks
    keys = memory.shape[1] if layer.batch_first else memory.shape[0]
    settings = {"norm_first": layer.norm_first}
    self_weights, settings["self_attention"] = _attention_args(self_attn, shape, dtype, tgt_mask, tgt_pad, causal[0])
    settings["norm1"], settings["mask1"] = _norm_settings(layer, m["norm1"], m["dropout1"], shape, dtype)
    cross_weights, settings["cross_attention"] = _attention_args(cross_attn, shape, dtype, memory_mask, memory_pad,
                                                                 causal[1], keys)  # fmt: skip
    settings["norm2"], settings["mask2"] = _norm_settings(layer, m["norm2"], m["dropout2"], shape, dtype)
    ff_weights, kind = feed
    settings["feed_forward"] = _feed_forward_settings(kind, m["dropout"], shape[:-1] + ff_weights[0].shape[:1], dtype)
    settings["norm3"], settings["mask3"] = _norm_settings(layer, m["norm3"], m["dropout3"], shape, dtype)

    def definition(x: Tensor, mem: Tensor) -> Tensor:  # the composite, on the same dropout masks
        with random.replaying(state):
            return layer._composite(x, mem, masks, causal)

    weights = (*self_weights, *norms[0], *cross_weights, *norms[1], *ff_weights, *norms[2])
    settings["definition"] = definition
    return DecoderLayer.apply(tgt, memory, *weights, layer=settings)


# ------------------------------------------------------------------- standard sub-modules
def _standard_attention(mha, shape: tuple, dtype) -> bool:
    """Is ``mha`` an nn.MultiheadAttention with packed weights for batched input of this shape and
    dtype, with no hooks?"""
    return (
        type(mha) is MultiheadAttention
        and mha._hooks is None
        and len(shape) == 3
        and mha._qkv_same_embed_dim
        and shape[-1] == mha.embed_dim
        and dtype == mha._parameters["in_proj_weight"].dtype
    )


def _norm_weights(shape: tuple, dropout, norm) -> tuple | None:
    """(weight, bias) of ``norm`` when it is an nn.LayerNorm over the last dim of ``shape`` and
    ``dropout`` (its sub-layer's) an nn.Dropout, neither with hooks; else None."""
    if type(norm) is not LayerNorm or type(dropout) is not Dropout or has_hooks(norm, dropout):
        return None
    params, last = norm._parameters, shape[-1:]
    w, b = params.get("weight"), params.get("bias")
    if (
        norm.normalized_shape != last
        or not (w is None or w._data.shape == last)
        or not (b is None or b._data.shape == last)
    ):
        return None
    return w, b


def _feed_forward_weights(shape: tuple, linear1, activation, dropout, linear2) -> tuple | None:
    """((w1, b1, w2, b2), activation kind) of the feed-forward sub-layer, or None when a module is
    not the standard one, has a hook, or the shapes do not fit."""
    kind = _fused_activation(activation)
    if kind is None or type(linear1) is not Linear or type(linear2) is not Linear or type(dropout) is not Dropout:
        return None
    if has_hooks(linear1, activation, dropout, linear2):
        return None
    p1, p2 = linear1._parameters, linear2._parameters
    w1, b1, w2, b2 = p1["weight"], p1["bias"], p2["weight"], p2["bias"]
    s1, s2 = w1._data.shape, w2._data.shape
    if not (
        s1[1:] == shape[-1:]
        and s2[1:] == s1[:1]
        and (b1 is None or b1._data.shape == s1[:1])
        and (b2 is None or b2._data.shape == s2[:1])
    ):
        return None
    return (w1, b1, w2, b2), kind


def _fused_activation(activation) -> str | None:
    """'relu', 'gelu' or 'gelu_tanh' for the activations ``FeedForward`` fuses, else None."""
    if activation is relu or type(activation) is ReLU:
        return "relu"
    if activation is gelu:
        return "gelu"
    if type(activation) is GELU:
        return "gelu" if activation.approximate == "none" else "gelu_tanh"
    return None


# ------------------------------------------------------------------- the fused nodes' settings
def _attention_args(mha, shape: tuple, dtype, attn_mask, key_padding_mask, is_causal: bool,
                    keys: int | None = None) -> tuple:  # fmt: skip
    """(weights, settings) of ``SelfAttention`` for an input of ``shape`` (batched), or of
    ``CrossAttention`` with ``keys`` positions to attend to; draws the attention's dropout mask."""
    n, l = (shape[0], shape[1]) if mha.batch_first else (shape[1], shape[0])
    s = l if keys is None else keys
    h = mha.num_heads
    params, out = mha._parameters, mha._modules["out_proj"]._parameters
    weights = (params["in_proj_weight"], params["in_proj_bias"], out["weight"], out["bias"])
    p = mha.dropout if mha.training else 0.0
    settings = {"heads": h, "batch_first": mha.batch_first, "scale": 1.0 / math.sqrt(mha.head_dim),
                "mask": merged_mask(attn_mask, key_padding_mask, is_causal, n, h, l, s, dtype),
                "dropout_mask": attention_dropout((n, h, l, s), p, dtype)}  # fmt: skip
    return weights, settings


def _norm_settings(layer, norm, dropout, shape: tuple, dtype) -> tuple:
    """(settings of the norm's op, the residual dropout's multipliers or None) for a sub-layer's
    add & norm: Pre-LN a LayerNorm and a residual dropout drawn as ``F.dropout`` draws it, Post-LN
    an AddLayerNorm with the dropout's keep mask (drawn here, as ``F.dropout`` draws it)."""
    if layer.norm_first:
        multipliers = None if _identity(dropout) else dropout_multipliers(shape, dropout.p, dtype)
        return {"n_dims": 1, "eps": norm.eps}, multipliers
    keep, scale = _dropout_keep(dropout, shape, dtype)
    return {"eps": norm.eps, "keep": keep, "scale": scale}, None


def _feed_forward_settings(kind: str, dropout, hidden_shape: tuple, dtype) -> dict:
    keep, scale = _dropout_keep(dropout, hidden_shape, dtype)
    return {"activation": kind, "keep": keep, "scale": scale}


def _identity(dropout) -> bool:
    return not dropout.training or dropout.p == 0


def _dropout_keep(dropout, shape: tuple, dtype) -> tuple:
    """(bool keep mask, scale) of ``dropout`` on ``shape``: (None, 1.0) when it is the identity.
    Drawn as ``F.dropout`` draws its multipliers (``dropout_multipliers``): the same numbers."""
    if _identity(dropout):
        return None, 1.0
    p = dropout.p
    keep = random.generator().random(shape, dtype=np.dtype(dtype)) >= p
    return keep, (1.0 / (1.0 - p) if p < 1 else 0.0)
