"""Seed 003: encoder and decoder stacks, the output projection and the softmax, in minitensor.

The seed's ``EncoderLayer``/``Encoder`` and ``DecoderLayer``/``Decoder`` (masked
self-attention, encoder-decoder attention and a feed-forward block, each with
dropout, a residual connection and LayerNorm), followed by a Linear layer to
the vocabulary and a softmax: P(y_i | y_<i, x) = softmax(Linear(decoder_output_i)).

Run:  python examples/seeds/encoder_decoder.py
"""

from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F


def feed_forward(d_model: int, d_ff: int, dropout: float) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model))


class EncoderLayer(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, num_heads, dropout=dropout, batch_first=True)
        self.feed_forward = feed_forward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, src: mt.Tensor, src_mask=None) -> mt.Tensor:
        """src (N, S, E); src_mask: (N, S) padding mask, True at padding."""
        attn_output, _ = self.self_attn(src, src, src, key_padding_mask=src_mask, need_weights=False)
        src = self.norm1(src + self.dropout(attn_output))
        return self.norm2(src + self.dropout(self.feed_forward(src)))


class Encoder(nn.Module):
    def __init__(self, num_layers: int, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)])

    def forward(self, src: mt.Tensor, src_mask=None) -> mt.Tensor:
        for layer in self.layers:
            src = layer(src, src_mask)
        return src


class DecoderLayer(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, num_heads, dropout=dropout, batch_first=True)
        self.encoder_attn = nn.MultiheadAttention(d_model, num_heads, dropout=dropout, batch_first=True)
        self.feed_forward = feed_forward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, tgt: mt.Tensor, memory: mt.Tensor, tgt_mask=None, memory_mask=None) -> mt.Tensor:
        """tgt (N, T, E), memory (N, S, E); tgt_mask (T, T) causal; memory_mask (N, S) padding."""
        attn_output, _ = self.self_attn(tgt, tgt, tgt, attn_mask=tgt_mask, need_weights=False)
        tgt = self.norm1(tgt + self.dropout(attn_output))
        attn_output, _ = self.encoder_attn(tgt, memory, memory, key_padding_mask=memory_mask, need_weights=False)
        tgt = self.norm2(tgt + self.dropout(attn_output))
        return self.norm3(tgt + self.dropout(self.feed_forward(tgt)))


class Decoder(nn.Module):
    def __init__(self, num_layers: int, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.layers = nn.ModuleList([DecoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)])

    def forward(self, tgt: mt.Tensor, memory: mt.Tensor, tgt_mask=None, memory_mask=None) -> mt.Tensor:
        for layer in self.layers:
            tgt = layer(tgt, memory, tgt_mask, memory_mask)
        return tgt


def main() -> None:
    mt.manual_seed(0)
    num_layers, d_model, num_heads, d_ff, vocab_size = 6, 64, 4, 256, 1000
    batch, src_len, tgt_len = 2, 10, 7
    encoder = Encoder(num_layers, d_model, num_heads, d_ff).eval()
    decoder = Decoder(num_layers, d_model, num_heads, d_ff).eval()
    output_projection = nn.Linear(d_model, vocab_size)

    src = mt.randn(batch, src_len, d_model)  # embeddings (incl. positional) are assumed done
    tgt = mt.randn(batch, tgt_len, d_model)
    src_padding = np.zeros((batch, src_len), dtype=bool)
    src_padding[0, 8:] = True  # the first source sentence has 8 tokens
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_len)  # no peeking at later tokens

    memory = encoder(src, src_padding)
    decoded = decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=src_padding)
    probs = F.softmax(output_projection(decoded), dim=-1)
    print(f"encoder output shape: {memory.shape}")
    print(f"decoder output shape: {decoded.shape}")
    print(f"probabilities shape: {probs.shape}")
    print(f"probabilities sum to 1: {bool(np.allclose(probs.numpy().sum(-1), 1.0, atol=1e-5))}")

    # The library's nn.Transformer does the encoder and decoder stacks in one module.
    model = nn.Transformer(d_model, num_heads, num_layers, num_layers, d_ff, batch_first=True).eval()
    out = model(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_padding, memory_key_padding_mask=src_padding)
    print(f"nn.Transformer output shape: {out.shape}")


if __name__ == "__main__":
    main()
