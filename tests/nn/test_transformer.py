"""nn/transformer.py without PyTorch: ``nn.Transformer`` (encoder and decoder stacks, masks, the
square subsequent mask), float64 gradchecks and errors.  (The layers: test_transformer_encoder.py and
test_transformer_decoder.py; against PyTorch: test_oracle_transformer.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import randn_f64
from transformer_layers import FF, E, H, N, S, T, randomise

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck


# ------------------------------------------------------------------ Transformer
class TestTransformer:
    def test_structure_and_init(self):
        model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16)
        assert len(model.encoder.layers) == 2 and len(model.decoder.layers) == 1
        assert isinstance(model.encoder.norm, nn.LayerNorm) and isinstance(model.decoder.norm, nn.LayerNorm)
        keys = list(model.state_dict())
        assert keys[0] == "encoder.layers.0.self_attn.in_proj_weight" and keys[-1] == "decoder.norm.bias"
        for name, p in model.named_parameters():
            if p.ndim > 1:  # xavier_uniform_ everywhere
                bound = math.sqrt(6.0 / sum(p.shape))
                assert np.abs(p.numpy()).max() <= bound, name
        assert np.all(model.encoder.norm.weight.numpy() == 1)

    def test_forward_shapes_and_composition(self, rng):
        model = randomise(nn.Transformer(E, H, 1, 1, FF, dropout=0.0, batch_first=True, dtype=mt.float64), seed=4)
        src, tgt = randn_f64(rng, N, S, E), randn_f64(rng, N, T, E)
        mask = nn.Transformer.generate_square_subsequent_mask(T, dtype=mt.float64)
        out = model(src, tgt, tgt_mask=mask)
        assert out.shape == (N, T, E)
        expected = model.decoder(tgt, model.encoder(src), tgt_mask=mask)
        np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12)
        np.testing.assert_allclose(model(src, tgt, tgt_is_causal=True).numpy(), out.numpy(), rtol=1e-12)
        assert model(src[0], tgt[0]).shape == (T, E)

    def test_gradcheck(self, rng):
        model = randomise(nn.Transformer(E, H, 1, 1, FF, dropout=0.0, dtype=mt.float64), seed=5)
        src, tgt = randn_f64(rng, S, 1, E), randn_f64(rng, T, 1, E)
        fn = lambda s, t, *ps: model(s, t, tgt_is_causal=True)  # noqa: E731
        assert gradcheck(fn, [src, tgt, *model.parameters()])

    def test_generate_square_subsequent_mask(self):
        mask = nn.Transformer.generate_square_subsequent_mask(4)
        assert mask.dtype == mt.float32 and mask.shape == (4, 4)
        i, j = np.indices((4, 4))
        assert np.all(np.isneginf(mask.numpy()) == (j > i)) and np.all(mask.numpy()[j <= i] == 0)
        assert nn.Transformer.generate_square_subsequent_mask(2, dtype=mt.float64).dtype == mt.float64

    def test_errors(self, rng):
        model = nn.Transformer(E, H, 1, 1, FF, dtype=mt.float64)
        with pytest.raises(ValueError, match="same batch size"):
            model(randn_f64(rng, S, 2, E), randn_f64(rng, T, 3, E))
        with pytest.raises(ValueError, match="d_model=4"):
            model(randn_f64(rng, S, 2, E), randn_f64(rng, T, 2, E + 1))
        with pytest.raises(ValueError, match="divisible"):
            nn.Transformer(d_model=10, nhead=3)
        with pytest.raises(ValueError, match="device"):
            nn.Transformer.generate_square_subsequent_mask(3, device="cuda")
