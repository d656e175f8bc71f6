"""kernels/logaddexp.py: logaddexp and its two gradients agree with the NumPy references (the value within 2
ulp of the exact log(e^a + e^b) at the scale of its larger term, the gradients within float tolerance)
over a wide range, at the infinities (equal ones give a + log 2, their gradients NaN), NaN, both dtypes,
broadcast operands and a gradient that is one value throughout."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_kernel_equals_reference, both_paths, jitted

from minitensor.kernels import logaddexp as K

SPECIAL = [(np.inf, np.inf), (-np.inf, -np.inf), (np.inf, -np.inf), (-np.inf, 3.0), (np.nan, 1.0), (0.0, 0.0),
           (1e30, -1e30), (-80.0, -80.0), (700.0, 699.0)]  # fmt: skip


def _pairs(dtype):
    rng = np.random.default_rng(7)
    a = np.concatenate([rng.uniform(-60, 60, 3000), rng.normal(0, 1, 1000), [p[0] for p in SPECIAL]])
    b = np.concatenate([rng.uniform(-60, 60, 3000), rng.normal(0, 1, 1000), [p[1] for p in SPECIAL]])
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logaddexp_equals_the_reference_within_two_ulp(dtype) -> None:
    a, b = _pairs(dtype)
    got, ref = both_paths(lambda: K.logaddexp(a, b))
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(got[~finite], ref[~finite])
    exact = np.logaddexp(a.astype(np.longdouble), b.astype(np.longdouble))
    # within 2 ulp of the larger term (max(a, b) or the log1p, at most log 2): where they nearly cancel the
    # result is small, and NumPy's formula loses the same absolute precision there
    scale = np.maximum(np.abs(np.maximum(a, b)), np.log(2)).astype(dtype)
    assert (np.abs(got[finite] - exact[finite]) / np.spacing(scale[finite])).max() <= 2
    assert got[-9] == np.inf and got[-8] == -np.inf and got[-4] == got.dtype.type(np.log(2))  # (equal: + log 2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logaddexp_gradients_equal_the_reference(dtype) -> None:
    a, b = _pairs(dtype)
    grad = np.random.default_rng(1).standard_normal(a.size).astype(dtype)
    for g in (grad, np.broadcast_to(np.asarray(2.0, dtype), a.shape)):
        for need in ((True, True), (True, False), (False, True)):
            got, ref = both_paths(lambda: K.logaddexp_backward(g, a, b, *need))  # noqa: B023
            for x, y, wanted in zip(got, ref, need):
                assert (x is None) == (y is None) == (not wanted)
                if wanted:
                    assert_kernel_equals_reference(x, y, dtype)
    da, db = jitted(lambda: K.logaddexp_backward(grad, a, b, True, True))
    assert np.isnan(da[-9]) and np.isnan(db[-9])  # (inf, inf: sigmoid of NaN)
    number = ~np.isnan(da)
    np.testing.assert_allclose((da + db)[number], grad[number], rtol=1e-6)  # (the two sigmoids add up to 1)


def test_broadcast_operands() -> None:
    a = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    b = np.array([0.5, -1.0, 2.0, 0.0], np.float32)
    got, ref = both_paths(
        lambda: (K.logaddexp(a, b), *K.logaddexp_backward(np.ones((3, 4), np.float32), a, b, True, True))
    )
    for x, y in zip(got, ref):
        assert x.shape == (3, 4)
        assert_kernel_equals_reference(x, y, "float32")
