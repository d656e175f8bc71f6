"""nn.RNN / nn.LSTM / nn.GRU over a PackedSequence (nn/rnn_packed.py): outputs, h_n and every gradient equal
PyTorch's with copied weights (float64), for unsorted batches, several layers, both directions and given hx."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.nn import rnn_packed
from minitensor.nn.utils import rnn

torch = pytest.importorskip("torch")
from torch.nn.utils import rnn as torch_rnn  # noqa: E402

MODES = {"RNN": (nn.RNN, torch.nn.RNN), "LSTM": (nn.LSTM, torch.nn.LSTM), "GRU": (nn.GRU, torch.nn.GRU)}


def _layers(mode: str, **kwargs):
    ours = MODES[mode][0](3, 4, **kwargs).double()
    theirs = MODES[mode][1](3, 4, **kwargs).double()
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            p.copy_(torch.tensor(getattr(ours, name).detach().numpy()))
    return ours, theirs


def _states(mode, rng, shape):
    parts = [rng.standard_normal(shape) for _ in range(2 if mode == "LSTM" else 1)]
    ours = [mt.tensor(p, dtype=mt.float64, requires_grad=True) for p in parts]
    theirs = [torch.tensor(p, requires_grad=True) for p in parts]
    return ours, theirs


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize(
    "lengths, kwargs, with_hx",
    [([5, 3, 3, 1], {}, False), ([2, 5, 1, 5], {"num_layers": 2, "bidirectional": True}, True),
     ([4, 1, 3], {"bidirectional": True, "batch_first": True}, True), ([3, 3], {"num_layers": 2}, True)],
)  # fmt: skip
def test_packed_input_matches_pytorch_values_and_gradients(rng, mode, lengths, kwargs, with_hx):
    ours, theirs = _layers(mode, **kwargs)
    rows = (2 if kwargs.get("bidirectional") else 1) * kwargs.get("num_layers", 1)
    x = rng.standard_normal((max(lengths), len(lengths), 3))
    xs, txs = mt.tensor(x, dtype=mt.float64, requires_grad=True), torch.tensor(x, requires_grad=True)
    packed = rnn.pack_padded_sequence(xs, lengths, enforce_sorted=False)
    t_packed = torch_rnn.pack_padded_sequence(txs, lengths, enforce_sorted=False)
    hx, t_hx = _states(mode, rng, (rows, len(lengths), 4)) if with_hx else ([], [])
    arg = None if not hx else (tuple(hx) if mode == "LSTM" else hx[0])
    t_arg = None if not t_hx else (tuple(t_hx) if mode == "LSTM" else t_hx[0])
    out, h = ours(packed, arg)
    t_out, t_h = theirs(t_packed, t_arg)
    assert isinstance(out, rnn.PackedSequence) and out.batch_sizes.tolist() == t_out.batch_sizes.tolist()
    finals = list(h) if mode == "LSTM" else [h]
    t_finals = list(t_h) if mode == "LSTM" else [t_h]
    np.testing.assert_allclose(out.data.detach().numpy(), t_out.data.detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in zip(finals, t_finals):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = [rng.standard_normal(t.shape) for t in [out.data, *finals]]
    loss = sum((t * mt.tensor(w, dtype=mt.float64)).sum() for t, w in zip([out.data, *finals], weights))
    t_loss = sum((t * torch.tensor(w)).sum() for t, w in zip([t_out.data, *t_finals], weights))
    loss.backward()
    t_loss.backward()
    np.testing.assert_allclose(xs.grad.numpy(), txs.grad.numpy(), rtol=1e-9, atol=1e-12)
    for a, b in zip(hx, t_hx):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(), p.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_padded_round_trip_gives_pytorchs_padded_output(rng):
    ours, theirs = _layers("GRU", batch_first=True)
    x = rng.standard_normal((3, 4, 3))
    lengths = [4, 2, 3]
    out, _ = ours(rnn.pack_padded_sequence(mt.tensor(x, dtype=mt.float64), lengths, True, enforce_sorted=False))
    t_out, _ = theirs(torch_rnn.pack_padded_sequence(torch.tensor(x), lengths, True, enforce_sorted=False))
    padded, lens = rnn.pad_packed_sequence(out, batch_first=True)
    t_padded, _ = torch_rnn.pad_packed_sequence(t_out, batch_first=True)
    np.testing.assert_allclose(padded.detach().numpy(), t_padded.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert lens.tolist() == lengths


def test_bad_packed_input_raises():
    lstm = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match="input_size=3"):
        lstm(rnn.pack_sequence([mt.ones(2, 5)]))
    with pytest.raises(ValueError, match="hidden state must have shape"):
        lstm(rnn.pack_sequence([mt.ones(2, 3), mt.ones(1, 3)]), (mt.zeros(1, 3, 4), mt.zeros(1, 3, 4)))


def test_docstring_examples_run():
    result = doctest.testmod(rnn_packed, extraglobs={"mt": mt, "nn": nn})
    assert result.attempted > 0 and result.failed == 0
