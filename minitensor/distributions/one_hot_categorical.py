"""``OneHotCategorical(probs=None, logits=None)``: a ``Categorical`` whose values are one-hot vectors, as PyTorch's.

event_shape is (K,); ``sample`` gives one-hot float vectors; ``log_prob`` reads the hot index.

>>> import minitensor as mt
>>> d = OneHotCategorical(probs=mt.tensor([0.2, 0.8]))
>>> d.event_shape, round(d.log_prob(mt.tensor([0.0, 1.0])).item(), 4)
((2,), -0.2231)
"""

from __future__ import annotations

import numpy as np

from ..nn.functional import one_hot
from ..tensor import Tensor
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class OneHotCategorical(Distribution):
    """One-hot samples of a categorical distribution. Args: probs (..., K) or logits (..., K)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args)

    def expand(self, batch_shape: tuple, _instance=None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        super(OneHotCategorical, new).__init__(tuple(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> Tensor:
        return self._categorical._param

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> tuple:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape: tuple = ()) -> Tensor:
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(self._categorical.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        eye = np.eye(n, dtype=self._param.dtype).reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        values = Tensor._make(eye, False, None)
        return values.expand(n, *self.batch_shape, n) if expand else values
