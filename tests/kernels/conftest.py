"""The ``kernel`` fixture (parametrized "serial" / "parallel"): the JIT is on and ``parallel_pays``
is set so that every kernel call takes the serial (resp. parallel) kernel, whatever the size and
the machine's load, so the parallel kernels are tested on small, odd sizes too.  Helpers:
``kernel_paths.py``.

Every test here waits for the compiler (``mt.set_jit_wait(True)``, autouse), as the whole suite
does by default (tests/conftest.py), even when ``MINITENSOR_JIT_WAIT=0`` runs the rest the
programs' way: a kernel's first call runs its machine code, not its NumPy reference while a
background process compiles it (``runtime/jit.py``), so a comparison of the two paths compares
two paths; so do the Python processes a test starts.  ``test_background.py`` tests the programs'
way in processes of its own."""

from __future__ import annotations

import pytest

import minitensor as mt
from minitensor.kernels.runtime import blas, dispatch


@pytest.fixture(autouse=True)
def jit_waits(monkeypatch):
    monkeypatch.setenv("MINITENSOR_JIT_WAIT", "1")  # (and in the Python processes a test starts)
    previous = mt.jit_waits()
    mt.set_jit_wait(True)
    yield
    mt.set_jit_wait(previous)


@pytest.fixture(params=["serial", "parallel"])
def kernel(request, monkeypatch) -> str:
    monkeypatch.setattr(dispatch, "parallel_pays", lambda seconds, launch=None: request.param == "parallel")
    previous = mt.jit_enabled()
    mt.set_jit_enabled(True)
    yield request.param
    mt.set_jit_enabled(previous)


@pytest.fixture
def two_blas_threads():
    """Two threads for NumPy's BLAS and the kernels (``mt.set_num_threads(2)``), the thread policy
    off meanwhile (it would lower the count on a busy machine, e.g. beside the suite's other
    workers): for tests of work split over BLAS's threads."""
    if "set" not in blas.thread_functions():
        pytest.skip("no OpenBLAS thread functions")
    policy, before = mt.thread_policy_enabled(), mt.get_num_threads()
    mt.set_num_threads(2)
    mt.set_thread_policy(False)
    yield
    mt.set_thread_policy(policy)
    mt.set_num_threads(before)
