"""ops/reorder.py: clone, t, flip, roll, narrow, repeat, unbind, split with sizes, movedim/moveaxis,
swapaxes/swapdims, tensor_split, hsplit/vsplit/dsplit, unflatten, rot90: values, gradients of first and
second order against PyTorch, PyTorch's split rules, empty results, and the error cases."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

X = np.random.default_rng(1).standard_normal((2, 3, 4))


def test_clone_is_a_differentiable_copy():
    check_op(mt.clone, lambda x: x.clone(), X)
    x = mt.ones(3)
    y = x.clone()
    y[0] = 5.0
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_t():
    check_op(lambda x: x.t(), lambda x: x.t(), X[0])
    check_op(mt.t, lambda x: x.t(), X[0, 0])
    assert mt.t(mt.tensor(2.0)).shape == ()
    with pytest.raises(ValueError, match="<= 2 dims"):
        mt.ones(2, 2, 2).t()


@pytest.mark.parametrize("dims", [0, (1,), (0, 2), [-1, 1]])
def test_flip(dims):
    check_op(lambda x: x.flip(dims), lambda x: x.flip(dims if not isinstance(dims, int) else (dims,)), X)
    check_op(lambda x: mt.flip(x, dims), lambda x: x.flip(dims if not isinstance(dims, int) else (dims,)), X)


def test_flip_errors():
    with pytest.raises(ValueError, match="repeated dim"):
        mt.ones(2, 2).flip((0, -2))
    with pytest.raises(ValueError, match="out of range"):
        mt.ones(2, 2).flip(2)


@pytest.mark.parametrize("shifts,dims", [(1, None), ((-5,), None), (1, 1), ((1, -2), (0, 2)), (7, -1), (2, (1,))])
def test_roll(shifts, dims):
    """torch.roll (makemore's MLP shifts its context with it): dims=None rolls the flattened tensor."""
    check_op(lambda x: x.roll(shifts, dims), lambda x: x.roll(shifts, dims), X)
    check_op(lambda x: mt.roll(x, shifts, dims), lambda x: x.roll(shifts, dims), X)


def test_roll_errors():
    with pytest.raises(ValueError, match="same length"):
        mt.ones(2, 2).roll((1, 2), 0)
    with pytest.raises(ValueError, match="single int"):
        mt.ones(2, 2).roll((1, 2))
    with pytest.raises(ValueError, match="out of range"):
        mt.ones(2, 2).roll(1, 2)
    with pytest.raises(TypeError, match="shifts must be an int"):
        mt.ones(2, 2).roll(1.5)


@pytest.mark.parametrize("dim,start,length", [(0, 0, 1), (1, 1, 2), (-1, -3, 2), (2, 3, 1)])
def test_narrow(dim, start, length):
    check_op(lambda x: x.narrow(dim, start, length), lambda x: x.narrow(dim, start, length), X)
    check_op(lambda x: mt.narrow(x, dim, start, length), lambda x: x.narrow(dim, start, length), X)


def test_narrow_errors():
    with pytest.raises(ValueError, match="exceeds dimension size"):
        mt.ones(3).narrow(0, 2, 2)
    with pytest.raises(ValueError, match="start out of range"):
        mt.ones(3).narrow(0, 4, 0)


@pytest.mark.parametrize("sizes", [(1, 1, 1), (2, 1, 3), (2, 2, 1, 2)])
def test_repeat(sizes):
    check_op(lambda x: x.repeat(*sizes), lambda x: x.repeat(*sizes), X)
    check_op(lambda x: x.repeat(sizes), lambda x: x.repeat(sizes), X)


def test_repeat_errors():
    with pytest.raises(ValueError, match="can not be smaller"):
        mt.ones(2, 2).repeat(2)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unbind(dim):
    check_op(lambda x: mt.stack(x.unbind(dim), 0), lambda x: pytest.importorskip("torch").stack(x.unbind(dim), 0), X)
    assert len(mt.unbind(mt.tensor(X), dim)) == X.shape[dim]


@pytest.mark.parametrize("sizes,dim", [([1, 2], 1), ((2, 0, 2), 2), (2, -1), (3, 1)])
def test_split(sizes, dim):
    torch = pytest.importorskip("torch")
    check_op(lambda x: mt.cat(x.split(sizes, dim), dim), lambda x: torch.cat(x.split(sizes, dim), dim), X)
    pieces, expected = mt.split(mt.tensor(X), sizes, dim), torch.tensor(X).split(sizes, dim)
    assert [p.shape for p in pieces] == [tuple(e.shape) for e in expected]
    assert isinstance(pieces, tuple)


def test_split_sizes_must_add_up():
    with pytest.raises(ValueError, match="summing to the size of dim 1"):
        mt.ones(2, 3).split([1, 1], 1)


def test_empty_results():
    torch = pytest.importorskip("torch")
    assert mt.ones(2, 3).repeat(1, 0, 2).shape == tuple(torch.ones(2, 3).repeat(1, 0, 2).shape)
    assert mt.ones(2, 3).narrow(1, 3, 0).shape == (2, 0)


rng = np.random.default_rng(23)
CUBE = rng.standard_normal((2, 3, 4))


def test_movedim_and_swaps():
    check_op(lambda x: mt.movedim(x, (0, 1), (2, 0)), lambda x: x.movedim((0, 1), (2, 0)), CUBE)
    check_op(lambda x: x.moveaxis(-1, 0), lambda x: x.moveaxis(-1, 0), CUBE)
    check_op(lambda x: mt.swapaxes(x, 0, 2), lambda x: x.swapaxes(0, 2), CUBE)
    check_op(lambda x: x.swapdims(1, 2), lambda x: x.swapdims(1, 2), CUBE)
    with pytest.raises(ValueError, match="movedim: source contains a repeated dim"):
        mt.movedim(mt.tensor(CUBE), (0, 0), (1, 2))


@pytest.mark.parametrize("cuts", [3, [1, 3], [-1, 9], [3, 1]])
def test_tensor_split_pieces(cuts):
    torch = pytest.importorskip("torch")
    pieces = mt.tensor_split(mt.tensor(CUBE), cuts, 2)
    expected = torch.tensor_split(torch.tensor(CUBE), cuts, 2)
    assert [p.shape for p in pieces] == [tuple(p.shape) for p in expected]
    check_op(lambda x: mt.cat(mt.tensor_split(x, cuts, 2), 2), lambda x: torch.cat(x.tensor_split(cuts, 2), 2), CUBE)


def test_h_v_dsplit():
    torch = pytest.importorskip("torch")
    for name, arg in (("hsplit", [1]), ("vsplit", 2), ("dsplit", 2), ("dsplit", [3])):
        ours = getattr(mt, name)(mt.tensor(CUBE), arg)
        assert [p.shape for p in ours] == [tuple(p.shape) for p in getattr(torch, name)(torch.tensor(CUBE), arg)]
    check_op(lambda x: x.hsplit(3)[1], lambda x: x.hsplit(3)[1], CUBE)
    with pytest.raises(ValueError, match="hsplit: cannot split dim 1 of size 3 into 2 equal parts"):
        mt.hsplit(mt.tensor(CUBE), 2)
    with pytest.raises(ValueError, match="dsplit: input must have at least 3 dimensions"):
        mt.dsplit(mt.ones(2, 2), 1)


@pytest.mark.parametrize("k, dims", [(1, (0, 1)), (2, (1, 2)), (-1, (2, 0)), (4, (0, 2))])
def test_rot90(k, dims):
    check_op(lambda x: mt.rot90(x, k, dims), lambda x: x.rot90(k, dims), CUBE)


def test_unflatten_and_errors():
    check_op(lambda x: mt.unflatten(x, -1, (2, -1)), lambda x: x.unflatten(-1, (2, -1)), CUBE)
    with pytest.raises(ValueError, match=r"unflatten: sizes \(3, 2\) must multiply to the size of dim 2, 4"):
        mt.unflatten(mt.tensor(CUBE), 2, (3, 2))
    with pytest.raises(ValueError, match="rot90: dims must be two different dims"):
        mt.rot90(mt.tensor(CUBE), 1, (1, 1))
