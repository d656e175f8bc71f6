"""nn/transformer_encoder.py without PyTorch: ``TransformerEncoderLayer`` and ``TransformerEncoder``:
the Post-LN / Pre-LN formulas, names, masks, float64 gradchecks of every input and parameter, deep
copies and errors.  (Against PyTorch: test_oracle_transformer.py.)"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from helpers import randn_f64
from transformer_layers import FF, E, H, N, S, encoder_layer, randomise

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck

ENCODER_KEYS = [
    "self_attn.in_proj_weight",
    "self_attn.in_proj_bias",
    "self_attn.out_proj.weight",
    "self_attn.out_proj.bias",
    "linear1.weight",
    "linear1.bias",
    "linear2.weight",
    "linear2.bias",
    "norm1.weight",
    "norm1.bias",
    "norm2.weight",
    "norm2.bias",
]


# ------------------------------------------------------------------ encoder layer
class TestEncoderLayer:
    def test_attributes_and_state_dict(self):
        layer = nn.TransformerEncoderLayer(8, 2)
        assert isinstance(layer.self_attn, nn.MultiheadAttention)
        assert layer.linear1.weight.shape == (2048, 8) and layer.linear2.weight.shape == (8, 2048)
        assert all(isinstance(getattr(layer, n), nn.LayerNorm) for n in ("norm1", "norm2"))
        drops = [layer.dropout1, layer.dropout2, layer.dropout3]
        assert all(isinstance(d, nn.Dropout) and d.p == 0.1 for d in drops)
        assert len({id(d) for d in drops}) == 3
        assert list(layer.state_dict()) == ENCODER_KEYS
        assert layer.self_attn.dropout == 0.1 and layer.norm1.eps == 1e-5
        assert not layer.batch_first and not layer.norm_first

    def test_positional_order_is_the_lucid_one(self):
        layer = nn.TransformerEncoderLayer(8, 2, 16, 0.2, "gelu", True, True, "cpu", mt.float64, layer_norm_eps=1e-6)
        assert layer.linear1.out_features == 16 and layer.dropout2.p == 0.2 and layer.activation is F.gelu
        assert layer.batch_first and layer.norm_first and layer.self_attn.batch_first
        assert layer.linear1.weight.dtype == mt.float64 and layer.norm2.eps == 1e-6

    def test_bias_false(self):
        layer = nn.TransformerEncoderLayer(8, 2, 16, bias=False)
        assert [k for k in layer.state_dict() if "bias" in k] == []

    @pytest.mark.parametrize("norm_first", [False, True])
    def test_formulas(self, rng, norm_first):
        """Post-LN: x = LN(x + SA(x)); x = LN(x + FFN(x)).  Pre-LN: x = x + SA(LN(x)); x = x + FFN(LN(x))."""
        layer = encoder_layer(norm_first=norm_first, batch_first=True, activation="gelu")
        x = randn_f64(rng, N, S, E)

        def sa(y):
            return layer.self_attn(y, y, y)[0]

        def ffn(y):
            return layer.linear2(F.gelu(layer.linear1(y)))

        if norm_first:
            y = x + sa(layer.norm1(x))
            expected = y + ffn(layer.norm2(y))
        else:
            y = layer.norm1(x + sa(x))
            expected = layer.norm2(y + ffn(y))
        np.testing.assert_allclose(layer(x).numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)

    @pytest.mark.parametrize("norm_first", [False, True])
    @pytest.mark.parametrize("activation", ["relu", "gelu"])
    def test_gradcheck_input_and_all_parameters(self, rng, norm_first, activation):
        layer = encoder_layer(norm_first=norm_first, activation=activation)
        x = randn_f64(rng, S, N, E)
        pad = np.zeros((N, S), dtype=bool)
        pad[1, -1] = True
        fn = lambda x, *ps: layer(x, src_key_padding_mask=pad)  # noqa: E731
        assert gradcheck(fn, [x, *layer.parameters()])

    @pytest.mark.parametrize("batch_first", [False, True])
    def test_layouts_and_unbatched(self, rng, batch_first):
        layer = encoder_layer(batch_first=batch_first)
        x = randn_f64(rng, N, S, E)  # batch first
        src = x if batch_first else x.transpose(0, 1)
        out = layer(src)
        assert out.shape == src.shape
        got = out.numpy() if batch_first else out.numpy().transpose(1, 0, 2)
        unbatched = layer(x[1])
        assert unbatched.shape == (S, E)
        np.testing.assert_allclose(unbatched.numpy(), got[1], rtol=1e-12)

    def test_masks(self, rng):
        layer = encoder_layer()
        x = randn_f64(rng, S, N, E)
        causal = nn.Transformer.generate_square_subsequent_mask(S, dtype=mt.float64)
        a = layer(x, src_mask=causal)
        np.testing.assert_allclose(layer(x, is_causal=True).numpy(), a.numpy(), rtol=1e-12)
        np.testing.assert_allclose(layer(x, src_mask=np.isneginf(causal.numpy())).numpy(), a.numpy(), rtol=1e-12)
        pad = np.array([[False, False, True], [False, False, False]])
        b = layer(x, src_key_padding_mask=pad)
        np.testing.assert_allclose(layer(x, src_key_padding_mask=np.where(pad, -np.inf, 0.0)).numpy(), b.numpy())
        # a padded key changes nothing for the other positions when it is removed instead
        short = layer(x[:2, :1])
        np.testing.assert_allclose(b.numpy()[:2, 0], short.numpy()[:, 0], rtol=1e-12)
        per_head = np.broadcast_to(np.isneginf(causal.numpy()), (N * H, S, S))
        np.testing.assert_allclose(layer(x, src_mask=per_head).numpy(), a.numpy(), rtol=1e-12)

    def test_fully_masked_rows_do_not_give_nan(self, rng):
        layer = encoder_layer()
        x = randn_f64(rng, S, N, E)
        pad = np.ones((N, S), dtype=bool)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = layer(x, src_key_padding_mask=pad)
            out.backward(np.ones(out.shape))
        assert np.isfinite(out.numpy()).all() and np.isfinite(x.grad.numpy()).all()

    def test_callable_activation(self, rng):
        x = randn_f64(rng, S, N, E)
        a = encoder_layer(activation=nn.GELU())
        b = encoder_layer(activation="gelu")
        np.testing.assert_allclose(a(x).numpy(), b(x).numpy(), rtol=1e-12)
        c = encoder_layer(activation=lambda t: t.tanh())
        assert not np.allclose(c(x).numpy(), b(x).numpy())
        assert list(a.state_dict()) == ENCODER_KEYS

    def test_dropout_train_and_eval(self, rng):
        layer = nn.TransformerEncoderLayer(E, H, FF, dropout=0.5, dtype=mt.float64)
        x = randn_f64(rng, S, N, E)
        mt.manual_seed(5)
        a = layer(x)
        mt.manual_seed(5)
        b = layer(x)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert not np.allclose(a.numpy(), layer(x).numpy())
        layer.eval()
        assert not layer.dropout1.training and not layer.self_attn.training
        np.testing.assert_array_equal(layer(x).numpy(), layer(x).numpy())
        no_dropout = nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, dtype=mt.float64)
        no_dropout.load_state_dict(layer.state_dict())
        np.testing.assert_allclose(layer(x).numpy(), no_dropout(x).numpy(), rtol=1e-12)

    def test_float32(self, rng):
        layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
        x = mt.tensor(rng.standard_normal((2, 5, 8)), dtype=mt.float32, requires_grad=True)
        out = layer(x, is_causal=True)
        assert out.dtype == mt.float32
        out.backward(np.ones(out.shape, np.float32))
        assert x.grad.dtype == mt.float32
        assert all(p.grad.dtype == mt.float32 for p in layer.parameters())

    def test_deepcopy_is_independent(self, rng):
        layer = encoder_layer()
        clone = copy.deepcopy(layer)
        x = randn_f64(rng, S, N, E)
        np.testing.assert_array_equal(layer(x).numpy(), clone(x).numpy())
        for (name, p), q in zip(layer.named_parameters(), clone.parameters()):
            assert p is not q and p.numpy() is not q.numpy() and isinstance(q, nn.Parameter), name
        with mt.no_grad():
            clone.linear1.weight.fill_(0.0)
        assert not np.allclose(layer(x).numpy(), clone(x).numpy())

    def test_repr_lists_the_sublayers(self):
        text = repr(nn.TransformerEncoderLayer(8, 2, 16))
        for name in ("self_attn", "linear1", "linear2", "norm1", "norm2", "dropout1", "dropout2", "dropout3"):
            assert f"({name}):" in text
        assert "d_model=8, nhead=2, dim_feedforward=16, dropout=0.1, activation=relu" in text
        assert "activation=gelu, batch_first=True, norm_first=True" in repr(
            nn.TransformerEncoderLayer(8, 2, activation="gelu", batch_first=True, norm_first=True)
        )

    @pytest.mark.parametrize(
        "args, kwargs, error, match",
        [
            ((6, 4), {}, ValueError, r"d_model \(6\) must be divisible by nhead \(4\)"),
            ((0, 1), {}, ValueError, "d_model must be positive"),
            ((4, 0), {}, ValueError, "nhead must be positive"),
            ((4, 2, -1), {}, ValueError, "dim_feedforward must be positive"),
            ((4, 2), {"dropout": -0.1}, ValueError, "dropout"),
            ((4, 2), {"dropout": 1.1}, ValueError, "dropout"),
            ((4, 2), {"activation": "swish"}, ValueError, "activation.*'swish'"),
            ((4, 2), {"activation": 3}, TypeError, "activation"),
            ((4, 2), {"device": "cuda"}, ValueError, "device.*'cuda'"),
            ((4, 2), {"dtype": mt.int64}, TypeError, "dtype"),
        ],
    )
    def test_constructor_errors(self, args, kwargs, error, match):
        with pytest.raises(error, match=match):
            nn.TransformerEncoderLayer(*args, **kwargs)

    @pytest.mark.parametrize(
        "case, error, match",
        [
            ("rank", ValueError, "src must be 3-D"),
            ("last_dim", ValueError, "d_model=4"),
            ("dtype", TypeError, "dtype float32 but the parameters have float64"),
            ("int_mask", TypeError, "src_mask must be a bool or float"),
            ("mask_shape", ValueError, r"src_mask must have shape \(3, 3\) or \(4, 3, 3\)"),
            ("pad_shape", ValueError, r"src_key_padding_mask must have shape \(2, 3\)"),
            ("pad_dtype", TypeError, "src_key_padding_mask must be a bool or float"),
            ("not_tensor", TypeError, "src must be a Tensor or a NumPy array, got list"),
        ],
    )
    def test_forward_errors(self, rng, case, error, match):
        layer = encoder_layer()
        x = randn_f64(rng, S, N, E)
        kwargs = {
            "rank": {"src": x[0, 0]},
            "last_dim": {"src": randn_f64(rng, S, N, E + 2)},
            "dtype": {"src": x.to(mt.float32)},
            "int_mask": {"src_mask": np.zeros((S, S), dtype=np.int64)},
            "mask_shape": {"src_mask": np.zeros((S, S + 1), dtype=bool)},
            "pad_shape": {"src_key_padding_mask": np.zeros((S, N), dtype=bool)},
            "pad_dtype": {"src_key_padding_mask": np.zeros((N, S), dtype=np.int32)},
            "not_tensor": {"src": x.numpy().tolist()},  # (a NumPy array is accepted: test_array_inputs.py)
        }[case]
        kwargs.setdefault("src", x)
        with pytest.raises(error, match=match):
            layer(**kwargs)


# ------------------------------------------------------------------ encoder stack
class TestEncoder:
    def test_deep_copies_and_final_norm(self, rng):
        layer = encoder_layer()
        encoder = nn.TransformerEncoder(layer, num_layers=3, norm=nn.LayerNorm(E, dtype=mt.float64))
        assert len(encoder.layers) == 3 and encoder.num_layers == 3
        ids = {id(p) for p in encoder.parameters()}
        assert len(ids) == 3 * len(list(layer.parameters())) + 2
        assert not ids & {id(p) for p in layer.parameters()}
        keys = list(encoder.state_dict())
        assert keys[: len(ENCODER_KEYS)] == ["layers.0." + k for k in ENCODER_KEYS]
        assert keys[-2:] == ["norm.weight", "norm.bias"]
        x = randn_f64(rng, S, N, E)
        expected = x
        for sub in encoder.layers:
            expected = sub(expected)
        np.testing.assert_allclose(encoder(x).numpy(), encoder.norm(expected).numpy(), rtol=1e-12)

    def test_masks_go_to_every_layer(self, rng):
        encoder = nn.TransformerEncoder(encoder_layer(), num_layers=2)
        x = randn_f64(rng, S, N, E)
        causal = nn.Transformer.generate_square_subsequent_mask(S, dtype=mt.float64)
        pad = np.array([[False, False, True], [False, False, False]])
        expected = x
        for sub in encoder.layers:
            expected = sub(expected, src_mask=causal, src_key_padding_mask=pad)
        got = encoder(x, mask=causal, src_key_padding_mask=pad)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)
        np.testing.assert_allclose(
            encoder(x, src_key_padding_mask=pad, is_causal=True).numpy(), got.numpy(), rtol=1e-12
        )

    def test_gradcheck(self, rng):
        encoder = nn.TransformerEncoder(encoder_layer(norm_first=True), 2, norm=nn.LayerNorm(E, dtype=mt.float64))
        randomise(encoder, 3)
        x = randn_f64(rng, S, 1, E)
        assert gradcheck(lambda x, *ps: encoder(x), [x, *encoder.parameters()])

    def test_pytorch_only_arguments_are_accepted(self, rng):
        layer = encoder_layer()
        a = nn.TransformerEncoder(layer, 2, None, enable_nested_tensor=False, mask_check=False)
        b = nn.TransformerEncoder(layer, 2)
        x = randn_f64(rng, S, N, E)
        np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())

    def test_errors(self):
        with pytest.raises(ValueError, match="num_layers must be positive"):
            nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 0)
        with pytest.raises(TypeError, match="encoder_layer must be a Module"):
            nn.TransformerEncoder("layer", 2)
