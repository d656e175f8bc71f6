"""``TransformerDecoderLayer`` and ``TransformerDecoder`` (see ``nn/transformer.py`` for the overview)."""

from __future__ import annotations

from collections.abc import Callable

from ..tensor import Tensor
from . import fusion
from ._transformer_args import _activation, _check_config, _check_input, _check_masks, _clones, _sizes
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
        causal = (tgt_is_causal, memory_is_causal)
        tgt, memory = self._check_inputs(tgt, memory, *masks)
        fused = fusion.decoder_layer(self, tgt, memory, masks, causal)  # (None: not fusable)
        return fused if fused is not None else self._composite(tgt, memory, masks, causal)

    def _composite(self, x: Tensor, memory: Tensor, masks: tuple, causal: tuple) -> Tensor:
        """The layer's definition, module by module (PyTorch's): what ``forward`` computes."""
        tgt_mask, memory_mask, tgt_pad, memory_pad = masks
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_pad, causal[0])
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_pad, causal[1])
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_pad, causal[0]))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_pad, causal[1]))
        return self.norm3(x + self._ff_block(x))

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
        x = self.self_attn(
            x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False, is_causal=is_causal
        )[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, memory: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        """Dropout2(CrossAttn(x, memory))."""
        x = self.multihead_attn(
            x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
            is_causal=is_causal,
        )[0]  # fmt: skip
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        """Dropout3(Linear2(Dropout(activation(Linear1(x)))))."""
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


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
