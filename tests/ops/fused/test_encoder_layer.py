"""The encoder layer's fused node (``ops/fused/encoder_layer.py``): the same numbers as the layer's
composite (its ``forward`` module by module), correct gradients (first and second order), only the gradients
asked for, and the graph's usual safety (version checks, retain_graph, the profiler)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_same_numbers

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck, gradgradcheck

N, S, E, H, FF = 2, 4, 4, 2, 6


def _layer(norm_first=False, activation="relu", dropout=0.0, dtype=mt.float64, bias=True, seed=0):
    mt.manual_seed(seed)
    layer = nn.TransformerEncoderLayer(
        E, H, FF, dropout=dropout, activation=activation, batch_first=True, norm_first=norm_first,
        dtype=dtype, bias=bias,
    )  # fmt: skip
    with mt.no_grad():  # (non-trivial norm weights and biases)
        for name, p in layer.named_parameters():
            if "norm" in name or "bias" in name:
                p.copy_(mt.randn(*p.shape, dtype=dtype))
    return layer.train()


def _masks(kind: str, rng, dtype=mt.float64) -> dict:
    if kind == "padding_and_attn":
        pad = np.zeros((N, S), bool)
        pad[1, 3:] = True
        return {"src_mask": mt.tensor(rng.random((S, S)) < 0.3), "src_key_padding_mask": mt.tensor(pad)}
    if kind == "causal":
        return {"src_mask": nn.Transformer.generate_square_subsequent_mask(S, dtype=dtype), "is_causal": True}
    return {}


def _run(layer, x, dy, masks, seed, one_node: bool, monkeypatch) -> tuple:
    """(output, {name: grad}) of forward + backward; ``one_node`` False takes the composite (module by module)."""
    with monkeypatch.context() as patch:
        if not one_node:
            patch.setattr(nn.fusion, "encoder_layer", lambda *args: None)
        layer.zero_grad()
        x.grad = None
        mt.manual_seed(seed)
        out = layer(x, **masks)
        names = {type(out.grad_fn).__name__}
        out.backward(dy)
    grads = {name: None if p.grad is None else p.grad.numpy().copy() for name, p in layer.named_parameters()}
    grads["x"] = None if x.grad is None else x.grad.numpy().copy()
    return out.numpy(), grads, names


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("dropout", [0.0, 0.3])
@pytest.mark.parametrize("masks", ["none", "padding_and_attn", "causal"])
@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_one_node_equals_the_composite(norm_first, activation, dropout, masks, dtype, rng, monkeypatch):
    """The node runs the fused sub-layers' forwards and backwards, and draws the dropout masks in
    the order the composite draws them: the same seed gives the same numbers (up to rounding)."""
    layer = _layer(norm_first, activation, dropout, dtype)
    x = mt.tensor(rng.standard_normal((N, S, E)), dtype=dtype, requires_grad=True)
    dy = rng.standard_normal((N, S, E))
    kwargs = _masks(masks, rng, dtype)
    one = _run(layer, x, dy, kwargs, 7, True, monkeypatch)
    separate = _run(layer, x, dy, kwargs, 7, False, monkeypatch)
    assert one[2] == {"EncoderLayerBackward"} and separate[2] != one[2]
    assert_same_numbers(one[0], separate[0])
    assert one[1].keys() == separate[1].keys()
    for name, grad in one[1].items():
        assert_same_numbers(grad, separate[1][name], err_msg=name)
    if dropout:  # (the masks are drawn: another seed gives another output)
        assert not np.array_equal(_run(layer, x, dy, kwargs, 8, True, monkeypatch)[0], one[0])


@pytest.mark.parametrize("norm_first", [False, True])
def test_only_the_gradients_asked_for(norm_first, rng, monkeypatch):
    """Frozen weights and an input without grad get none; the others the same as the composite's."""
    layer = _layer(norm_first, "gelu", bias=False)
    params = dict(layer.named_parameters())
    for name in ("self_attn.in_proj_weight", "norm2.weight", "linear2.weight"):
        params[name].requires_grad_(False)
    x = mt.tensor(rng.standard_normal((N, S, E)), dtype=mt.float64)  # no grad
    dy = rng.standard_normal((N, S, E))
    one = _run(layer, x, dy, {}, 0, True, monkeypatch)
    separate = _run(layer, x, dy, {}, 0, False, monkeypatch)
    assert one[1]["x"] is None and one[1]["self_attn.in_proj_weight"] is None and one[1]["norm2.weight"] is None
    for name, grad in one[1].items():
        assert_same_numbers(grad, separate[1][name], err_msg=name)
    assert one[1]["linear1.weight"] is not None and one[1]["norm1.weight"] is not None


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_gradcheck(norm_first, activation, rng):
    layer = _layer(norm_first, activation, dropout=0.2)
    x = mt.tensor(rng.standard_normal((N, S, E)), dtype=mt.float64, requires_grad=True)
    masks = _masks("padding_and_attn", rng)

    def fn(x, *params):
        mt.manual_seed(3)  # (the same dropout masks at every evaluation)
        return layer(x, **masks)

    assert gradcheck(fn, (x, *layer.parameters()))


@pytest.mark.parametrize("norm_first", [False, True])
def test_gradgradcheck(norm_first, rng):
    """create_graph: the node differentiates its definition, the layer's composite."""
    layer = _layer(norm_first, "gelu", dropout=0.2)
    x = mt.tensor(rng.standard_normal((N, S, E)), dtype=mt.float64, requires_grad=True)
    params = [layer.self_attn.in_proj_weight, layer.norm1.weight, layer.linear1.weight]

    def fn(x, *weights):
        mt.manual_seed(5)
        return layer(x, **_masks("causal", rng))

    assert gradgradcheck(fn, (x, *params))


def test_a_weight_changed_before_backward_raises(rng):
    layer = _layer()
    out = layer(mt.tensor(rng.standard_normal((N, S, E)), dtype=mt.float64, requires_grad=True))
    with mt.no_grad():
        layer.linear1.weight.add_(1.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        out.sum().backward()


def test_retain_graph_walks_the_node_twice(rng):
    layer = _layer(norm_first=True, dropout=0.3)
    x = mt.tensor(rng.standard_normal((N, S, E)), dtype=mt.float64, requires_grad=True)
    out = layer(x).sum()
    out.backward(retain_graph=True)
    first = {name: p.grad.numpy().copy() for name, p in layer.named_parameters()}
    out.backward()
    for name, p in layer.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), 2 * first[name], rtol=1e-12, err_msg=name)
    with pytest.raises(RuntimeError):  # freed now
        out.backward()


def test_the_profiler_shows_the_sub_layers_inside_the_node(rng):
    layer = _layer()
    x = mt.tensor(rng.standard_normal((N, S, E)), dtype=mt.float64, requires_grad=True)
    with mt.profiler.profile() as prof:
        layer(x).sum().backward()
    rows = {row.key: row for row in prof.key_averages()}
    for op in ("EncoderLayer", "SelfAttention", "FeedForward"):
        assert rows[op].count == rows[op + "Backward"].count == 1
    assert rows["AddLayerNorm"].count == rows["AddLayerNormBackward"].count == 2
    inner = sum(rows[op].cpu_time_total for op in ("SelfAttention", "FeedForward", "AddLayerNorm"))
    assert rows["EncoderLayer"].cpu_time_total >= inner
    assert rows["EncoderLayer"].self_cpu_time_total == pytest.approx(rows["EncoderLayer"].cpu_time_total - inner)
