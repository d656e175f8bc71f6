"""runtime/shared_types.py: argument types that share one specialisation (None and arrays, any
layout, read-only arrays), and a constant passed from one kernel to another (runtime/jit.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from minitensor.kernels import attention
from minitensor.kernels.attention_unfused import backward_unfused, forward_unfused
from minitensor.kernels.runtime import jit, shared_types


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
        where = shared_types.rules(kernel.py_func, optional).optional
        for signature in kernel.compiled().overloads:  # (no specialisation for a None of these arguments)
            assert all(isinstance(signature[i], types.Optional) for i in where), signature


def _layouts(a: np.ndarray) -> dict:
    """(B, H, L, D) heads ``a`` as BLAS reads them in place: a C-contiguous array, the heads of a
    (B, L, H, D) array, the first D columns of wider rows, and a read-only array."""
    read_only = a.copy()
    read_only.flags.writeable = False
    return {
        "C": a,
        "heads": a.transpose(0, 2, 1, 3).copy().transpose(0, 2, 1, 3),
        "columns": np.concatenate([a, a], axis=-1)[..., : a.shape[-1]],
        "read-only": read_only,
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_passes_take_heads_of_any_layout_and_read_only_inputs_in_one_specialisation(dtype) -> None:
    """Heads as C-contiguous arrays, views and read-only arrays run the code compiled for 'A'-layout
    (read-only inputs) arrays, and give the NumPy reference's results."""
    rng = np.random.default_rng(2)
    q, k, v, mask, drop = _inputs(dtype, rng)
    g = rng.standard_normal((2, 3, 5, 3)).astype(dtype)
    scale, tol = dtype(0.5), {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10}
    p_ref, out_ref = np.empty((2, 3, 5, 6), dtype), np.empty((2, 3, 5, 3), dtype)
    forward_unfused(q, k, v, mask, scale, drop, p_ref, out_ref)
    grads_ref = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    backward_unfused(g, q, k, v, p_ref, drop, scale, *grads_ref)
    layouts = [_layouts(a) for a in (q, k, v, g)]
    for name in layouts[0]:
        qs, ks, vs, gs = (a[name] for a in layouts)
        written = "C" if name == "read-only" else name  # (the outputs as views of the same kind)
        out, p = _layouts(np.zeros_like(out_ref))[written], np.empty_like(p_ref)
        attention._forward_serial(qs, ks, vs, mask, scale, drop, p, out)
        np.testing.assert_allclose(out, out_ref, **tol, err_msg=name)
        grads = tuple(_layouts(np.zeros_like(a))[written] for a in (q, k, v))
        attention._backward_serial(gs, qs, ks, vs, p_ref, drop, scale, *grads)
        for got, want in zip(grads, grads_ref):
            np.testing.assert_allclose(got, want, **tol, err_msg=name)
    from numba.core import types

    forward, backward = attention._forward_serial, attention._backward_serial
    for kernel, declared in ((forward, attention._FORWARD_VIEWS), (backward, attention._BACKWARD_VIEWS)):
        rules = shared_types.rules(kernel.py_func, **declared)
        for signature in kernel.compiled().overloads:  # (none for a C-contiguous or writable array there)
            arrays = [t.type if isinstance(t, types.Optional) else t for t in signature]
            assert all(arrays[i].layout == "A" for i in rules.any_layout), signature
            assert all(not arrays[i].mutable for i in rules.read_only), signature


@jit.njit
def _range_total(x, start, stop):
    total = 0.0
    for i in range(start, stop):
        total += x[i]
    return total


@jit.njit
def _whole_total(x):
    return _range_total(x, 0, x.size)


def test_a_constant_passed_from_one_kernel_to_another_compiles_its_plain_type() -> None:
    """``f(x, 0)`` in a kernel compiles ``f`` for an int64, the specialisation a call ``f(x, i)`` uses,
    not for numba's ``Literal[int](0)`` beside it."""
    from numba.core import types

    x = np.arange(5.0)
    assert _whole_total(x) == 10.0 and _range_total(x, 1, 3) == 3.0
    signatures = list(_range_total.compiled().overloads)
    assert signatures == [(types.Array(types.float64, 1, "C"), types.int64, types.int64)], signatures


def test_a_declaration_naming_no_argument_of_the_kernel_is_refused() -> None:
    def kernel(x, out):
        out[:] = x

    with pytest.raises(ValueError, match="kernel has no argument 'mask'"):
        jit.njit(optional={"mask": "x"})(kernel)
    with pytest.raises(ValueError, match="kernel has no argument 'y'"):
        jit.njit(optional={"out": "y"})(kernel)
    with pytest.raises(ValueError, match="kernel has no argument 'z'"):
        jit.njit(any_layout=("x", "z"))(kernel)
    with pytest.raises(ValueError, match="kernel has no argument 'w'"):
        jit.njit(read_only=("w",))(kernel)


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
