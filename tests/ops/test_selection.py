"""take, take_along_dim, index_select, masked_select, index_copy(_), repeat_interleave (ops/selection.py):
float64 gradcheck, second order and PyTorch as the oracle (repeated indices add their gradients up)."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

torch = pytest.importorskip("torch")
rng = np.random.default_rng(22)
X = rng.standard_normal((3, 4))


def _index(values):
    return mt.tensor(values), torch.tensor(values)


def test_take_and_take_along_dim_with_repeats():
    mi, ti = _index([[0, 11], [-1, 0]])
    check_op(lambda x: mt.take(x, mi), lambda x: x.take(ti), X)
    mi, ti = _index([[0, 0], [3, 1], [2, 2]])
    check_op(lambda x: mt.take_along_dim(x, mi, 1), lambda x: x.take_along_dim(ti, 1), X)
    mi, ti = _index([[1, 0, 1, 2]])
    check_op(lambda x: x.take_along_dim(mi, 0), lambda x: x.take_along_dim(ti, 0), X)


def test_an_index_changed_after_the_forward_leaves_the_gradient_alone():
    """The ops keep a copy of the index (``_index_array``), not the index tensor's memory."""
    x = mt.tensor(X, dtype=mt.float64, requires_grad=True)
    index = mt.tensor([[2, 0, 1, 1]] * 3)
    y = mt.take_along_dim(x, index, 1)
    index[:] = 0
    y.backward(mt.ones_like(y))
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 2, 1, 0]] * 3)


def test_index_select_and_masked_select():
    mi, ti = _index([3, 0, 3])
    check_op(lambda x: mt.index_select(x, 1, mi), lambda x: x.index_select(1, ti), X)
    mask = X[0] > 0
    check_op(lambda x: mt.masked_select(x, mt.tensor(mask)), lambda x: x.masked_select(torch.tensor(mask)), X)


def test_index_copy_to_both_operands():
    mi, ti = _index([3, 1])
    src = rng.standard_normal((3, 2))
    check_op(lambda x, s: mt.index_copy(x, 1, mi, s), lambda x, s: x.index_copy(1, ti, s), X, src)
    w = mt.tensor(X, dtype=mt.float64, requires_grad=True)
    s = mt.tensor(src, dtype=mt.float64, requires_grad=True)
    h = w * 1.0
    h.index_copy_(1, mi, s)
    h.sum().backward()
    assert w.grad.numpy()[:, [1, 3]].sum() == 0 and s.grad.numpy().tolist() == np.ones((3, 2)).tolist()


def test_repeat_interleave():
    check_op(lambda x: mt.repeat_interleave(x, 2), lambda x: x.repeat_interleave(2), X)
    for r, d in ((3, 1), (1, 0), (0, 1), (2, -1)):  # (RepeatInterleave: one count for all)
        check_op(lambda x, r=r, d=d: mt.repeat_interleave(x, r, d), lambda x, r=r, d=d: x.repeat_interleave(r, d), X)
    ours = mt.func.vmap(lambda v: mt.repeat_interleave(v, 3, 0))(mt.tensor(X))
    np.testing.assert_array_equal(ours.numpy(), np.repeat(X.astype(np.float32), 3, axis=1))
    mc, tc = _index([1, 0, 3])
    check_op(lambda x: x.repeat_interleave(mc, 0), lambda x: x.repeat_interleave(tc, 0), X)
    assert mt.repeat_interleave(mt.tensor([2, 1])).tolist() == [0, 0, 1]
    with pytest.raises(ValueError, match=r"repeat_interleave: repeats must have one count per slice \(3\), got 2"):
        mt.repeat_interleave(mt.tensor(X), mt.tensor([1, 2]), 0)


def test_errors():
    with pytest.raises(ValueError, match=r"take: index out of range for a dim of size 12: values 0..12"):
        mt.take(mt.tensor(X), mt.tensor([0, 12]))
    with pytest.raises(TypeError, match="index_select: index must be an integer"):
        mt.index_select(mt.tensor(X), 0, mt.tensor([0.0]))
    with pytest.raises(TypeError, match="masked_select: mask must be a bool tensor"):
        mt.masked_select(mt.tensor(X), mt.tensor([1, 0, 1, 0]))
    with pytest.raises(ValueError, match=r"index_copy: source must have shape \(3, 2\)"):
        mt.index_copy(mt.tensor(X), 1, mt.tensor([0, 1]), mt.ones(2, 2))
