"""``Uniform(low, high)``: uniform on the half-open interval [low, high), as PyTorch's.

log p(x) = -log(high - low) inside, -inf outside; rsample = low + u (high - low), u ~ U(0, 1).

>>> import minitensor as mt
>>> d = Uniform(0.0, 4.0)
>>> round(d.log_prob(mt.tensor(1.0)).item(), 4), d.mean.item(), round(d.entropy().item(), 4)
(-1.3863, 2.0, 1.3863)
"""

from __future__ import annotations

import math
import numbers

from ..tensor import Tensor, creation
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Uniform(Distribution):
    """U(low, high). Args: low < high, numbers or tensors, broadcast."""

    has_rsample = True

    def __init__(self, low, high, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        scalar = isinstance(low, numbers.Number) and isinstance(high, numbers.Number)
        super().__init__(() if scalar else self.low.shape, validate_args=validate_args)

    @property
    def arg_constraints(self) -> dict:
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def expand(self, batch_shape: tuple, _instance=None) -> Uniform:
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = tuple(batch_shape)
        new.low, new.high = self.low.expand(*batch_shape), self.high.expand(*batch_shape)
        super(Uniform, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return math.nan * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: tuple = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = creation.rand(*shape, dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        inside = ((self.low <= value) & (self.high > value)).type_as(self.low)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()
