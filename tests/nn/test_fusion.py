"""nn/fusion.py: a layer of the standard sub-modules runs as one fused node (EncoderLayer, running
the fused sub-layers SelfAttention, FeedForward, AddLayerNorm or LayerNorm), which gives the same
outputs and gradients as the layer's composite (module by module), which the layer runs when a
sub-module is not exactly the standard class."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import backend
from minitensor.kernels import dot_tiles
from minitensor.nn import fusion


class _PlainLinear(nn.Linear):
    """A Linear subclass: same math, but the layer no longer recognises it for fusion."""


class _PlainLayerNorm(nn.LayerNorm):
    pass


def _general_copy(layer: nn.TransformerEncoderLayer) -> nn.TransformerEncoderLayer:
    other = nn.TransformerEncoderLayer(
        layer.d_model,
        layer.nhead,
        layer.linear1.out_features,
        dropout=0.0,
        activation="gelu",
        batch_first=True,
        norm_first=layer.norm_first,
        dtype=mt.float64,
    )
    e, ff = layer.d_model, layer.linear1.out_features
    other.linear1 = _PlainLinear(e, ff, dtype=mt.float64)
    other.linear2 = _PlainLinear(ff, e, dtype=mt.float64)
    other.norm1 = _PlainLayerNorm(e, dtype=mt.float64)
    other.norm2 = _PlainLayerNorm(e, dtype=mt.float64)
    other.load_state_dict(layer.state_dict())
    return other


def _node_names(t: mt.Tensor) -> set:
    names, seen, stack = set(), set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or not hasattr(node, "parents") or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(type(node).__name__)
        stack.extend(node.parents)
    return names


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("size", ["small", "tiled"])
def test_fused_and_general_paths_agree(norm_first, size, rng, monkeypatch):
    """ "tiled": products long enough for ``backend.rows_product``'s register tiles (checked to run), in
    the forward's projections and the input gradients of the feed-forward and attention blocks."""
    mt.manual_seed(0)
    (n, s, e, heads, ff) = (2, 5, 8, 2, 12) if size == "small" else (16, 16, 256, 4, 256)
    fused = nn.TransformerEncoderLayer(
        e, heads, ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first, dtype=mt.float64
    )
    general = _general_copy(fused)
    x = rng.standard_normal((n, s, e))
    pad = np.zeros((n, s), bool)
    pad[1, 3:] = True
    dy = rng.standard_normal((n, s, e))
    tiled = []
    monkeypatch.setattr(dot_tiles, "tiles_beat_blas_here", lambda: True)  # (as on a machine where they win)
    real_product = backend.rows_product
    monkeypatch.setattr(
        backend,
        "rows_product",
        lambda a, b, out=None: (
            tiled.append(dot_tiles.tiles_pay(a, b, np.empty((a.shape[0], b.shape[0]), a.dtype))),
            real_product(a, b, out),
        )[1],
    )
    results = []
    for layer in (fused, general):
        inp = mt.tensor(x, dtype=mt.float64, requires_grad=True)
        out = layer(inp, src_key_padding_mask=mt.tensor(pad))
        assert ("EncoderLayerBackward" in _node_names(out)) == (layer is fused)  # each layer takes its own path
        out.backward(dy)
        grads = {name: p.grad.numpy() for name, p in layer.named_parameters()}
        results.append((inp.grad.numpy(), grads))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-10, atol=1e-12)
    assert (sum(tiled) >= 6) == (size == "tiled")  # (fused: 4 projections forward, 3 input gradients)
    assert results[0][1].keys() == results[1][1].keys()
    for name in results[0][1]:
        np.testing.assert_allclose(results[0][1][name], results[1][1][name], rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "attn_and_padding", "causal"])
def test_inference_under_no_grad_equals_the_composite(norm_first, batch_first, masks, rng, monkeypatch):
    """In eval mode under no_grad the layer runs as the fused node too (PyTorch's "fast path" for
    inference), keeping nothing: the composite's numbers."""
    mt.manual_seed(1)
    layer = nn.TransformerEncoderLayer(
        8, 2, 12, dropout=0.3, batch_first=batch_first, norm_first=norm_first, dtype=mt.float64
    ).eval()
    n, s = 3, 5
    x = mt.tensor(rng.standard_normal((n, s, 8) if batch_first else (s, n, 8)), dtype=mt.float64)
    kwargs = {}
    if masks == "attn_and_padding":
        pad = np.zeros((n, s), bool)
        pad[1, 3:] = True
        kwargs = {"src_mask": mt.tensor(rng.random((s, s)) < 0.3), "src_key_padding_mask": mt.tensor(pad)}
    elif masks == "causal":
        kwargs = {"src_mask": nn.Transformer.generate_square_subsequent_mask(s, dtype=mt.float64), "is_causal": True}
    general = layer._composite(
        x, kwargs.get("src_mask"), kwargs.get("src_key_padding_mask"), bool(kwargs.get("is_causal"))
    )
    fused = []
    real = fusion.encoder_layer
    monkeypatch.setattr(fusion, "encoder_layer", lambda *a: (fused.append(1), real(*a))[1])
    with mt.no_grad():
        fast = layer(x, **kwargs)
    assert fused == [1] and fast.grad_fn is None  # (the fused node ran, recording nothing)
    np.testing.assert_allclose(fast.numpy(), general.numpy(), rtol=1e-12, atol=1e-12)


def test_inference_path_falls_back_for_a_custom_sub_module(rng, monkeypatch):
    mt.manual_seed(2)
    layer = nn.TransformerEncoderLayer(8, 2, 12, dropout=0.0, activation="gelu", batch_first=True, dtype=mt.float64)
    layer.eval()
    plain = _general_copy(layer).eval()
    x = mt.tensor(rng.standard_normal((2, 4, 8)), dtype=mt.float64)
    assert fusion.encoder_layer(plain, x, None, None, False) is None  # (a custom sub-module: the composite)
    with mt.no_grad():
        np.testing.assert_allclose(plain(x).numpy(), layer(x).numpy(), rtol=1e-12, atol=1e-12)
