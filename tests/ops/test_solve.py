"""inv, inv_ex, solve, solve_triangular, pinv, lstsq (ops/solve.py): float64 gradcheck, second order and PyTorch
as the oracle (values, gradients, second derivatives), batches and broadcasting, vector right-hand sides,
``left=False``; singular matrices and argument errors as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

torch = pytest.importorskip("torch")
rng = np.random.default_rng(24)
A = rng.standard_normal((3, 3)) + 3 * np.eye(3)
BATCH = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)


def test_inv():
    check_op(mt.linalg.inv, torch.linalg.inv, A)
    check_op(lambda a: a.inverse(), lambda a: a.inverse(), BATCH)


@pytest.mark.parametrize(
    "a, b, left",
    [(A, rng.standard_normal((3, 2)), True), (BATCH, rng.standard_normal((3, 2)), True),
     (A, rng.standard_normal(3), True), (BATCH, rng.standard_normal((2, 3)), True),
     (A, rng.standard_normal((2, 3)), False), (BATCH, rng.standard_normal((1, 4, 3)), False)],
)  # fmt: skip
def test_solve(a, b, left):
    check_op(lambda x, y: mt.linalg.solve(x, y, left=left), lambda x, y: torch.linalg.solve(x, y, left=left), a, b)


@pytest.mark.parametrize("upper, left, unit", [(True, True, False), (False, True, True), (False, False, False),
                                               (True, False, True)])  # fmt: skip
def test_solve_triangular_reads_and_differentiates_its_triangle(upper, left, unit):
    b = rng.standard_normal((3, 2) if left else (2, 3))
    settings = {"upper": upper, "left": left, "unitriangular": unit}
    check_op(lambda x, y: mt.linalg.solve_triangular(x, y, **settings),
             lambda x, y: torch.linalg.solve_triangular(x, y, **settings), A, b)  # fmt: skip


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
def test_pinv(shape):
    a = rng.standard_normal(shape)
    check_op(mt.linalg.pinv, torch.linalg.pinv, a)
    check_op(lambda x: x.pinverse(), lambda x: x.pinverse(), a)


def test_pinv_of_a_symmetric_matrix_and_of_a_rank_deficient_one():
    # (hermitian=True reads one triangle: the input is made symmetric first, as a gradcheck needs)
    check_op(
        lambda x: mt.linalg.pinv(x @ x.mT, hermitian=True), lambda x: torch.linalg.pinv(x @ x.mT, hermitian=True), A
    )
    low_rank = rng.standard_normal((4, 1)) @ rng.standard_normal((1, 3))
    np.testing.assert_allclose(mt.linalg.pinv(mt.tensor(low_rank, dtype=mt.float64)).numpy(),
                               torch.linalg.pinv(torch.tensor(low_rank)).numpy(), atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("driver", [None, "gelsd", "gels"])
def test_lstsq_solution_and_residuals(driver):
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    check_op(lambda x, y: mt.linalg.lstsq(x, y, driver=driver).solution,
             lambda x, y: torch.linalg.lstsq(x, y, driver=driver).solution, a, b)  # fmt: skip
    if driver is not None:
        check_op(lambda x, y: mt.linalg.lstsq(x, y, driver=driver).residuals,
                 lambda x, y: torch.linalg.lstsq(x, y, driver=driver).residuals, a, b)  # fmt: skip


def test_singular_matrices_and_inv_ex():
    singular = mt.tensor([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(mt.linalg.LinAlgError, match="linalg.inv: the input matrix is singular"):
        mt.linalg.inv(singular)
    assert issubclass(mt.linalg.LinAlgError, RuntimeError)
    inverse, info = mt.linalg.inv_ex(mt.stack([singular, mt.eye(2)]))
    assert info.tolist() == [1, 0] and info.dtype == mt.int32
    np.testing.assert_array_equal(inverse[1].numpy(), np.eye(2))
    with pytest.raises(mt.linalg.LinAlgError):
        mt.linalg.inv_ex(singular, check_errors=True)


def test_argument_errors():
    with pytest.raises(ValueError, match=r"linalg.inv: A must be a batch of square matrices, got shape \(2, 3\)"):
        mt.linalg.inv(mt.ones(2, 3))
    with pytest.raises(TypeError, match="linalg.inv: A must be a floating point tensor, got dtype Long"):
        mt.linalg.inv(mt.tensor([[1, 0], [0, 1]]))
    with pytest.raises(ValueError, match="linalg.solve: B's shape"):
        mt.linalg.solve(mt.eye(3), mt.ones(2, 2))
    with pytest.raises(TypeError, match="linalg.solve_triangular: upper must be a bool"):
        mt.linalg.solve_triangular(mt.eye(2), mt.ones(2, 1), upper=None)
    with pytest.raises(ValueError, match="linalg.lstsq: driver must be one of"):
        mt.linalg.lstsq(mt.eye(2), mt.ones(2, 1), driver="gelsx")
