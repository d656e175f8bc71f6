"""tril/triu, clone, t, flip, roll, narrow, repeat, unbind, split with sizes, F.pad: values, gradients of
first and second order, and PyTorch as the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
import minitensor.nn.functional as F

rng = np.random.default_rng(1)
X = rng.standard_normal((2, 3, 4))


def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("diagonal", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("name", ["tril", "triu"])
def test_tril_triu(name, diagonal):
    check_op(lambda x: getattr(mt, name)(x, diagonal), lambda x: getattr(x, name)(diagonal), X)
    check_op(lambda x: getattr(x, name)(diagonal=diagonal), lambda x: getattr(x, name)(diagonal), X[0])


def test_tril_errors_and_causal_mask():
    with pytest.raises(ValueError, match="at least 2 dims"):
        mt.tril(mt.ones(3))
    with pytest.raises(TypeError, match="diagonal must be an int"):
        mt.triu(mt.ones(3, 3), 1.0)
    mask = mt.tril(mt.ones(3, 3))  # the ng-video-lecture / nanoGPT causal mask
    assert mask.tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]


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
    check_op(lambda x: mt.stack(x.unbind(dim), 0), lambda x: _torch().stack(x.unbind(dim), 0), X)
    assert len(mt.unbind(mt.tensor(X), dim)) == X.shape[dim]


@pytest.mark.parametrize("sizes,dim", [([1, 2], 1), ((2, 0, 2), 2), (2, -1), (3, 1)])
def test_split(sizes, dim):
    torch = _torch()
    check_op(lambda x: mt.cat(x.split(sizes, dim), dim), lambda x: torch.cat(x.split(sizes, dim), dim), X)
    pieces, expected = mt.split(mt.tensor(X), sizes, dim), torch.tensor(X).split(sizes, dim)
    assert [p.shape for p in pieces] == [tuple(e.shape) for e in expected]
    assert isinstance(pieces, tuple)


def test_split_sizes_must_add_up():
    with pytest.raises(ValueError, match="summing to the size of dim 1"):
        mt.ones(2, 3).split([1, 1], 1)


def test_chunk_and_expand_as_view_as():
    torch = _torch()
    x = mt.tensor(X)
    assert [c.shape for c in mt.chunk(x, 2, 2)] == [tuple(c.shape) for c in torch.tensor(X).chunk(2, 2)]
    assert x[:, :1].expand_as(x).shape == X.shape
    assert x.view_as(mt.ones(6, 4)).shape == (6, 4)
    assert x.view(-1).shape == (24,) and x.size(-1) == 4 and x.contiguous() is x
    assert x[:1].squeeze(0).shape == (3, 4)
    filled = x.masked_fill(x > 0, mt.tensor(0.0))  # a 0-d tensor value
    np.testing.assert_array_equal(filled.numpy(), np.where(X > 0, 0, X).astype(np.float32))


PADS = [
    ((1, 2), "constant"),
    ((1, 0, 0, 2), "constant"),
    ((-1, 2), "constant"),
    ((2, 1, 1, 3), "constant"),  # every margin filled
    ((-1, -2, 1, -1), "constant"),  # crops and a margin
    ((1, 2, 2, 1), "reflect"),
    ((2, 3), "replicate"),
    ((1, 1, 2, 0), "replicate"),
    ((1, 3), "circular"),
]


@pytest.mark.parametrize("pad,mode", PADS)
def test_pad(pad, mode):
    torch = _torch()

    def t_pad(x):
        if mode == "constant":
            return torch.nn.functional.pad(x, pad, value=0.5)
        return torch.nn.functional.pad(x, pad, mode=mode)

    value = 0.5 if mode == "constant" else None
    check_op(lambda x: F.pad(x, pad, mode=mode, value=value), t_pad, X)


def test_pad_errors():
    with pytest.raises(ValueError, match="even length"):
        F.pad(mt.ones(2, 2), (1,))
    with pytest.raises(ValueError, match="mode must be one of"):
        F.pad(mt.ones(2, 2), (1, 1), mode="wrap")
    with pytest.raises(ValueError, match="smaller than the padded dim"):
        F.pad(mt.ones(2, 2), (2, 0), mode="reflect")


def test_empty_results():
    torch = _torch()
    assert mt.ones(2, 3).repeat(1, 0, 2).shape == tuple(torch.ones(2, 3).repeat(1, 0, 2).shape)
    assert mt.ones(2, 3).narrow(1, 3, 0).shape == (2, 0)


def test_mm():
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    check_op(lambda x, y: x.mm(y), lambda x, y: x.mm(y), a, b)
    check_op(lambda x, y: mt.mm(x, y), lambda x, y: x.mm(y), a, b)
    with pytest.raises(ValueError, match="mm: mat2 must be a 2-D Tensor"):
        mt.ones(2, 3).mm(mt.ones(2, 3, 4))
    with pytest.raises(ValueError, match="do not fit"):
        mt.mm(mt.ones(2, 3), mt.ones(2, 3))
