"""The exp2 kernel (kernels/exp2.py) against the exact powers (long double): within ~1.5 ulp, exact
on integers, and at the overflow and subnormal edges of both dtypes.  Its NumPy reference is
``np.exp2`` itself, whose accuracy is NumPy's (up to ~2.2 ulp in float32 on AVX-512 machines)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import both_paths, jitted, reference, ulps

from minitensor.kernels import exp2 as exp2_module
from minitensor.kernels.exp2 import exp2

EDGES = {"float32": (128.0, -149.0), "float64": (1024.0, -1074.0)}  # first overflow, smallest subnormal


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_within_two_ulp_of_numpy_and_exact_on_integers(dtype) -> None:
    top, bottom = EDGES[dtype]
    r = np.random.default_rng(0)
    x = np.concatenate([r.uniform(-1, 1, 5000), r.uniform(bottom + 24, top - 1, 5000)]).astype(dtype)
    exact = np.exp2(x.astype(np.longdouble))
    got = jitted(lambda: exp2(x))
    assert got.dtype == x.dtype and ulps(got, exact.astype(np.float64)).max() <= 2.0
    np.testing.assert_array_equal(reference(lambda: exp2(x)), np.exp2(x))
    integers = np.arange(bottom, top).astype(dtype)
    with np.errstate(over="ignore"):
        powers = np.ldexp(np.ones_like(integers), integers.astype(int))  # (exact powers of 2)
        np.testing.assert_array_equal(jitted(lambda: exp2(integers)), powers)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_overflow_subnormals_and_special_values(dtype) -> None:
    top, bottom = EDGES[dtype]
    x = np.array([top - 0.01, top, top + 0.5, bottom + 0.5, bottom, bottom - 1, np.inf, -np.inf, np.nan, 0.0, -0.0])
    x = x.astype(dtype)
    with np.errstate(over="ignore", under="ignore"):
        expected = np.exp2(x.astype(np.longdouble)).astype(dtype)
    got = jitted(lambda: exp2(x))
    finite = np.isfinite(expected) & (expected > 0)
    assert ulps(got[finite], expected[finite].astype(np.float64)).max() <= 1.0
    np.testing.assert_array_equal(got[~finite], expected[~finite])


def test_a_strided_input_gives_what_its_contiguous_copy_gives() -> None:
    x = np.linspace(-3, 3, 40, dtype=np.float32)[::2]
    np.testing.assert_array_equal(jitted(lambda: exp2(x)), jitted(lambda: exp2(np.ascontiguousarray(x))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("uniform", [False, True])
def test_backward_kernel_equals_reference(dtype, uniform) -> None:
    """grad * y * ln 2 in one pass, with a full gradient or one value throughout (``sum``'s)."""
    y = np.concatenate([np.random.default_rng(4).uniform(0, 10, 501), [0.0, np.inf, np.nan]]).astype(dtype)
    g = np.random.default_rng(5).standard_normal(y.shape).astype(dtype)
    g = np.broadcast_to(g[:1], y.shape) if uniform else g
    kernel, expected = both_paths(lambda: exp2_module.exp2_backward(g, y))
    assert kernel.dtype == expected.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(kernel, expected)
