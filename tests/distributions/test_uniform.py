"""distributions.Uniform against PyTorch's: log_prob (inside and outside), cdf, icdf, entropy, statistics,
rsample with the same noise and its gradients, validation."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
from minitensor.distributions import Uniform, uniform


def _pair(oracle, rng, validate_args=None):
    low = rng.standard_normal((2, 3))
    params, t_params = oracle.params(low=low, high=low + rng.uniform(0.5, 2, (2, 3)))
    ours = Uniform(**params, validate_args=validate_args)
    return ours, oracle.torch.distributions.Uniform(**t_params, validate_args=validate_args), params, t_params


def test_statistics_and_gradients_equal_pytorchs(oracle, rng):
    ours, theirs, params, t_params = _pair(oracle, rng)
    inside = (ours.low + 0.3 * (ours.high - ours.low)).detach().numpy()
    oracle.check(ours, theirs, params, t_params, inside, stats=("mean", "variance", "stddev"))
    ours, theirs, params, t_params = _pair(oracle, rng, validate_args=False)
    v, tv = oracle.value(rng.standard_normal((4, 2, 3)) * 3)  # some outside: -inf
    for name in ("log_prob", "cdf", "icdf"):
        oracle.close(getattr(ours, name)(v), getattr(theirs, name)(tv), what=name)
    oracle.same_gradients(ours.cdf(v), theirs.cdf(tv), params, t_params)


def test_rsample_with_the_same_noise_equals_pytorchs_with_gradients(oracle, rng, monkeypatch):
    ours, theirs, params, t_params = _pair(oracle, rng)
    mt.manual_seed(3)
    x = ours.rsample((5,))
    mt.manual_seed(3)
    u = mt.rand(5, 2, 3, dtype=mt.float64).numpy()
    monkeypatch.setattr(oracle.torch, "rand", lambda *a, **k: oracle.torch.tensor(u))
    tx = theirs.rsample((5,))
    oracle.close(x, tx, what="rsample")
    oracle.same_gradients(x.exp(), tx.exp(), params, t_params)


def test_validation_and_shapes():
    with pytest.raises(ValueError, match=r"Expected parameter low .* LessThan\(upper_bound=0.0\)"):
        Uniform(1.0, 0.0)
    d = Uniform(mt.zeros(2), mt.ones(2))
    with pytest.raises(ValueError, match="to be within the support"):
        d.log_prob(mt.tensor([0.5, 1.5]))
    assert d.sample((3,)).shape == (3, 2) and d.expand((4, 2)).batch_shape == (4, 2)
    assert np.isnan(d.mode.numpy()).all()


def test_sample_moments(oracle):
    oracle.moments(Uniform(mt.tensor([0.0, -2.0], dtype=mt.float64), mt.tensor([1.0, 5.0], dtype=mt.float64)))


def test_docstring_examples_run():
    result = doctest.testmod(uniform, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
