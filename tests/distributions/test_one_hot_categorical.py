"""distributions.OneHotCategorical against PyTorch's: one-hot values, log_prob, entropy, statistics, gradients."""

from __future__ import annotations

import doctest

import numpy as np

import minitensor as mt
from minitensor.distributions import OneHotCategorical, one_hot_categorical


def test_statistics_and_gradients_equal_pytorchs(oracle, rng):
    params, t_params = oracle.params(logits=rng.standard_normal((2, 3)))
    ours, theirs = OneHotCategorical(**params), oracle.torch.distributions.OneHotCategorical(**t_params)
    value = np.eye(3)[rng.integers(0, 3, (4, 2))]
    oracle.check(ours, theirs, params, t_params, value, stats=("mean", "variance", "mode"))
    np.testing.assert_array_equal(ours.enumerate_support().numpy(), theirs.enumerate_support().numpy())


def test_samples_are_one_hot_with_the_right_frequencies():
    mt.manual_seed(1)
    d = OneHotCategorical(probs=mt.tensor([0.25, 0.75], dtype=mt.float64))
    x = d.sample((10000,)).numpy()
    assert x.shape == (10000, 2) and set(x.sum(-1).tolist()) == {1.0}
    assert abs(x.mean(0)[1] - 0.75) < 5 * np.sqrt(0.75 * 0.25 / 10000)


def test_docstring_examples_run():
    result = doctest.testmod(one_hot_categorical, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
