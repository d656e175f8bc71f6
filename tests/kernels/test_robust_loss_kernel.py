"""The one-pass l1 / smooth L1 / Huber kernels (kernels/robust_loss.py) against their NumPy
references, bit for bit, and the losses through them against float64 math."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted, reference

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.kernels.robust_loss import robust_loss, robust_slope

SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, np.inf, -np.inf, np.nan, 1e-40]


def _differences(dtype) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([rng.standard_normal(1000) * 3, SPECIAL]).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind, limit", [("l1", 1.0), ("smooth_l1", 0.5), ("smooth_l1", 2.5), ("huber", 1.0)])
def test_kernels_and_references_give_the_same_bits(dtype, kind, limit) -> None:
    d = _differences(dtype).reshape(-1, 4)  # (2-D: the kernels see flat views)
    for grad in (np.asarray(0.75, dtype), np.linspace(-2, 2, d.size).astype(dtype).reshape(d.shape)):
        with np.errstate(invalid="ignore"):
            ours = jitted(lambda g=grad: (robust_loss(d, kind, limit), robust_slope(d, kind, limit, g)))
            theirs = reference(lambda g=grad: (robust_loss(d, kind, limit), robust_slope(d, kind, limit, g)))
        for a, b in zip(ours, theirs):
            assert a.dtype == np.dtype(dtype) and a.shape == d.shape
            np.testing.assert_array_equal(a, b)


def test_strided_differences_and_broadcast_gradients_take_the_reference() -> None:
    d = _differences("float32").reshape(-1, 4)[:, ::2]  # not contiguous
    grad = np.ones(d.shape[1], np.float32)  # (broadcasts against d)
    expected = reference(lambda: (robust_loss(d, "huber", 1.0), robust_slope(d, "huber", 1.0, grad)))
    got = robust_loss(d, "huber", 1.0), robust_slope(d, "huber", 1.0, grad)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name, options", [("l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("huber_loss", {})])
def test_float32_losses_through_the_kernels_match_float64_math(name, options) -> None:
    rng = np.random.default_rng(1)
    x, t = rng.standard_normal((64, 32)), rng.standard_normal((64, 32))
    results = []
    for dtype in (mt.float32, mt.float64):
        xt = mt.tensor(x, dtype=dtype, requires_grad=True)
        loss = jitted(lambda xt=xt, dt=dtype: getattr(F, name)(xt, mt.tensor(t, dtype=dt), **options))
        jitted(loss.backward)
        results.append((loss.item(), xt.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-9)
