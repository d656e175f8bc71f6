"""kernels/lu.py: the LU kernels (det, slogdet, solve, inv of stacks of small matrices) and NumPy's LAPACK
(the references) agree for every size up to SMALL_N, both dtypes, strided and broadcast stacks; singular
matrices give NumPy's answers (det 0, slogdet (0, -inf), LinAlgError for a solve) and so do matrices
with NaN or infinity (the kernel hands them to NumPy); larger matrices go to NumPy whole."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import both_paths, jitted

from minitensor.kernels import lu as K


def _stack(rng, count, n, dtype):
    """``count`` well-conditioned (n, n) matrices: I + a random part of spectral norm ~0.4, some rows swapped
    (pivoting must happen) and signs of determinants mixed."""
    a = np.eye(n) + rng.standard_normal((count, n, n)) * 0.2 / np.sqrt(n)
    a[::2] = a[::2, ::-1]  # (rows reversed: the largest entry of a column is off the diagonal)
    a[1::3, 0] *= -1  # (a row negated: a determinant of the other sign)
    return a.astype(dtype)


def _close(dtype, n):
    """Tolerances between the two factorisations (rounding grows with n; NumPy's det is exp(log |det|))."""
    eps = np.finfo(dtype).eps
    return {"rtol": 8 * n * eps, "atol": 8 * n * eps}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 3, 8, 16, K.SMALL_N])
def test_the_kernels_equal_lapack(dtype, n) -> None:
    rng = np.random.default_rng(n)
    a = _stack(rng, 6, n, dtype)
    b = rng.standard_normal((6, n, 3)).astype(dtype)
    for fn in (K.det, lambda m: K.slogdet(m)[1], K.inv, lambda m: K.solve(m, b)):
        got, ref = both_paths(lambda: fn(a))  # noqa: B023
        assert got.shape == ref.shape and got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, ref, **_close(dtype, n))
    sign, ref_sign = both_paths(lambda: K.slogdet(a)[0])
    np.testing.assert_array_equal(sign, ref_sign)
    assert set(np.unique(sign)) == {-1.0, 1.0}


def test_the_inverse_and_the_solution_solve_their_systems() -> None:
    rng = np.random.default_rng(1)
    a = _stack(rng, 5, 7, "float64")
    b = rng.standard_normal((5, 7, 2))
    x, inverse = jitted(lambda: (K.solve(a, b), K.inv(a)))
    np.testing.assert_allclose(a @ x, b, atol=1e-12)
    np.testing.assert_allclose(a @ inverse, np.broadcast_to(np.eye(7), a.shape), atol=1e-12)


def test_strided_stacks_and_broadcast_batch_dims() -> None:
    rng = np.random.default_rng(2)
    a = _stack(rng, 8, 4, "float32")
    strided = np.swapaxes(a, -1, -2)[::2]  # (a transposed view, every other matrix)
    b = rng.standard_normal((3, 1, 4, 2)).astype(np.float32)  # (batch dims broadcast against a's (4,))
    got, ref = both_paths(lambda: (K.det(strided), K.inv(strided), K.solve(strided, b)))
    assert got[2].shape == (3, 4, 4, 2)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, **_close("float32", 4))


def test_singular_matrices_as_numpy() -> None:
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 1.0]]])
    regular = np.array([[[2.0, 1.0], [1.0, 3.0]]])
    a = np.concatenate([singular, regular])
    det, (sign, logabs) = jitted(lambda: (K.det(a), K.slogdet(a)))
    np.testing.assert_array_equal(det, [0.0, 0.0, 5.0])
    np.testing.assert_array_equal(sign, [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(logabs[:2], [-np.inf, -np.inf])
    for fn in (K.inv, lambda m: K.solve(m, np.ones((3, 2, 1)))):
        with pytest.raises(np.linalg.LinAlgError):
            jitted(lambda: fn(a))  # noqa: B023


def test_nan_and_infinity_give_numpys_answers() -> None:
    a = np.array([[[np.nan, 1.0], [1.0, 2.0]], [[np.inf, 1.0], [1.0, 2.0]], [[2.0, 1.0], [1.0, 3.0]]])
    with np.errstate(all="ignore"):
        pairs = [(K.det, np.linalg.det), (K.slogdet, np.linalg.slogdet), (K.inv, np.linalg.inv)]
        for ours, numpy in pairs:
            np.testing.assert_allclose(jitted(lambda: ours(a)), numpy(a), rtol=1e-15)  # noqa: B023


def test_larger_matrices_go_to_lapack_whole() -> None:
    n = K.SMALL_N + 1
    a = _stack(np.random.default_rng(3), 2, n, "float64")
    np.testing.assert_array_equal(jitted(lambda: K.det(a)), np.linalg.det(a))
    np.testing.assert_array_equal(jitted(lambda: K.inv(a)), np.linalg.inv(a))
