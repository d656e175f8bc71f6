"""distributions.Beta against PyTorch's: log_prob, entropy, statistics, the value's gradient, sampling moments."""

from __future__ import annotations

import doctest

import pytest

import minitensor as mt
from minitensor.distributions import Beta, beta


def test_statistics_equal_pytorchs(oracle, rng):
    a, b = rng.uniform(0.5, 4, (2, 3)), rng.uniform(0.5, 4, (2, 3))
    ours = Beta(mt.tensor(a, dtype=mt.float64), mt.tensor(b, dtype=mt.float64))
    theirs = oracle.torch.distributions.Beta(oracle.torch.tensor(a), oracle.torch.tensor(b))
    oracle.check(ours, theirs, {}, {}, rng.uniform(0.05, 0.95, (4, 2, 3)), grads=False)
    for name in ("concentration1", "concentration0"):
        oracle.close(getattr(ours, name), getattr(theirs, name), what=name)
    value, t_value = oracle.params(x=rng.uniform(0.05, 0.95, (2, 3)))
    oracle.same_gradients(ours.log_prob(value["x"]), theirs.log_prob(t_value["x"]), value, t_value)
    assert Beta(2.0, 3.0).batch_shape == () and Beta(2.0, 3.0).sample((4,)).shape == (4,)


def test_refusals_and_validation():
    d = Beta(mt.tensor(2.0, requires_grad=True), mt.tensor(3.0))
    with pytest.raises(NotImplementedError, match="implicit reparameterisation"):
        d.rsample()
    with pytest.raises(ValueError, match=r"of distribution Dirichlet\(concentration: \(2,\)\) to satisfy"):
        Beta(mt.tensor(-1.0), mt.tensor(1.0))  # the Dirichlet inside checks first, as in PyTorch
    with pytest.raises(ValueError, match="to be within the support"):
        Beta(2.0, 3.0).log_prob(mt.tensor(1.5))


def test_sample_moments(oracle):
    oracle.moments(Beta(mt.tensor([0.5, 2.0, 5.0], dtype=mt.float64), mt.tensor([0.5, 3.0, 1.0], dtype=mt.float64)))
    mt.manual_seed(0)
    assert (Beta(0.05, 0.05).sample((1000,)).numpy() > 0).all()  # tiny draws clamped above 0, as PyTorch


def test_docstring_examples_run():
    result = doctest.testmod(beta, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
