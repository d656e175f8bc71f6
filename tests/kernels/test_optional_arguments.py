"""runtime/optional.py: a kernel's arguments that may be None share one specialisation with arrays."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from minitensor.kernels import attention
from minitensor.kernels.attention_unfused import backward_unfused, forward_unfused
from minitensor.kernels.runtime import jit


def _inputs(dtype, rng):
    q = rng.standard_normal((2, 3, 5, 4)).astype(dtype)
    k, v = rng.standard_normal((2, 3, 6, 4)).astype(dtype), rng.standard_normal((2, 3, 6, 3)).astype(dtype)
    mask = np.where(rng.random((2, 3, 5, 6)) < 0.2, -np.inf, 0).astype(dtype)
    drop = (rng.random((2, 3, 5, 6)) < 0.8).astype(dtype) / dtype(0.8)
    return q, k, v, mask, drop


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_passes_take_none_and_arrays_in_one_specialisation_each(dtype) -> None:
    """Every combination of mask, dropout and kept probabilities (None or an array) runs the code
    compiled for the arguments as Optional types, and gives the NumPy reference's results."""
    rng = np.random.default_rng(0)
    q, k, v, mask, drop = _inputs(dtype, rng)
    g = rng.standard_normal((2, 3, 5, 3)).astype(dtype)
    scale, tol = dtype(0.5), {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10}
    for m, d, keep in itertools.product((None, mask), (None, drop), (False, True)):
        p, out = (np.empty((2, 3, 5, 6), dtype) if keep else None), np.empty((2, 3, 5, 3), dtype)
        p_ref, out_ref = np.empty((2, 3, 5, 6), dtype), np.empty_like(out)
        attention._forward_serial(q, k, v, m, scale, d, p, out)
        forward_unfused(q, k, v, m, scale, d, p_ref, out_ref)
        np.testing.assert_allclose(out, out_ref, **tol)
        if keep:
            np.testing.assert_allclose(p, p_ref, **tol)
        wanted = (np.empty_like(q), None, np.empty_like(v)) if keep else (np.empty_like(q), np.empty_like(k), None)
        expected = tuple(None if w is None else np.empty_like(w) for w in wanted)
        attention._backward_serial(g, q, k, v, p_ref, d, scale, *wanted)
        backward_unfused(g, q, k, v, p_ref, d, scale, *expected)
        for got, want in zip(wanted, expected):
            if got is not None:
                np.testing.assert_allclose(got, want, **tol)
    from numba.core import types

    for kernel, optional in (
        (attention._forward_serial, attention._FORWARD_OPTIONAL),
        (attention._backward_serial, attention._BACKWARD_OPTIONAL),
    ):
        where = jit._optional.positions(kernel.py_func, optional)
        for signature in kernel.compiled().overloads:  # (no specialisation for a None of these arguments)
            assert all(isinstance(signature[i], types.Optional) for i in where), signature


def test_a_declaration_naming_no_argument_of_the_kernel_is_refused() -> None:
    def kernel(x, out):
        out[:] = x

    with pytest.raises(ValueError, match="kernel has no argument 'mask'"):
        jit.njit(optional={"mask": "x"})(kernel)
    with pytest.raises(ValueError, match="kernel has no argument 'y'"):
        jit.njit(optional={"out": "y"})(kernel)


@pytest.mark.parametrize("kernel", ["parallel"], indirect=True)
def test_attention_tasks_on_blas_threads_are_one_per_dtype(kernel, two_blas_threads) -> None:
    """The passes split over BLAS's threads read None or an array from each slot of their record:
    every combination runs one compiled task per dtype, and gives the NumPy reference's results."""
    if not attention.blas_threads.available():
        pytest.skip("no BLAS threads to run tasks on here")
    rng = np.random.default_rng(1)
    q, k, v, mask, drop = _inputs(np.float32, rng)
    g = rng.standard_normal((2, 3, 5, 3)).astype(np.float32)
    scale = np.float32(0.5)
    for m, d, keep in itertools.product((None, mask), (None, drop), (False, True)):
        p, out = (np.empty((2, 3, 5, 6), np.float32) if keep else None), np.empty((2, 3, 5, 3), np.float32)
        p_ref, out_ref = np.empty((2, 3, 5, 6), np.float32), np.empty_like(out)
        attention._forward_threaded(q, k, v, m, scale, d, p, out)
        forward_unfused(q, k, v, m, scale, d, p_ref, out_ref)
        np.testing.assert_allclose(out, out_ref, rtol=1e-4, atol=1e-5)
        wanted = (None, np.empty_like(k), None) if keep else (np.empty_like(q), None, np.empty_like(v))
        expected = tuple(None if w is None else np.empty_like(w) for w in wanted)
        attention._backward_threaded(g, q, k, v, p_ref, d, scale, *wanted)
        backward_unfused(g, q, k, v, p_ref, d, scale, *expected)
        for got, want in zip(wanted, expected):
            if got is not None:
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    for factory in (attention._forward_task, attention._backward_task):  # (keyed by the dtype alone)
        assert ("float32",) in factory._made and all(len(key) == 1 for key in factory._made), factory._made
