"""diagonal, diag, diag_embed, diagflat, trace, block_diag, tril/triu_indices (ops/diagonal.py): float64
gradcheck, second order and PyTorch as the oracle; argument errors."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

rng = np.random.default_rng(19)
X = rng.standard_normal((3, 4))
CUBE = rng.standard_normal((2, 3, 4))


@pytest.mark.parametrize("offset, dim1, dim2", [(0, 0, 1), (1, 1, 2), (-1, 2, 0), (2, -1, -2)])
def test_diagonal(offset, dim1, dim2):
    check_op(lambda x: mt.diagonal(x, offset, dim1, dim2), lambda x: x.diagonal(offset, dim1, dim2), CUBE)


def test_diagonal_diag_embed_and_block_diag_under_vmap_by_their_rules(monkeypatch):
    """Diagonal, DiagonalScatter and BlockDiag batch by their rules (no per-example loop), and so do
    their gradients: PyTorch's numbers."""
    torch = pytest.importorskip("torch")
    from minitensor.autograd import batching

    monkeypatch.setattr(batching, "loop", lambda b: pytest.fail(f"{b.op.__name__} ran vmap's per-example loop"))
    stacked = mt.func.vmap(lambda m: mt.diagonal(m, 1))(mt.tensor(CUBE, dtype=mt.float64))
    np.testing.assert_array_equal(stacked.numpy(), np.diagonal(CUBE, 1, 1, 2))
    grad = mt.func.vmap(mt.func.grad(lambda m: (mt.diagonal(m, -1) ** 2).sum()))(mt.tensor(CUBE, dtype=mt.float64))
    t = torch.tensor(CUBE, requires_grad=True)
    (torch.diagonal(t, -1, 1, 2) ** 2).sum().backward()
    np.testing.assert_allclose(grad.numpy(), t.grad.numpy(), rtol=1e-14)
    blocks = mt.func.vmap(lambda m, v: mt.block_diag(m, v, m[0]))(mt.tensor(CUBE), mt.tensor(CUBE[:, 0]))
    each = [torch.block_diag(*(torch.tensor(a) for a in (m, m[0], m[0]))) for m in CUBE.astype(np.float32)]
    np.testing.assert_array_equal(blocks.numpy(), np.stack(each))
    embedded = mt.func.vmap(lambda v: mt.diag_embed(v, -1, 0, 2))(mt.tensor(CUBE, dtype=mt.float64))
    np.testing.assert_array_equal(embedded.numpy(), torch.vmap(lambda v: v.diag_embed(-1, 0, 2))(t.detach()).numpy())


def test_diagonals_off_the_matrix_are_empty_and_their_gradients_zero():
    check_op(lambda x: mt.diagonal(x, 4), lambda x: x.diagonal(4), X)
    check_op(lambda x: mt.diagonal(x, -3, 1, 0), lambda x: x.diagonal(-3, 1, 0), X)
    check_op(lambda x: mt.diag_embed(x, 2), lambda x: x.diag_embed(2), X[:, :0])


@pytest.mark.parametrize("offset, dim1, dim2", [(0, -2, -1), (1, 0, 2), (-2, 2, 1)])
def test_diag_embed(offset, dim1, dim2):
    check_op(lambda x: mt.diag_embed(x, offset, dim1, dim2), lambda x: x.diag_embed(offset, dim1, dim2), X)


@pytest.mark.parametrize("offset", [0, 1, -2])
def test_diag_diagflat_trace(offset):
    check_op(lambda x: mt.diag(x, offset), lambda x: x.diag(offset), X)
    check_op(lambda x: x.diag(offset), lambda x: x.diag(offset), X[0])
    check_op(lambda x: mt.diagflat(x, offset), lambda x: x.diagflat(offset), X[:2, :2])
    check_op(mt.trace, lambda x: x.trace(), X)


def test_block_diag_of_mixed_ranks():
    torch = pytest.importorskip("torch")
    check_op(lambda a, b, c: mt.block_diag(a, b, c), lambda a, b, c: torch.block_diag(a, b, c), X[:2], X[2], X[0, 0])
    assert mt.block_diag(mt.tensor([[1, 2]]), mt.tensor([1.5])).dtype == mt.float32


def test_index_lists_and_errors():
    assert mt.tril_indices(3, 3).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert mt.triu_indices(2, 3, 1, dtype=mt.int32).dtype == mt.int32
    with pytest.raises(ValueError, match="diagonal: dim1 and dim2 must be different dims, got 1 and -1"):
        mt.diagonal(mt.ones(2, 2), 0, 1, -1)
    with pytest.raises(ValueError, match=r"diag: input must be a 1-D or 2-D tensor, got shape \(2, 2, 2\)"):
        mt.diag(mt.ones(2, 2, 2))
    with pytest.raises(ValueError, match="trace: input must be a 2-D tensor"):
        mt.trace(mt.ones(3))
    with pytest.raises(ValueError, match="tril_indices: row must be at least 0, got -1"):
        mt.tril_indices(-1, 2)
