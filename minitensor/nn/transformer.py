"""The Transformer's layers: encoder and decoder layers, their stacks, and the whole model.

An encoder layer is self-attention then a position-wise feed-forward network
(FFN), each wrapped in a residual connection and a layer norm.  Post-LN
(``norm_first=False``, the original paper) normalises after the residual sum::

    x = LayerNorm(x + Dropout(SelfAttn(x)))
    x = LayerNorm(x + Dropout(FFN(x)))

Pre-LN (``norm_first=True``, GPT-2 and most modern models) normalises the
sub-layer's input and keeps the residual path an identity::

    x = x + Dropout(SelfAttn(LayerNorm(x)))
    x = x + Dropout(FFN(LayerNorm(x)))

with ``FFN(x) = Linear2(Dropout(activation(Linear1(x))))``.  A decoder layer
adds cross-attention to the encoder's output (``memory``) between the two.

Masks follow ``nn.MultiheadAttention``: a bool True means "may NOT attend",
a float mask is added to the scores; ``is_causal=True`` with no mask applies
the causal mask.  Parameter and state-dict names equal PyTorch's, so weights
move between the two through ``state_dict()`` / ``load_state_dict()``.

>>> layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, batch_first=True)
>>> layer(mt.randn(2, 5, 16)).shape
(2, 5, 16)
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from .. import random
from ..autograd.grad_mode import is_grad_enabled
from ..ops.attention import SelfAttention
from ..ops.nn_ops import AddLayerNorm, FeedForward
from ..ops.nn_ops import LayerNorm as LayerNormOp
from ..tensor import Tensor
from . import init
from ._utils import check_size, float_dtype
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .functional._checks import check_probability
from .functional.activation import gelu, relu
from .functional.attention import causal_mask
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]


# ------------------------------------------------------------------- helpers
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
    if device is not None and device != "cpu":
        raise ValueError(f"{layer}: device must be None or 'cpu' (minitensor runs on the CPU), got {device!r}")


def _check_input(x, name: str, d_model: int, dtype, layer: str) -> None:
    """A Tensor of rank 2 or 3 whose last dim is d_model and whose dtype is ``dtype`` (unless None)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{layer}: {name} must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (2, 3):
        raise ValueError(f"{layer}: {name} must be 3-D (batched) or 2-D (unbatched), got shape {x.shape}")
    if x.shape[-1] != d_model:
        raise ValueError(f"{layer}: {name}'s last dim must be d_model={d_model}, got shape {x.shape}")
    if dtype is not None and x.dtype != dtype:
        raise TypeError(
            f"{layer}: {name} has dtype {x.dtype} but the parameters have {dtype}; "
            f"convert one of them (module.to({x.dtype}) or {name}.to({dtype}))"
        )


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
# replaced module (a custom norm, activation or dropout) takes the plain path.
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
    params = norm._parameters
    w, b = params.get("weight"), params.get("bias")
    shape = x_shape[-1:]
    if not (
        type(norm) is LayerNorm
        and type(dropout) is Dropout
        and x_shape == r_shape
        and norm.normalized_shape == shape
        and (w is None or w.shape == shape)
        and (b is None or b.shape == shape)
    ):
        return None
    keep, scale = _dropout_keep(dropout, r_shape)
    return (w, b), {"eps": norm.eps, "keep": keep, "scale": scale}


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
    kind = _fused_activation(activation)
    if kind is None or not (type(linear1) is Linear and type(linear2) is Linear and type(dropout) is Dropout):
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
    keep, scale = _dropout_keep(dropout, x_shape[:-1] + w1.shape[:1])
    return (w1, b1, w2, b2), {"activation": kind, "keep": keep, "scale": scale}


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
    shape and dtype (then one SelfAttention node does its work)."""
    return (
        type(mha) is MultiheadAttention
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


# ------------------------------------------------------------------- encoder
class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward network, each with a residual connection and a layer norm.

    Args (positional order as on the Lucid page; pass the extras by keyword):
        d_model: E, the model width.
        nhead: number of attention heads; must divide ``d_model``.
        dim_feedforward: inner width of the FFN (default 2048).
        dropout: probability of the three dropouts (default 0.1).
        activation: ``'relu'`` (default), ``'gelu'`` or a callable (e.g. ``nn.GELU()``).
        batch_first: (N, S, E) instead of (S, N, E).
        norm_first: Pre-LN when True, Post-LN (the default) when False.
        device: None or ``'cpu'``.
        dtype: parameter dtype (default ``mt.get_default_dtype()``).
        layer_norm_eps: eps of both layer norms (keyword only).
        bias: learn the biases of the linear layers and the layer norms (keyword only).

    Attributes: ``self_attn`` (MultiheadAttention), ``linear1`` (E -> FF),
    ``linear2`` (FF -> E), ``norm1`` and ``norm2`` (LayerNorm), ``dropout1``
    (on the attention output), ``dropout2`` (inside the FFN, after the
    activation), ``dropout3`` (on the FFN output).

    Shapes: ``src`` (S, N, E), (N, S, E) with ``batch_first``, or unbatched
    (S, E); the output has the shape of ``src``.

    >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0)
    >>> layer(mt.randn(5, 3, 8)).shape    # (S, N, E)
    (5, 3, 8)
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable = "relu",
        batch_first: bool = False,
        norm_first: bool = False,
        device=None,
        dtype=None,
        *,
        layer_norm_eps: float = 1e-5,
        bias: bool = True,
    ) -> None:
        super().__init__()
        layer = "TransformerEncoderLayer"
        _check_config(layer, d_model, nhead, dim_feedforward, dropout, device)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, dtype=dtype
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation, layer)
        self.d_model, self.nhead = d_model, nhead
        self.batch_first, self.norm_first = bool(batch_first), bool(norm_first)

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        """Run the layer.

        Args:
            src: (S, N, E), (N, S, E) with ``batch_first``, or (S, E).
            src_mask: (S, S) or (N*nhead, S, S); bool True = may NOT attend, float = added.
            src_key_padding_mask: (N, S) (unbatched (S,)); True (or -inf) at padding positions.
            is_causal: with no ``src_mask``, position i attends to positions 0..i only.

        Returns:
            A tensor shaped like ``src``.
        """
        layer = "TransformerEncoderLayer"
        m = self._modules  # one dict lookup per sub-module, not Module.__getattr__
        _check_input(src, "src", self.d_model, m["linear1"]._parameters["weight"].dtype, layer)
        if src_mask is not None or src_key_padding_mask is not None:
            n, s = _sizes(src, self.batch_first)
            _check_masks(layer, self.nhead, n, s, s, src_mask, "src_mask", src_key_padding_mask, "src_key_padding_mask")
        if not self.training and not is_grad_enabled():
            y = self._inference(src, src_mask, src_key_padding_mask, is_causal)
            if y is not None:
                return y
        x = src
        if self.norm_first:
            x = x + self._sa_block(m["norm1"](x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(m["norm2"](x))
        else:
            sa = self._self_attention(x, src_mask, src_key_padding_mask, is_causal)
            x = _add_norm(x, sa, m["dropout1"], m["norm1"])
            x = _add_norm(x, self._feed_forward(x), m["dropout3"], m["norm2"])
        return x

    def extra_repr(self) -> str:
        """The layer's configuration (as on the Lucid page); the sub-layers follow in the repr."""
        activation = getattr(self.activation, "__name__", None) or repr(self.activation)
        return (
            f"d_model={self.d_model}, nhead={self.nhead}, dim_feedforward={self.linear1.out_features}, "
            f"dropout={self.dropout1.p}, activation={activation}, batch_first={self.batch_first}, "
            f"norm_first={self.norm_first}"
        )

    def _inference(self, src: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor | None:
        """The forward in eval mode under no_grad, as PyTorch's "fast path": each sub-layer one
        fused op on arrays (``Function.run``), no Tensor or graph node in between.  The same ops,
        so the same numbers, as the general path.  None when a sub-module is not a standard one
        (the caller then takes the general path)."""
        m, shape = self._modules, src.shape
        norms = [
            _add_norm_args(shape, shape, m[drop], m[norm])
            for drop, norm in (("dropout1", "norm1"), ("dropout3", "norm2"))
        ]
        ff = _feed_forward_args(shape, m["linear1"], self.activation, m["dropout2"], m["linear2"])
        if not _standard_self_attention(m["self_attn"], shape, src.dtype) or ff is None or None in norms:
            return None
        mha_weights, mha_settings = m["self_attn"]._self_attention_args(
            shape, src.dtype, attn_mask, key_padding_mask, is_causal
        )
        (norm1, settings1), (norm2, settings2) = norms
        norm1, norm2, mha_weights, ff_weights = _arrays(norm1), _arrays(norm2), _arrays(mha_weights), _arrays(ff[0])
        ff_settings = ff[1]
        x = src._data
        if self.norm_first:
            x = x + SelfAttention.run(LayerNormOp.run(x, *norm1, eps=settings1["eps"]), *mha_weights, **mha_settings)
            x = x + FeedForward.run(LayerNormOp.run(x, *norm2, eps=settings2["eps"]), *ff_weights, **ff_settings)
        else:
            x = AddLayerNorm.run(x, SelfAttention.run(x, *mha_weights, **mha_settings), *norm1, **settings1)
            x = AddLayerNorm.run(x, FeedForward.run(x, *ff_weights, **ff_settings), *norm2, **settings2)
        return Tensor._make(x, False, None)

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        """Dropout(SelfAttn(x))."""
        return self._modules["dropout1"](self._self_attention(x, attn_mask, key_padding_mask, is_causal))

    def _self_attention(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        """SelfAttn(x) (one node for batched input: ``MultiheadAttention.self_attention``)."""
        return _self_attention(self._modules["self_attn"], x, attn_mask, key_padding_mask, is_causal)

    def _ff_block(self, x: Tensor) -> Tensor:
        """Dropout(Linear2(Dropout(activation(Linear1(x)))))."""
        return self._modules["dropout3"](self._feed_forward(x))

    def _feed_forward(self, x: Tensor) -> Tensor:
        """Linear2(Dropout(activation(Linear1(x)))) (one FeedForward node for ReLU and GELU)."""
        m = self._modules
        return _feed_forward(x, m["linear1"], self.activation, m["dropout2"], m["linear2"])


class TransformerEncoder(Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer``, then an optional final ``norm``.

    Args:
        encoder_layer: the layer to copy (its weights are copied too; the
            copies are independent parameters).
        num_layers: how many layers.
        norm: a final module applied to the output (e.g. ``nn.LayerNorm``,
            usual with Pre-LN layers), or None.
        enable_nested_tensor, mask_check: accepted so that PyTorch code runs
            unchanged; they only select PyTorch's fast paths, and minitensor
            has one path (the output is the same).

    >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    >>> encoder = nn.TransformerEncoder(layer, num_layers=3, norm=nn.LayerNorm(8))
    >>> encoder(mt.randn(2, 5, 8)).shape
    (2, 5, 8)
    """

    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        if not isinstance(encoder_layer, Module):
            raise TypeError(f"TransformerEncoder: encoder_layer must be a Module, got {type(encoder_layer).__name__}")
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """Pass ``src`` through every layer (same masks for each), then ``norm``.

        ``mask`` and ``src_key_padding_mask`` are each layer's ``src_mask`` and
        ``src_key_padding_mask``; ``is_causal=True`` with no ``mask`` applies
        the causal mask.
        """
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        if self.norm is not None:
            x = self.norm(x)
        return x


# ------------------------------------------------------------------- decoder
class TransformerDecoderLayer(Module):
    """Masked self-attention, cross-attention to ``memory``, and a feed-forward network.

    Each of the three sub-layers has a residual connection and a layer norm
    (Post-LN: ``x = norm_i(x + sublayer(x))``; Pre-LN with ``norm_first``:
    ``x = x + sublayer(norm_i(x))``).

    Args (PyTorch's signature): ``d_model``, ``nhead``, ``dim_feedforward``,
    ``dropout``, ``activation`` ('relu', 'gelu' or a callable), ``layer_norm_eps``,
    ``batch_first``, ``norm_first``, ``bias``, ``device`` (None or 'cpu'), ``dtype``.

    Attributes: ``self_attn``, ``multihead_attn`` (the cross-attention),
    ``linear1``, ``dropout`` (inside the FFN), ``linear2``, ``norm1``,
    ``norm2``, ``norm3``, ``dropout1`` (self-attention output), ``dropout2``
    (cross-attention output), ``dropout3`` (FFN output).

    Shapes: ``tgt`` (T, N, E) and ``memory`` (S, N, E), batch first with
    ``batch_first``, or unbatched (T, E) and (S, E); the output is shaped like ``tgt``.

    >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    >>> layer(mt.randn(2, 4, 8), mt.randn(2, 6, 8), tgt_is_causal=True).shape
    (2, 4, 8)
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        layer = "TransformerDecoderLayer"
        _check_config(layer, d_model, nhead, dim_feedforward, dropout, device)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, dtype=dtype
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, dtype=dtype
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation, layer)
        self.d_model, self.nhead = d_model, nhead
        self.batch_first, self.norm_first = bool(batch_first), bool(norm_first)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Run the layer.

        Args:
            tgt: (T, N, E), (N, T, E) with ``batch_first``, or (T, E).
            memory: the encoder output, (S, N, E), (N, S, E) or (S, E).
            tgt_mask: (T, T) or (N*nhead, T, T), for the self-attention.
            memory_mask: (T, S) or (N*nhead, T, S), for the cross-attention.
            tgt_key_padding_mask: (N, T); memory_key_padding_mask: (N, S).
            tgt_is_causal / memory_is_causal: apply the causal mask when the
                corresponding mask is None.

        Masks: bool True = may NOT attend; float masks are added.
        """
        self._check_inputs(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask)
        x = tgt
        m = self._modules
        if self.norm_first:
            x = x + self._sa_block(m["norm1"](x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(m["norm2"](x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(m["norm3"](x))
        else:
            sa = self._self_attention(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = _add_norm(x, sa, m["dropout1"], m["norm1"])
            mha = self._cross_attention(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = _add_norm(x, mha, m["dropout2"], m["norm2"])
            x = _add_norm(x, self._feed_forward(x), m["dropout3"], m["norm3"])
        return x

    def _check_inputs(self, tgt, memory, tgt_mask, memory_mask, tgt_pad, memory_pad) -> None:
        layer = "TransformerDecoderLayer"
        dtype = self.linear1.weight.dtype
        _check_input(tgt, "tgt", self.d_model, dtype, layer)
        _check_input(memory, "memory", self.d_model, dtype, layer)
        n, t = _sizes(tgt, self.batch_first)
        n_mem, s = _sizes(memory, self.batch_first)
        if tgt.ndim != memory.ndim or n != n_mem:
            raise ValueError(
                f"{layer}: tgt and memory must both be batched with the same batch size, or both unbatched; "
                f"got shapes {tgt.shape} and {memory.shape} (batch_first={self.batch_first})"
            )
        _check_masks(layer, self.nhead, n, t, t, tgt_mask, "tgt_mask", tgt_pad, "tgt_key_padding_mask")
        _check_masks(layer, self.nhead, n, t, s, memory_mask, "memory_mask", memory_pad, "memory_key_padding_mask")

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        """Dropout1(SelfAttn(x))."""
        return self._modules["dropout1"](self._self_attention(x, attn_mask, key_padding_mask, is_causal))

    def _self_attention(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        """SelfAttn(x) (one node for batched input: ``MultiheadAttention.self_attention``)."""
        return _self_attention(self._modules["self_attn"], x, attn_mask, key_padding_mask, is_causal)

    def _mha_block(self, x: Tensor, memory: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        """Dropout2(CrossAttn(x, memory))."""
        return self._modules["dropout2"](self._cross_attention(x, memory, attn_mask, key_padding_mask, is_causal))

    def _cross_attention(self, x: Tensor, memory: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        """CrossAttn(x, memory)."""
        return self._modules["multihead_attn"](
            x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
            is_causal=is_causal,
        )[0]  # fmt: skip

    def _ff_block(self, x: Tensor) -> Tensor:
        """Dropout3(Linear2(Dropout(activation(Linear1(x)))))."""
        return self._modules["dropout3"](self._feed_forward(x))

    def _feed_forward(self, x: Tensor) -> Tensor:
        """Linear2(Dropout(activation(Linear1(x)))) (one FeedForward node for ReLU and GELU)."""
        m = self._modules
        return _feed_forward(x, m["linear1"], self.activation, m["dropout"], m["linear2"])


class TransformerDecoder(Module):
    """A stack of ``num_layers`` deep copies of ``decoder_layer``, then an optional final ``norm``.

    >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> decoder = nn.TransformerDecoder(layer, num_layers=2)
    >>> decoder(mt.randn(4, 2, 8), mt.randn(6, 2, 8)).shape     # tgt (T, N, E), memory (S, N, E)
    (4, 2, 8)
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        if not isinstance(decoder_layer, Module):
            raise TypeError(f"TransformerDecoder: decoder_layer must be a Module, got {type(decoder_layer).__name__}")
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Pass ``tgt`` through every layer (each attending to the same ``memory``), then ``norm``."""
        x = tgt
        for layer in self.layers:
            x = layer(
                x,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=bool(tgt_is_causal),
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            x = self.norm(x)
        return x


# ------------------------------------------------------------------- the model
class Transformer(Module):
    """The encoder-decoder Transformer (Vaswani et al., 2017), with PyTorch's signature.

    ``encoder`` is a ``TransformerEncoder`` of ``num_encoder_layers`` layers
    with a final ``LayerNorm``, ``decoder`` a ``TransformerDecoder`` likewise
    (or ``custom_encoder`` / ``custom_decoder``).  Every parameter with more
    than one dim is re-initialised xavier-uniform, as PyTorch does.

    Shapes: ``src`` (S, N, E) and ``tgt`` (T, N, E) (batch first with
    ``batch_first``, or unbatched (S, E), (T, E)); output (T, N, E), shaped
    like ``tgt``.  Embeddings, positional encodings and the output
    projection to a vocabulary are not part of the module.

    >>> model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
    ...                        dim_feedforward=16, batch_first=True)
    >>> mask = nn.Transformer.generate_square_subsequent_mask(4)
    >>> model(mt.randn(2, 6, 8), mt.randn(2, 4, 8), tgt_mask=mask).shape
    (2, 4, 8)
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable = "relu",
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        _check_config("Transformer", d_model, nhead, dim_feedforward, dropout, device)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(
                d_model, nhead, dim_feedforward, dropout, activation, batch_first, norm_first, device, dtype,
                layer_norm_eps=layer_norm_eps, bias=bias,
            )  # fmt: skip
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(
                d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias,
                device, dtype,
            )  # fmt: skip
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, bool(batch_first)

    def _reset_parameters(self) -> None:
        """xavier_uniform_ on every parameter with more than one dim (PyTorch's init)."""
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Encode ``src`` into ``memory``, then decode ``tgt`` attending to it.

        Masks as in the layers (bool True = may NOT attend, float = added):
        ``src_mask`` (S, S), ``tgt_mask`` (T, T) (usually
        ``generate_square_subsequent_mask(T)``), ``memory_mask`` (T, S);
        key padding masks (N, S), (N, T), (N, S).
        """
        for x, name in ((src, "src"), (tgt, "tgt")):
            _check_input(x, name, self.d_model, None, "Transformer")
        if src.ndim != tgt.ndim or _sizes(src, self.batch_first)[0] != _sizes(tgt, self.batch_first)[0]:
            raise ValueError(
                f"Transformer: src and tgt must have the same batch size, got shapes {src.shape} and {tgt.shape} "
                f"(batch_first={self.batch_first})"
            )
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The (sz, sz) float causal mask: 0 on and below the diagonal, -inf above it.

        >>> nn.Transformer.generate_square_subsequent_mask(3)
        tensor([[  0., -inf, -inf],
                [  0.,   0., -inf],
                [  0.,   0.,   0.]])
        """
        check_size(sz, "sz", "generate_square_subsequent_mask")
        if device is not None and device != "cpu":
            raise ValueError(f"generate_square_subsequent_mask: device must be None or 'cpu', got {device!r}")
        return Tensor._make(causal_mask(sz, sz, float_dtype(dtype, "generate_square_subsequent_mask")), False, None)
