"""nn/transformer_decoder.py without PyTorch: ``TransformerDecoderLayer`` and ``TransformerDecoder``:
the formulas, masks, float64 gradchecks of every input and parameter, and errors.  (Against PyTorch:
test_oracle_transformer.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import randn_f64
from transformer_layers import E, N, S, T, decoder_layer

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck


# ------------------------------------------------------------------ decoder
class TestDecoder:
    def test_attributes_and_state_dict(self):
        layer = nn.TransformerDecoderLayer(8, 2, 16)
        names = [n for n, _ in layer.named_children()]
        assert names == [
            "self_attn",
            "multihead_attn",
            "linear1",
            "dropout",
            "linear2",
            "norm1",
            "norm2",
            "norm3",
            "dropout1",
            "dropout2",
            "dropout3",
        ]
        keys = list(layer.state_dict())
        attn = ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias")
        assert keys[:8] == [f"{a}.{p}" for a in ("self_attn", "multihead_attn") for p in attn]
        assert keys[8:] == [
            f"{m}.{p}" for m in ("linear1", "linear2", "norm1", "norm2", "norm3") for p in ("weight", "bias")
        ]

    @pytest.mark.parametrize("norm_first", [False, True])
    def test_formulas(self, rng, norm_first):
        layer = decoder_layer(norm_first=norm_first, batch_first=True)
        tgt, mem = randn_f64(rng, N, T, E), randn_f64(rng, N, S, E)

        def sa(y):
            return layer.self_attn(y, y, y, is_causal=True)[0]

        def ca(y):
            return layer.multihead_attn(y, mem, mem)[0]

        def ffn(y):
            return layer.linear2(layer.linear1(y).relu())

        x = tgt
        if norm_first:
            x = x + sa(layer.norm1(x))
            x = x + ca(layer.norm2(x))
            expected = x + ffn(layer.norm3(x))
        else:
            x = layer.norm1(x + sa(x))
            x = layer.norm2(x + ca(x))
            expected = layer.norm3(x + ffn(x))
        got = layer(tgt, mem, tgt_is_causal=True)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)

    @pytest.mark.parametrize("norm_first", [False, True])
    def test_gradcheck_inputs_and_all_parameters(self, rng, norm_first):
        layer = decoder_layer(norm_first=norm_first)
        tgt, mem = randn_f64(rng, T, N, E), randn_f64(rng, S, N, E)
        pad = np.array([[False, True, False], [False, False, False]])
        fn = lambda t, m, *ps: layer(t, m, tgt_is_causal=True, memory_key_padding_mask=pad)  # noqa: E731
        assert gradcheck(fn, [tgt, mem, *layer.parameters()])

    def test_masks_and_unbatched(self, rng):
        layer = decoder_layer()
        tgt, mem = randn_f64(rng, T, N, E), randn_f64(rng, S, N, E)
        causal = nn.Transformer.generate_square_subsequent_mask(T, dtype=mt.float64)
        a = layer(tgt, mem, tgt_mask=causal)
        np.testing.assert_allclose(layer(tgt, mem, tgt_is_causal=True).numpy(), a.numpy(), rtol=1e-12)
        assert not np.allclose(layer(tgt, mem).numpy(), a.numpy())
        memory_mask = np.zeros((T, S), dtype=bool)
        memory_mask[:, -1] = True
        b = layer(tgt, mem, memory_mask=memory_mask)
        np.testing.assert_allclose(layer(tgt, mem[:-1]).numpy(), b.numpy(), rtol=1e-12)
        np.testing.assert_allclose(layer(tgt[:, 1], mem[:, 1], tgt_mask=causal).numpy(), a.numpy()[:, 1], rtol=1e-12)

    def test_stack(self, rng):
        decoder = nn.TransformerDecoder(decoder_layer(), 2, norm=nn.LayerNorm(E, dtype=mt.float64))
        tgt, mem = randn_f64(rng, T, N, E), randn_f64(rng, S, N, E)
        expected = tgt
        for sub in decoder.layers:
            expected = sub(expected, mem, tgt_is_causal=True)
        got = decoder(tgt, mem, tgt_is_causal=True)
        np.testing.assert_allclose(got.numpy(), decoder.norm(expected).numpy(), rtol=1e-12)
        assert list(decoder.state_dict())[-2:] == ["norm.weight", "norm.bias"]

    @pytest.mark.parametrize(
        "case, error, match",
        [
            ("memory_dim", ValueError, "memory's last dim must be d_model=4"),
            ("batch", ValueError, "same batch size"),
            ("memory_mask", ValueError, r"memory_mask must have shape \(2, 3\)"),
            ("tgt_pad", ValueError, r"tgt_key_padding_mask must have shape \(2, 2\)"),
        ],
    )
    def test_errors(self, rng, case, error, match):
        layer = decoder_layer()
        tgt, mem = randn_f64(rng, T, N, E), randn_f64(rng, S, N, E)
        kwargs = {
            "memory_dim": {"memory": randn_f64(rng, S, N, E + 1)},
            "batch": {"memory": randn_f64(rng, S, N + 1, E)},
            "memory_mask": {"memory_mask": np.zeros((T, T), dtype=bool)},
            "tgt_pad": {"tgt_key_padding_mask": np.zeros((N, S), dtype=bool)},
        }[case]
        kwargs = {"tgt": tgt, "memory": mem, **kwargs}
        with pytest.raises(error, match=match):
            layer(**kwargs)
