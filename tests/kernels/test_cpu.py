"""``runtime/cpu.py``'s ``numpy_avx512``: which of NumPy's loops run on AVX-512 here, from NumPy's own report."""

from __future__ import annotations

import numpy as np
import numpy.lib.introspect

from minitensor.kernels.runtime import cpu


def test_the_dtypes_whose_current_target_is_an_avx512_one(monkeypatch) -> None:
    reports = {
        "exp": {"ff": {"current": "X86_V4", "available": "X86_V4 X86_V3"}, "dd": {"current": "X86_V3"}},
        "log": {"ff": {"current": "AVX512_SKX", "available": ""}, "dd": {"current": "AVX512F", "available": ""}},
        "sin": {"ff": {"current": "baseline(X86_V2)", "available": ""}},
    }
    asked = []

    def opt_func_info(func_name, signature):
        asked.append((func_name, signature))
        name = func_name.strip("^$")
        return {name: reports[name]} if name in reports else {}

    monkeypatch.setattr(numpy.lib.introspect, "opt_func_info", opt_func_info)
    find = cpu.numpy_avx512.__wrapped__  # (past the per-process cache)
    assert find("exp") == {np.dtype(np.float32)}
    assert find("log") == {np.dtype(np.float32), np.dtype(np.float64)}
    assert find("sin") == frozenset() and find("tanh") == frozenset()
    assert asked[0] == ("^exp$", "^float(32|64)$")


def test_this_numpy_is_asked_once_per_ufunc() -> None:
    first = cpu.numpy_avx512("exp")
    assert first <= {np.dtype(np.float32), np.dtype(np.float64)}
    assert cpu.numpy_avx512("exp") is first
