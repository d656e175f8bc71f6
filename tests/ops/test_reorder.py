"""movedim/moveaxis, swapaxes/swapdims, tensor_split, hsplit/vsplit/dsplit, unflatten, rot90 (ops/reorder.py):
float64 gradcheck, second order and PyTorch as the oracle; PyTorch's split rules and errors."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

torch = pytest.importorskip("torch")
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
    pieces = mt.tensor_split(mt.tensor(CUBE), cuts, 2)
    expected = torch.tensor_split(torch.tensor(CUBE), cuts, 2)
    assert [p.shape for p in pieces] == [tuple(p.shape) for p in expected]
    check_op(lambda x: mt.cat(mt.tensor_split(x, cuts, 2), 2), lambda x: torch.cat(x.tensor_split(cuts, 2), 2), CUBE)


def test_h_v_dsplit():
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
