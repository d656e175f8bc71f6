"""``kl_divergence(p, q)``: KL(p || q) = E_p[log p(x) - log q(x)], in closed form, as PyTorch's.

``register_kl(TypeP, TypeQ)`` registers a function for a pair of types; ``kl_divergence`` picks the
most specific registered pair for (type(p), type(q)), as PyTorch (a RuntimeWarning when two
registrations are equally specific).  Registered here, PyTorch's pairs among minitensor's families:
Normal, Bernoulli, Categorical, OneHotCategorical, Uniform, MultivariateNormal, Gamma, Beta,
Dirichlet with themselves, Independent with Independent, and the mixed pairs Beta-Gamma,
Beta-Normal, Beta-Uniform, Gamma-Normal, Uniform-Normal, Uniform-Gamma, Uniform-Beta, and the
infinite ones (Normal-Uniform, Normal-Gamma, Normal-Beta, Gamma-Uniform, Gamma-Beta).
Every KL is differentiable in the parameters of both distributions (``lgamma``, ``digamma`` and
``linalg.solve_triangular`` are ops).

>>> import minitensor as mt
>>> from minitensor.distributions import Normal
>>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 2.0)).item()  # doctest: +ELLIPSIS
0.443...
"""

from __future__ import annotations

import functools
import math
import warnings

from ..linalg import solve_triangular
from ..nn.functional import softplus
from ..ops import functions as fn
from ..tensor import Tensor, creation
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .gamma import Gamma
from .independent import Independent
from .multivariate_normal import MultivariateNormal, batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .uniform import Uniform
from .utils import sum_rightmost, xlogy

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}
_KL_MEMOIZE: dict = {}


def register_kl(type_p: type, type_q: type):
    """Decorator: ``@register_kl(Normal, Normal) def kl(p, q): ...`` registers ``kl`` for that pair of types."""
    for name, t in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {t}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


@functools.total_ordering
class _Match:
    """A registered pair, ordered by specificity: (A, B) <= (C, D) when A is a subclass of C (then B of D)."""

    __slots__ = ["types"]

    def __init__(self, *types) -> None:
        self.types = types

    def __eq__(self, other) -> bool:
        return self.types == other.types

    def __le__(self, other) -> bool:
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p: type, type_q: type):
    """The most specific registered function for (type_p, type_q), or NotImplemented."""
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left, right = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left is not right:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return left


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), batched over the batch shape. NotImplementedError for a pair with no registered formula."""
    key = (type(p), type(q))
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch_kl(*key)
    fun = _KL_MEMOIZE[key]
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {type(p).__name__} and q type {type(q).__name__}"
        )
    return fun(p, q)


def _infinite_like(t: Tensor) -> Tensor:
    return creation.full_like(t, math.inf)


# ----------------------------------------------------------------------------- same family
@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = fn.where(p.probs == 0, 0.0, fn.where(q.probs == 0, math.inf, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = fn.where(p.probs == 1, 0.0, fn.where(q.probs == 1, math.inf, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = fn.where(p.probs == 0, 0.0, fn.where(q.probs == 0, math.inf, t))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return fn.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes cannot be computed"
        )
    half_term1 = q._half_log_det() - p._half_log_det()
    q_tril, p_tril = q._unbroadcasted_scale_tril, p._unbroadcasted_scale_tril
    term2 = solve_triangular(q_tril, p_tril, upper=False).pow(2).sum((-2, -1))
    term3 = batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - p.event_shape[0])


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = fn.lgamma(q.concentration) - fn.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * fn.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = fn.lgamma(q.concentration1) + fn.lgamma(q.concentration0) + fn.lgamma(sum_p)
    t2 = fn.lgamma(p.concentration1) + fn.lgamma(p.concentration0) + fn.lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * fn.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * fn.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * fn.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p, sum_q = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = fn.lgamma(sum_p) - fn.lgamma(sum_q)
    t2 = (fn.lgamma(p.concentration) - fn.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = fn.digamma(p.concentration) - fn.digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independent distributions with different reinterpreted_batch_ndims")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


# ----------------------------------------------------------------------------- mixed families
@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    t1 = -p.entropy()
    t2 = fn.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (fn.digamma(p.concentration1) - fn.digamma(p.concentration1 + p.concentration0))
    t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    e_beta = p.concentration1 / (p.concentration1 + p.concentration0)
    var_normal = q.scale.pow(2)
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (e_beta * (1 - e_beta) / (p.concentration1 + p.concentration0 + 1) + e_beta.pow(2)) * 0.5
    t4 = q.loc * e_beta
    t5 = q.loc.pow(2) * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return fn.where((q.low > 0.0) | (q.high < 1.0), math.inf, result)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = 0.5 * (beta_sqr * var_normal * 2 * math.pi).log() - p.concentration - fn.lgamma(p.concentration)
    t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / beta_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (p.concentration - 1) * fn.digamma(p.concentration) + (t2 - t3 + t4) / var_normal


@register_kl(Gamma, Beta)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Normal, Beta)
@register_kl(Normal, Gamma)
@register_kl(Normal, Uniform)
def _kl_normal_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t1 = width.log()
    t2 = (q.concentration1 - 1) * (xlogy(p.high, p.high) - xlogy(p.low, p.low) - width) / width
    t3 = (q.concentration0 - 1) * (xlogy(1 - p.high, 1 - p.high) - xlogy(1 - p.low, 1 - p.low) + width) / width
    t4 = fn.lgamma(q.concentration1) + fn.lgamma(q.concentration0) - fn.lgamma(q.concentration1 + q.concentration0)
    result = t3 + t4 - t1 - t2
    return fn.where((p.high > 1.0) | (p.low < 0.0), math.inf, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t1 = width.log()
    t2 = fn.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (xlogy(p.high, p.high) - xlogy(p.low, p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    return fn.where(p.low < 0.0, math.inf, -t1 + t2 + t3 + t4)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)
