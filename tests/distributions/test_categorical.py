"""distributions.Categorical against PyTorch's: probs/logits, log_prob with broadcasting, entropy (with zero
probabilities), gradients, mode, enumerate_support, sampling frequencies."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
from minitensor.distributions import Categorical, categorical


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_statistics_and_gradients_equal_pytorchs(oracle, rng, param):
    values = rng.uniform(0.1, 1.0, (2, 4)) if param == "probs" else rng.standard_normal((2, 4))
    params, t_params = oracle.params(**{param: values})
    ours, theirs = Categorical(**params), oracle.torch.distributions.Categorical(**t_params)
    oracle.check(ours, theirs, params, t_params, rng.integers(0, 4, (5, 2)), stats=("mean", "variance"))
    for name in ("probs", "logits"):
        oracle.close(getattr(ours, name), getattr(theirs, name), what=name)
    v, tv = oracle.value(np.array([[1], [3]]))  # (2, 1) broadcast against batch (2,)
    oracle.close(ours.log_prob(v), theirs.log_prob(tv), what="log_prob broadcast")
    np.testing.assert_array_equal(ours.mode.numpy(), theirs.mode.numpy())


def test_zero_probabilities_give_finite_entropy(oracle):
    p = [0.0, 0.25, 0.75]
    d, t = Categorical(probs=mt.tensor(p, dtype=mt.float64)), oracle.torch.distributions.Categorical(
        probs=oracle.torch.tensor(p, dtype=oracle.torch.float64))  # fmt: skip
    oracle.close(d.entropy(), t.entropy(), what="entropy")
    assert d.log_prob(mt.tensor(0)).item() == t.log_prob(oracle.torch.tensor(0)).item()


def test_shapes_and_support(oracle):
    d = Categorical(logits=mt.zeros(3, 5))
    assert d.batch_shape == (3,) and d.event_shape == () and d.sample((7,)).shape == (7, 3)
    assert d.sample().dtype == mt.int64 and d.param_shape == (3, 5)
    t = oracle.torch.distributions.Categorical(logits=oracle.torch.zeros(3, 5))
    np.testing.assert_array_equal(d.enumerate_support().numpy(), t.enumerate_support().numpy())
    assert d.expand((2, 3)).sample().shape == (2, 3)
    with pytest.raises(ValueError, match="to be within the support"):
        d.log_prob(mt.tensor([5, 0, 0]))
    with pytest.raises(ValueError, match="`probs` parameter must be at least one-dimensional"):
        Categorical(probs=mt.tensor(1.0))


def test_sample_frequencies():
    mt.manual_seed(0)
    p = np.array([0.1, 0.2, 0.7])
    counts = np.bincount(Categorical(probs=mt.tensor(p)).sample((20000,)).numpy(), minlength=3) / 20000
    assert np.all(np.abs(counts - p) < 5 * np.sqrt(p * (1 - p) / 20000))


def test_docstring_examples_run():
    result = doctest.testmod(categorical, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
