"""distributions.MultivariateNormal against PyTorch's: the three parameterisations, batch broadcasting, log_prob,
entropy, the derived matrices, gradients w.r.t. loc and scale_tril (first and second order; w.r.t. the covariance
and precision matrices: tests/distributions/test_concentration_gradients.py), rsample with the same noise,
sampling moments."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.distributions import MultivariateNormal, multivariate_normal


def _cov(rng, *batch, k=3):
    a = rng.standard_normal((*batch, k, k))
    return a @ np.swapaxes(a, -1, -2) + k * np.eye(k)


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_statistics_equal_pytorchs(oracle, rng, kind):
    cov = _cov(rng, 2)
    matrix = np.linalg.cholesky(cov) if kind == "scale_tril" else cov
    loc = rng.standard_normal((4, 1, 3))  # broadcasts against the matrices' batch (2,)
    params, t_params = oracle.params(requires_grad=False, loc=loc, **{kind: matrix})
    ours = MultivariateNormal(**params)
    theirs = oracle.torch.distributions.MultivariateNormal(**t_params)
    oracle.check(ours, theirs, params, t_params, rng.standard_normal((5, 4, 2, 3)), stats=("mean", "variance", "mode"),
                 grads=False)  # fmt: skip
    for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
        oracle.close(getattr(ours, name), getattr(theirs, name), rtol=1e-9, atol=1e-12, what=name)


def test_gradients_w_r_t_loc_and_scale_tril_equal_pytorchs(oracle, rng):
    params, t_params = oracle.params(loc=rng.standard_normal((2, 3)), scale_tril=np.linalg.cholesky(_cov(rng, 2)))
    ours = MultivariateNormal(**params)
    theirs = oracle.torch.distributions.MultivariateNormal(**t_params)
    oracle.check(ours, theirs, params, t_params, rng.standard_normal((4, 2, 3)), stats=("mean", "variance"))
    oracle.close(ours.precision_matrix, theirs.precision_matrix, rtol=1e-9, what="precision_matrix")
    weights = rng.standard_normal((2, 3, 3))
    (g,) = mt.autograd.grad((ours.precision_matrix * mt.tensor(weights, dtype=mt.float64)).sum(), params["scale_tril"])
    (tg,) = oracle.torch.autograd.grad((theirs.precision_matrix * oracle.torch.tensor(weights)).sum(),
                                       t_params["scale_tril"])  # fmt: skip
    # Equal on and below the diagonal; above it (entries the matrix does not use) minitensor's gradient is 0 where
    # PyTorch's cholesky_inverse backward gives the formula of a full matrix.
    oracle.close(g, np.tril(tg.numpy()), rtol=1e-9, atol=1e-12, what="d precision / d scale_tril")


def test_log_prob_is_twice_differentiable(rng):
    loc = mt.tensor(rng.standard_normal(3), dtype=mt.float64, requires_grad=True)
    tril = mt.tensor(np.linalg.cholesky(_cov(rng)), dtype=mt.float64, requires_grad=True)
    value = mt.tensor(rng.standard_normal((2, 3)), dtype=mt.float64)

    def fn(loc, tril):
        return MultivariateNormal(loc, scale_tril=tril.tril(), validate_args=False).log_prob(value)

    assert gradcheck(fn, [loc, tril]) and gradgradcheck(fn, [loc, tril])


def test_rsample_with_the_same_noise_equals_pytorchs_with_gradients(oracle, rng, monkeypatch):
    params, t_params = oracle.params(loc=rng.standard_normal(3), scale_tril=np.linalg.cholesky(_cov(rng)))
    ours = MultivariateNormal(**params)
    theirs = oracle.torch.distributions.MultivariateNormal(**t_params)
    mt.manual_seed(9)
    x = ours.rsample((6,))
    mt.manual_seed(9)
    eps = mt.randn(6, 3, dtype=mt.float64).numpy()
    module = oracle.torch.distributions.multivariate_normal
    monkeypatch.setattr(module, "_standard_normal", lambda *a, **k: oracle.torch.tensor(eps))
    tx = theirs.rsample((6,))
    oracle.close(x, tx, what="rsample")
    oracle.same_gradients(x.tanh(), tx.tanh(), params, t_params)


def test_errors():
    loc = mt.zeros(2)
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        MultivariateNormal(loc)
    with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
        MultivariateNormal(mt.tensor(0.0), covariance_matrix=mt.eye(1))
    with pytest.raises(ValueError, match="to satisfy the constraint PositiveDefinite"):
        MultivariateNormal(loc, covariance_matrix=mt.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="to satisfy the constraint LowerCholesky"):
        MultivariateNormal(loc, scale_tril=mt.tensor([[1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"must be \(\.\.\., k, k\) with k = loc's size 2"):
        MultivariateNormal(loc, scale_tril=mt.eye(3))


def test_sample_moments_and_covariance(oracle, rng):
    cov = _cov(rng)
    d = MultivariateNormal(
        mt.tensor([1.0, -1.0, 0.5], dtype=mt.float64), covariance_matrix=mt.tensor(cov, dtype=mt.float64)
    )
    oracle.moments(d)
    mt.manual_seed(2)
    x = d.sample((40000,)).numpy()
    np.testing.assert_allclose(np.cov(x.T), cov, atol=5 * np.sqrt(2 * np.diag(cov).max() ** 2 / 40000))


def test_docstring_examples_run():
    result = doctest.testmod(multivariate_normal, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
