"""distributions.Gamma against PyTorch's: log_prob, entropy, statistics; gradients w.r.t. the value and the rate
(the concentration's: tests/distributions/test_concentration_gradients.py); rsample through the rate with
PyTorch's noise (through the concentration: refused, not silently wrong); sampling moments."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
from minitensor import random
from minitensor.distributions import Gamma, gamma


def test_statistics_equal_pytorchs_and_rate_gradients(oracle, rng):
    conc = rng.uniform(0.3, 4, (2, 3))
    params, t_params = oracle.params(rate=rng.uniform(0.5, 3, (2, 3)))
    ours = Gamma(mt.tensor(conc, dtype=mt.float64), params["rate"])
    theirs = oracle.torch.distributions.Gamma(oracle.torch.tensor(conc), t_params["rate"])
    oracle.check(ours, theirs, params, t_params, rng.uniform(0.01, 5, (4, 2, 3)))


def test_log_prob_gradient_w_r_t_the_value(oracle, rng):
    conc, rate = rng.uniform(0.5, 3, 4), rng.uniform(0.5, 2, 4)
    value, t_value = oracle.params(x=rng.uniform(0.1, 3, 4))
    lp = Gamma(mt.tensor(conc, dtype=mt.float64), mt.tensor(rate, dtype=mt.float64)).log_prob(value["x"])
    t_lp = oracle.torch.distributions.Gamma(oracle.torch.tensor(conc), oracle.torch.tensor(rate)).log_prob(t_value["x"])
    oracle.same_gradients(lp, t_lp, value, t_value)


def test_rsample_through_the_rate_equals_pytorchs(oracle, rng, monkeypatch):
    conc = rng.uniform(0.5, 3, 3)
    params, t_params = oracle.params(rate=rng.uniform(0.5, 2, 3))
    ours = Gamma(mt.tensor(conc, dtype=mt.float64), params["rate"])
    theirs = oracle.torch.distributions.Gamma(oracle.torch.tensor(conc), t_params["rate"])
    mt.manual_seed(4)
    x = ours.rsample((5,))
    mt.manual_seed(4)
    g = random.generator(None).standard_gamma(np.broadcast_to(conc, (5, 3)))
    monkeypatch.setattr(oracle.torch.distributions.gamma, "_standard_gamma", lambda c: oracle.torch.tensor(g))
    tx = theirs.rsample((5,))
    oracle.close(x, tx, what="rsample")
    oracle.same_gradients(x.log(), tx.log(), params, t_params)


def test_rsample_through_a_concentration_that_requires_grad_is_refused():
    d = Gamma(mt.tensor([2.0], requires_grad=True), mt.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="implicit reparameterisation"):
        d.rsample()
    assert d.sample((3,)).shape == (3, 1)  # sampling needs no gradient


def test_sample_moments(oracle):
    oracle.moments(Gamma(mt.tensor([0.5, 2.0, 9.0], dtype=mt.float64), mt.tensor([1.0, 3.0, 0.5], dtype=mt.float64)))


def test_docstring_examples_run():
    result = doctest.testmod(gamma, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
