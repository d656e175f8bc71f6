"""det, slogdet, logdet (ops/determinant.py): float64 gradcheck, second order and PyTorch as the oracle; at a
singular matrix det's gradient is the adjugate (PyTorch's SVD formula), to second order."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

torch = pytest.importorskip("torch")
rng = np.random.default_rng(25)
A = rng.standard_normal((3, 3))
BATCH = rng.standard_normal((2, 3, 3))


def test_det_slogdet_logdet():
    check_op(mt.linalg.det, torch.linalg.det, A)
    check_op(lambda a: a.det(), lambda a: a.det(), BATCH)
    check_op(lambda a: mt.linalg.slogdet(a).logabsdet, lambda a: torch.linalg.slogdet(a).logabsdet, BATCH)
    spd = A @ A.T + np.eye(3)
    check_op(mt.logdet, torch.logdet, spd)


LEVI_CIVITA = np.zeros((3, 3, 3))
for _i, _j, _k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    LEVI_CIVITA[_i, _j, _k], LEVI_CIVITA[_i, _k, _j] = 1.0, -1.0


def _leibniz_det(a):
    """The det of 3 x 3 matrices as the polynomial sum_ijk eps_ijk a_0i a_1j a_2k: exact derivatives of every
    order in both modes."""
    return torch.einsum("...i,...j,...k,ijk->...", a[..., 0, :], a[..., 1, :], a[..., 2, :], torch.tensor(LEVI_CIVITA))


def test_det_at_singular_matrices():
    """The gradient and the tangent are the adjugate's, to second order: PyTorch's backward with create_graph
    (its SVD formula) gives it too; its forward AD and its first-order-only backward give 0 where the LU
    has an exact zero pivot, so the oracle of both modes is the Leibniz polynomial."""
    singular = A.copy()
    singular[2] = singular[0] - 2 * singular[1]  # (rank 2)
    rank_one = np.outer(A[0], A[1])  # (rank 1: a zero gradient)
    exact = np.diag([1.0, 2.0, 0.0])  # (a determinant of exactly 0)
    for a in (singular, rank_one, exact, np.stack([singular, A])):
        check_op(mt.linalg.det, _leibniz_det, a, atol=1e-9)
        x, t = mt.tensor(a, dtype=mt.float64, requires_grad=True), torch.tensor(a, requires_grad=True)
        (g,) = torch.autograd.grad(torch.linalg.det(t).sum(), t, create_graph=True)
        mt.linalg.det(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), g.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_signs_and_logdet_of_negative_determinants():
    a = mt.tensor(-np.eye(3), dtype=mt.float64)
    sign, logabs = mt.linalg.slogdet(a)
    assert sign.item() == -1.0 and logabs.item() == 0.0 and not sign.requires_grad
    assert np.isnan(mt.logdet(a).item()) and mt.logdet(mt.zeros(2, 2)).item() == -np.inf


def test_errors():
    with pytest.raises(ValueError, match="linalg.det: A must be a batch of square matrices"):
        mt.linalg.det(mt.ones(2, 3))
    with pytest.raises(ValueError, match="linalg.slogdet: A must have at least 2 dimensions"):
        mt.linalg.slogdet(mt.ones(3))


def test_slogdet_factors_once_and_its_node_under_vmap_computes_each_examples_value(monkeypatch) -> None:
    """``slogdet`` hands the value it computed with the sign to its node (one LU factorisation, not
    two); the node's batching rule drops a value given outside vmap and computes the batch's own."""
    from minitensor import backend
    from minitensor.ops.determinant import LogAbsDet

    a = np.array([[[2.0, 1.0], [0.0, 3.0]], [[-1.0, 0.5], [2.0, 4.0]]])
    calls = []
    real = backend.slogdet
    monkeypatch.setattr(backend, "slogdet", lambda m: (calls.append(1), real(m))[1])
    sign, logabs = mt.linalg.slogdet(mt.tensor(a))
    assert len(calls) == 1
    np.testing.assert_allclose(logabs.numpy(), np.log(np.abs(np.linalg.det(a))))
    np.testing.assert_array_equal(sign.numpy(), np.sign(np.linalg.det(a)))
    stale = np.zeros(())  # (one example's value, wrong for the batch)
    got = mt.func.vmap(lambda m: LogAbsDet.apply(m, value=stale))(mt.tensor(a))
    np.testing.assert_allclose(got.numpy(), np.log(np.abs(np.linalg.det(a))))
