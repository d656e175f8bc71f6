"""kernels/layer_inference.py: the eval-mode encoder and decoder layers as one kernel call give the
numbers of their sub-layer paths (``ops/encoder_layer.sublayer_arrays``,
``ops/decoder_layer.sublayer_arrays``) bit for bit on the kernels, and agree with the NumPy
reference (JIT off); each is taken only where it applies."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted, reference, tolerance

import minitensor as mt
import minitensor.nn as nn
from minitensor.kernels.layer_inference import (
    decoder_kernel_taken,
    decoder_layer_forward,
    encoder_kernel_taken,
    encoder_layer_forward,
)
from minitensor.nn._transformer_parts import _decoder_layer_args, _encoder_layer_args
from minitensor.nn.transformer_encoder import _arrays
from minitensor.ops import decoder_layer, encoder_layer

E, HEADS, FF = 16, 4, 24


def _layer(kind, norm_first, activation, batch_first, dtype, bias=True):
    mt.manual_seed(3)
    cls = nn.TransformerEncoderLayer if kind == "encoder" else nn.TransformerDecoderLayer
    options = {"activation": activation, "batch_first": batch_first, "norm_first": norm_first, "bias": bias}
    layer = cls(E, HEADS, FF, dropout=0.2, dtype=getattr(mt, dtype), **options).eval()
    for p in layer.parameters():  # (the norms' too: a norm's weights mixed up with another's would show)
        nn.init.normal_(p, 0.0, 0.5)
    return layer


def _input(batch_first, dtype, n=2, s=7, seed=5):
    rng = np.random.default_rng(seed)
    return mt.tensor(rng.standard_normal((n, s, E) if batch_first else (s, n, E)) * 2, dtype=getattr(mt, dtype))


def _causal_and_padding(n, s, dtype):
    """(a causal float mask (s, s), a key padding mask (n, s) on the last entry's second half)."""
    pad = np.zeros((n, s), bool)
    pad[-1, s // 2 :] = True
    return nn.Transformer.generate_square_subsequent_mask(s, dtype=dtype), mt.tensor(pad)


def _encoder_case(layer, x, masks):
    """(weight arrays, settings) of the encoder layer as its forward builds them."""
    n, s = (x.shape[0], x.shape[1]) if layer.batch_first else (x.shape[1], x.shape[0])
    attn, pad = _causal_and_padding(n, s, x.dtype) if masks else (None, None)
    weights, settings = _encoder_layer_args(layer, x, attn, pad, masks)
    return _arrays(weights), settings


def _decoder_case(layer, x, memory, masks):
    n, t = (x.shape[0], x.shape[1]) if layer.batch_first else (x.shape[1], x.shape[0])
    s = memory.shape[1] if layer.batch_first else memory.shape[0]
    tgt_mask, memory_pad = None, None
    if masks:
        tgt_mask, memory_pad = _causal_and_padding(n, t, x.dtype)[0], _causal_and_padding(n, s, x.dtype)[1]
    weights, settings = _decoder_layer_args(layer, x, memory, (tgt_mask, None, None, memory_pad), (masks, False))
    return _arrays(weights), settings


ALL = pytest.mark.parametrize(
    "norm_first, activation, batch_first, dtype, masks",
    [(nf, act, bf, dt, m) for nf in (False, True) for act in ("relu", "gelu") for bf in (True, False)
     for dt in ("float32", "float64") for m in (False, True)],
)  # fmt: skip


# ------------------------------------------------------------------ the encoder layer
@ALL
def test_encoder_kernel_equals_the_sublayer_path_exactly(norm_first, activation, batch_first, dtype, masks):
    layer, x = _layer("encoder", norm_first, activation, batch_first, dtype), _input(batch_first, dtype)

    def both(masks):
        weights, settings = _encoder_case(layer, x, masks)
        assert encoder_kernel_taken(x.numpy(), weights, **settings)
        kernel = encoder_layer_forward(x.numpy(), weights, **settings)
        return kernel, encoder_layer.sublayer_arrays(x.numpy(), *weights, **settings)

    kernel, sublayers = jitted(lambda: both(masks))
    assert kernel.dtype == sublayers.dtype and kernel.shape == x.shape
    np.testing.assert_array_equal(kernel, sublayers)
    if masks:  # (the masks reach the kernel: without them the output differs)
        assert not np.array_equal(kernel, jitted(lambda: both(False))[0])


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_tanh_gelu_and_no_biases(kind, norm_first):
    layer, x = _layer(kind, norm_first, "gelu", True, "float64", bias=False), _input(True, "float64")
    memory = _input(True, "float64", s=5, seed=6)
    weights, settings = _encoder_case(layer, x, True) if kind == "encoder" else _decoder_case(layer, x, memory, True)
    assert weights[1] is None and weights[5] is None  # (no in_proj bias, no norm1 bias)
    settings["feed_forward"]["activation"] = "gelu_tanh"
    module = encoder_layer if kind == "encoder" else decoder_layer
    inputs = (x.numpy(),) if kind == "encoder" else (x.numpy(), memory.numpy())
    run = encoder_layer_forward if kind == "encoder" else decoder_layer_forward
    kernel = jitted(lambda: run(*inputs, weights, **settings))
    np.testing.assert_array_equal(kernel, jitted(lambda: module.sublayer_arrays(*inputs, *weights, **settings)))


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_layer_in_eval_mode_agrees_with_the_numpy_reference(kind, norm_first, dtype):
    layer, x = _layer(kind, norm_first, "relu", True, dtype), _input(True, dtype)
    memory = _input(True, dtype, s=9, seed=6)
    mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1], dtype=x.dtype)

    def run():
        with mt.no_grad():
            if kind == "encoder":
                return layer(x, src_mask=mask, is_causal=True).numpy()
            return layer(x, memory, tgt_mask=mask, tgt_is_causal=True).numpy()

    np.testing.assert_allclose(jitted(run), reference(run), **tolerance(dtype))


def test_non_contiguous_input():
    layer, x = _layer("encoder", False, "relu", False, "float64"), _input(False, "float64")
    xt = mt.cat([x, x], dim=2)[..., :E]  # the same values, strided
    assert not xt._data.flags.c_contiguous
    with mt.no_grad():
        np.testing.assert_array_equal(jitted(lambda: layer(xt).numpy()), jitted(lambda: layer(x).numpy()))


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_the_layer_takes_the_kernel_in_eval_mode_without_grad(kind, monkeypatch):
    layer, x, memory = _layer(kind, True, "relu", True, "float32"), _input(True, "float32"), _input(True, "float32")
    module, name = (encoder_layer, "encoder") if kind == "encoder" else (decoder_layer, "decoder")
    taken = []
    real = getattr(module, f"{name}_layer_forward")
    monkeypatch.setattr(module, f"{name}_layer_forward", lambda *a, **k: taken.append(1) or real(*a, **k))
    args = (x,) if kind == "encoder" else (x, memory)
    with mt.no_grad():
        jitted(lambda: layer(*args))
    assert taken == [1]
    layer(*args)  # (grad enabled: the graph node, not the inference path)
    assert taken == [1]


def test_encoder_kernel_not_taken_with_the_jit_off_dropout_or_mixed_dtypes():
    layer, x = _layer("encoder", False, "relu", True, "float32"), _input(True, "float32")
    weights, settings = _encoder_case(layer, x, False)
    assert jitted(lambda: encoder_kernel_taken(x.numpy(), weights, **settings))
    assert not reference(lambda: encoder_kernel_taken(x.numpy(), weights, **settings))
    mixed = (*weights[:4], weights[4].astype(np.float64), *weights[5:])  # (norm1's weight in float64)
    assert not jitted(lambda: encoder_kernel_taken(x.numpy(), mixed, **settings))
    settings["feed_forward"]["keep"] = np.ones((14, FF), bool)  # (a dropout the layer still draws)
    assert not jitted(lambda: encoder_kernel_taken(x.numpy(), weights, **settings))


def test_decoder_kernel_not_taken_for_a_memory_of_another_dtype_or_dropout():
    layer, x = _layer("decoder", False, "relu", True, "float32"), _input(True, "float32")
    memory = _input(True, "float32", seed=6)
    weights, settings = _decoder_case(layer, x, memory, False)
    assert jitted(lambda: decoder_kernel_taken(x.numpy(), memory.numpy(), weights, **settings))
    other = memory.numpy().astype(np.float64)
    assert not jitted(lambda: decoder_kernel_taken(x.numpy(), other, weights, **settings))
    settings["mask2"] = np.ones(x.shape, np.float32)
    assert not jitted(lambda: decoder_kernel_taken(x.numpy(), memory.numpy(), weights, **settings))


def test_empty_batch_takes_the_sublayer_path():
    layer, x = _layer("encoder", False, "relu", True, "float32"), _input(True, "float32", n=0)
    weights, settings = _encoder_case(layer, x, False)
    assert not jitted(lambda: encoder_kernel_taken(x.numpy(), weights, **settings))
    with mt.no_grad():
        assert layer(x).shape == (0, 7, E)


# ------------------------------------------------------------------ the decoder layer
@ALL
def test_decoder_kernel_equals_the_sublayer_path_exactly(norm_first, activation, batch_first, dtype, masks):
    layer, x = _layer("decoder", norm_first, activation, batch_first, dtype), _input(batch_first, dtype)
    memory = _input(batch_first, dtype, s=9, seed=6)  # (more keys than queries)

    def both(masks):
        weights, settings = _decoder_case(layer, x, memory, masks)
        assert decoder_kernel_taken(x.numpy(), memory.numpy(), weights, **settings)
        kernel = decoder_layer_forward(x.numpy(), memory.numpy(), weights, **settings)
        return kernel, decoder_layer.sublayer_arrays(x.numpy(), memory.numpy(), *weights, **settings)

    kernel, sublayers = jitted(lambda: both(masks))
    assert kernel.dtype == sublayers.dtype and kernel.shape == x.shape
    np.testing.assert_array_equal(kernel, sublayers)
    if masks:
        assert not np.array_equal(kernel, jitted(lambda: both(False))[0])
