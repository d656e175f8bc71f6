"""Gradients that need the special functions and the decompositions, against PyTorch's: log_prob, entropy and
KL w.r.t. the concentrations of Gamma, Beta and Dirichlet (lgamma, digamma), w.r.t. the covariance and precision
matrices of MultivariateNormal (cholesky, solve_triangular), and Normal.icdf (erfinv); second order by
gradgradcheck."""

from __future__ import annotations

import numpy as np

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.distributions import Beta, Dirichlet, Gamma, MultivariateNormal, Normal, kl_divergence

# PyTorch's trigamma (the derivative of digamma, in entropy gradients) is itself ~1e-9 relative off near
# 1 (against mpmath; minitensor's within 1e-15, tests/ops/test_gamma.py): gradients through it agree to that.
TRIGAMMA_RTOL = 1e-7


def _check(oracle, ours, theirs, params, t_params, value, stats):
    """``oracle.check`` with the gradients compared at PyTorch's trigamma precision."""
    oracle.check(ours, theirs, params, t_params, value, stats=stats, grads=False)
    v, tv = oracle.value(value)
    oracle.same_gradients(ours.log_prob(v), theirs.log_prob(tv), params, t_params, rtol=TRIGAMMA_RTOL)
    oracle.same_gradients(ours.entropy(), theirs.entropy(), params, t_params, rtol=TRIGAMMA_RTOL)


def test_gamma_log_prob_and_entropy_in_the_concentration(oracle, rng):
    params, t_params = oracle.params(concentration=rng.uniform(0.5, 4, (2, 3)), rate=rng.uniform(0.5, 3, (2, 3)))
    ours, theirs = Gamma(**params), oracle.torch.distributions.Gamma(**t_params)
    _check(oracle, ours, theirs, params, t_params, rng.uniform(0.1, 4, (4, 2, 3)), ("mean", "variance", "mode"))


def test_beta_and_dirichlet_in_their_concentrations(oracle, rng):
    params, t_params = oracle.params(concentration1=rng.uniform(0.5, 3, 3), concentration0=rng.uniform(0.5, 3, 3))
    _check(oracle, Beta(**params), oracle.torch.distributions.Beta(**t_params), params, t_params,
           rng.uniform(0.05, 0.95, (2, 3)), ("mean", "variance"))  # fmt: skip
    params, t_params = oracle.params(concentration=rng.uniform(0.5, 3, (2, 4)))
    value = rng.dirichlet(np.ones(4), (3, 2))
    _check(oracle, Dirichlet(**params), oracle.torch.distributions.Dirichlet(**t_params), params, t_params, value,
           ("mean", "variance"))  # fmt: skip


def test_kl_in_the_concentrations(oracle, rng):
    for family, names in ((Gamma, ("concentration", "rate")), (Beta, ("concentration1", "concentration0"))):
        arrays = {f"{side}_{n}": rng.uniform(0.5, 3, 3) for side in "pq" for n in names}
        params, t_params = oracle.params(**arrays)
        build = [(family, params), (getattr(oracle.torch.distributions, family.__name__), t_params)]
        (p, q), (tp, tq) = [[cls(**{n: given[f"{side}_{n}"] for n in names}) for side in "pq"] for cls, given in build]
        kl, t_kl = kl_divergence(p, q), oracle.torch.distributions.kl_divergence(tp, tq)
        oracle.close(kl, t_kl, rtol=1e-10, what=f"KL {family.__name__}")
        oracle.same_gradients(kl, t_kl, params, t_params, rtol=TRIGAMMA_RTOL)


def _spd(rng, k=3):
    a = rng.standard_normal((k, k))
    return a @ a.T + k * np.eye(k)


def test_multivariate_normal_in_the_covariance_and_precision_matrices(oracle, rng):
    for kind in ("covariance_matrix", "precision_matrix"):
        params, t_params = oracle.params(loc=rng.standard_normal(3), **{kind: _spd(rng)})
        ours = MultivariateNormal(**params)
        theirs = oracle.torch.distributions.MultivariateNormal(**t_params)
        value = rng.standard_normal((4, 3))
        oracle.check(ours, theirs, params, t_params, value, stats=("mean", "variance"))

    def log_prob(loc, matrix):
        symmetric = matrix @ matrix.mT + 3 * mt.eye(3, dtype=mt.float64)
        return MultivariateNormal(loc, covariance_matrix=symmetric, validate_args=False).log_prob(mt.ones(2, 3))

    inputs = [mt.tensor(rng.standard_normal(s), dtype=mt.float64, requires_grad=True) for s in ((3,), (3, 3))]
    assert gradcheck(log_prob, inputs) and gradgradcheck(log_prob, inputs)


def test_kl_of_multivariate_normals_given_by_covariances(oracle, rng):
    params, t_params = oracle.params(p_loc=rng.standard_normal(3), p_cov=_spd(rng), q_loc=rng.standard_normal(3),
                                     q_cov=_spd(rng))  # fmt: skip
    kl = kl_divergence(MultivariateNormal(params["p_loc"], params["p_cov"]),
                       MultivariateNormal(params["q_loc"], params["q_cov"]))  # fmt: skip
    mvn = oracle.torch.distributions.MultivariateNormal
    t_kl = oracle.torch.distributions.kl_divergence(mvn(t_params["p_loc"], t_params["p_cov"]),
                                                    mvn(t_params["q_loc"], t_params["q_cov"]))  # fmt: skip
    oracle.close(kl, t_kl, rtol=1e-10, what="KL")
    oracle.same_gradients(kl, t_kl, params, t_params)


def test_normal_icdf(oracle, rng):
    params, t_params = oracle.params(loc=rng.standard_normal(3), scale=rng.uniform(0.5, 2, 3))
    p, tp = oracle.value(rng.uniform(0.05, 0.95, (2, 3)))
    out, t_out = Normal(**params).icdf(p), oracle.torch.distributions.Normal(**t_params).icdf(tp)
    oracle.close(out, t_out, rtol=1e-12, what="icdf")
    oracle.same_gradients(out, t_out, params, t_params)
    x = mt.tensor(rng.uniform(0.1, 0.9, 3), dtype=mt.float64, requires_grad=True)
    assert gradgradcheck(lambda v: Normal(0.0, 2.0).icdf(v), [x])
