"""distributions.Bernoulli against PyTorch's: both parameterisations, log_prob/entropy/statistics and their
gradients, enumerate_support, sampling."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
from minitensor.distributions import Bernoulli, bernoulli


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_statistics_and_gradients_equal_pytorchs(oracle, rng, param):
    values = rng.uniform(0.1, 0.9, (2, 3)) if param == "probs" else rng.standard_normal((2, 3))
    params, t_params = oracle.params(**{param: values})
    ours, theirs = Bernoulli(**params), oracle.torch.distributions.Bernoulli(**t_params)
    oracle.check(
        ours, theirs, params, t_params, rng.integers(0, 2, (4, 2, 3)).astype(float), stats=("mean", "variance")
    )
    other = "logits" if param == "probs" else "probs"
    oracle.close(getattr(ours, other), getattr(theirs, other), what=other)
    oracle.same_gradients(getattr(ours, other), getattr(theirs, other), params, t_params)


def test_mode_support_and_repr(oracle):
    d = Bernoulli(mt.tensor([0.2, 0.5, 0.7]))
    t = oracle.torch.distributions.Bernoulli(oracle.torch.tensor([0.2, 0.5, 0.7]))
    oracle.close(d.mode, t.mode, what="mode")  # NaN at the tie, as PyTorch
    np.testing.assert_array_equal(d.enumerate_support().numpy(), t.enumerate_support().numpy())
    assert d.enumerate_support(expand=False).shape == (2, 1)
    assert repr(Bernoulli(0.25)) == repr(oracle.torch.distributions.Bernoulli(0.25))


def test_errors():
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both"):
        Bernoulli(probs=0.5, logits=0.0)
    with pytest.raises(ValueError, match="to satisfy the constraint Interval"):
        Bernoulli(probs=mt.tensor([1.5]))
    with pytest.raises(ValueError, match="to be within the support"):
        Bernoulli(probs=mt.tensor([0.5])).log_prob(mt.tensor([0.5]))


def test_sample_moments(oracle):
    oracle.moments(Bernoulli(probs=mt.tensor([0.1, 0.5, 0.95], dtype=mt.float64)))


def test_docstring_examples_run():
    result = doctest.testmod(bernoulli, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
