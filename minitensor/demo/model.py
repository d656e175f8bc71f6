"""The demo's classifier: token embedding + positions -> Transformer encoder -> mean pooling -> Linear.

>>> model = RepeatDetector(vocab_size=10, max_len=8, d_model=16, num_layers=1)
>>> model(np.zeros((3, 8), dtype=np.int64)).shape     # (N, L) token ids -> (N, 2) logits
(3, 2)
>>> model.attention_maps(np.arange(8)).shape           # one (L, L) map per layer
(1, 8, 8)
"""

from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn as nn


def sinusoidal_positions(max_len: int, d_model: int) -> np.ndarray:
    """The fixed positional encoding of "Attention Is All You Need": (max_len, d_model) float32.

    Column 2i is ``sin(pos / 10000^(2i/d_model))`` and column 2i+1 the matching
    cosine, so every position gets a distinct pattern and nearby positions similar ones.
    """
    if d_model % 2:
        raise ValueError(f"sinusoidal_positions: d_model must be even, got {d_model}")
    pos = np.arange(max_len, dtype=np.float64)[:, None]  # (L, 1)
    angle = pos / 10000.0 ** (np.arange(0, d_model, 2) / d_model)  # (L, d_model / 2)
    table = np.empty((max_len, d_model), dtype=np.float32)
    table[:, 0::2] = np.sin(angle)
    table[:, 1::2] = np.cos(angle)
    return table


class RepeatDetector(nn.Module):
    """Says whether a token sequence contains a repeated token (class 1) or not (class 0).

    Args:
        vocab_size: V, the number of token ids.
        max_len: the longest sequence the positional table covers.
        d_model: E, the model width; even and divisible by ``nhead``.
        nhead: attention heads per layer.
        num_layers: encoder layers.
        norm_first: Pre-LN layers (then a final LayerNorm is added) instead of Post-LN.

    Shapes: tokens (N, L) int64 with L <= ``max_len`` -> logits (N, 2).
    No dropout: every training batch is fresh data, so there is nothing to overfit.
    """

    def __init__(
        self, vocab_size: int, max_len: int, d_model: int = 32, nhead: int = 4, num_layers: int = 2,
        norm_first: bool = False,
    ) -> None:  # fmt: skip
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.register_buffer("positions", mt.from_numpy(sinusoidal_positions(max_len, d_model)), persistent=False)
        layer = nn.TransformerEncoderLayer(
            d_model, nhead, dim_feedforward=2 * d_model, dropout=0.0, batch_first=True, norm_first=norm_first
        )
        final_norm = nn.LayerNorm(d_model) if norm_first else None
        self.encoder = nn.TransformerEncoder(layer, num_layers, norm=final_norm)
        self.head = nn.Linear(d_model, 2)

    def embed(self, tokens) -> mt.Tensor:
        """Token vectors plus position vectors: (N, L) -> (N, L, E)."""
        length = np.shape(tokens)[-1]
        return self.embedding(tokens) + self.positions[:length]

    def forward(self, tokens) -> mt.Tensor:
        """Logits (N, 2) for tokens (N, L): the mean of the encoder's outputs over positions, projected."""
        hidden = self.encoder(self.embed(tokens))  # (N, L, E)
        return self.head(hidden.mean(dim=1))

    def attention_maps(self, tokens: np.ndarray) -> np.ndarray:
        """Each layer's self-attention weights for one sequence, averaged over heads: (L,) -> (layers, L, L).

        Row i of a map is how much position i (the query) takes from every
        position (the keys); each row sums to 1.  The weights come from the
        layer's own ``self_attn(..., need_weights=True)``, fed exactly what the
        layer feeds it (``norm1(x)`` for Pre-LN, ``x`` for Post-LN).
        """
        maps = []
        with mt.no_grad():
            x = self.embed(np.asarray(tokens)[None])  # (1, L, E)
            for layer in self.encoder.layers:
                y = layer.norm1(x) if layer.norm_first else x
                _, weights = layer.self_attn(y, y, y, need_weights=True)  # (1, L, L)
                maps.append(weights.numpy()[0])
                x = layer(x)
        return np.stack(maps)
