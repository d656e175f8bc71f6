"""The ``kernel`` fixture (parametrized "serial" / "parallel"): the JIT is on and ``parallel_pays``
is set so that every kernel call takes the serial (resp. parallel) kernel, whatever the size and
the machine's load, so the parallel kernels are tested on small, odd sizes too.  Helpers:
``kernel_paths.py``."""

from __future__ import annotations

import pytest

import minitensor as mt
from minitensor.kernels.runtime import blas, dispatch


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
