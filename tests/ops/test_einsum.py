"""einsum: many equations (matmul, batch, outer, traces, diagonals, '...', implicit output, summed-away
letters) against PyTorch: value, gradient, second derivative; plus the error cases."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 2, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i->", [(3,), (3,)]),
    ("ij->ji", [(2, 3)]),
    ("ij->i", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ba,ab", [(2, 3), (3, 2)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(3, 4), (2, 4, 5)]),
    ("...ij,jk", [(2, 1, 3, 4), (4, 5)]),
    ("b...,b...->b", [(2, 3, 4), (2, 3, 4)]),
    ("i...->...", [(2, 3, 4)]),
    ("...ij->ij", [(2, 3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij, jk -> ik", [(2, 3), (3, 4)]),
    ("iJ,J->i", [(2, 3), (3,)]),
]


@pytest.mark.parametrize("equation,shapes", EQUATIONS)
def test_einsum_against_torch(equation, shapes):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(len(equation))
    arrays = [rng.standard_normal(s) for s in shapes]
    check_op(lambda *xs: mt.einsum(equation, *xs), lambda *xs: torch.einsum(equation, *xs), *arrays)


def test_einsum_list_operands_and_float32():
    mt.manual_seed(0)
    a, b = mt.randn(2, 3), mt.randn(3, 4)
    out = mt.einsum("ij,jk->ik", [a, b])
    assert out.dtype == mt.float32
    np.testing.assert_allclose(out.numpy(), a.numpy() @ b.numpy(), rtol=1e-5, atol=1e-6)  # (atol: a sum near 0)


@pytest.mark.parametrize(
    "equation,shapes,error,match",
    [
        ("ij,jk->ik", [(2, 3)], ValueError, "2 operand"),
        ("ij->ij", [(2, 3, 4)], ValueError, "has 3 dims"),
        ("ij,jk->ik", [(2, 3), (4, 5)], ValueError, "do not fit"),
        ("ij->k", [(2, 3)], ValueError, "output subscript 'k'"),
        ("i1->i", [(2, 3)], ValueError, "invalid subscripts"),
    ],
)
def test_einsum_errors(equation, shapes, error, match):
    with pytest.raises(error, match=match):
        mt.einsum(equation, *[mt.ones(*s) for s in shapes])


def test_einsum_type_errors():
    with pytest.raises(TypeError, match="operand 1 must be a Tensor"):
        mt.einsum("i,i->", mt.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="same dtype"):
        mt.einsum("i,i->", mt.ones(2), mt.ones(2, dtype=mt.float64))


def test_large_operands_take_the_optimised_path_and_agree() -> None:
    """From 4096 elements NumPy's path optimiser (BLAS) computes the contraction; same values and
    gradients as the batched matmul."""
    rng = np.random.default_rng(7)
    a = mt.tensor(rng.standard_normal((4, 32, 64)), dtype=mt.float64, requires_grad=True)
    b = mt.tensor(rng.standard_normal((4, 64, 16)), dtype=mt.float64, requires_grad=True)
    w = mt.tensor(rng.standard_normal((4, 32, 16)), dtype=mt.float64)
    (mt.einsum("bij,bjk->bik", a, b) * w).sum().backward()
    grads = a.grad.numpy(), b.grad.numpy()
    a.grad = b.grad = None
    ((a @ b) * w).sum().backward()
    np.testing.assert_allclose(grads[0], a.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(grads[1], b.grad.numpy(), rtol=1e-12)
