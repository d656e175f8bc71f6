"""``Bernoulli(probs=None, logits=None)``: 1 with probability p, else 0, as PyTorch's.

Give exactly one of ``probs`` (p) and ``logits`` (log(p / (1 - p))); the other is computed on first
use.  log p(x) = -binary_cross_entropy_with_logits(logits, x): stable for any logits.

>>> import minitensor as mt
>>> d = Bernoulli(logits=mt.tensor([0.0, 2.0]))
>>> [round(v, 4) for v in d.probs.tolist()], [round(v, 4) for v in d.log_prob(mt.tensor([1.0, 0.0])).tolist()]
([0.5, 0.8808], [-0.6931, -2.1269])
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import random
from ..nn.functional import binary_cross_entropy_with_logits
from ..ops import functions as fn
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits


class Bernoulli(Distribution):
    """A batch of coin flips. Args: probs in [0, 1] or logits (real), numbers or tensors."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        param = probs if probs is not None else logits
        (value,) = broadcast_all(param)
        if probs is not None:
            self.probs = value
        else:
            self.logits = value
        self._param = value
        super().__init__(() if isinstance(param, numbers.Number) else value.shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance=None) -> Bernoulli:
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = tuple(batch_shape)
        if "probs" in self.__dict__:
            new.probs = new._param = self.probs.expand(*batch_shape)
        if "logits" in self.__dict__:
            new.logits = new._param = self.logits.expand(*batch_shape)
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> tuple:
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        """1 where p > 1/2, 0 where p < 1/2, NaN at a tie (as PyTorch)."""
        p = self.probs.detach()
        return fn.where(p == 0.5, math.nan, (p >= 0.5).to(p.dtype))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: tuple = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        p = np.broadcast_to(self.probs.detach().numpy(), shape)
        draws = random.generator(None).random(shape) < p
        return Tensor._make(draws.astype(self.probs.dtype), False, None)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = fn.reshape(Tensor._make(np.arange(2, dtype=self._param.dtype), False, None),
                            (-1,) + (1,) * len(self._batch_shape))  # fmt: skip
        return values.expand(2, *self._batch_shape) if expand else values
