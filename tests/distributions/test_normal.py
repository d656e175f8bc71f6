"""distributions.Normal against torch.distributions.Normal: statistics, log_prob, cdf, entropy, rsample with the
same noise, every gradient (float64), shapes, validation, and the moments of samples."""

from __future__ import annotations

import doctest

import pytest

import minitensor as mt
from minitensor.distributions import Normal, normal


def _pair(oracle, loc, scale):
    params, t_params = oracle.params(loc=loc, scale=scale)
    return Normal(**params), oracle.torch.distributions.Normal(**t_params), params, t_params


def test_statistics_and_gradients_equal_pytorchs(oracle, rng):
    ours, theirs, params, t_params = _pair(oracle, rng.standard_normal((2, 3)), rng.uniform(0.5, 2, (2, 3)))
    oracle.check(ours, theirs, params, t_params, rng.standard_normal((4, 2, 3)))
    v, tv = oracle.value(rng.standard_normal((2, 3)))
    oracle.close(ours.cdf(v), theirs.cdf(tv), what="cdf")
    oracle.same_gradients(ours.cdf(v), theirs.cdf(tv), params, t_params)


def test_rsample_with_the_same_noise_equals_pytorchs_with_gradients(oracle, rng, monkeypatch):
    ours, theirs, params, t_params = _pair(oracle, rng.standard_normal(3), rng.uniform(0.5, 2, 3))
    mt.manual_seed(5)
    x = ours.rsample((4,))
    mt.manual_seed(5)
    eps = mt.randn(4, 3, dtype=mt.float64).numpy()
    monkeypatch.setattr(oracle.torch.distributions.normal, "_standard_normal", lambda *a, **k: oracle.torch.tensor(eps))
    tx = theirs.rsample((4,))
    oracle.close(x, tx, what="rsample")
    oracle.same_gradients(x.sin(), tx.sin(), params, t_params)


def test_shapes_expand_and_scalars(oracle):
    d = Normal(mt.zeros(2, 1), mt.ones(3))
    assert d.batch_shape == (2, 3) and d.sample((5, 4)).shape == (5, 4, 2, 3) and d.rsample().shape == (2, 3)
    e = d.expand((4, 2, 3))
    assert e.batch_shape == (4, 2, 3) and e.log_prob(mt.zeros(4, 2, 3)).shape == (4, 2, 3)
    s = Normal(0.0, 1.0)
    assert s.batch_shape == () and s.sample().shape == () and s.loc.dtype == mt.get_default_dtype()
    assert repr(s) == repr(oracle.torch.distributions.Normal(0.0, 1.0))
    with pytest.raises(TypeError, match="sample_shape must be a tuple"):
        s.sample(5)


def test_validation_messages_are_pytorchs(oracle):
    with pytest.raises(ValueError, match=r"Expected parameter scale \(Tensor of shape \(\)\) of distribution Normal"):
        Normal(0.0, -1.0)
    Normal(0.0, -1.0, validate_args=False)  # switched off: no check
    d = Normal(mt.zeros(2), mt.ones(2))
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape"):
        d.log_prob(mt.zeros(3))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        d.log_prob([0.0, 0.0])
    with pytest.raises(ValueError, match="Input arguments must all be instances of Number or Tensor"):
        Normal("0", 1.0)


def test_sample_moments(oracle):
    oracle.moments(Normal(mt.tensor([0.0, 3.0], dtype=mt.float64), mt.tensor([1.0, 0.5], dtype=mt.float64)))


def test_docstring_examples_run():
    result = doctest.testmod(normal, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
