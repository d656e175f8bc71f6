"""Seed 002: the Haiku tutorial's encoder block and 6-layer encoder, in minitensor.

The seed builds ``EncoderBlock`` (self-attention and a position-wise FFN, each
with dropout, a residual connection and LayerNorm) and stacks six of them.  Its
mask has shape (bs, 1, seq_len) with 1 = attend and 0 = padding; minitensor's
``key_padding_mask`` is the opposite (True = padding), so it is converted.

Sizes as in the seed: bs 2, seq_len 12, d_model 64, 8 heads, d_ff 128, dropout 0.1.
A random 0/1 mask may hide every key of a sequence: minitensor then gives
all-zero attention weights instead of NaN, so the output stays finite.

Run:  python examples/seeds/haiku_encoder.py
"""

from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn as nn


class PositionwiseFeedForward(nn.Module):
    """relu(x W1 + b1), dropout while training, then W2 + b2.  (N, S, d_model) -> same."""

    def __init__(self, d_model: int, d_ff: int, p_dropout: float = 0.1) -> None:
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(p_dropout)

    def forward(self, x: mt.Tensor) -> mt.Tensor:
        return self.w_2(self.dropout(self.w_1(x).relu()))


class EncoderBlock(nn.Module):
    """x = norm1(x + dropout(attn(x)));  x = norm2(x + dropout(ff(x))).  Input (N, S, d_model)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, p_dropout: float) -> None:
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
        self.ff = PositionwiseFeedForward(d_model, d_ff, p_dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(p_dropout)
        self.dropout2 = nn.Dropout(p_dropout)

    def forward(self, x: mt.Tensor, padding: np.ndarray | None = None) -> mt.Tensor:
        sub_x, _ = self.self_attn(x, x, x, key_padding_mask=padding, need_weights=False)
        x = self.norm1(x + self.dropout1(sub_x))
        return self.norm2(x + self.dropout2(self.ff(x)))


class TransformerEncoder(nn.Module):
    """``num_layers`` EncoderBlocks, one after the other."""

    def __init__(self, num_layers: int, num_heads: int, d_model: int, d_ff: int, p_dropout: float) -> None:
        super().__init__()
        self.layers = nn.ModuleList([EncoderBlock(d_model, num_heads, d_ff, p_dropout) for _ in range(num_layers)])

    def forward(self, x: mt.Tensor, padding: np.ndarray | None = None) -> mt.Tensor:
        for layer in self.layers:
            x = layer(x, padding)
        return x


def main() -> None:
    mt.manual_seed(0)
    bs, seq_len, d_model, num_heads, d_ff, num_layers, p_dropout = 2, 12, 64, 8, 128, 6, 0.1
    x = mt.randn(bs, seq_len, d_model)
    mask = np.random.default_rng(0).integers(0, 2, size=(bs, 1, seq_len))  # Haiku style: 1 = attend
    padding = mask[:, 0, :] == 0  # minitensor style: True = padding

    block = EncoderBlock(d_model, num_heads, d_ff, p_dropout)
    out = block(x, padding)  # training mode: dropout active, as is_train=True in the seed
    print("Out", out.shape)

    encoder = TransformerEncoder(num_layers, num_heads, d_model, d_ff, p_dropout)
    out = encoder(x, padding)
    print("Encoder out", out.shape)

    # The same stack from the library's layers.
    layer = nn.TransformerEncoderLayer(d_model, num_heads, d_ff, p_dropout, batch_first=True)
    library_encoder = nn.TransformerEncoder(layer, num_layers)
    out = library_encoder(x, src_key_padding_mask=padding)
    print("nn.TransformerEncoder out", out.shape, "finite:", bool(np.isfinite(out.numpy()).all()))


if __name__ == "__main__":
    main()
