"""distributions.Independent against PyTorch's: shapes, log_prob and entropy summed over the reinterpreted dims,
gradients, support, expand."""

from __future__ import annotations

import doctest

import pytest

import minitensor as mt
from minitensor.distributions import Bernoulli, Independent, Normal, independent


def test_statistics_and_gradients_equal_pytorchs(oracle, rng):
    params, t_params = oracle.params(loc=rng.standard_normal((2, 3, 4)), scale=rng.uniform(0.5, 2, (2, 3, 4)))
    ours = Independent(Normal(**params), 2)
    theirs = oracle.torch.distributions.Independent(oracle.torch.distributions.Normal(**t_params), 2)
    oracle.check(ours, theirs, params, t_params, rng.standard_normal((5, 2, 3, 4)))
    assert ours.has_rsample and not ours.has_enumerate_support and repr(ours).startswith("Independent(Normal(")
    assert ours.expand((6, 2)).batch_shape == (6, 2) and ours.sample((7,)).shape == (7, 2, 3, 4)


def test_support_and_errors():
    d = Independent(Bernoulli(probs=mt.full((2, 3), 0.5)), 1)
    with pytest.raises(ValueError, match="to be within the support"):
        d.base_dist.log_prob(mt.full((2, 3), 0.5))
    assert repr(d.support) == "IndependentConstraint(Boolean(), 1)"
    with pytest.raises(ValueError, match="Expected reinterpreted_batch_ndims <= len"):
        Independent(Normal(mt.zeros(2), 1.0), 2)
    with pytest.raises(NotImplementedError, match="cartesian product"):
        d.enumerate_support()


def test_docstring_examples_run():
    result = doctest.testmod(independent, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
