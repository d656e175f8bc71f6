"""Second derivatives of a ** b with a Tensor exponent (its backward builds a mask with &)."""

from __future__ import annotations

import numpy as np
from helpers import f64

from minitensor.autograd import gradgradcheck


def test_second_derivative_of_tensor_pow_tensor():
    rng = np.random.default_rng(0)
    a, b = f64(rng.uniform(0.5, 2.0, 3)), f64(rng.uniform(-1.0, 1.0, 3))
    assert gradgradcheck(lambda p, q: p**q, (a, b))


def test_scalar_base_pow_tensor_is_right():
    """With a Python-scalar base the mask is built from an array, and works."""
    assert gradgradcheck(lambda q: 2.0**q, f64(np.random.default_rng(0).uniform(-1.0, 1.0, 3)))
