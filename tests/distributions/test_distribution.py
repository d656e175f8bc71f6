"""distributions.Distribution (the base), constraints and utils: shapes, validation switches, expand, repr,
perplexity, deprecated sample_n, the package's examples, and the constraint checks against PyTorch's."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
import minitensor.distributions as D
from minitensor.distributions import constraints, distribution, utils


@pytest.fixture
def default_validation():
    yield
    D.Distribution.set_default_validate_args(True)


def test_default_validation_can_be_switched_off(default_validation):
    D.Distribution.set_default_validate_args(False)
    assert D.Normal(0.0, -1.0).scale.item() == -1.0
    D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match="must be True or False"):
        D.Distribution.set_default_validate_args("yes")


def test_expand_keeps_the_validation_choice_and_shares_parameters():
    d = D.Normal(mt.zeros(3), mt.ones(3), validate_args=False)
    e = d.expand((2, 3))
    assert e._validate_args is False and e.batch_shape == (2, 3)
    assert np.shares_memory(e.loc.numpy(), d.loc.numpy())

    class Custom(D.Normal):
        def __init__(self):
            super().__init__(0.0, 1.0)

    with pytest.raises(NotImplementedError, match="must also define a custom .expand"):
        Custom().expand((2,))


def test_perplexity_sample_n_and_base_errors():
    d = D.Categorical(probs=mt.tensor([0.5, 0.5]))
    assert d.perplexity().item() == pytest.approx(2.0)
    with pytest.warns(FutureWarning, match="sample_n"):
        assert d.sample_n(3).shape == (3,)
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        D.Distribution(validate_args=False).mode  # noqa: B018


CONSTRAINT_CASES = [
    ("positive", [1.0, -1.0, 0.0]),
    ("nonnegative", [1.0, -1.0, 0.0]),
    ("unit_interval", [0.0, 1.0, 1.5]),
    ("real", [1.0, float("nan")]),
    ("boolean", [0.0, 1.0, 0.5]),
    ("simplex", [[0.5, 0.5], [0.6, 0.6]]),
    ("real_vector", [[1.0, float("nan")], [1.0, 2.0]]),
    ("lower_cholesky", [[[1.0, 0.0], [2.0, 1.0]], [[1.0, 1.0], [0.0, 1.0]]]),
    ("positive_definite", [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("one_hot", [[0.0, 1.0], [1.0, 1.0]]),
    ("nonnegative_integer", [0.0, 2.0, 1.5, -1.0]),
]


@pytest.mark.parametrize("name, values", CONSTRAINT_CASES)
def test_constraints_agree_with_pytorchs(oracle, name, values):
    theirs_constraint = getattr(oracle.torch.distributions.constraints, name)
    ours = getattr(constraints, name).check(mt.tensor(values, dtype=mt.float64))
    theirs = theirs_constraint.check(oracle.torch.tensor(values, dtype=oracle.torch.float64))
    assert ours.tolist() == theirs.tolist()
    assert repr(getattr(constraints, name)) == repr(theirs_constraint)


def test_utils(oracle):
    loc, scale = utils.broadcast_all(mt.zeros(2, 1, dtype=mt.float64), 3)
    assert loc.shape == scale.shape == (2, 1) and scale.dtype == mt.float64
    p = mt.tensor([0.0, 0.3, 1.0], dtype=mt.float64)
    tp = oracle.torch.tensor([0.0, 0.3, 1.0], dtype=oracle.torch.float64)
    tu = oracle.torch.distributions.utils
    oracle.close(utils.probs_to_logits(p, is_binary=True), tu.probs_to_logits(tp, is_binary=True))
    oracle.close(utils.logits_to_probs(p), tu.logits_to_probs(tp))
    x = mt.tensor([0.0, 2.0, 0.0], dtype=mt.float64, requires_grad=True)
    y = mt.tensor([0.5, 3.0, 0.0], dtype=mt.float64, requires_grad=True)
    out = utils.xlogy(x, y)
    out.sum().backward()
    tx = oracle.torch.tensor([0.0, 2.0, 0.0], dtype=oracle.torch.float64, requires_grad=True)
    ty = oracle.torch.tensor([0.5, 3.0, 0.0], dtype=oracle.torch.float64, requires_grad=True)
    oracle.torch.xlogy(tx, ty).sum().backward()
    oracle.close(out, oracle.torch.xlogy(tx, ty))
    oracle.close(x.grad, tx.grad)
    oracle.close(y.grad[:2], ty.grad[:2])
    assert y.grad[2].item() == 0.0 and np.isnan(ty.grad[2].item())  # 0 * log 0: minitensor 0, PyTorch 0/0
    assert utils.sum_rightmost(mt.ones(2, 3, 4), 2).tolist() == [12.0, 12.0]


@pytest.mark.parametrize("module", [D, distribution, constraints, utils])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
