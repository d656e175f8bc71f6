"""kernels/cdist.py: the distances by a matrix product and their gradient (serial and parallel kernels,
both dtypes, batch dims that broadcast) equal the NumPy reference; the gradient is the definition's
(``ops/cdist.py``), 0 where the clamp held (coinciding rows, as PyTorch's); the docstring's example."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from kernel_paths import MODES, both_paths, tolerance

import minitensor as mt
from minitensor.kernels import cdist as K
from minitensor.ops.cdist import by_products_definition

SHAPES = [((7, 3), (5, 3)), ((2, 1, 6, 4), (3, 9, 4)), ((1, 2), (1, 2))]


def _inputs(rng, dtype, shapes):
    x1, x2 = (rng.standard_normal(s).astype(dtype) for s in shapes)
    x1[..., 0, :] = x2[..., 0, :] = 0  # (a pair of coinciding rows, exactly: clamped, no gradient)
    return x1, x2


@pytest.mark.parametrize(("kernel", "dtype"), MODES, indirect=["kernel"])
@pytest.mark.parametrize("shapes", SHAPES)
def test_forward_and_backward_equal_reference(kernel, dtype, shapes) -> None:
    rng = np.random.default_rng(0)
    x1, x2 = _inputs(rng, dtype, shapes)
    got, ref = both_paths(lambda: K.distances(x1, x2))
    assert got.dtype == ref.dtype == np.dtype(dtype) and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, **tolerance(dtype))
    assert (ref[..., 0, 0] == np.sqrt(np.asarray(K.CLAMP, dtype))).all()
    d = ref
    for g in (
        rng.standard_normal(d.shape).astype(dtype).T.copy().T,  # (a transposed layout)
        np.broadcast_to(np.asarray(2.5, dtype), d.shape),  # (one value throughout: sum's gradient)
    ):
        got, ref = both_paths(lambda: K.distances_backward(g, x1, x2, d, (True, True)))  # noqa: B023
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, **tolerance(dtype))


def test_backward_is_the_definitions_gradient_zero_where_clamped() -> None:
    rng = np.random.default_rng(1)
    x1, x2 = _inputs(rng, np.float64, ((2, 1, 6, 4), (3, 9, 4)))
    d = K.distances(x1, x2)
    g = rng.standard_normal(d.shape)
    a, b = (mt.tensor(x, dtype=mt.float64, requires_grad=True) for x in (x1, x2))
    (by_products_definition(a, b) * mt.tensor(g, dtype=mt.float64)).sum().backward()
    dx1, dx2 = K.distances_backward(g, x1, x2, d, (True, True))
    np.testing.assert_allclose(dx1.sum(axis=1, keepdims=True), a.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dx2.sum(axis=0), b.grad.numpy(), rtol=1e-10, atol=1e-12)
    g0 = np.zeros_like(g)
    g0[..., 0, 0] = 1.0  # (only the coinciding pairs' distances)
    assert not any(grad.any() for grad in K.distances_backward(g0, x1, x2, d, (True, True)))
    assert K.distances_backward(g, x1, x2, d, (False, True))[0] is None


@pytest.mark.parametrize("kernel", ["serial"], indirect=True)
def test_rows_apart_whose_squared_distance_rounds_to_zero_get_no_gradient(kernel) -> None:
    """Rows 1e-7 apart: |a|^2 + |b|^2 - 2 a.b rounds to zero in float32, so the distance is clamped and
    sends no gradient (PyTorch's clamp_min), where q (a.b's share) would send ~1e8."""
    x1, x2 = np.array([[1.0, 0.0]], np.float32), np.array([[1.0 + 1.2e-7, 0.0]], np.float32)
    assert x1[0, 0] != x2[0, 0]
    for d, grads in both_paths(lambda: _value_and_grads(x1, x2)):
        assert d[0, 0] == np.sqrt(np.float32(K.CLAMP)) and not any(g.any() for g in grads)


def _value_and_grads(x1, x2):
    d = K.distances(x1, x2)
    return d, K.distances_backward(np.ones_like(d), x1, x2, d, (True, True))


def test_nan_rows_give_nan_distances() -> None:
    x1, x2 = np.array([[np.nan, 0.0], [1.0, 0.0]], np.float32), np.array([[0.0, 0.0]], np.float32)
    got, ref = both_paths(lambda: K.distances(x1, x2))
    np.testing.assert_array_equal(got, ref)
    assert np.isnan(got[0, 0]) and got[1, 0] == 1.0


def test_docstring_example() -> None:
    result = doctest.testmod(K, extraglobs={"np": np})
    assert result.attempted > 0 and result.failed == 0
