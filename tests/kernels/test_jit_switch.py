"""The JIT switch, lazy loading, the SIMD exp, and running without SciPy (the choice between a kernel's
versions: test_dispatch.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels import _exp


def run_python(code: str, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter; return the JSON object it prints last."""
    out = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_loads_no_numba_and_compiles_nothing() -> None:
    code = "import json, sys, minitensor; print(json.dumps({'numba': 'numba' in sys.modules}))"
    assert run_python(code) == {"numba": False}


@pytest.mark.parametrize("value,expected", [("1", False), ("0", True), ("", True)])
def test_environment_variable_sets_the_default(value: str, expected: bool) -> None:
    code = "import json, minitensor as mt; print(json.dumps({'jit': mt.jit_enabled()}))"
    assert run_python(code, MINITENSOR_DISABLE_JIT=value) == {"jit": expected}


def test_environment_variable_runs_the_references_of_the_special_functions() -> None:
    """With MINITENSOR_DISABLE_JIT=1 the backend's special functions are their NumPy references, bit for
    bit, and numba is never loaded."""
    code = """
import json, sys
import numpy as np
from minitensor import backend
from minitensor.kernels import bessel, erf, erfinv, gamma
x = np.float32([0.3, -1.5, 2.0, 6.0, np.nan, -np.inf])
same = [np.array_equal(new, old, equal_nan=True) for new, old in [
    (backend.erf(x), erf.erf_numpy(x)), (backend.erfc(x), erf.erfc_numpy(x)),
    (backend.erfinv(x / 7), erfinv.erfinv_numpy(x / 7)), (backend.lgamma(x), gamma.lgamma_numpy(x)),
    (backend.polygamma(0, x), gamma.polygamma_numpy(0, x)), (backend.polygamma(2, x), gamma.polygamma_numpy(2, x)),
    (backend.i0(x), bessel.i0_numpy(x)), (backend.i1(x), bessel.i1_numpy(x))]]
print(json.dumps({"same": all(same), "numba": "numba" in sys.modules}))
"""
    assert run_python(code, MINITENSOR_DISABLE_JIT="1") == {"same": True, "numba": False}


def test_switch_context_manager_and_decorator() -> None:
    previous = mt.jit_enabled()
    try:
        mt.set_jit_enabled(True)
        with mt.jit_disabled():
            assert not mt.jit_enabled()
        assert mt.jit_enabled()

        @mt.jit_disabled()
        def inside() -> bool:
            return mt.jit_enabled()

        assert inside() is False and mt.jit_enabled()
        mt.set_jit_enabled(False)
        assert not mt.jit_enabled()
    finally:
        mt.set_jit_enabled(previous)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [1, 13, 5000])  # shorter and longer than a SIMD vector and than one piece
def test_simd_exp_is_accurate(dtype, size) -> None:
    row = np.concatenate([[0.0, -700.0, -709.0, -1e4, -np.inf, np.nan], -np.logspace(-8, 2.8, 5000)])[:size]
    x = row.astype(dtype)
    out = np.full_like(x, 7.0)
    _exp.exp_into(x, out)
    with np.errstate(under="ignore", invalid="ignore"):
        exact = np.exp(x.astype(np.float64))
    normal = x > (-87 if dtype == "float32" else -700)  # results in the dtype's normal range
    rtol = 2e-7 if dtype == "float32" else 4e-16
    np.testing.assert_allclose(out[normal], exact[normal], rtol=rtol)
    np.testing.assert_allclose(out[~normal], exact[~normal], atol=np.finfo(dtype).tiny)  # tiny or 0
    assert (out[np.isneginf(x)] == 0).all() and np.isnan(out[np.isnan(x)]).all()
    inplace = x.copy()
    _exp.exp_inplace(inplace)
    np.testing.assert_array_equal(inplace, out)


def test_kernels_run_without_scipy_on_the_workqueue_pool() -> None:
    """numba's np.dot needs SciPy's BLAS, which is not a dependency: every kernel must run without it
    (the fused attention kernels call NumPy's BLAS through ``runtime/blas.py``).  The parallel kernels run on
    numba's "workqueue" threads (no spinning OpenMP workers)."""
    code = """
import json, sys
sys.modules["scipy"] = None  # any "import scipy" now fails
import numpy as np
import minitensor as mt, minitensor.nn as nn, minitensor.nn.functional as F
from minitensor.kernels.runtime import dispatch
assert mt.jit_enabled()
mt.manual_seed(0)
layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, activation="gelu")  # every kernel family
x = mt.randn(5, 3, 8, requires_grad=True)
layer(x, is_causal=True).sum().backward()
t = mt.randn(4, 6, requires_grad=True)
(t.softmax(-1) * t.log_softmax(0) + F.gelu(t, approximate="tanh")).sum().backward()
dispatch.parallel_pays = lambda seconds, launch=None: True
from minitensor.kernels import attention
attention.BLAS_SPIN_SECONDS = 0.0  # (the parallel attention kernels too)
mt.set_thread_policy(False)  # parallel kernels even on a busy machine
t.softmax(-1)  # a parallel kernel: numba's thread pool starts
layer(x, is_causal=True).sum().backward()  # the fused attention kernels, calling NumPy's BLAS
import numba
from minitensor.kernels.runtime import blas
print(json.dumps({"scipy": sys.modules.get("scipy") is not None, "layer": numba.threading_layer(),
                  "finite": bool(np.isfinite(x.grad.numpy()).all()), "blas": blas.available()}))
"""
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_THREADING_LAYER"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "scipy": False,
        "layer": "workqueue",
        "finite": True,
        "blas": True,
    }
