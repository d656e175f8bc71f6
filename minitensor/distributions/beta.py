"""``Beta(concentration1, concentration0)``: distributions on [0, 1], as PyTorch's (a Dirichlet over (x, 1 - x)).

log p(x) = (a - 1) log x + (b - 1) log(1 - x) - log B(a, b), a = concentration1, b = concentration0.
Sampling, ``log_prob`` and ``entropy`` are the Dirichlet's, with its limit: ``rsample`` refused when a
concentration requires grad (``log_prob`` and ``entropy`` are differentiable in both).

>>> import minitensor as mt
>>> d = Beta(mt.tensor(2.0), mt.tensor(3.0))
>>> round(d.mean.item(), 4), round(d.log_prob(mt.tensor(0.25)).item(), 4)
(0.4, 0.5232)
"""

from __future__ import annotations

import numbers

from ..ops import functions as fn
from ..tensor import Tensor, creation
from . import constraints
from .dirichlet import Dirichlet
from .distribution import Distribution
from .utils import broadcast_all


class Beta(Distribution):
    """Beta(a, b). Args: concentration1 (a) > 0, concentration0 (b) > 0, numbers or tensors, broadcast."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None) -> None:
        if isinstance(concentration1, numbers.Number) and isinstance(concentration0, numbers.Number):
            both = creation.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = fn.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance=None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        super(Beta, new).__init__(tuple(batch_shape), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: tuple = ()) -> Tensor:
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(fn.stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()
