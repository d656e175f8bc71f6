"""nn.RNNCell, nn.LSTMCell, nn.GRUCell: a loop over time against PyTorch's cells with the same weights
(outputs, input and parameter gradients), float64 gradcheck and gradgradcheck, unbatched input, errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import copy_weights

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck, gradgradcheck

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}), ("GRUCell", {}),
         ("LSTMCell", {"bias": False})]  # fmt: skip


def _unroll(cell, xs, lstm: bool, stack):
    state, outs = None, []
    for t in range(xs.shape[1]):
        state = cell(xs[:, t], state)
        outs.append(state[0] if lstm else state)
    return stack(outs, 1)


@pytest.mark.parametrize("name,options", CELLS)
def test_unrolled_cells_equal_pytorch(name, options):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    theirs = getattr(torch.nn, name)(3, 5, **options).double()
    ours = getattr(nn, name)(3, 5, dtype=mt.float64, **options)
    copy_weights(theirs, ours)
    xs, w = rng.standard_normal((4, 6, 3)), rng.standard_normal((4, 6, 5))
    tx, mx = torch.tensor(xs, requires_grad=True), mt.tensor(xs, dtype=mt.float64, requires_grad=True)
    lstm = name == "LSTMCell"
    ty, my = _unroll(theirs, tx, lstm, torch.stack), _unroll(ours, mx, lstm, mt.stack)
    (ty * torch.tensor(w)).sum().backward()
    (my * mt.tensor(w, dtype=mt.float64)).sum().backward()
    np.testing.assert_allclose(my.numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (k, tp), (_, mp) in zip(theirs.named_parameters(), ours.named_parameters(), strict=True):
        np.testing.assert_allclose(mp.grad.numpy(), tp.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=k)
    u = rng.standard_normal(3)  # unbatched
    tu, mu = theirs(torch.tensor(u)), ours(mt.tensor(u, dtype=mt.float64))
    tu, mu = (tu[0], mu[0]) if lstm else (tu, mu)
    assert mu.shape == (5,)
    np.testing.assert_allclose(mu.numpy(), tu.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_gradcheck_to_second_order(name):
    mt.manual_seed(0)
    cell = getattr(nn, name)(2, 3, dtype=mt.float64)
    rng = np.random.default_rng(1)
    x = mt.tensor(rng.standard_normal((2, 2)), dtype=mt.float64, requires_grad=True)
    h = mt.tensor(rng.standard_normal((2, 3)), dtype=mt.float64, requires_grad=True)
    weight = mt.tensor(rng.standard_normal((2, 3)), dtype=mt.float64)

    def f(x, h):
        out = cell(x, (h, h * 0.5)) if name == "LSTMCell" else cell(x, h)
        return ((out[0] if name == "LSTMCell" else out) * weight).sum()

    assert gradcheck(f, (x, h))
    assert gradgradcheck(f, (x, h))


def test_cell_errors_name_the_argument():
    cell = nn.LSTMCell(3, 4)
    with pytest.raises(ValueError, match=r"input must be \(N, 3\)"):
        cell(mt.ones(2, 5))
    with pytest.raises(ValueError, match=r"h must be \(2, 4\)"):
        cell(mt.ones(2, 3), (mt.ones(3, 4), mt.ones(2, 4)))
    with pytest.raises(ValueError, match="nonlinearity must be"):
        nn.RNNCell(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="hidden_size must be positive"):
        nn.GRUCell(3, 0)
