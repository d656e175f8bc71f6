"""The ``kernel`` fixture (parametrized "serial" / "parallel"): the JIT is on and ``parallel_pays``
is set so that every kernel call takes the serial (resp. parallel) kernel, whatever the size and
the machine's load, so the parallel kernels are tested on small, odd sizes too.  Helpers:
``kernel_paths.py``."""

from __future__ import annotations

import pytest

import minitensor as mt
from minitensor.kernels import _jit


@pytest.fixture(params=["serial", "parallel"])
def kernel(request, monkeypatch) -> str:
    monkeypatch.setattr(_jit, "parallel_pays", lambda seconds: request.param == "parallel")
    previous = mt.jit_enabled()
    mt.set_jit_enabled(True)
    yield request.param
    mt.set_jit_enabled(previous)
