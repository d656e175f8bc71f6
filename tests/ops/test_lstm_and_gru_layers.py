"""ops/lstm_layer.py and ops/gru_layer.py: the fused layer ops (one node per layer and direction) against
their step-by-step Tensor formulas, finite differences (first and second order) and PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import copy_weights

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck
from minitensor.autograd.gradgradcheck import gradgradcheck
from minitensor.ops.gru_layer import GRULayer, gru_layer_reference
from minitensor.ops.lstm_layer import LSTMLayer, lstm_layer_reference

# name -> (op, its reference, gates per cell, names of its inputs)
LAYERS = {
    "LSTM": (LSTMLayer.apply, lstm_layer_reference, 4, ("x", "w_ih", "w_hh", "b_ih", "b_hh", "h0", "c0")),
    "GRU": (GRULayer.apply, gru_layer_reference, 3, ("x", "w_ih", "w_hh", "b_ih", "b_hh", "h0")),
}


def _inputs(kind, rng, steps=4, rows=2, features=3, size=2, bias=True, scale=1.0) -> list:
    """The op's inputs as float64 Tensors that require grad (the biases None without bias)."""
    width = LAYERS[kind][2] * size
    shapes = [(steps, rows, features), (width, features), (width, size), (width,), (width,), (rows, size)]
    shapes += [(rows, size)] if kind == "LSTM" else []
    tensors = [mt.tensor(rng.standard_normal(s) * scale, dtype=mt.float64, requires_grad=True) for s in shapes]
    if not bias:
        tensors[3] = tensors[4] = None
    return tensors


def _weighting(out, rng) -> mt.Tensor:
    """A random weighting of the output (sum(out * weighting): never the plain sum)."""
    return mt.tensor(rng.standard_normal(out.shape), dtype=out.dtype)


@pytest.mark.parametrize("kind", LAYERS)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("jit", [True, False])
def test_op_equals_its_step_by_step_formula(kind, reverse, bias, jit, rng):
    """Values and every first-order gradient, on the kernels and on the NumPy references."""
    op, reference, _, names = LAYERS[kind]
    inputs = _inputs(kind, rng, steps=5, rows=3, features=4, size=3, bias=bias, scale=1.5)
    previous = mt.jit_enabled()
    mt.set_jit_enabled(jit)
    try:
        fused = op(*inputs, reverse=reverse)
    finally:
        mt.set_jit_enabled(previous)
    plain = reference(*inputs, reverse=reverse)
    assert fused.shape == plain.shape == ((6 if kind == "LSTM" else 5), 3, 3)
    np.testing.assert_allclose(fused.numpy(), plain.numpy(), rtol=1e-12, atol=1e-14)
    weight = _weighting(plain, rng)
    wanted = [t for t in inputs if t is not None]
    got = mt.autograd.grad((fused * weight).sum(), wanted)
    want = mt.autograd.grad((plain * weight).sum(), wanted)
    for name, a, b in zip([n for n, t in zip(names, inputs) if t is not None], got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-11, atol=1e-13, err_msg=name)


@pytest.mark.parametrize("kind", LAYERS)
@pytest.mark.parametrize("reverse", [False, True])
def test_gradcheck_and_gradgradcheck(kind, reverse, rng):
    op = LAYERS[kind][0]
    inputs = _inputs(kind, rng)
    assert gradcheck(lambda *a: op(*a, reverse=reverse), inputs)
    assert gradgradcheck(lambda *a: op(*a, reverse=reverse), inputs)


@pytest.mark.parametrize("kind", LAYERS)
def test_gradcheck_without_bias_and_partial_inputs(kind, rng):
    """No biases; only some inputs need a gradient (the others get none)."""
    op = LAYERS[kind][0]
    x, w_ih, w_hh, _, _, *state = _inputs(kind, rng, bias=False)
    w_ih.requires_grad_(False)
    state[0].requires_grad_(False)  # h0
    no_bias = lambda x, w_ih, w_hh, *state: op(x, w_ih, w_hh, None, None, *state)  # noqa: E731
    assert gradcheck(no_bias, [x, w_ih, w_hh, *state])
    out = no_bias(x, w_ih, w_hh, *state)
    grads = mt.autograd.grad((out * _weighting(out, rng)).sum(), [x, w_hh, *state[1:]])
    assert [g.shape for g in grads] == [x.shape, w_hh.shape, *(s.shape for s in state[1:])]


@pytest.mark.parametrize("kind", LAYERS)
def test_create_graph_gradients_equal_first_order_ones(kind, rng):
    """With create_graph the op differentiates its reference: the same numbers, now a graph."""
    op, _, _, names = LAYERS[kind]
    inputs = _inputs(kind, rng, scale=1.5)
    out = op(*inputs)
    weight = _weighting(out, rng)
    first = mt.autograd.grad((out * weight).sum(), inputs)
    graph = mt.autograd.grad((op(*inputs) * weight).sum(), inputs, create_graph=True)
    for name, a, b in zip(names, first, graph):
        assert b.requires_grad, name
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14, err_msg=name)


@pytest.mark.parametrize("kind", LAYERS)
def test_in_place_change_of_a_saved_input_is_caught(kind, rng):
    inputs = _inputs(kind, rng)
    out = LAYERS[kind][0](*inputs)
    with mt.no_grad():
        inputs[2].mul_(2)  # W_hh
    with pytest.raises(RuntimeError, match="modified"):
        out.sum().backward()


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("kind", LAYERS)
@pytest.mark.parametrize(
    "dtype, kwargs, shape, tol",
    [
        (mt.float32, dict(num_layers=2), (20, 16, 64), dict(rtol=2e-4, atol=2e-5)),  # the word-model size
        (mt.float64, dict(num_layers=2, bidirectional=True, batch_first=True), (3, 6, 5), dict(rtol=1e-10, atol=1e-12)),
        (mt.float64, dict(num_layers=1, bias=False), (7, 1, 5), dict(rtol=1e-10, atol=1e-12)),
    ],
)
def test_layer_matches_torch_output_final_state_and_every_gradient(torch, kind, dtype, kwargs, shape, tol, rng):
    size = shape[-1]
    theirs = getattr(torch.nn, kind)(size, size, **kwargs).to(torch.float32 if dtype == mt.float32 else torch.float64)
    ours = getattr(nn, kind)(size, size, **kwargs, dtype=dtype)
    copy_weights(theirs, ours)
    rows = kwargs["num_layers"] * (2 if kwargs.get("bidirectional") else 1)
    batch = shape[0] if kwargs.get("batch_first") else shape[1]
    count = 2 if kind == "LSTM" else 1
    arrays = [rng.standard_normal(shape), *(rng.standard_normal((rows, batch, size)) for _ in range(count))]
    np_dtype = np.float32 if dtype == mt.float32 else np.float64
    mine = [mt.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    ref = [torch.tensor(a.astype(np_dtype), requires_grad=True) for a in arrays]
    state = lambda tensors: tuple(tensors[1:]) if kind == "LSTM" else tensors[1]  # noqa: E731
    out_ours, final_ours = ours(mine[0], state(mine))
    out_theirs, final_theirs = theirs(ref[0], state(ref))
    results = [(out_ours, out_theirs)]
    results += list(zip(final_ours, final_theirs)) if kind == "LSTM" else [(final_ours, final_theirs)]
    for name, (a, b) in zip(("output", "h_n", "c_n"), results):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), **tol, err_msg=name)
    weights = [rng.standard_normal(tuple(b.shape)).astype(np_dtype) for _, b in results]
    sum((a * mt.tensor(w, dtype=dtype)).sum() for (a, _), w in zip(results, weights)).backward()
    sum((b * torch.tensor(w)).sum() for (_, b), w in zip(results, weights)).backward()
    pairs = [(f"input {i}", a, b) for i, (a, b) in enumerate(zip(mine, ref))]
    pairs += [(n, p, dict(theirs.named_parameters())[n]) for n, p in ours.named_parameters()]
    assert len(pairs) == len(mine) + len(list(theirs.parameters()))
    for name, a, b in pairs:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol, err_msg=name)


@pytest.mark.parametrize("kind", LAYERS)
def test_second_derivative_matches_torch(torch, kind, rng):
    """d/dW of |d(loss)/dx|^2 through a 2-layer network (the composite backward) equals PyTorch's."""
    theirs = getattr(torch.nn, kind)(3, 4, num_layers=2).double()
    ours = getattr(nn, kind)(3, 4, num_layers=2, dtype=mt.float64)
    copy_weights(theirs, ours)
    x, weight = rng.standard_normal((5, 2, 3)), rng.standard_normal((5, 2, 4))
    xs = mt.tensor(x, dtype=mt.float64, requires_grad=True)
    (gx,) = mt.autograd.grad((ours(xs)[0] * mt.tensor(weight, dtype=mt.float64)).sum(), [xs], create_graph=True)
    (gx * gx).sum().backward()
    xt = torch.tensor(x, requires_grad=True)
    (gt,) = torch.autograd.grad((theirs(xt)[0] * torch.tensor(weight)).sum(), [xt], create_graph=True)
    (gt * gt).sum().backward()
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), dict(theirs.named_parameters())[name].grad.numpy(), rtol=1e-9)
