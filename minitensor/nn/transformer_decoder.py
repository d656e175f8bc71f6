"""``TransformerDecoderLayer`` and ``TransformerDecoder`` (see ``nn/transformer.py`` for the overview)."""

from __future__ import annotations

from collections.abc import Callable

from ..autograd.grad_mode import is_grad_enabled
from ..ops.decoder_layer import DecoderLayer, layer_arrays
from ..tensor import Tensor
from ._transformer_parts import (
    _activation,
    _add_norm,
    _arrays,
    _check_config,
    _check_input,
    _check_masks,
    _clones,
    _decoder_layer_args,
    _feed_forward,
    _self_attention,
    _sizes,
)
from .attention import MultiheadAttention
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm


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
        masks = (tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask)
        tgt, memory = self._check_inputs(tgt, memory, *masks)
        args = _decoder_layer_args(self, tgt, memory, masks, (tgt_is_causal, memory_is_causal))
        if args is not None:  # the standard sub-modules: the fused path (ops/decoder_layer.py)
            weights, settings = args
            if not self.training and not is_grad_enabled():  # arrays only, no graph
                return Tensor._make(layer_arrays(tgt._data, memory._data, *_arrays(weights), **settings), False, None)
            return DecoderLayer.apply(tgt, memory, *weights, **settings)  # one graph node
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

    def _check_inputs(self, tgt, memory, tgt_mask, memory_mask, tgt_pad, memory_pad) -> tuple:
        """tgt and memory as Tensors (NumPy arrays converted), checked with the masks."""
        layer = "TransformerDecoderLayer"
        dtype = self.linear1.weight.dtype
        tgt = _check_input(tgt, "tgt", self.d_model, dtype, layer)
        memory = _check_input(memory, "memory", self.d_model, dtype, layer)
        n, t = _sizes(tgt, self.batch_first)
        n_mem, s = _sizes(memory, self.batch_first)
        if tgt.ndim != memory.ndim or n != n_mem:
            raise ValueError(
                f"{layer}: tgt and memory must both be batched with the same batch size, or both unbatched; "
                f"got shapes {tgt.shape} and {memory.shape} (batch_first={self.batch_first})"
            )
        _check_masks(layer, self.nhead, n, t, t, tgt_mask, "tgt_mask", tgt_pad, "tgt_key_padding_mask")
        _check_masks(layer, self.nhead, n, t, s, memory_mask, "memory_mask", memory_pad, "memory_key_padding_mask")
        return tgt, memory

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
