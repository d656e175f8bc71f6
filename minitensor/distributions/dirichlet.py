"""``Dirichlet(concentration)``: distributions over the probability simplex, as PyTorch's.

concentration (..., K) > 0; values (..., K) are non-negative and sum to 1.
log p(x) = sum (alpha_i - 1) log x_i + lgamma(sum alpha) - sum lgamma(alpha_i).
Samples are normalised gamma draws (NumPy, minitensor's generator).  ``rsample`` cannot carry
gradients to the concentration (PyTorch's implicit reparameterisation, ``_dirichlet_grad``, has no
minitensor op yet): it raises when the concentration requires grad.  ``log_prob`` and ``entropy``
are differentiable in the concentration and the value (``lgamma`` and ``digamma`` are ops).

>>> import minitensor as mt
>>> d = Dirichlet(mt.tensor([1.0, 2.0, 3.0]))
>>> [round(v, 4) for v in d.mean.tolist()], round(d.log_prob(mt.tensor([0.2, 0.3, 0.5])).item(), 4)
([0.1667, 0.3333, 0.5], 1.5041)
"""

from __future__ import annotations

import numpy as np

from ..nn.functional import one_hot
from ..ops import functions as fn
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .gamma import refuse_concentration_grad, standard_gamma
from .utils import xlogy


class Dirichlet(Distribution):
    """Dir(alpha) over the simplex of size K. Args: concentration (..., K) > 0."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if not isinstance(concentration, Tensor) or concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance=None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration = self.concentration.expand(*batch_shape, *self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: tuple = ()) -> Tensor:
        refuse_concentration_grad(self.concentration, type(self).__name__)
        gammas = standard_gamma(self.concentration, self._extended_shape(sample_shape))
        values = np.maximum(gammas / gammas.sum(-1, keepdims=True), finfo(gammas.dtype).tiny)
        return Tensor._make(values.astype(self.concentration.dtype), False, None)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        alpha = self.concentration
        return xlogy(alpha - 1.0, value).sum(-1) + fn.lgamma(alpha.sum(-1)) - fn.lgamma(alpha).sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        """(alpha - 1)+ normalised; where every alpha < 1 (no single mode), a one-hot vector: PyTorch's choice,
        the argmax of that row's 0/0 = NaN values, which is the first corner."""
        above = (self.concentration - 1).clamp(min=0.0)
        mode = above / above.sum(-1, keepdim=True)
        all_below = (self.concentration < 1).all(dim=-1, keepdim=True)
        corner = one_hot(mode.detach().argmax(dim=-1), self.concentration.shape[-1]).to(mode.dtype)
        return fn.where(all_below, corner, mode)

    @property
    def variance(self) -> Tensor:
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self) -> Tensor:
        alpha = self.concentration
        k = alpha.shape[-1]
        a0 = alpha.sum(-1)
        spread = ((alpha - 1.0) * fn.digamma(alpha)).sum(-1)
        return fn.lgamma(alpha).sum(-1) - fn.lgamma(a0) - (k - a0) * fn.digamma(a0) - spread
