"""distributions.kl_divergence against torch.distributions.kl_divergence: every registered pair's values
(finite and infinite), gradients where the parameters may require grad, and register_kl's dispatch."""

from __future__ import annotations

import doctest
import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.distributions as D
from minitensor.distributions import kl


def _both(oracle, name: str, **arrays):
    """The same distribution in both libraries, from float64 arrays (constant parameters)."""
    ours = getattr(D, name)(**{k: mt.tensor(v, dtype=mt.float64) for k, v in arrays.items()})
    theirs = getattr(oracle.torch.distributions, name)(**{k: oracle.torch.tensor(v) for k, v in arrays.items()})
    return ours, theirs


def _cases(rng) -> list:
    """(p family, p arrays, q family, q arrays), batch shape (3,)."""
    pos = lambda lo=0.5, hi=3.0: rng.uniform(lo, hi, 3)  # noqa: E731
    normal = lambda: {"loc": rng.standard_normal(3), "scale": pos()}  # noqa: E731
    gamma = lambda: {"concentration": pos(), "rate": pos()}  # noqa: E731
    beta = lambda: {"concentration1": pos(), "concentration0": pos()}  # noqa: E731
    uniform = lambda low, high: {"low": np.array(low, dtype=float), "high": np.array(high, dtype=float)}  # noqa: E731
    inside = uniform([0.1, 0.2, -0.5], [0.5, 0.9, 0.5])
    tril = np.linalg.cholesky(np.eye(2) * 2 + 0.5)
    return [
        ("Normal", normal(), "Normal", normal()),
        ("Bernoulli", {"probs": rng.uniform(0.1, 0.9, 3)}, "Bernoulli", {"logits": rng.standard_normal(3)}),
        ("Bernoulli", {"probs": np.array([0.0, 1.0, 0.5])}, "Bernoulli", {"probs": np.array([0.5, 0.0, 1.0])}),
        ("Categorical", {"probs": rng.uniform(0.1, 1, (3, 4))}, "Categorical", {"logits": rng.standard_normal((3, 4))}),
        ("Categorical", {"probs": np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]])}, "Categorical",
         {"probs": np.array([[0.5, 0.5], [1.0, 0.0], [1.0, 0.0]])}),
        ("OneHotCategorical", {"logits": rng.standard_normal((3, 4))}, "OneHotCategorical",
         {"probs": rng.uniform(0.1, 1, (3, 4))}),
        ("Uniform", uniform([0, 0, 0], [1, 2, 3]), "Uniform", uniform([-1, 0.5, 0], [2, 2, 4])),
        ("MultivariateNormal", {"loc": rng.standard_normal((3, 2)), "scale_tril": tril}, "MultivariateNormal",
         {"loc": rng.standard_normal((3, 2)), "covariance_matrix": np.eye(2) * 1.5 + 0.3}),
        ("Gamma", gamma(), "Gamma", gamma()),
        ("Beta", beta(), "Beta", beta()),
        ("Dirichlet", {"concentration": rng.uniform(0.5, 3, (3, 4))}, "Dirichlet",
         {"concentration": rng.uniform(0.5, 3, (3, 4))}),
        ("Beta", beta(), "Gamma", gamma()),
        ("Beta", beta(), "Normal", normal()),
        ("Beta", beta(), "Uniform", uniform([0, -1, 0.1], [1, 2, 1])),
        ("Gamma", gamma(), "Normal", normal()),
        ("Gamma", gamma(), "Uniform", uniform([0, 0, 0], [1, 1, 1])),
        ("Gamma", gamma(), "Beta", beta()),
        ("Normal", normal(), "Uniform", uniform([0, 0, 0], [1, 1, 1])),
        ("Normal", normal(), "Gamma", gamma()),
        ("Normal", normal(), "Beta", beta()),
        ("Uniform", inside, "Normal", normal()),
        ("Uniform", inside, "Gamma", gamma()),
        ("Uniform", inside, "Beta", beta()),
    ]  # fmt: skip


@pytest.mark.parametrize("index", range(23))
def test_kl_values_equal_pytorchs(oracle, index):
    p_name, p_args, q_name, q_args = _cases(np.random.default_rng(index))[index]
    p, tp = _both(oracle, p_name, **p_args)
    q, tq = _both(oracle, q_name, **q_args)
    oracle.close(D.kl_divergence(p, q), oracle.torch.distributions.kl_divergence(tp, tq), rtol=1e-9, what="kl")


@pytest.mark.parametrize(
    "family, p_args, q_args",
    [("Normal", ("loc", "scale"), ("loc", "scale")), ("Bernoulli", ("logits",), ("probs",)),
     ("Categorical", ("logits",), ("probs",)), ("Uniform", ("low", "high"), ("low", "high")),
     ("MultivariateNormal", ("loc", "scale_tril"), ("loc", "scale_tril"))],
)  # fmt: skip
def test_kl_gradients_equal_pytorchs(oracle, rng, family, p_args, q_args):
    def arrays(names, shift: float) -> dict:
        """Valid parameters of ``family``, batch (3,); ``shift`` makes q differ from p."""
        events = {"Categorical": (4,), "MultivariateNormal": (2,)}.get(family, ())
        make = {
            "loc": lambda: rng.standard_normal((3, *events)),
            "logits": lambda: rng.standard_normal((3, *events)),
            "scale": lambda: rng.uniform(0.2, 0.8, 3),
            "probs": lambda: rng.uniform(0.2, 0.8, (3, *events)),
            "scale_tril": lambda: np.linalg.cholesky(np.eye(2) * (2 + shift) + 0.4),
            "low": lambda: rng.uniform(-1, 0, 3) - shift,
            "high": lambda: rng.uniform(1, 2, 3) + shift,
        }
        return {n: make[n]() for n in names}

    p_params, tp_params = oracle.params(**arrays(p_args, 0.0))
    q_params, tq_params = oracle.params(**arrays(q_args, 1.0))
    p, tp = getattr(D, family)(**p_params), getattr(oracle.torch.distributions, family)(**tp_params)
    q, tq = getattr(D, family)(**q_params), getattr(oracle.torch.distributions, family)(**tq_params)
    value, t_value = D.kl_divergence(p, q), oracle.torch.distributions.kl_divergence(tp, tq)
    oracle.close(value, t_value, rtol=1e-9, what="kl")
    params = {f"p.{k}": v for k, v in p_params.items()} | {f"q.{k}": v for k, v in q_params.items()}
    t_params = {f"p.{k}": v for k, v in tp_params.items()} | {f"q.{k}": v for k, v in tq_params.items()}
    oracle.same_gradients(value, t_value, params, t_params)


def test_independent_pair_sums_the_base_kl(oracle, rng):
    p = D.Independent(D.Normal(mt.zeros(2, 3), mt.ones(2, 3)), 1)
    q = D.Independent(D.Normal(mt.ones(2, 3), mt.ones(2, 3) * 2), 1)
    assert D.kl_divergence(p, q).shape == (2,)
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), D.kl_divergence(p.base_dist, q.base_dist).numpy().sum(-1))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(p, D.Independent(D.Normal(mt.zeros(2, 3), mt.ones(2, 3)), 2))


def test_register_kl_dispatches_to_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(0.0, 2.0)
    assert D.kl_divergence(p, q).item() == pytest.approx(D.kl_divergence(D.Normal(0.0, 1.0), q).item())

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return mt.tensor(-1.0)

    try:
        assert D.kl_divergence(p, q).item() == -1.0
    finally:
        del kl._KL_REGISTRY[MyNormal, D.Normal]
        kl._KL_MEMOIZE.clear()
    with pytest.raises(
        NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type Bernoulli"
    ):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5))
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)


def test_ambiguous_registrations_warn():
    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    D.register_kl(A, D.Normal)(lambda p, q: mt.tensor(1.0))
    D.register_kl(D.Normal, B)(lambda p, q: mt.tensor(2.0))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            D.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))
        assert any("Ambiguous kl_divergence(A, B)" in str(w.message) for w in caught)
    finally:
        del kl._KL_REGISTRY[A, D.Normal], kl._KL_REGISTRY[D.Normal, B]
        kl._KL_MEMOIZE.clear()


def test_docstring_examples_run():
    result = doctest.testmod(kl, extraglobs={"mt": mt}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
