"""kernels/encoder_layer.py: the eval-mode encoder layer as one kernel call gives the numbers of the
sub-layer path (``ops/encoder_layer.sublayer_arrays``) bit for bit on the kernels, and agrees with
the NumPy reference (JIT off); it is taken only where it applies."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted, reference, tolerance

import minitensor as mt
import minitensor.nn as nn
from minitensor.kernels.encoder_layer import encoder_layer_forward, kernel_taken
from minitensor.nn._transformer_parts import _encoder_layer_args
from minitensor.nn.transformer_encoder import _arrays
from minitensor.ops import encoder_layer


def _layer_and_input(norm_first, activation, batch_first, dtype, bias=True, n=2, s=7, e=16, heads=4):
    mt.manual_seed(3)
    layer = nn.TransformerEncoderLayer(
        e, heads, 24, dropout=0.2, activation=activation, batch_first=batch_first, norm_first=norm_first,
        bias=bias, dtype=getattr(mt, dtype),
    ).eval()  # fmt: skip
    rng = np.random.default_rng(5)
    shape = (n, s, e) if batch_first else (s, n, e)
    return layer, mt.tensor(rng.standard_normal(shape) * 2, dtype=getattr(mt, dtype))


def _settings(layer, x, masks: str):
    """The layer's (weight arrays, settings) as its forward builds them, for ``masks``."""
    n, s = (x.shape[0], x.shape[1]) if layer.batch_first else (x.shape[1], x.shape[0])
    attn_mask, padding, causal = None, None, False
    if masks in ("causal", "causal_and_padding"):
        attn_mask, causal = nn.Transformer.generate_square_subsequent_mask(s, dtype=x.dtype), True
    if masks == "causal_and_padding":
        pad = np.zeros((n, s), bool)
        pad[-1, s // 2 :] = True
        padding = mt.tensor(pad)
    weights, settings = _encoder_layer_args(layer, x, attn_mask, padding, causal)
    return _arrays(weights), settings


def _both_paths(layer, x, masks):
    weights, settings = _settings(layer, x, masks)
    assert kernel_taken(x.numpy(), **settings)
    kernel = encoder_layer_forward(x.numpy(), weights, **settings)
    sublayers = encoder_layer.sublayer_arrays(x.numpy(), *weights, **settings)
    return kernel, sublayers


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "causal_and_padding"])
def test_kernel_equals_the_sublayer_path_exactly(norm_first, activation, batch_first, dtype, masks):
    layer, x = _layer_and_input(norm_first, activation, batch_first, dtype)
    kernel, sublayers = jitted(lambda: _both_paths(layer, x, masks))
    assert kernel is not None and kernel.dtype == sublayers.dtype and kernel.shape == x.shape
    np.testing.assert_array_equal(kernel, sublayers)
    if masks == "causal_and_padding":  # (the masks reach the kernel: without them the output differs)
        assert not np.array_equal(kernel, jitted(lambda: _both_paths(layer, x, "none"))[0])


@pytest.mark.parametrize("norm_first", [False, True])
def test_tanh_gelu_and_no_biases(norm_first):
    layer, x = _layer_and_input(norm_first, "gelu", True, "float64", bias=False)
    weights, settings = _settings(layer, x, "causal")
    assert weights[1] is None and weights[5] is None  # (no in_proj bias, no norm1 bias)
    settings["feed_forward"]["activation"] = "gelu_tanh"
    assert jitted(lambda: kernel_taken(x.numpy(), **settings))
    kernel = jitted(lambda: encoder_layer_forward(x.numpy(), weights, **settings))
    sublayers = jitted(lambda: encoder_layer.sublayer_arrays(x.numpy(), *weights, **settings))
    np.testing.assert_array_equal(kernel, sublayers)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_layer_in_eval_mode_agrees_with_the_numpy_reference(norm_first, dtype):
    layer, x = _layer_and_input(norm_first, "relu", True, dtype)
    mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1], dtype=x.dtype)

    def run():
        with mt.no_grad():
            return layer(x, src_mask=mask, is_causal=True).numpy()

    np.testing.assert_allclose(jitted(run), reference(run), **tolerance(dtype))


def test_non_contiguous_input():
    layer, x = _layer_and_input(False, "relu", False, "float64")
    xt = mt.cat([x, x], dim=2)[..., :16]  # the same values, strided
    assert not xt._data.flags.c_contiguous
    with mt.no_grad():
        np.testing.assert_array_equal(jitted(lambda: layer(xt).numpy()), jitted(lambda: layer(x).numpy()))


def test_the_layer_takes_the_kernel_in_eval_mode_without_grad(monkeypatch):
    layer, x = _layer_and_input(True, "relu", True, "float32")
    taken = []
    real = encoder_layer.encoder_layer_forward
    monkeypatch.setattr(encoder_layer, "encoder_layer_forward", lambda *a, **k: taken.append(1) or real(*a, **k))
    with mt.no_grad():
        jitted(lambda: layer(x))
    assert taken == [1]
    layer(x)  # (grad enabled: the graph node, not the inference path)
    assert len(taken) == 1


def test_not_taken_with_the_jit_off_or_with_dropout():
    layer, x = _layer_and_input(False, "relu", True, "float32")
    weights, settings = _settings(layer, x, "none")
    assert jitted(lambda: kernel_taken(x.numpy(), **settings))
    assert not reference(lambda: kernel_taken(x.numpy(), **settings))
    settings["feed_forward"]["keep"] = np.ones((14, 24), bool)  # (a dropout the layer still draws)
    assert not jitted(lambda: kernel_taken(x.numpy(), **settings))


def test_empty_batch_takes_the_sublayer_path():
    layer, x = _layer_and_input(False, "relu", True, "float32", n=0)
    weights, settings = _settings(layer, x, "none")
    assert not jitted(lambda: kernel_taken(x.numpy(), **settings))
    with mt.no_grad():
        assert layer(x).shape == (0, 7, 16)
