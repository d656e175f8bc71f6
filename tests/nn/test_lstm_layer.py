"""ops/lstm_layer.py: the fused LSTM layer op (one node per layer and direction) against its
step-by-step Tensor formula, finite differences (first and second order) and PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck
from minitensor.autograd.gradgradcheck import gradgradcheck
from minitensor.ops.lstm_layer import LSTMLayer, lstm_layer_reference

NAMES = ("x", "w_ih", "w_hh", "b_ih", "b_hh", "h0", "c0")


def _inputs(rng, steps=4, rows=2, features=3, size=2, bias=True, dtype=mt.float64, scale=1.0) -> list:
    """(x, w_ih, w_hh, b_ih, b_hh, h0, c0) as Tensors that require grad (biases None without bias)."""
    shapes = [(steps, rows, features), (4 * size, features), (4 * size, size), (4 * size,), (4 * size,)]
    shapes += [(rows, size), (rows, size)]
    tensors = [mt.tensor(rng.standard_normal(s) * scale, dtype=dtype, requires_grad=True) for s in shapes]
    if not bias:
        tensors[3] = tensors[4] = None
    return tensors


def _weighted(out, rng) -> mt.Tensor:
    """A random weighting of the output, summed (never the plain sum)."""
    return (out * mt.tensor(rng.standard_normal(out.shape), dtype=out.dtype)).sum()


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("jit", [True, False])
def test_op_equals_its_step_by_step_formula(reverse, bias, jit, rng):
    """Values and every first-order gradient, on the kernels and on the NumPy references."""
    inputs = _inputs(rng, steps=5, rows=3, features=4, size=3, bias=bias, scale=1.5)
    weight = rng.standard_normal((6, 3, 3))
    previous = mt.jit_enabled()
    mt.set_jit_enabled(jit)
    try:
        fused = LSTMLayer.apply(*inputs, reverse=reverse)
    finally:
        mt.set_jit_enabled(previous)
    plain = lstm_layer_reference(*inputs, reverse=reverse)
    assert fused.shape == plain.shape == (6, 3, 3)
    np.testing.assert_allclose(fused.numpy(), plain.numpy(), rtol=1e-12, atol=1e-14)
    wanted = [t for t in inputs if t is not None]
    got = mt.autograd.grad((fused * mt.tensor(weight, dtype=mt.float64)).sum(), wanted)
    want = mt.autograd.grad((plain * mt.tensor(weight, dtype=mt.float64)).sum(), wanted)
    for name, a, b in zip([n for n, t in zip(NAMES, inputs) if t is not None], got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-11, atol=1e-13, err_msg=name)


@pytest.mark.parametrize("reverse", [False, True])
def test_gradcheck_and_gradgradcheck(reverse, rng):
    inputs = _inputs(rng)
    assert gradcheck(lambda *a: LSTMLayer.apply(*a, reverse=reverse), inputs)
    assert gradgradcheck(lambda *a: LSTMLayer.apply(*a, reverse=reverse), inputs)


def test_gradcheck_without_bias_and_partial_inputs(rng):
    """No biases; only some inputs need a gradient (the others get none)."""
    x, w_ih, w_hh, _, _, h0, c0 = _inputs(rng, bias=False)
    w_ih.requires_grad_(False)
    h0.requires_grad_(False)
    no_bias = lambda x, w_ih, w_hh, h0, c0: LSTMLayer.apply(x, w_ih, w_hh, None, None, h0, c0)  # noqa: E731
    assert gradcheck(no_bias, [x, w_ih, w_hh, h0, c0])
    out = LSTMLayer.apply(x, w_ih, w_hh, None, None, h0, c0)
    grads = mt.autograd.grad(_weighted(out, rng), [x, w_hh, c0])
    assert [g.shape for g in grads] == [x.shape, w_hh.shape, c0.shape]


def test_create_graph_gradients_equal_first_order_ones(rng):
    """With create_graph the op differentiates its reference: the same numbers, now a graph."""
    inputs = _inputs(rng, scale=1.5)
    weight = mt.tensor(rng.standard_normal((5, 2, 2)), dtype=mt.float64)
    first = mt.autograd.grad((LSTMLayer.apply(*inputs) * weight).sum(), inputs)
    graph = mt.autograd.grad((LSTMLayer.apply(*inputs) * weight).sum(), inputs, create_graph=True)
    for name, a, b in zip(NAMES, first, graph):
        assert b.requires_grad, name
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14, err_msg=name)


def test_in_place_change_of_a_saved_input_is_caught(rng):
    inputs = _inputs(rng)
    out = LSTMLayer.apply(*inputs)
    with mt.no_grad():
        inputs[2].mul_(2)  # W_hh
    with pytest.raises(RuntimeError, match="modified"):
        out.sum().backward()


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize(
    "dtype, kwargs, shape, tol",
    [
        (mt.float32, dict(num_layers=2), (20, 16, 64), dict(rtol=2e-4, atol=2e-5)),  # the word-model size
        (mt.float64, dict(num_layers=2, bidirectional=True, batch_first=True), (3, 6, 5), dict(rtol=1e-10, atol=1e-12)),
        (mt.float64, dict(num_layers=1, bias=False), (7, 1, 5), dict(rtol=1e-10, atol=1e-12)),
    ],
)
def test_lstm_matches_torch_forward_final_state_and_every_gradient(torch, dtype, kwargs, shape, tol, rng):
    size = shape[-1]
    theirs = torch.nn.LSTM(size, size, **kwargs).to(torch.float32 if dtype == mt.float32 else torch.float64)
    ours = nn.LSTM(size, size, **kwargs, dtype=dtype)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    rows = kwargs["num_layers"] * (2 if kwargs.get("bidirectional") else 1)
    batch = shape[0] if kwargs.get("batch_first") else shape[1]
    arrays = [rng.standard_normal(shape), *(rng.standard_normal((rows, batch, size)) for _ in range(2))]
    np_dtype = np.float32 if dtype == mt.float32 else np.float64
    mine = [mt.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    ref = [torch.tensor(a.astype(np_dtype), requires_grad=True) for a in arrays]
    out_ours, (h_ours, c_ours) = ours(mine[0], (mine[1], mine[2]))
    out_theirs, (h_theirs, c_theirs) = theirs(ref[0], (ref[1], ref[2]))
    results = [(out_ours, out_theirs), (h_ours, h_theirs), (c_ours, c_theirs)]
    for name, (a, b) in zip(("output", "h_n", "c_n"), results):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), **tol, err_msg=name)
    weights = [rng.standard_normal(tuple(b.shape)).astype(np_dtype) for _, b in results]
    sum((a * mt.tensor(w, dtype=dtype)).sum() for (a, _), w in zip(results, weights)).backward()
    sum((b * torch.tensor(w)).sum() for (_, b), w in zip(results, weights)).backward()
    pairs = [("input", mine[0], ref[0]), ("h_0", mine[1], ref[1]), ("c_0", mine[2], ref[2])]
    pairs += [(n, p, dict(theirs.named_parameters())[n]) for n, p in ours.named_parameters()]
    assert len(pairs) == 3 + len(list(theirs.parameters()))
    for name, a, b in pairs:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol, err_msg=name)


def test_second_derivative_matches_torch(torch, rng):
    """d/dW of |d(loss)/dx|^2 through a 2-layer LSTM (the composite backward) equals PyTorch's."""
    theirs = torch.nn.LSTM(3, 4, num_layers=2).double()
    ours = nn.LSTM(3, 4, num_layers=2, dtype=mt.float64)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x, weight = rng.standard_normal((5, 2, 3)), rng.standard_normal((5, 2, 4))
    xs = mt.tensor(x, dtype=mt.float64, requires_grad=True)
    (gx,) = mt.autograd.grad((ours(xs)[0] * mt.tensor(weight, dtype=mt.float64)).sum(), [xs], create_graph=True)
    (gx * gx).sum().backward()
    xt = torch.tensor(x, requires_grad=True)
    (gt,) = torch.autograd.grad((theirs(xt)[0] * torch.tensor(weight)).sum(), [xt], create_graph=True)
    (gt * gt).sum().backward()
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), dict(theirs.named_parameters())[name].grad.numpy(), rtol=1e-9)
