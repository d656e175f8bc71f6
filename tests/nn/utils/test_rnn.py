"""nn.utils.rnn (nn/utils/rnn.py): pad_sequence, pack_padded_sequence, pad_packed_sequence, pack_sequence,
unpad/unpack_sequence and PackedSequence, against torch.nn.utils.rnn: values, orders, gradients, errors."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import gradcheck
from minitensor.nn.utils import rnn

torch = pytest.importorskip("torch")
from torch.nn.utils import rnn as torch_rnn  # noqa: E402

CASES = [([4, 2, 3], False), ([4, 3, 3], True), ([1, 1, 1], True), ([2, 4, 4, 1], False), ([3], True)]


def _pair(rng, shape):
    x = rng.standard_normal(shape)
    return mt.tensor(x, dtype=mt.float64, requires_grad=True), torch.tensor(x, requires_grad=True)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths, enforce_sorted", CASES)
def test_pack_and_pad_equal_pytorchs_with_gradients(rng, lengths, enforce_sorted, batch_first):
    steps, batch = 4, len(lengths)
    x, tx = _pair(rng, (batch, steps, 2) if batch_first else (steps, batch, 2))
    p = rnn.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    q = torch_rnn.pack_padded_sequence(tx, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    np.testing.assert_array_equal(p.data.detach().numpy(), q.data.detach().numpy())
    assert p.batch_sizes.tolist() == q.batch_sizes.tolist() and p.batch_sizes.dtype == mt.int64
    for mine, theirs in ((p.sorted_indices, q.sorted_indices), (p.unsorted_indices, q.unsorted_indices)):
        assert (mine is None and theirs is None) or mine.tolist() == theirs.tolist()
    padded, lens = rnn.pad_packed_sequence(p, batch_first=batch_first, padding_value=-1.5, total_length=6)
    t_padded, t_lens = torch_rnn.pad_packed_sequence(q, batch_first=batch_first, padding_value=-1.5, total_length=6)
    np.testing.assert_array_equal(padded.detach().numpy(), t_padded.detach().numpy())
    assert lens.tolist() == t_lens.tolist()
    weights = rng.standard_normal(padded.shape)
    (padded * mt.tensor(weights, dtype=mt.float64)).sum().backward()
    (t_padded * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_equals_pytorchs(rng, batch_first, padding_side):
    shapes = [(3, 2), (1, 2), (4, 2)]
    pairs = [_pair(rng, s) for s in shapes]
    got = rnn.pad_sequence([a for a, _ in pairs], batch_first, 7.0, padding_side)
    want = torch_rnn.pad_sequence([b for _, b in pairs], batch_first, 7.0, padding_side)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert gradcheck(lambda *xs: rnn.pad_sequence(list(xs), batch_first, 0.0, padding_side), [a for a, _ in pairs])


def test_pack_sequence_unpack_and_unpad_round_trip(rng):
    seqs = [_pair(rng, (n, 3))[0] for n in (2, 5, 3)]
    packed = rnn.pack_sequence(seqs, enforce_sorted=False)
    want = torch_rnn.pack_sequence([torch.tensor(s.detach().numpy()) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(packed.data.detach().numpy(), want.data.numpy())
    for back in (rnn.unpack_sequence(packed), rnn.unpad_sequence(rnn.pad_sequence(seqs), mt.tensor([2, 5, 3]))):
        assert [b.shape for b in back] == [s.shape for s in seqs]
        for b, s in zip(back, seqs):
            np.testing.assert_array_equal(b.detach().numpy(), s.detach().numpy())


def test_packed_sequence_is_a_named_tuple_with_conversions(rng):
    packed = rnn.pack_sequence([mt.ones(3), mt.ones(2)])
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert batch_sizes.tolist() == [2, 2, 1] and sorted_indices is None and unsorted_indices is None
    assert packed.double().data.dtype == mt.float64 and packed.to(mt.float32) is packed
    assert rnn.PackedSequence((data, batch_sizes)).batch_sizes is batch_sizes
    assert rnn.invert_permutation(mt.tensor([2, 0, 1])).tolist() == [1, 2, 0]


def test_bad_arguments_raise_with_pytorchs_messages():
    x = mt.zeros(4, 3, 2)
    with pytest.raises(ValueError, match="must be sorted in decreasing order when `enforce_sorted` is True"):
        rnn.pack_padded_sequence(x, [2, 4, 3])
    with pytest.raises(ValueError, match=r"Expected `len\(lengths\)` to be equal to batch_size, but got 2"):
        rnn.pack_padded_sequence(x, [3, 2])
    with pytest.raises(ValueError, match="every length must be > 0"):
        rnn.pack_padded_sequence(x, [3, 2, 0])
    with pytest.raises(ValueError, match="exceed the input's 4 steps"):
        rnn.pack_padded_sequence(x, [5, 2, 1])
    with pytest.raises(ValueError, match="total_length to be at least the length of the longest"):
        rnn.pad_packed_sequence(rnn.pack_padded_sequence(x, [4, 2, 1]), total_length=3)
    with pytest.raises(ValueError, match="empty list of sequences"):
        rnn.pad_sequence([])
    with pytest.raises(ValueError, match=r"sequences\[1\] must be a Tensor of shape"):
        rnn.pad_sequence([mt.ones(2), mt.ones(3, 2)])
    with pytest.raises(ValueError, match="padding_side must be 'left' or 'right'"):
        rnn.pad_sequence([mt.ones(2)], padding_side="middle")


def test_docstring_examples_run():
    result = doctest.testmod(rnn, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
