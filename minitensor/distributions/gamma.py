"""``Gamma(concentration, rate)``: the gamma distribution with shape alpha and rate beta, as PyTorch's.

log p(x) = alpha log(beta) + (alpha - 1) log(x) - beta x - lgamma(alpha); mean alpha / beta.
Samples are NumPy's gamma draws (minitensor's generator) divided by the rate, so ``rsample`` is
differentiable in ``rate``.  PyTorch also differentiates samples w.r.t. ``concentration``
(implicit reparameterisation, its ``_standard_gamma`` gradient); minitensor has no such op yet,
so ``rsample`` with a concentration that requires grad raises.  ``log_prob`` and ``entropy`` are
differentiable in every argument, to any order (``lgamma`` and ``digamma`` are ops).

>>> import minitensor as mt
>>> d = Gamma(mt.tensor(2.0), mt.tensor(3.0))
>>> round(d.log_prob(mt.tensor(0.5)).item(), 4), round(d.mean.item(), 4), round(d.entropy().item(), 4)
(0.0041, 0.6667, 0.4786)
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import random
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, xlogy


def standard_gamma(concentration: Tensor, shape: tuple) -> np.ndarray:
    """Gamma(concentration, 1) draws of ``shape`` from minitensor's generator, at least the dtype's ``tiny``
    (as PyTorch clamps them)."""
    alpha = np.broadcast_to(concentration.detach().numpy().astype(np.float64), shape)
    draws = random.generator(None).standard_gamma(alpha).astype(concentration.dtype)
    return np.maximum(draws, finfo(concentration.dtype).tiny)


def refuse_concentration_grad(concentration: Tensor, name: str) -> None:
    if concentration.requires_grad and is_grad_enabled():
        raise NotImplementedError(
            f"{name}.rsample: the samples' gradient w.r.t. the concentration needs implicit reparameterisation "
            "(PyTorch's _standard_gamma / _dirichlet_grad), which minitensor does not have yet; use sample(), or a "
            "concentration that does not require grad"
        )


class Gamma(Distribution):
    """Gamma(alpha, beta). Args: concentration alpha > 0, rate beta > 0 (numbers or tensors, broadcast)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(() if scalar else self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance=None) -> Gamma:
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration, new.rate = self.concentration.expand(*batch_shape), self.rate.expand(*batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: tuple = ()) -> Tensor:
        refuse_concentration_grad(self.concentration, "Gamma")
        shape = self._extended_shape(sample_shape)
        return Tensor._make(standard_gamma(self.concentration, shape), False, None) / self.rate.expand(*shape)

    def log_prob(self, value) -> Tensor:
        value = value if isinstance(value, Tensor) else Tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (
            xlogy(self.concentration, self.rate)
            + xlogy(self.concentration - 1, value)
            - self.rate * value
            - self.concentration.lgamma()
        )

    def entropy(self) -> Tensor:
        alpha = self.concentration
        return alpha - self.rate.log() + alpha.lgamma() + (1.0 - alpha) * alpha.digamma()
