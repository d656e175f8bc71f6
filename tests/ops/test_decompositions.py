"""cholesky (and cholesky_ex), qr, eigh (and eigvalsh), svd (and svdvals, torch.svd) (ops/decompositions.py):
float64 gradcheck, second order and PyTorch as the oracle.  Eigen- and singular vectors are compared through
functions that do not depend on their signs (NumPy's LAPACK may pick other signs than PyTorch's)."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

torch = pytest.importorskip("torch")
rng = np.random.default_rng(26)
M = rng.standard_normal((3, 3))


def _spd(lib):
    """A -> A A^T + I: a symmetric positive-definite matrix of any square A."""
    return lambda a: a @ a.mT + lib.eye(a.shape[-1], dtype=a.dtype)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(upper):
    check_op(lambda a: mt.linalg.cholesky(_spd(mt)(a), upper=upper),
             lambda a: torch.linalg.cholesky(_spd(torch)(a), upper=upper), M)  # fmt: skip
    check_op(lambda a: mt.linalg.cholesky_ex(_spd(mt)(a)).L, lambda a: torch.linalg.cholesky_ex(_spd(torch)(a)).L,
             rng.standard_normal((2, 3, 3)))  # fmt: skip


def test_cholesky_of_a_matrix_that_is_not_positive_definite():
    with pytest.raises(mt.linalg.LinAlgError, match="not positive-definite"):
        mt.linalg.cholesky(-mt.eye(2))
    low, info = mt.linalg.cholesky_ex(mt.stack([-mt.eye(2), mt.eye(2)]))
    assert info.tolist() == [1, 0] and np.isnan(low[0].numpy()).all()
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        mt.cholesky(mt.eye(2))


@pytest.mark.parametrize("shape, mode", [((4, 3), "reduced"), ((3, 3), "complete"), ((3, 5), "reduced"),
                                         ((2, 4, 3), "reduced"), ((2, 4), "complete")])  # fmt: skip
def test_qr(shape, mode):
    a = rng.standard_normal(shape)
    check_op(lambda x: mt.linalg.qr(x, mode).Q, lambda x: torch.linalg.qr(x, mode).Q, a)
    check_op(lambda x: mt.linalg.qr(x, mode).R, lambda x: torch.linalg.qr(x, mode).R, a)


def test_qr_modes_without_a_derivative_raise_in_backward():
    for mode, a in (("r", mt.ones(3, 2, requires_grad=True)), ("complete", mt.randn(3, 2, requires_grad=True))):
        out = mt.linalg.qr(a, mode).R
        with pytest.raises(RuntimeError, match="linalg.qr|not differentiable"):
            out.sum().backward()


def test_eigh_through_sign_free_functions():
    def ours(a):
        w, v = mt.linalg.eigh(a + a.mT)
        return (v * v) * w + v[..., :1] * v[..., 1:2]

    def theirs(a):
        w, v = torch.linalg.eigh(a + a.mT)
        return (v * v) * w + v[..., :1] * v[..., 1:2]

    check_op(ours, theirs, M)
    check_op(lambda a: mt.linalg.eigvalsh(a + a.mT, "U"), lambda a: torch.linalg.eigvalsh(a + a.mT, "U"), M)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd_through_sign_free_functions(shape, full_matrices):
    a = rng.standard_normal(shape)
    k = min(shape[-2:])

    def sign_free(lib):
        def fn(x):
            u, s, vh = lib.linalg.svd(x, full_matrices=full_matrices)
            u, vh = u[..., :k], vh[..., :k, :]
            return (u[..., :, :, None] * vh[..., None, :, :]).sum(-2) * 2 + (u * u * s[..., None, :]).sum(
                -1, keepdim=True
            )

        return fn

    check_op(sign_free(mt), sign_free(torch), a)
    check_op(mt.linalg.svdvals, torch.linalg.svdvals, a)


def test_torch_svd_returns_v():
    a = mt.tensor(rng.standard_normal((4, 3)), dtype=mt.float64)
    u, s, v = mt.svd(a)
    np.testing.assert_allclose((u * s) @ v.mT.numpy(), a.numpy(), atol=1e-12)
    zu, _, zv = a.svd(compute_uv=False)
    assert not zu.numpy().any() and zv.shape == (3, 3)


def test_errors():
    with pytest.raises(ValueError, match="linalg.eigh: UPLO must be one of 'L', 'U'; got 'X'"):
        mt.linalg.eigh(mt.eye(2), "X")
    with pytest.raises(ValueError, match="linalg.qr: mode must be one of"):
        mt.linalg.qr(mt.eye(2), "full")
    with pytest.raises(ValueError, match="linalg.cholesky: A must be a batch of square matrices"):
        mt.linalg.cholesky(mt.ones(2, 3))
