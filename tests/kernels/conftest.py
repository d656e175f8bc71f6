"""The ``kernel`` fixture (parametrized "serial" / "parallel"): the JIT is on and ``PARALLEL_MIN``
is set so that every kernel call takes the serial (resp. parallel) kernel, whatever the size, so
the parallel kernels are tested on small, odd sizes too (the thread policy, which would pick the
serial kernels on a busy machine, is told that two threads are free).  Helpers: ``kernel_paths.py``."""

from __future__ import annotations

import pytest

import minitensor as mt
from minitensor.kernels import _jit


@pytest.fixture(params=["serial", "parallel"])
def kernel(request, monkeypatch) -> str:
    monkeypatch.setattr(_jit, "PARALLEL_MIN", 10**12 if request.param == "serial" else 1)
    monkeypatch.setattr(_jit, "threads", lambda: 2)
    previous = mt.jit_enabled()
    mt.set_jit_enabled(True)
    yield request.param
    mt.set_jit_enabled(previous)
