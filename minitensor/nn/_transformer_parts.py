"""The pieces the Transformer layers share: argument checks, and the fused sub-layers
(self-attention, feed-forward, add & norm) each layer uses when its sub-modules are the standard ones."""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from .. import random
from .._device import check_device
from ..ops.nn_ops import AddLayerNorm, FeedForward, dropout_multipliers
from ..tensor import Tensor
from ._utils import check_size
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .functional._checks import as_input, check_probability
from .functional.activation import gelu, relu
from .hooks import has_hooks
from .linear import Linear
from .module import Module
from .normalization import LayerNorm


# ------------------------------------------------------------------- helpers
class Default:
    """The default of a keyword argument that the caller did not pass (shown as ``value`` in the
    signature), so that ``positional_options`` can tell a keyword given twice."""

    def __init__(self, value) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


# The encoder layer's arguments after ``activation``, in the two positional orders it reads.
LUCID_ORDER = ("batch_first", "norm_first", "device", "dtype")
PYTORCH_ORDER = ("layer_norm_eps", "batch_first", "norm_first", "bias", "device", "dtype")


def positional_options(layer: str, args: tuple, options: dict) -> dict:
    """The options of ``TransformerEncoderLayer`` from its positional arguments after ``activation``
    (``args``) and its keyword arguments (``options``: name -> value, or ``Default`` when not given).

    ``args`` are read in the Lucid page's order (``LUCID_ORDER``) unless the first of them (the sixth
    positional argument) is a float, which only PyTorch's order (``PYTORCH_ORDER``) puts there
    (``layer_norm_eps``); then all of them are read in PyTorch's order.  A sixth argument that fits
    neither order unambiguously (an int such as 0 or 1: ``batch_first`` or ``layer_norm_eps``?) is
    refused, as is an argument given both by position and by keyword.  Nothing is misread silently.
    """
    order = LUCID_ORDER
    if args:
        first = args[0]
        if isinstance(first, (float, np.floating)):
            order = PYTORCH_ORDER
        elif not isinstance(first, (bool, np.bool_)):
            raise TypeError(
                f"{layer}: the 6th positional argument is ambiguous: {first!r} ({type(first).__name__}). "
                f"minitensor's (Lucid's) order is (d_model, nhead, dim_feedforward, dropout, activation, "
                f"batch_first, norm_first, device, dtype); PyTorch's is (d_model, nhead, dim_feedforward, dropout, "
                f"activation, layer_norm_eps, batch_first, norm_first, bias, device, dtype).  Pass a bool "
                f"batch_first, a float layer_norm_eps (e.g. 1e-5, not 1), or better the options by keyword"
            )
    if len(args) > len(order):
        raise TypeError(
            f"{layer}: too many positional arguments: {5 + len(args)} given, at most {5 + len(order)} in "
            f"{'PyTorch' if order is PYTORCH_ORDER else 'the Lucid page'}'s order ({', '.join(order)} after activation)"
        )
    resolved = {}
    for name, value in options.items():
        resolved[name] = value.value if isinstance(value, Default) else value
    for name, value in zip(order, args):
        if not isinstance(options[name], Default):
            raise TypeError(f"{layer}: got multiple values for argument {name!r} (by position and by keyword)")
        resolved[name] = value
    return resolved


def _activation(activation, layer: str) -> Callable:
    if isinstance(activation, str):
        if activation == "relu":
            return relu
        if activation == "gelu":
            return gelu
        raise ValueError(f"{layer}: activation must be 'relu', 'gelu' or a callable, got {activation!r}")
    if not callable(activation):
        raise TypeError(f"{layer}: activation must be 'relu', 'gelu' or a callable, got {type(activation).__name__}")
    return activation


def _check_config(layer: str, d_model, nhead, dim_feedforward, dropout, device) -> None:
    check_size(d_model, "d_model", layer)
    check_size(nhead, "nhead", layer)
    check_size(dim_feedforward, "dim_feedforward", layer)
    if d_model % nhead != 0:
        raise ValueError(f"{layer}: d_model ({d_model}) must be divisible by nhead ({nhead})")
    check_probability(dropout, "dropout", layer)
    check_device(device, layer)


def _check_input(x, name: str, d_model: int, dtype, layer: str) -> Tensor:
    """``x`` as a Tensor (a NumPy array is converted, a float one to ``dtype``: ``as_input``), checked:
    rank 2 or 3, last dim d_model, dtype ``dtype`` (unless None)."""
    x = as_input(x, name, layer, like=dtype)
    if x.ndim not in (2, 3):
        raise ValueError(f"{layer}: {name} must be 3-D (batched) or 2-D (unbatched), got shape {x.shape}")
    if x.shape[-1] != d_model:
        raise ValueError(f"{layer}: {name}'s last dim must be d_model={d_model}, got shape {x.shape}")
    if dtype is not None and x.dtype != dtype:
        raise TypeError(
            f"{layer}: {name} has dtype {x.dtype} but the parameters have {dtype}; "
            f"convert one of them (module.to({x.dtype}) or {name}.to({dtype}))"
        )
    return x


def _check_mask(mask, name: str, shapes: tuple, layer: str) -> None:
    """A bool or float mask whose shape is one of ``shapes``."""
    if mask is None:
        return
    array = mask._data if isinstance(mask, Tensor) else mask
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{layer}: {name} must be a Tensor or array, got {type(mask).__name__}")
    if array.dtype != np.bool_ and array.dtype.kind != "f":
        raise TypeError(f"{layer}: {name} must be a bool or float mask, got dtype {array.dtype}")
    if array.shape not in shapes:
        expected = " or ".join(str(s) for s in shapes)
        raise ValueError(f"{layer}: {name} must have shape {expected}, got {array.shape}")


def _sizes(x: Tensor, batch_first: bool) -> tuple:
    """(batch size or None when unbatched, sequence length)."""
    if x.ndim == 2:
        return None, x.shape[0]
    return (x.shape[0], x.shape[1]) if batch_first else (x.shape[1], x.shape[0])


def _check_masks(layer: str, nhead: int, n, l: int, s: int, attn_mask, attn_name: str, pad_mask, pad_name: str):
    heads = nhead if n is None else n * nhead
    _check_mask(attn_mask, attn_name, ((l, s), (heads, l, s)), layer)
    _check_mask(pad_mask, pad_name, ((s,) if n is None else (n, s),), layer)


def _clones(module: Module, n: int) -> ModuleList:
    check_size(n, "num_layers", type(module).__name__)
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


# ------------------------------------------------------------------- fused sub-layers
# A Transformer layer is a handful of big matrix products with cheap elementwise work between
# them; the helpers below run each sub-layer as one graph node (ops.nn_ops) when its modules
# are the standard ones, so the per-node overhead is paid 4 times per layer, not 10.  A
# replaced module (a custom norm, activation or dropout), or one with hooks, takes the plain path
# (module by module, so that the hooks run; PyTorch's encoder layer does the same).
def _add_norm(x: Tensor, r: Tensor, dropout: Module, norm: Module) -> Tensor:
    """norm(x + dropout(r)), as one AddLayerNorm node for an nn.LayerNorm over the last dim."""
    args = _add_norm_args(x.shape, r.shape, dropout, norm)
    if args is None:
        return norm(x + dropout(r))  # (which also raises the errors of mismatched shapes)
    weights, settings = args
    return AddLayerNorm.apply(x, r, *weights, **settings)


def _add_norm_args(x_shape: tuple, r_shape: tuple, dropout: Module, norm: Module) -> tuple | None:
    """(weights, settings) of the AddLayerNorm node for norm(x + dropout(r)), or None when a module
    is not the standard one or the shapes do not fit."""
    weights = _norm_weights(x_shape, dropout, norm) if x_shape == r_shape else None
    if weights is None:
        return None
    keep, scale = _dropout_keep(dropout, r_shape)
    return weights, {"eps": norm.eps, "keep": keep, "scale": scale}


def _norm_weights(shape: tuple, dropout: Module, norm: Module) -> tuple | None:
    """(weight, bias) of ``norm`` when it is an nn.LayerNorm over the last dim of ``shape`` and
    ``dropout`` (its sub-layer's) an nn.Dropout, neither with hooks; else None."""
    params = norm._parameters
    w, b = params.get("weight"), params.get("bias")
    last = shape[-1:]
    if has_hooks(dropout, norm) or not (
        type(norm) is LayerNorm
        and type(dropout) is Dropout
        and norm.normalized_shape == last
        and (w is None or w.shape == last)
        and (b is None or b.shape == last)
    ):
        return None
    return w, b


def _feed_forward(x: Tensor, linear1: Module, activation, dropout: Module, linear2: Module) -> Tensor:
    """linear2(dropout(activation(linear1(x)))), as one FeedForward node for nn.Linear layers, ReLU or GELU."""
    args = _feed_forward_args(x.shape, linear1, activation, dropout, linear2)
    if args is None:
        return linear2(dropout(activation(linear1(x))))  # (which also raises the errors of mismatched shapes)
    weights, settings = args
    return FeedForward.apply(x, *weights, **settings)


def _feed_forward_args(x_shape: tuple, linear1: Module, activation, dropout: Module, linear2: Module) -> tuple | None:
    """(weights, settings) of the FeedForward node, or None when a module is not the standard one
    or the shapes do not fit."""
    found = _feed_forward_weights(x_shape, linear1, activation, dropout, linear2)
    if found is None:
        return None
    weights, kind = found
    keep, scale = _dropout_keep(dropout, x_shape[:-1] + weights[0].shape[:1])
    return weights, {"activation": kind, "keep": keep, "scale": scale}


def _feed_forward_weights(x_shape: tuple, linear1: Module, activation, dropout: Module, linear2: Module):
    """((w1, b1, w2, b2), activation kind) of the FeedForward node, or None when a module is not the
    standard one or the shapes do not fit."""
    kind = _fused_activation(activation)
    if kind is None or not (type(linear1) is Linear and type(linear2) is Linear and type(dropout) is Dropout):
        return None
    if has_hooks(linear1, activation, dropout, linear2):
        return None
    p1, p2 = linear1._parameters, linear2._parameters
    w1, b1, w2, b2 = p1["weight"], p1["bias"], p2["weight"], p2["bias"]
    if not (
        w1.shape[1:] == x_shape[-1:]
        and w2.shape[1:] == w1.shape[:1]
        and (b1 is None or b1.shape == w1.shape[:1])
        and (b2 is None or b2.shape == w2.shape[:1])
    ):
        return None
    return (w1, b1, w2, b2), kind


def _self_attention(mha: Module, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
    """mha(x, x, x, need_weights=False)[0]; straight to ``MultiheadAttention.self_attention`` (one
    node) for batched x of the parameters' dtype, which the layer has checked already."""
    if _standard_self_attention(mha, x.shape, x.dtype):
        return mha.self_attention(x, attn_mask, key_padding_mask, is_causal)
    return mha(
        x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False, is_causal=is_causal
    )[0]


def _standard_self_attention(mha: Module, shape: tuple, dtype) -> bool:
    """Whether ``mha`` is an nn.MultiheadAttention with packed weights for batched input of this
    shape and dtype (then one SelfAttention node does its work) and has no hooks (they need the call)."""
    return (
        type(mha) is MultiheadAttention
        and mha._hooks is None
        and len(shape) == 3
        and mha._qkv_same_embed_dim
        and shape[-1] == mha.embed_dim
        and dtype == mha._parameters["in_proj_weight"].dtype
    )


def _arrays(tensors) -> list:
    return [None if t is None else t._data for t in tensors]


def _fused_activation(activation) -> str | None:
    """'relu', 'gelu' or 'gelu_tanh' for the activations FeedForward fuses, else None."""
    if activation is relu or type(activation) is ReLU:
        return "relu"
    if activation is gelu:
        return "gelu"
    if type(activation) is GELU:
        return "gelu" if activation.approximate == "none" else "gelu_tanh"
    return None


def _dropout_keep(dropout: Dropout, shape: tuple) -> tuple:
    """(bool keep mask, scale) of ``dropout`` on ``shape``: (None, 1.0) when it is the identity
    (eval mode or p = 0).  Drawn from minitensor's generator, as ``F.dropout``."""
    p = dropout.p
    if not dropout.training or p == 0:
        return None, 1.0
    keep = random.generator().random(shape, dtype=np.float32) >= p
    return keep, (1.0 / (1.0 - p) if p < 1 else 0.0)


def _residual_dropout(dropout: Dropout, shape: tuple, dtype) -> np.ndarray | None:
    """The multipliers (0 or 1/(1-p)) of ``dropout`` on a sub-layer's output of ``shape``, drawn as
    ``F.dropout`` draws them (``ops.nn_ops.Dropout``); None when it is the identity."""
    if not dropout.training or dropout.p == 0:
        return None
    return dropout_multipliers(shape, dropout.p, dtype)


# ------------------------------------------------------------------- the whole layer as one node
def _encoder_layer_args(layer: Module, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> tuple | None:
    """(weights, settings) of the ``EncoderLayer`` node (``ops/encoder_layer.py``) for ``layer`` on the
    batched ``x``, or None when a sub-module is not the standard one or has hooks (the layer then
    runs module by module).  The dropout masks are drawn in the order the module-by-module path
    draws them: the same seed, the same masks."""
    m, shape, dtype = layer._modules, x.shape, x.dtype
    mha = m["self_attn"]
    norm1 = _norm_weights(shape, m["dropout1"], m["norm1"])
    norm2 = _norm_weights(shape, m["dropout3"], m["norm2"])
    feed = _feed_forward_weights(shape, m["linear1"], layer.activation, m["dropout2"], m["linear2"])
    if norm1 is None or norm2 is None or feed is None or not _standard_self_attention(mha, shape, dtype):
        return None
    attention_weights, attention = mha._fused_attention_args(shape, dtype, attn_mask, key_padding_mask, is_causal)
    (ff_weights, kind), settings = feed, {"norm_first": layer.norm_first, "attention": attention}
    eps1, eps2 = m["norm1"].eps, m["norm2"].eps
    if layer.norm_first:
        settings["mask1"] = _residual_dropout(m["dropout1"], shape, dtype)
        settings["norm1"], settings["norm2"] = {"n_dims": 1, "eps": eps1}, {"n_dims": 1, "eps": eps2}
    else:
        keep, scale = _dropout_keep(m["dropout1"], shape)
        settings["norm1"] = {"eps": eps1, "keep": keep, "scale": scale}
    keep, scale = _dropout_keep(m["dropout2"], shape[:-1] + ff_weights[0].shape[:1])
    settings["feed_forward"] = {"activation": kind, "keep": keep, "scale": scale}
    if layer.norm_first:
        settings["mask3"] = _residual_dropout(m["dropout3"], shape, dtype)
    else:
        keep, scale = _dropout_keep(m["dropout3"], shape)
        settings["norm2"] = {"eps": eps2, "keep": keep, "scale": scale}
    return (*attention_weights, *norm1, *ff_weights, *norm2), settings


def _decoder_layer_args(layer: Module, x: Tensor, memory: Tensor, masks: tuple, causal: tuple) -> tuple | None:
    """(weights, settings) of the ``DecoderLayer`` node (``ops/decoder_layer.py``) for ``layer`` on the
    batched ``x`` and ``memory``, or None when a sub-module is not the standard one or has hooks.
    ``masks``: (tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask); ``causal``:
    (tgt_is_causal, memory_is_causal).  The dropout masks are drawn in the order of the
    module-by-module path: the same seed, the same masks."""
    m, shape, dtype = layer._modules, x.shape, x.dtype
    self_attn, cross_attn = m["self_attn"], m["multihead_attn"]
    norms = [_norm_weights(shape, m[f"dropout{i}"], m[f"norm{i}"]) for i in (1, 2, 3)]
    feed = _feed_forward_weights(shape, m["linear1"], layer.activation, m["dropout"], m["linear2"])
    standard = _standard_self_attention(self_attn, shape, dtype) and _standard_self_attention(cross_attn, shape, dtype)
    if None in norms or feed is None or not standard:
        return None
    tgt_mask, memory_mask, tgt_pad, memory_pad = masks
    keys = memory.shape[1] if layer.batch_first else memory.shape[0]
    settings = {"norm_first": layer.norm_first}
    self_weights, settings["self_attention"] = self_attn._fused_attention_args(
        shape, dtype, tgt_mask, tgt_pad, causal[0]
    )
    settings["norm1"], settings["mask1"] = _norm_settings(layer, m["norm1"], m["dropout1"], shape, dtype)
    cross_weights, settings["cross_attention"] = cross_attn._fused_attention_args(
        shape, dtype, memory_mask, memory_pad, causal[1], keys
    )
    settings["norm2"], settings["mask2"] = _norm_settings(layer, m["norm2"], m["dropout2"], shape, dtype)
    (ff_weights, kind) = feed
    keep, scale = _dropout_keep(m["dropout"], shape[:-1] + ff_weights[0].shape[:1])
    settings["feed_forward"] = {"activation": kind, "keep": keep, "scale": scale}
    settings["norm3"], settings["mask3"] = _norm_settings(layer, m["norm3"], m["dropout3"], shape, dtype)
    weights = (*self_weights, *norms[0], *cross_weights, *norms[1], *ff_weights, *norms[2])
    return weights, settings


def _norm_settings(layer: Module, norm: LayerNorm, dropout: Dropout, shape: tuple, dtype) -> tuple:
    """(settings of the norm's op, the residual dropout's multipliers or None) for a sub-layer's
    add & norm: Pre-LN a LayerNorm and a residual dropout drawn as ``F.dropout`` draws it, Post-LN
    an AddLayerNorm with the dropout's keep mask (drawn here)."""
    if layer.norm_first:
        return {"n_dims": 1, "eps": norm.eps}, _residual_dropout(dropout, shape, dtype)
    keep, scale = _dropout_keep(dropout, shape)
    return {"eps": norm.eps, "keep": keep, "scale": scale}, None
