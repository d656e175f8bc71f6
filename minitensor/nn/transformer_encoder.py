"""``TransformerEncoderLayer`` and ``TransformerEncoder``: a Transformer encoder, as PyTorch writes it.

A layer is self-attention and a feed-forward network, each with a residual connection,
dropout and a layer norm.  Its ``forward`` reads as PyTorch's (``_sa_block``, ``_ff_block``)::

    Post-LN (the default):  x = norm1(x + _sa_block(x));   x = norm2(x + _ff_block(x))
    Pre-LN (norm_first):    x = x + _sa_block(norm1(x));   x = x + _ff_block(norm2(x))

That composite is the layer's definition.  The fast path: with the standard sub-modules and
no hooks, ``nn/fusion.py`` runs the same computation as one fused graph node
(``ops/fused/encoder_layer.py``), tested to give the composite's numbers and gradients.
(``nn/transformer.py`` has the overview of the Transformer family.)
"""

from __future__ import annotations

from collections.abc import Callable

from ..tensor import Tensor
from . import fusion
from ._transformer_args import (
    Default,
    _activation,
    _check_config,
    _check_input,
    _check_masks,
    _clones,
    _sizes,
    positional_options,
)
from .attention import MultiheadAttention
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

_NONE = Default(None)  # (device and dtype: a default None, told apart from a None that is passed)


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
        layer_norm_eps: eps of both layer norms (keyword only in the Lucid order).
        bias: learn the biases of the linear layers and the layer norms (keyword only in the Lucid order).

    PyTorch's positional order differs after ``activation``: (..., activation, layer_norm_eps,
    batch_first, norm_first, bias, device, dtype).  A call written for it is recognised by its
    sixth argument, a float (``layer_norm_eps``), and then read in PyTorch's order; a sixth
    argument that could mean either (an int such as 0 or 1) raises a TypeError naming both
    orders (``_transformer_args.positional_options``).  Keyword calls mean the same in both.

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
        *args,  # batch_first, norm_first, device, dtype (or PyTorch's order: see the class docstring)
        batch_first: bool = Default(False),
        norm_first: bool = Default(False),
        device=_NONE,
        dtype=_NONE,
        layer_norm_eps: float = Default(1e-5),
        bias: bool = Default(True),
    ) -> None:
        super().__init__()
        layer = "TransformerEncoderLayer"
        options = positional_options(
            layer, args, {"batch_first": batch_first, "norm_first": norm_first, "device": device, "dtype": dtype,
                          "layer_norm_eps": layer_norm_eps, "bias": bias},
        )  # fmt: skip
        batch_first, norm_first, device, dtype = (options[k] for k in ("batch_first", "norm_first", "device", "dtype"))
        layer_norm_eps, bias = options["layer_norm_eps"], options["bias"]
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
        src = _check_input(src, "src", self.d_model, self._modules["linear1"]._parameters["weight"].dtype, layer)
        if src_mask is not None or src_key_padding_mask is not None:
            n, s = _sizes(src, self.batch_first)
            _check_masks(layer, self.nhead, n, s, s, src_mask, "src_mask", src_key_padding_mask, "src_key_padding_mask")
        fused = fusion.encoder_layer(self, src, src_mask, src_key_padding_mask, is_causal)  # (None: not fusable)
        return fused if fused is not None else self._composite(src, src_mask, src_key_padding_mask, is_causal)

    def _composite(self, x: Tensor, src_mask, src_key_padding_mask, is_causal: bool) -> Tensor:
        """The layer's definition, module by module (PyTorch's): what ``forward`` computes."""
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def extra_repr(self) -> str:
        """The layer's configuration (as on the Lucid page); the sub-layers follow in the repr."""
        activation = getattr(self.activation, "__name__", None) or repr(self.activation)
        return (
            f"d_model={self.d_model}, nhead={self.nhead}, dim_feedforward={self.linear1.out_features}, "
            f"dropout={self.dropout1.p}, activation={activation}, batch_first={self.batch_first}, "
            f"norm_first={self.norm_first}"
        )

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        """Dropout1(SelfAttn(x))."""
        x = self.self_attn(
            x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False, is_causal=is_causal
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        """Dropout3(Linear2(Dropout2(activation(Linear1(x)))))."""
        return self.dropout3(self.linear2(self.dropout2(self.activation(self.linear1(x)))))


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
