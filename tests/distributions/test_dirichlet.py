"""distributions.Dirichlet against PyTorch's: log_prob, entropy, mean, variance, mode (PyTorch's choice when every
concentration is below 1), the value's gradient, samples on the simplex with the right moments."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
from minitensor.distributions import Dirichlet, dirichlet


def test_statistics_equal_pytorchs(oracle, rng):
    conc = rng.uniform(0.5, 4, (2, 4))
    conc[1] = [0.5, 0.3, 0.8, 0.9]  # every alpha < 1: PyTorch's one-hot mode
    ours = Dirichlet(mt.tensor(conc, dtype=mt.float64))
    theirs = oracle.torch.distributions.Dirichlet(oracle.torch.tensor(conc))
    value = rng.dirichlet(np.ones(4), (3, 2))
    oracle.check(ours, theirs, {}, {}, value, grads=False, stats=("mean", "variance", "mode"))
    v, tv = oracle.params(x=value)
    oracle.same_gradients(ours.log_prob(v["x"]), theirs.log_prob(tv["x"]), v, tv)


def test_samples_are_on_the_simplex_with_the_right_moments(oracle):
    d = Dirichlet(mt.tensor([[0.5, 1.0, 2.0], [5.0, 5.0, 5.0]], dtype=mt.float64))
    oracle.moments(d)
    x = d.sample((100,)).numpy()
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12) and (x > 0).all()


def test_errors():
    with pytest.raises(ValueError, match="`concentration` parameter must be at least one-dimensional"):
        Dirichlet(mt.tensor(1.0))
    with pytest.raises(ValueError, match="to satisfy the constraint IndependentConstraint"):
        Dirichlet(mt.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="to be within the support"):
        Dirichlet(mt.tensor([1.0, 1.0])).log_prob(mt.tensor([0.7, 0.7]))


def test_docstring_examples_run():
    result = doctest.testmod(dirichlet, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
