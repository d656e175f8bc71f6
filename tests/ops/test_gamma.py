"""lgamma, digamma and polygamma (ops/gamma.py): float64 gradcheck, second order (each derivative is the next
polygamma) and PyTorch as the oracle; negative arguments; the poles as PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

rng = np.random.default_rng(14)
POSITIVE = rng.uniform(0.3, 6.0, (2, 3))
NEGATIVE = -rng.uniform(0.2, 0.8, (2, 3)) - rng.integers(0, 3, (2, 3))  # (between the poles)


@pytest.mark.parametrize("x", [POSITIVE, NEGATIVE], ids=["positive", "negative"])
def test_lgamma_and_digamma(x):
    check_op(mt.lgamma, lambda t: t.lgamma(), x, atol=1e-9)
    check_op(mt.digamma, lambda t: t.digamma(), x, atol=1e-9)
    check_op(lambda t: t.digamma(), lambda t: t.digamma(), x, atol=1e-9)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma(n):
    check_op(lambda t: mt.polygamma(n, t), lambda t: t.polygamma(n), POSITIVE, atol=1e-8)
    check_op(lambda t: t.polygamma(n), lambda t: t.polygamma(n), NEGATIVE[:1], atol=1e-6)


def test_poles_and_infinities_as_pytorch():
    torch = pytest.importorskip("torch")
    x = np.array([0.0, -0.0, -1.0, -2.0, np.inf, np.nan, 1e-300])
    for fn in ("lgamma", "digamma"):
        ours = getattr(mt, fn)(mt.tensor(x, dtype=mt.float64)).numpy()
        np.testing.assert_array_equal(ours, getattr(torch, fn)(torch.tensor(x)).numpy())
    assert mt.polygamma(1, mt.tensor([0.0, np.inf], dtype=mt.float64)).tolist() == [np.inf, 0.0]


def test_integer_input_and_bad_order():
    assert mt.lgamma(mt.tensor([1, 2, 3])).tolist() == pytest.approx([0.0, 0.0, np.log(2)], abs=1e-6)
    with pytest.raises(ValueError, match="polygamma: n must be at least 0, got -1"):
        mt.polygamma(-1, mt.ones(2))
    with pytest.raises(TypeError, match="polygamma: n must be an int, got float"):
        mt.polygamma(1.0, mt.ones(2))
