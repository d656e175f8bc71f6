"""The decoder layer's fused node (``ops/fused/decoder_layer.py``): the same numbers as the layer's
composite (its ``forward`` module by module), correct gradients (first and second order), only the gradients
asked for, the inference path, and the graph's usual safety (version checks, retain_graph, the
profiler).  (PyTorch oracles for the decoder layer, first order and in stacks, run through it in
tests/nn/test_oracle_transformer.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_same_numbers

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck, gradgradcheck

N, T, S, E, H, FF = 2, 3, 4, 4, 2, 6


def _layer(norm_first=False, activation="relu", dropout=0.0, dtype=mt.float64, bias=True, batch_first=True):
    mt.manual_seed(0)
    layer = nn.TransformerDecoderLayer(
        E, H, FF, dropout=dropout, activation=activation, batch_first=batch_first, norm_first=norm_first,
        dtype=dtype, bias=bias,
    )  # fmt: skip
    with mt.no_grad():  # (non-trivial norm weights and biases)
        for name, p in layer.named_parameters():
            if "norm" in name or "bias" in name:
                p.copy_(mt.randn(*p.shape, dtype=dtype))
    return layer.train()


def _inputs(rng, dtype=mt.float64, batch_first=True, grad=(True, True)) -> tuple:
    shapes = ((N, T, E), (N, S, E)) if batch_first else ((T, N, E), (S, N, E))
    return tuple(mt.tensor(rng.standard_normal(s), dtype=dtype, requires_grad=g) for s, g in zip(shapes, grad))


def _masks(kind: str, rng, dtype=mt.float64) -> dict:
    if kind == "causal_and_padding":
        pad = np.zeros((N, S), bool)
        pad[1, 3:] = True
        return {"tgt_mask": nn.Transformer.generate_square_subsequent_mask(T, dtype=dtype), "tgt_is_causal": True,
                "memory_key_padding_mask": mt.tensor(pad)}  # fmt: skip
    if kind == "all":
        tgt_pad = np.zeros((N, T), bool)
        tgt_pad[0, -1] = True
        return {"tgt_mask": mt.tensor(rng.random((T, T)) < 0.3), "memory_mask": mt.tensor(rng.random((T, S)) < 0.3),
                "tgt_key_padding_mask": mt.tensor(tgt_pad)}  # fmt: skip
    return {}


def _run(layer, x, memory, dy, masks, seed, one_node: bool, monkeypatch) -> tuple:
    """(output, {name: grad}, node names) of forward + backward; ``one_node`` False takes the composite."""
    with monkeypatch.context() as patch:
        if not one_node:
            patch.setattr(nn.fusion, "decoder_layer", lambda *args: None)
        layer.zero_grad()
        x.grad = memory.grad = None
        mt.manual_seed(seed)
        out = layer(x, memory, **masks)
        names = {type(out.grad_fn).__name__}
        out.backward(mt.tensor(dy, dtype=out.dtype))
    grads = {name: None if p.grad is None else p.grad.numpy().copy() for name, p in layer.named_parameters()}
    for name, t in (("x", x), ("memory", memory)):
        grads[name] = None if t.grad is None else t.grad.numpy().copy()
    return out.numpy(), grads, names


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("dropout", [0.0, 0.3])
@pytest.mark.parametrize("masks", ["none", "causal_and_padding", "all"])
@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_one_node_equals_the_composite(norm_first, activation, dropout, masks, dtype, rng, monkeypatch):
    """The node runs the fused sub-layers' forwards and backwards, and draws the dropout masks in
    the order the composite draws them: the same seed gives the same numbers (up to rounding)."""
    layer = _layer(norm_first, activation, dropout, dtype)
    x, memory = _inputs(rng, dtype)
    dy = rng.standard_normal((N, T, E))
    kwargs = _masks(masks, rng, dtype)
    one = _run(layer, x, memory, dy, kwargs, 7, True, monkeypatch)
    separate = _run(layer, x, memory, dy, kwargs, 7, False, monkeypatch)
    assert one[2] == {"DecoderLayerBackward"} and separate[2] != one[2]
    assert_same_numbers(one[0], separate[0])
    assert one[1].keys() == separate[1].keys()
    for name, grad in one[1].items():
        assert_same_numbers(grad, separate[1][name], err_msg=name)
    if dropout:  # (the masks are drawn: another seed gives another output)
        assert not np.array_equal(_run(layer, x, memory, dy, kwargs, 8, True, monkeypatch)[0], one[0])


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize(
    "frozen",
    [
        ("x", "self_attn.in_proj_weight", "norm2.weight", "linear2.weight"),
        ("memory", "multihead_attn.in_proj_weight", "multihead_attn.out_proj.bias", "norm3.bias"),
        (
            "x",
            "memory",
            "self_attn.in_proj_weight",
            "self_attn.in_proj_bias",
            "self_attn.out_proj.weight",
            "self_attn.out_proj.bias",
            "norm1.weight",
            "norm1.bias",
        ),  # fmt: skip
        "all but memory",  # (a frozen decoder on a trained encoder)
    ],
)
def test_only_the_gradients_asked_for(norm_first, frozen, rng, monkeypatch):
    """Frozen weights and inputs without grad get none; the others the same as the composite's."""
    layer = _layer(norm_first, "gelu")
    if frozen == "all but memory":
        frozen = ("x", *(name for name, _ in layer.named_parameters()))
    for name, p in layer.named_parameters():
        p.requires_grad_(name not in frozen)
    x, memory = _inputs(rng, grad=("x" not in frozen, "memory" not in frozen))
    dy = rng.standard_normal((N, T, E))
    one = _run(layer, x, memory, dy, {}, 0, True, monkeypatch)
    separate = _run(layer, x, memory, dy, {}, 0, False, monkeypatch)
    for name, grad in one[1].items():
        assert (grad is None) == (name in frozen), name
        assert_same_numbers(grad, separate[1][name], err_msg=name)


def test_without_biases(rng, monkeypatch):
    layer = _layer(norm_first=True, bias=False)
    x, memory = _inputs(rng)
    dy = rng.standard_normal((N, T, E))
    one = _run(layer, x, memory, dy, {}, 0, True, monkeypatch)
    separate = _run(layer, x, memory, dy, {}, 0, False, monkeypatch)
    assert one[2] == {"DecoderLayerBackward"}
    assert_same_numbers(one[0], separate[0])
    for name, grad in one[1].items():
        assert_same_numbers(grad, separate[1][name], err_msg=name)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_gradcheck(norm_first, activation, rng):
    layer = _layer(norm_first, activation, dropout=0.2)
    x, memory = _inputs(rng)
    masks = _masks("causal_and_padding", rng)

    def fn(x, memory, *params):
        mt.manual_seed(3)  # (the same dropout masks at every evaluation)
        return layer(x, memory, **masks)

    assert gradcheck(fn, (x, memory, *layer.parameters()))


@pytest.mark.parametrize("norm_first", [False, True])
def test_gradgradcheck(norm_first, rng):
    """create_graph: the node differentiates its definition, the layer's composite."""
    layer = _layer(norm_first, "gelu", dropout=0.2)
    x, memory = _inputs(rng)
    params = [layer.self_attn.in_proj_weight, layer.multihead_attn.in_proj_weight, layer.norm2.weight,
              layer.linear1.weight]  # fmt: skip

    def fn(x, memory, *weights):
        mt.manual_seed(5)
        return layer(x, memory, **_masks("all", np.random.default_rng(0)))

    assert gradgradcheck(fn, (x, memory, *params))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "all"])
def test_inference_under_no_grad_equals_the_composite(norm_first, batch_first, masks, rng, monkeypatch):
    """Eval mode under no_grad: the node (keeping nothing) gives what the composite gives."""
    layer = _layer(norm_first, batch_first=batch_first).eval()
    x, memory = _inputs(rng, batch_first=batch_first, grad=(False, False))
    kwargs = _masks(masks, rng)
    with mt.no_grad():
        fast = layer(x, memory, **kwargs)
        assert fast.grad_fn is None
        monkeypatch.setattr(nn.fusion, "decoder_layer", lambda *args: None)
        general = layer(x, memory, **kwargs)
    assert_same_numbers(fast.numpy(), general.numpy())


def test_a_weight_changed_before_backward_raises(rng):
    layer = _layer()
    x, memory = _inputs(rng)
    out = layer(x, memory)
    with mt.no_grad():
        layer.multihead_attn.in_proj_weight.add_(1.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        out.sum().backward()


def test_retain_graph_walks_the_node_twice(rng):
    layer = _layer(norm_first=True, dropout=0.3)
    x, memory = _inputs(rng)
    out = layer(x, memory).sum()
    out.backward(retain_graph=True)
    first = {name: p.grad.numpy().copy() for name, p in layer.named_parameters()}
    out.backward()
    for name, p in layer.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), 2 * first[name], rtol=1e-12, err_msg=name)
    with pytest.raises(RuntimeError):  # freed now
        out.backward()


def test_a_custom_sub_module_takes_the_composite(rng):
    layer = _layer()
    layer.norm3 = nn.Identity()
    x, memory = _inputs(rng)
    assert type(layer(x, memory).grad_fn).__name__ != "DecoderLayerBackward"


def test_the_profiler_shows_the_sub_layers_inside_the_node(rng):
    layer = _layer()
    x, memory = _inputs(rng)
    with mt.profiler.profile() as prof:
        layer(x, memory).sum().backward()
    rows = {row.key: row for row in prof.key_averages()}
    for op in ("DecoderLayer", "SelfAttention", "CrossAttention", "FeedForward"):
        assert rows[op].count == rows[op + "Backward"].count == 1
    assert rows["AddLayerNorm"].count == rows["AddLayerNormBackward"].count == 3
    inner = sum(rows[op].cpu_time_total for op in ("SelfAttention", "CrossAttention", "FeedForward", "AddLayerNorm"))
    assert rows["DecoderLayer"].cpu_time_total >= inner
    assert rows["DecoderLayer"].self_cpu_time_total == pytest.approx(rows["DecoderLayer"].cpu_time_total - inner)
