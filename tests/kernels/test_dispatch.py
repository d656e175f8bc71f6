"""``runtime/dispatch.py``: a ``Kernel``'s choice between its NumPy reference, serial and parallel
versions, the launch cost that decides it, and the ways a kernel runs (``on``, ``map``, ``along``)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels.runtime import blas, dispatch, jit
from minitensor.kernels.runtime.dispatch import BlasKernel, Kernel


@pytest.fixture
def jit_on():
    previous = mt.jit_enabled()
    mt.set_jit_enabled(True)
    yield
    mt.set_jit_enabled(previous)


def test_choose_picks_reference_serial_or_parallel(monkeypatch) -> None:
    monkeypatch.setattr(dispatch, "_launch", {"seconds": 25e-6})  # a launch costs 25 µs: 100 µs of work pays
    monkeypatch.setattr(dispatch, "threads", lambda: 2)  # (a busy machine: the thread policy says 1)
    ref, serial, parallel = "reference", "serial", "parallel"
    previous = mt.jit_enabled()
    try:
        mt.set_jit_enabled(True)
        assert dispatch.choose(np.zeros(99_000, np.float32), ref, serial, parallel) == serial  # 99 µs
        assert dispatch.choose(np.zeros(100_000, np.float64), ref, serial, parallel) == parallel
        assert dispatch.choose(np.zeros(1000, np.float64), ref, serial, parallel, ns=100) == parallel
        assert dispatch.choose(np.zeros(100_000, np.float64), ref, serial, parallel, ns=0.5) == serial
        assert dispatch.choose(np.zeros(100_000, np.float64), ref, serial) == serial  # no parallel kernel
        assert dispatch.choose(np.zeros(0, np.float32), ref, serial, parallel) == ref  # nothing to do
        assert dispatch.choose(np.zeros(5, np.int64), ref, serial, parallel) == ref  # not a kernel dtype
        mt.set_jit_enabled(False)
        assert dispatch.choose(np.zeros(1000, np.float32), ref, serial, parallel) == ref
    finally:
        mt.set_jit_enabled(previous)


def test_launch_cost_is_measured_once_and_bounds_the_parallel_work(monkeypatch) -> None:
    monkeypatch.setattr(dispatch, "_launch", {"seconds": None})
    monkeypatch.setattr(dispatch, "threads", lambda: 2)
    cost = dispatch.launch_seconds()
    assert dispatch.MIN_LAUNCH <= cost < 0.05  # waking threads: microseconds, never a twentieth of a second
    assert dispatch.launch_seconds() == cost  # measured once
    assert not dispatch.parallel_pays(0.99 * dispatch.PAYS_FROM * cost) and dispatch.parallel_pays(
        dispatch.PAYS_FROM * cost
    )
    monkeypatch.setattr(dispatch, "threads", lambda: 1)  # one free core: never parallel
    assert not dispatch.parallel_pays(1.0)


def test_a_launch_cost_of_its_own_replaces_numbas(monkeypatch) -> None:
    """``launch``: the cost of a parallel candidate not on numba's pool (attention on BLAS's threads)."""
    monkeypatch.setattr(dispatch, "_launch", {"seconds": 1.0})  # (numba's, as if measured: a second)
    monkeypatch.setattr(dispatch, "threads", lambda: 2)
    launch = 50e-6
    assert not dispatch.parallel_pays(dispatch.PAYS_FROM * launch)  # against numba's cost: no
    assert dispatch.parallel_pays(dispatch.PAYS_FROM * launch, launch)
    assert not dispatch.parallel_pays(0.99 * dispatch.PAYS_FROM * launch, launch)
    x = np.ones(1000, np.float32)
    monkeypatch.setattr(jit, "_state", {"enabled": True})
    assert (
        dispatch.choose(x, "ref", "serial", "parallel", ns=dispatch.PAYS_FROM * launch * 1e9 / x.size, launch=launch)
        == "parallel"
    )
    assert dispatch.choose(x, "ref", "serial", "parallel", ns=dispatch.PAYS_FROM * launch * 1e9 / x.size) == "serial"


def test_numpy_s_own_loop_runs_where_it_has_an_avx512_version_for_the_dtype(monkeypatch, jit_on) -> None:
    """``numpy_simd``: the reference where NumPy runs its AVX-512 loop of that ufunc for the dtype (here:
    float32 only, as if reported so) on ``NUMPY_FROM`` elements or more; the kernel elsewhere, on fewer
    elements and when ``numpy_loops(False)``."""
    monkeypatch.setattr(dispatch, "numpy_avx512", lambda name: {"exp": {np.dtype(np.float32)}}.get(name, set()))
    monkeypatch.setattr(dispatch, "_numpy_loops", {"enabled": True})
    big, small = dispatch.NUMPY_FROM, dispatch.NUMPY_FROM - 1
    k = Kernel("reference", "serial", numpy_simd="exp")
    assert k.on(np.zeros(big, np.float32)) == "reference" and k.on(np.zeros(big, np.float64)) == "serial"
    assert k.on(np.zeros(small, np.float32)) == "serial"
    assert Kernel("reference", "serial", numpy_simd="log").on(np.zeros(big, np.float32)) == "serial"
    assert Kernel("reference", "serial").on(np.zeros(big, np.float32)) == "serial"
    assert dispatch.numpy_loops(False) is True
    assert k.on(np.zeros(big, np.float32)) == "serial"
    assert dispatch.numpy_loops(True) is False


def test_the_transcendental_kernels_name_the_numpy_loop_their_reference_calls() -> None:
    """Each ``numpy_simd`` names the ufunc its reference runs: on one value both give the same."""
    from minitensor.kernels import exp_log, tanh, trig

    kernels = [exp_log._EXP, exp_log._LOG, exp_log._LOG2, tanh._TANH, trig._SIN, trig._COS]
    for kernel in kernels:
        x, out = np.array([0.75]), np.empty(1)
        kernel.reference(x, out)
        assert out[0] == getattr(np, kernel.numpy_simd)(0.75), kernel.numpy_simd


def _add_one_numpy(x, out):
    out[...] = x + 1


def _add_one_kernel(x, out):  # (stands for a numba kernel: the tests check which one ran)
    out[...] = x + 1
    _add_one_kernel.calls += 1


_add_one_kernel.calls = 0


def test_map_runs_on_flat_arrays_and_returns_the_last_arrays_shape(jit_on) -> None:
    kernel = Kernel(_add_one_numpy, _add_one_kernel)
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3).T  # (not contiguous: reshape(-1) copies it)
    before = _add_one_kernel.calls
    out = kernel.map(x)
    assert _add_one_kernel.calls == before + 1 and out.shape == (3, 2) and out.dtype == np.float32
    np.testing.assert_array_equal(out, x + 1)
    with mt.jit_disabled():
        np.testing.assert_array_equal(kernel.map(x), x + 1)
    assert _add_one_kernel.calls == before + 1  # (the reference ran)
    ints = np.arange(3)
    np.testing.assert_array_equal(kernel.map(ints), ints + 1)  # (not a kernel dtype: the reference)
    assert _add_one_kernel.calls == before + 1


def _row_cumsum_numpy(x, g, out):
    out[...] = np.cumsum(x, axis=1) * g


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_along_moves_the_dim_last_and_back(dim) -> None:
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    kernel = Kernel(_row_cumsum_numpy, _row_cumsum_numpy)
    got = kernel.along(x, dim, g)
    assert got.shape == x.shape
    np.testing.assert_allclose(got, np.cumsum(x, axis=dim) * g)
    rows, moved_shape = dispatch.as_rows(x, dim)
    assert rows.flags.c_contiguous and dispatch.from_rows(rows, moved_shape, dim, x).shape == x.shape
    np.testing.assert_array_equal(dispatch.from_rows(rows, moved_shape, dim, x), x)
    assert moved_shape == dispatch.as_rows_shape(x, dim)


def test_a_blas_kernel_runs_its_reference_where_numba_finds_no_blas(jit_on, monkeypatch) -> None:
    kernel = BlasKernel("reference", "serial")
    x = np.ones(4, np.float32)
    monkeypatch.setitem(blas._state, "found", [(1, 2, "int64")])  # (NumPy's gemm found: addresses, int type)
    assert kernel.on(x) == "serial"
    monkeypatch.setitem(blas._state, "found", [None])
    assert kernel.on(x) == "reference"
    assert Kernel("reference", "serial").on(x) == "serial"  # (a plain kernel does not ask)
