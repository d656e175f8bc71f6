"""kernels/modulo.py: fmod, remainder and the quotients of their gradients equal their NumPy
references and PyTorch's values bit for bit (float32 and float64; zeros of both signs, infinities,
NaN, zero and negative divisors, quotients beyond the float64 shortcut's 2^29, exact multiples),
integers keep NumPy's (PyTorch's) results, and broadcast operands and Python numbers work."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from kernel_paths import assert_same_values, both_paths

from minitensor.kernels import modulo

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, 7.5, -7.5, 1e-40, -1e-40, 3e30, -3e30, np.inf, -np.inf, np.nan]


def operands(dtype) -> tuple:
    """(a, b): random values of several magnitudes, then every pair of ``SPECIAL`` values, then exact
    multiples (a = k b: ties of the floor and the trunc) and quotients near 2^29."""
    rng = np.random.default_rng(0)
    random_a = rng.standard_normal(501) * 10.0 ** rng.integers(-3, 4, 501)
    random_b = rng.standard_normal(501) * 10.0 ** rng.integers(-2, 3, 501)
    sa, sb = np.meshgrid(SPECIAL, SPECIAL)
    b = rng.uniform(0.5, 3.0, 40) * rng.choice([-1, 1], 40)
    k = rng.integers(-1000, 1000, 40)
    big = rng.uniform(0.5, 2.0, 20) * 2.0**29 * rng.choice([-1, 1], 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (3e30 overflows nothing; 1e-40 is subnormal in float32)
        a = np.concatenate([random_a, sa.ravel(), (k * b).astype(dtype), big]).astype(dtype)
        b = np.concatenate([random_b, sb.ravel(), b.astype(dtype), rng.uniform(0.9, 1.1, 20)]).astype(dtype)
    return a, b


def cases(a, b, g) -> dict:
    return {
        "fmod": lambda: modulo.fmod(a, b),
        "remainder": lambda: modulo.remainder(a, b),
        "floor_quotient": lambda: modulo.quotient(a, b, floor=True),
        "trunc_quotient": lambda: modulo.quotient(a, b, floor=False),
        "floor_quotient_grad": lambda: modulo.quotient_grad(g, a, b, floor=True),
        "trunc_quotient_grad": lambda: modulo.quotient_grad(g, a, b, floor=False),
    }


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(cases(0, 0, 0)))
def test_kernels_equal_references_bit_for_bit(dtype, name) -> None:
    a, b = operands(dtype)
    g = np.random.default_rng(1).standard_normal(a.shape).astype(dtype)
    kernel, reference = both_paths(cases(a, b, g)[name])
    assert kernel.dtype == reference.dtype == np.dtype(dtype)
    assert_same_values(kernel, reference)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_are_pytorchs_bit_for_bit(dtype) -> None:
    """Except where the quotient overflows float32: PyTorch's vectorised loop (16 elements at a time)
    gives NaN there (its scalar loop, for the last few elements, gives the C library's value, which
    minitensor keeps), e.g. fmod(1, 1e-40) = 8.4e-42."""
    torch = pytest.importorskip("torch")
    a, b = operands(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        keep = ~(np.isinf(a / b) & np.isfinite(a) & (b != 0))
    a, b = a[keep], b[keep]
    ta, tb = torch.tensor(a), torch.tensor(b)
    expected = {
        "fmod": torch.fmod(ta, tb),
        "remainder": torch.remainder(ta, tb),
        "floor_quotient": torch.div(ta, tb, rounding_mode="floor"),
        "trunc_quotient": torch.div(ta, tb, rounding_mode="trunc"),
    }
    for name, fn in cases(a, b, None).items():
        if name in expected:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                assert_same_values(fn(), expected[name].numpy())


def test_the_float32_shortcut_is_exact_where_it_applies() -> None:
    """fmod of float32 computed in float64 equals the C library's on quotients up to 2^29 (module
    docstring): random magnitudes and the largest quotients the shortcut takes."""
    rng = np.random.default_rng(2)
    b = (rng.uniform(1, 2, 4000) * 2.0 ** rng.integers(-20, 20, 4000)).astype(np.float32)
    a = (b * rng.uniform(-1, 1, 4000) * 2.0 ** rng.integers(0, 30, 4000)).astype(np.float32)
    kernel, _ = both_paths(lambda: modulo.fmod(a, b))
    assert_same_values(kernel, np.fmod(a.astype(np.float64), b.astype(np.float64)).astype(np.float32))


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integers_keep_pytorchs_results(dtype) -> None:
    torch = pytest.importorskip("torch")
    a = np.array([7, -7, 6, -6, 0, 5, -5], dtype)
    b = np.array([2, 2, -4, 4, -3, -5, 3], dtype)
    ta, tb = torch.tensor(a), torch.tensor(b)
    np.testing.assert_array_equal(modulo.fmod(a, b), torch.fmod(ta, tb).numpy())
    np.testing.assert_array_equal(modulo.remainder(a, b), torch.remainder(ta, tb).numpy())
    np.testing.assert_array_equal(modulo.quotient(a, b, True), torch.div(ta, tb, rounding_mode="floor").numpy())


def test_broadcast_operands_and_numbers() -> None:
    a = np.arange(-6.0, 6.0, 0.75, dtype=np.float32).reshape(4, 4)
    b = np.array([2.0, -2.0, 1.5, -0.5], np.float32)
    g = np.float32(2.0) * np.ones((4, 1), np.float32)
    for got, expected in [
        (modulo.remainder(a, b), np.remainder(a, b)),
        (modulo.fmod(a, 2.0), np.fmod(a, np.float32(2.0))),
        (modulo.remainder(7.0, b), np.remainder(np.float32(7.0), b)),
        (modulo.quotient_grad(g, a, b, floor=True), -g * np.floor_divide(a, b)),
        (modulo.quotient_grad(np.broadcast_to(g[0], a.shape), a, b, floor=False), -g[0] * np.trunc(a / b)),  # sum's
    ]:
        assert got.dtype == np.float32 and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
