"""The sinh, cosh, asinh, acosh and atanh kernels (kernels/hyperbolic.py) against the exact values
(NumPy's float64, or its long double for float64 inputs): within 2.5-2.75 ulp on every range (near 0,
where the sum switches to one term, near overflow), the special values and -0.0 as NumPy, and the op's
gradient through them."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_same_values, assert_strided_input_as_its_copy, jitted, reference, ulps

import minitensor as mt
from minitensor.kernels import hyperbolic

FUNCTIONS = {
    "sinh": (hyperbolic.sinh, np.sinh),
    "cosh": (hyperbolic.cosh, np.cosh),
    "asinh": (hyperbolic.asinh, np.arcsinh),
    "acosh": (hyperbolic.acosh, np.arccosh),
    "atanh": (hyperbolic.atanh, np.arctanh),
}
# (measured: 2.57, 1.8, 2.61, 2.55, 2.4)
MOST_ULPS = {"sinh": 2.6, "cosh": 2.6, "asinh": 2.75, "acosh": 2.75, "atanh": 2.6}


def _atanh_samples(dtype: str) -> np.ndarray:
    """Random values on (-1, 1): near 0, around the two forms' switch at 1/2, and up to the last floats below 1."""
    r = np.random.default_rng(1)
    tiny = 10 ** r.uniform(-30, 0, 5000) * r.choice([-1, 1], 5000)
    near_one = (1 - 10 ** r.uniform(-7 if dtype == "float32" else -15, -1, 5000)) * r.choice([-1, 1], 5000)
    return np.concatenate([tiny, r.uniform(-1, 1, 20_000), r.uniform(0.49, 0.51, 5000), near_one]).astype(dtype)


def _inverse_samples(name: str, dtype: str) -> np.ndarray:
    """asinh: both signs, near 0, around the switch to log(2a) (2^12, 2^28) and up to 1e30 / 1e300; acosh:
    1 and just above it, and up to the same."""
    r = np.random.default_rng(2)
    top, huge, near = (30, 4096.0, -7) if dtype == "float32" else (300, 268435456.0, -15)
    sign = r.choice([-1, 1], 20_000)
    parts = [r.uniform(-10, 10, 20_000), 10 ** r.uniform(-30, top, 20_000) * sign, r.uniform(0.9, 1.1, 5000) * huge]
    x = np.concatenate(parts)
    if name == "acosh":
        x = np.concatenate([np.abs(x) + 1, 1 + 10 ** r.uniform(near, 0, 20_000)])
    return x.astype(dtype)


def _samples(dtype: str) -> np.ndarray:
    """Random values near 0 (down to 1e-30), over the whole finite range, and around the two switches (a = 10
    or 20, the sums' one-term form) and overflow (89.4 in float32, 710.5 in float64)."""
    r = np.random.default_rng(0)
    top, switch = (89.4, 10.0) if dtype == "float32" else (710.4, 20.0)
    tiny = 10 ** r.uniform(-30, 0, 5000) * r.choice([-1, 1], 5000)
    parts = [tiny, r.uniform(-3, 3, 20_000), r.uniform(-top, top, 20_000), r.uniform(switch - 0.5, switch + 0.5, 5000)]
    return np.concatenate(parts).astype(dtype)


def _exact(fn, x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", divide="ignore"):
        return fn(x.astype(np.longdouble)) if x.dtype == np.float64 else fn(x.astype(np.float64))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["sinh", "cosh", "asinh", "acosh", "atanh"])
def test_within_a_few_ulp_of_the_exact_value(name, dtype) -> None:
    kernel, exact_fn = FUNCTIONS[name]
    if name in ("asinh", "acosh"):
        x = _inverse_samples(name, dtype)
    else:
        x = _atanh_samples(dtype) if name == "atanh" else _samples(dtype)
    exact = _exact(exact_fn, x)
    finite = np.isfinite(exact.astype(dtype))
    got = jitted(lambda: kernel(x))
    assert got.dtype == x.dtype and got.shape == x.shape
    assert ulps(got[finite], exact[finite]).max() <= MOST_ULPS[name]
    assert np.all(np.isinf(got[~finite]))
    assert ulps(reference(lambda: kernel(x))[finite], exact[finite]).max() <= MOST_ULPS[name]  # (NumPy's own function)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["sinh", "cosh", "asinh", "acosh", "atanh"])
def test_special_values_as_numpy(name, dtype) -> None:
    kernel, numpy_fn = FUNCTIONS[name]
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 711.0, -711.0], dtype)
    if name == "atanh":  # (±inf at ±1, NaN beyond)
        x = np.concatenate([x, np.array([1.0, -1.0, 1.5, -2.0], dtype)])
    elif name == "acosh":  # (0 at 1, NaN below, also far below)
        x = np.concatenate([x, np.array([1.0, 0.5, -1.0, -1e7], dtype)])
    elif dtype == "float32":  # (past float32's overflow, e^a's already at 88.72)
        x = np.concatenate([x, np.array([89.42, 89.43, -89.5], dtype)])
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        expected = numpy_fn(x)
    for got in (jitted(lambda: kernel(x)), reference(lambda: kernel(x))):
        assert_same_values(got, expected)  # (sinh(-0.0) is -0.0)


@pytest.mark.parametrize("name", ["sinh", "cosh", "asinh", "acosh", "atanh"])
def test_shapes_and_strides_are_kept(name) -> None:
    assert_strided_input_as_its_copy(FUNCTIONS[name][0], -20, 20)  # (acosh below 1, atanh beyond ±1: NaN)


@pytest.mark.parametrize(
    "op, derivative",
    [
        (mt.sinh, np.cosh),
        (mt.cosh, np.sinh),
        (mt.asinh, lambda x: 1 / np.sqrt(x * x + 1)),
        (mt.atanh, lambda x: 1 / (1 - x * x)),
    ],
)
def test_the_ops_gradients_run_on_the_kernels(op, derivative) -> None:
    x = np.linspace(-5, 5, 64, dtype=np.float32) / (5.5 if op is mt.atanh else 1)
    t = mt.tensor(x, requires_grad=True)
    jitted(lambda: op(t).sum().backward())
    assert ulps(t.grad.numpy(), derivative(x.astype(np.float64))).max() <= 2.6
