"""Small float64 Transformer layers with non-trivial weights, shared by the Transformer tests
(test_transformer_encoder.py, test_transformer_decoder.py, test_transformer.py).

Sizes: model width ``E``, heads ``H``, feed-forward width ``FF``, batch ``N``, source length ``S``,
target length ``T``.
"""

from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn as nn

E, H, FF, N, S, T = 4, 2, 6, 2, 3, 2


def randomise(module: nn.Module, seed: int = 0) -> nn.Module:
    """Non-trivial values for every parameter (layer-norm scales away from 1, biases away from 0)."""
    rng = np.random.default_rng(seed)
    with mt.no_grad():
        for p in module.parameters():
            p.copy_(rng.standard_normal(p.shape) * (0.5 if p.ndim > 1 else 0.3) + (1.0 if p.ndim == 1 else 0.0))
    return module


def encoder_layer(**kwargs) -> nn.TransformerEncoderLayer:
    """A float64 ``TransformerEncoderLayer(E, H, FF)`` without dropout (unless given), randomised."""
    kwargs.setdefault("dropout", 0.0)
    return randomise(nn.TransformerEncoderLayer(E, H, FF, dtype=mt.float64, **kwargs))


def decoder_layer(**kwargs) -> nn.TransformerDecoderLayer:
    """A float64 ``TransformerDecoderLayer(E, H, FF)`` without dropout (unless given), randomised."""
    kwargs.setdefault("dropout", 0.0)
    return randomise(nn.TransformerDecoderLayer(E, H, FF, dtype=mt.float64, **kwargs))
