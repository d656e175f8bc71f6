"""``kernels.runtime.blas``: NumPy's BLAS called from numba kernels, against ``np.matmul``."""

from __future__ import annotations

import numpy as np
import pytest

from minitensor.kernels.runtime import blas, threads

pytestmark = pytest.mark.skipif(not blas.available(), reason="numba cannot call this NumPy's BLAS")


def _operand(rng, shape, transposed, dtype, strided):
    """A (rows, cols) operand stored as its transpose when ``transposed``, as a view with a row
    stride larger than its width when ``strided`` (one head of a packed array)."""
    stored = shape[::-1] if transposed else shape
    base = rng.standard_normal((stored[0], stored[1] + 3 if strided else stored[1])).astype(dtype)
    a = base[:, 1 : 1 + stored[1]] if strided else base
    return a, (a.T if transposed else a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("m,n,k", [(5, 7, 3), (1, 4, 6), (6, 1, 1), (3, 3, 0), (0, 2, 2)])
def test_gemm_matches_matmul(rng, dtype, trans_a, trans_b, strided, m, n, k) -> None:
    a, op_a = _operand(rng, (m, k), trans_a, dtype, strided)
    b, op_b = _operand(rng, (k, n), trans_b, dtype, strided)
    c_base = rng.standard_normal((m, n + 2)).astype(dtype)
    c = c_base[:, 1 : n + 1] if strided else c_base[:, :n].copy()
    expected = op_a.astype(np.float64) @ op_b.astype(np.float64) + 0.5 * c.astype(np.float64)
    blas.gemm(a, trans_a, b, trans_b, c, 0.5)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(c, expected, **tol)
    assert c.dtype == np.dtype(dtype)


def test_gemm_with_beta_zero_ignores_what_c_held(rng) -> None:
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    c = np.full((4, 5), np.nan)
    blas.gemm(a, False, b, False, c, 0.0)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12)


def test_single_threaded_sets_and_restores_the_blas_threads(monkeypatch) -> None:
    get = blas.thread_functions().get("get")
    if get is None:
        pytest.skip("this BLAS has no thread setting")
    # (the thread policy off: on a busy machine its reading inside would lower the count meanwhile)
    monkeypatch.setitem(threads._state, "enabled", False)
    before = get()
    with blas.single_threaded():
        assert get() == 1
    assert get() == before
    with pytest.raises(KeyError), blas.single_threaded():
        raise KeyError  # restored on errors too
    assert get() == before


def test_register_is_idempotent() -> None:
    assert blas.register() is True and blas.register() is True
