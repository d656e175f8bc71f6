"""Shared test set-up: hypothesis profiles, the kernels' compilation, and the optional PyTorch oracle.

``HYPOTHESIS_PROFILE=ci`` (set by .ci/run) runs more examples per property
(and 1,000 random graphs in the fuzz tests); ``HYPOTHESIS_PROFILE=hunt`` runs new examples
every time (README.md, "Set-up").

The tests wait for the compiler (``MINITENSOR_JIT_WAIT=1``, also in the Python processes they
start): a kernel's first call compiles it, where a program would run its NumPy reference while a
background process compiles it (runtime/jit.py), so each test runs the path it names, the same
from its first call on.  ``MINITENSOR_JIT_WAIT=0`` runs the suite the programs' way.
(tests/kernels/test_background.py tests that way.)
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import minitensor as mt

settings.register_profile(
    "dev", max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
# The random-graph fuzz tests (tests/fuzz/) run many more examples than the other
# properties: their own profiles, "<profile>-fuzz", hold the total for the fuzz suite
# (1,000 in CI), which tests/fuzz/ splits between its tests.
settings.register_profile("dev-fuzz", settings.get_profile("dev"), max_examples=100)
settings.register_profile("ci-fuzz", settings.get_profile("ci"), max_examples=1000)
# "hunt": examples no run has tried (not derandomized, no example database), a search for failures
# rather than a gate: a failure it finds is fixed with a test of its own (session 16's two defects)
settings.register_profile("hunt", settings.get_profile("ci"), max_examples=100, derandomize=False, database=None)
settings.register_profile("hunt-fuzz", settings.get_profile("hunt"), max_examples=5000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

if "MINITENSOR_JIT_WAIT" not in os.environ:
    os.environ["MINITENSOR_JIT_WAIT"] = "1"
    mt.set_jit_wait(True)


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded NumPy generator, fresh for each test."""
    return np.random.default_rng(1234)


@pytest.fixture(params=["jit", "numpy"])
def jit_path(request):
    """Run the test on the numba kernels ("jit") and on the NumPy references ("numpy")."""
    previous = mt.jit_enabled()
    mt.set_jit_enabled(request.param == "jit")
    yield request.param
    mt.set_jit_enabled(previous)


@pytest.fixture
def torch():
    """PyTorch, the oracle; the test is skipped when it is not installed."""
    return pytest.importorskip("torch")
