"""nn.RNN / nn.LSTM / nn.GRU: PyTorch's names, shapes and init; outputs and all gradients equal
PyTorch's with copied weights; first and second derivatives against finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import copy_weights, f64, randn_f64

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck
from minitensor.autograd.gradgradcheck import gradgradcheck

MODES = {"RNN": nn.RNN, "LSTM": nn.LSTM, "GRU": nn.GRU}
GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}


def _hidden(mode: str, rng, shape: tuple, requires_grad: bool):
    """h_0 (or (h_0, c_0) for the LSTM) as float64 Tensors of ``shape``."""
    make = lambda: randn_f64(rng, *shape, requires_grad=requires_grad)  # noqa: E731
    return (make(), make()) if mode == "LSTM" else make()


def _flat(output, hidden) -> list:
    return [output, *hidden] if isinstance(hidden, tuple) else [output, hidden]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_parameter_names_shapes_and_init(mode, bidirectional):
    layer = MODES[mode](3, 5, num_layers=2, bidirectional=bidirectional)
    names = []
    for k in range(2):
        for suffix in ("", "_reverse")[: 2 if bidirectional else 1]:
            names += [f"{w}_l{k}{suffix}" for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    params = dict(layer.named_parameters())
    assert list(params) == names
    d = 2 if bidirectional else 1
    assert params["weight_ih_l0"].shape == (GATES[mode] * 5, 3)
    assert params["weight_ih_l1"].shape == (GATES[mode] * 5, 5 * d)
    assert params["weight_hh_l1"].shape == (GATES[mode] * 5, 5) and params["bias_hh_l1"].shape == (GATES[mode] * 5,)
    values = np.concatenate([p.numpy().ravel() for p in layer.parameters()])
    bound = 1 / math.sqrt(5)
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.8 * bound  # U(-1/sqrt(H), 1/sqrt(H))
    assert not dict(MODES[mode](3, 5, bias=False).named_parameters()).keys() & {"bias_ih_l0", "bias_hh_l0"}


@pytest.mark.parametrize("mode", MODES)
def test_shapes_batch_first_and_unbatched(mode, rng):
    layer = MODES[mode](4, 6, num_layers=2, batch_first=True, dtype=mt.float64)
    x = rng.standard_normal((3, 7, 4))  # (N, L, H_in)
    output, hidden = layer(f64(x, requires_grad=False))
    h_n = hidden[0] if mode == "LSTM" else hidden
    assert output.shape == (3, 7, 6) and h_n.shape == (2, 3, 6)
    single, single_hidden = layer(f64(x[1], requires_grad=False))  # unbatched (L, H_in)
    assert single.shape == (7, 6)
    np.testing.assert_allclose(single.numpy(), output.numpy()[1], rtol=1e-12, atol=1e-12)
    single_h = single_hidden[0] if mode == "LSTM" else single_hidden
    np.testing.assert_allclose(single_h.numpy(), h_n.numpy()[:, 1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_dropout_only_between_layers_and_only_in_training(mode, rng):
    layer = MODES[mode](3, 4, num_layers=2, dropout=0.5, dtype=mt.float64)
    plain = MODES[mode](3, 4, num_layers=2, dtype=mt.float64)
    plain.load_state_dict(layer.state_dict())
    x = randn_f64(rng, 5, 2, 3, requires_grad=False)
    layer.eval()
    np.testing.assert_array_equal(layer(x)[0].numpy(), plain(x)[0].numpy())
    layer.train()
    mt.manual_seed(0)
    assert not np.allclose(layer(x)[0].numpy(), plain(x)[0].numpy())
    one_layer = MODES[mode](3, 4, dropout=0.5, dtype=mt.float64)  # nothing between layers: no dropout at all
    np.testing.assert_array_equal(one_layer(x)[0].numpy(), one_layer.eval()(x)[0].numpy())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_first_and_second_derivatives(mode, bidirectional, rng):
    layer = MODES[mode](2, 3, num_layers=2, bidirectional=bidirectional, dtype=mt.float64)
    x = randn_f64(rng, 3, 2, 2)
    hx = _hidden(mode, rng, (4 if bidirectional else 2, 2, 3), requires_grad=True)
    hx_list = list(hx) if isinstance(hx, tuple) else [hx]
    params = list(layer.parameters())

    def run(x, *rest):
        state = tuple(rest[: len(hx_list)]) if mode == "LSTM" else rest[0]
        return tuple(_flat(*layer(x, state)))

    assert gradcheck(run, [x, *hx_list, *params])
    assert gradgradcheck(run, [x, *hx_list, params[0], params[1]])


@pytest.fixture
def oracle():
    """PyTorch, or skip the test."""
    return pytest.importorskip("torch")


CASES = [
    dict(num_layers=1),
    dict(num_layers=2, bias=False),
    dict(num_layers=2, batch_first=True),
    dict(num_layers=2, bidirectional=True),
    dict(num_layers=1, bidirectional=True, batch_first=True),
]


@pytest.mark.parametrize("mode", [*MODES, "RNN_RELU"])
@pytest.mark.parametrize("kwargs", CASES)
@pytest.mark.parametrize("with_hx", [False, True])
def test_matches_torch_with_copied_weights(oracle, mode, kwargs, with_hx, rng):
    name, extra = ("RNN", {"nonlinearity": "relu"}) if mode == "RNN_RELU" else (mode, {})
    theirs = getattr(oracle.nn, name)(3, 4, **kwargs, **extra).double()
    ours = MODES[name](3, 4, **kwargs, **extra, dtype=mt.float64)
    copy_weights(theirs, ours)
    x = rng.standard_normal((2, 5, 3) if kwargs.get("batch_first") else (5, 2, 3))
    rows = kwargs["num_layers"] * (2 if kwargs.get("bidirectional") else 1)
    h = [rng.standard_normal((rows, 2, 4)) for _ in range(2 if name == "LSTM" else 1)] if with_hx else []
    x_ours, x_theirs = f64(x), oracle.tensor(x, requires_grad=True)
    h_ours = [f64(a) for a in h]
    h_theirs = [oracle.tensor(a, requires_grad=True) for a in h]
    pack = lambda hs: (tuple(hs) if name == "LSTM" else hs[0]) if hs else None  # noqa: E731
    out_ours = _flat(*ours(x_ours, pack(h_ours)))
    out_theirs = _flat(*theirs(x_theirs, pack(h_theirs)))
    weights = [rng.standard_normal(tuple(o.shape)) for o in out_theirs]  # a random output weighting
    for a, b in zip(out_ours, out_theirs):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    sum((o * f64(w, requires_grad=False)).sum() for o, w in zip(out_ours, weights)).backward()
    sum((o * oracle.tensor(w)).sum() for o, w in zip(out_theirs, weights)).backward()
    pairs = [("input", x_ours, x_theirs), *[("hx", a, b) for a, b in zip(h_ours, h_theirs)]]
    pairs += [(n, p, dict(theirs.named_parameters())[n]) for n, p in ours.named_parameters()]
    for what, a, b in pairs:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-11, err_msg=what)


@pytest.mark.parametrize("mode", MODES)
def test_init_bounds_match_torch(oracle, mode):
    theirs = getattr(oracle.nn, mode)(7, 9)
    ours = MODES[mode](7, 9)
    for (name, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert a.shape == tuple(b.shape) and a.dtype == mt.float32, name
        assert np.abs(a.numpy()).max() <= 1 / 3 and np.abs(b.detach().numpy()).max() <= 1 / 3
    assert repr(ours) == repr(theirs)
    assert repr(MODES[mode](7, 9, 2, batch_first=True, dropout=0.5)) == repr(
        getattr(oracle.nn, mode)(7, 9, 2, batch_first=True, dropout=0.5)
    )


def test_bad_arguments_name_what_is_wrong():
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(NotImplementedError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="dropout"):
        nn.GRU(3, 4, dropout=1.5)
    with pytest.raises(TypeError, match="hidden_size"):
        nn.GRU(3, 4.0)
    layer = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match="input_size=3"):
        layer(mt.zeros(5, 2, 2))
    with pytest.raises(ValueError, match="2-D .* or 3-D"):
        layer(mt.zeros(5))
    with pytest.raises(ValueError, match=r"\(1, 2, 4\)"):
        layer(mt.zeros(5, 2, 3), (mt.zeros(1, 3, 4), mt.zeros(1, 3, 4)))
    with pytest.raises(TypeError, match=r"\(h_0, c_0\)"):
        layer(mt.zeros(5, 2, 3), mt.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="sequence length must be at least 1"):
        layer(mt.zeros(0, 2, 3))
    with pytest.raises(ValueError, match="sequence length must be at least 1"):
        nn.GRU(3, 4, batch_first=True)(mt.zeros(2, 0, 3))
    nn.LSTM(3, 4).flatten_parameters()  # PyTorch's cuDNN call: accepted, nothing to do


@pytest.mark.parametrize("mode", MODES)
def test_empty_batch_gives_empty_outputs_and_gradients(mode):
    layer = MODES[mode](3, 4, num_layers=2, bidirectional=True)
    x = mt.zeros(5, 0, 3, requires_grad=True)
    output, hidden = layer(x)
    h_n = hidden[0] if mode == "LSTM" else hidden
    assert output.shape == (5, 0, 8) and h_n.shape == (4, 0, 4)
    output.sum().backward()
    assert x.grad.shape == (5, 0, 3) and layer.weight_hh_l1.grad.shape == (GATES[mode] * 4, 4)
    assert not layer.weight_hh_l1.grad.numpy().any()


def test_docstring_example_runs():
    import doctest

    import minitensor.nn.rnn as module

    result = doctest.testmod(module, extraglobs={"mt": mt, "nn": nn})
    assert result.attempted > 0 and result.failed == 0
