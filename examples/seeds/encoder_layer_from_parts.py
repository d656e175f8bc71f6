"""Seed 000: an encoder layer assembled by hand from a feed-forward block and MultiheadAttention.

The seed's PyTorch code, in minitensor: ``PositionWiseFeedForward`` (Linear ->
ReLU -> Dropout -> Linear) and ``EncoderLayer`` (self-attention and the FFN, each
followed by dropout, a residual connection and a LayerNorm: Post-LN).  The
script then copies the hand-made layer's weights into the library's
``nn.TransformerEncoderLayer`` and shows that both compute the same thing.

Run:  python examples/seeds/encoder_layer_from_parts.py
"""

from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn as nn


class PositionWiseFeedForward(nn.Module):
    """Two linear maps with a ReLU between them, applied at every position: (N, S, E) -> (N, S, E)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.linear_1 = nn.Linear(d_model, d_ff)
        self.activation = nn.ReLU()  # or nn.GELU()
        self.dropout = nn.Dropout(dropout)  # dropout often applied after the activation
        self.linear_2 = nn.Linear(d_ff, d_model)

    def forward(self, x: mt.Tensor) -> mt.Tensor:
        return self.linear_2(self.dropout(self.activation(self.linear_1(x))))


class EncoderLayer(nn.Module):
    """x = norm1(x + dropout1(SelfAttn(x)));  x = norm2(x + dropout2(FFN(x))).  Input (N, S, E)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
        self.feed_forward = PositionWiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x: mt.Tensor, mask: mt.Tensor | None = None) -> mt.Tensor:
        """``mask``: (N, S) key padding mask, True at padding positions (or None)."""
        attn_output, _ = self.self_attn(x, x, x, key_padding_mask=mask, need_weights=False)
        x = self.norm1(x + self.dropout1(attn_output))  # residual connection 1
        ff_output = self.feed_forward(x)
        return self.norm2(x + self.dropout2(ff_output))  # residual connection 2


def library_state_dict(layer: EncoderLayer) -> dict:
    """The hand-made layer's weights under ``nn.TransformerEncoderLayer``'s names."""
    rename = {"feed_forward.linear_1.": "linear1.", "feed_forward.linear_2.": "linear2."}
    state = {}
    for key, value in layer.state_dict().items():
        for old, new in rename.items():
            key = key.replace(old, new)
        state[key] = value
    return state


def main() -> None:
    mt.manual_seed(0)
    batch_size, seq_len, d_model, num_heads, d_ff = 2, 10, 64, 8, 256
    layer = EncoderLayer(d_model, num_heads, d_ff, dropout=0.1)
    x = mt.randn(batch_size, seq_len, d_model)
    padding = np.zeros((batch_size, seq_len), dtype=bool)
    padding[1, 7:] = True  # the second sequence has 7 real tokens and 3 padding positions

    out_train = layer(x, padding)  # training mode: dropout active
    layer.eval()
    out = layer(x, padding)
    print(f"input shape: {x.shape}")
    print(f"output shape (training): {out_train.shape}")
    print(f"output shape (inference): {out.shape}")

    builtin = nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0.1, batch_first=True).eval()
    builtin.load_state_dict(library_state_dict(layer))
    same = builtin(x, src_key_padding_mask=padding)
    print(f"nn.TransformerEncoderLayer output shape: {same.shape}")
    print(f"max difference to nn.TransformerEncoderLayer: {np.abs(same.numpy() - out.numpy()).max():.2e}")


if __name__ == "__main__":
    main()
