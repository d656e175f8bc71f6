"""``Normal(loc, scale)``: the Gaussian N(loc, scale^2), as PyTorch's.

log p(x) = -(x - loc)^2 / (2 scale^2) - log(scale) - log(sqrt(2 pi)); rsample = loc + scale * eps,
eps ~ N(0, 1) (the reparameterisation trick: gradients flow to loc and scale).

>>> import minitensor as mt
>>> d = Normal(mt.tensor([0.0, 1.0]), mt.tensor([1.0, 2.0]))
>>> [round(v, 4) for v in d.log_prob(mt.tensor([0.0, 0.0])).tolist()]
[-0.9189, -1.7371]
"""

from __future__ import annotations

import math
import numbers

from ..ops.special import Erf, Erfinv
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, standard_normal


class Normal(Distribution):
    """N(loc, scale^2). Args: loc (mean), scale (standard deviation, > 0): numbers or tensors, broadcast."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if scalar else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance=None) -> Normal:
        new = self._get_checked_instance(Normal, _instance)
        batch_shape = tuple(batch_shape)
        new.loc, new.scale = self.loc.expand(*batch_shape), self.scale.expand(*batch_shape)
        super(Normal, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: tuple = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.loc + standard_normal(shape, self.loc.dtype) * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        """Phi((value - loc) / scale) = (1 + erf((value - loc) / (scale sqrt 2))) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + Erf.apply((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        """loc + scale sqrt(2) erfinv(2 value - 1): the value below which the probability is ``value``."""
        return self.loc + self.scale * Erfinv.apply(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
