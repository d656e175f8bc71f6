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

from collections.abc import Callable

from ..tensor import Tensor
from . import init
from ._transformer_args import _check_config, _check_input, _sizes
from ._utils import check_size, float_dtype
from .functional._checks import as_input
from .functional.attention import causal_mask
from .module import Module
from .normalization import LayerNorm
from .transformer_decoder import TransformerDecoder, TransformerDecoderLayer
from .transformer_encoder import TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]


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
                d_model, nhead, dim_feedforward, dropout, activation, batch_first=batch_first, norm_first=norm_first,
                device=device, dtype=dtype, layer_norm_eps=layer_norm_eps, bias=bias,
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
        like = next((p.dtype for p in self.parameters()), None)  # NumPy arrays -> Tensors of this dtype
        src, tgt = (as_input(x, name, "Transformer", like) for x, name in ((src, "src"), (tgt, "tgt")))
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
