"""Second derivatives main gets wrong today: each test fails now and must pass once fixed.

They are xfail(strict=True): when the fix lands the test passes, strict turns that
into a failure, and the marker (and the matching exclusions: Tensor ** Tensor in
tests/ops/test_elementwise.py and tests/oracle/test_torch_ops.py) must be removed.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import gradgradcheck


def f64(values):
    return mt.tensor(values, dtype=mt.float64, requires_grad=True)


@pytest.mark.xfail(
    strict=True,
    raises=TypeError,
    reason="Pow's backward for a Tensor exponent, _exponent_grad in ops/elementwise.py, builds its mask with "
    "(a == 0) & (b >= 0); with create_graph a and b are Tensors and Tensor has no __and__ (numpy_protocol "
    "has no logical_and/bitwise_and), so d/db of a**b cannot be differentiated again",
)
def test_second_derivative_of_tensor_pow_tensor():
    rng = np.random.default_rng(0)
    a, b = f64(rng.uniform(0.5, 2.0, 3)), f64(rng.uniform(-1.0, 1.0, 3))
    assert gradgradcheck(lambda p, q: p**q, (a, b))


def test_scalar_base_pow_tensor_is_right():
    """With a Python-scalar base the mask is built from an array, and works."""
    assert gradgradcheck(lambda q: 2.0**q, f64(np.random.default_rng(0).uniform(-1.0, 1.0, 3)))
