"""``Categorical(probs=None, logits=None)``: one of K categories, as PyTorch's.

``probs`` (..., K) are normalised to sum to 1 along the last dim; ``logits`` (..., K) are
normalised to log-probabilities (``logits - logsumexp``).  Give exactly one; the other is computed
on first use.  Values are category indices; batch_shape is the parameter's shape without K.

>>> import minitensor as mt
>>> d = Categorical(probs=mt.tensor([1.0, 3.0]))
>>> d.probs.tolist(), round(d.log_prob(mt.tensor(1)).item(), 4), round(d.entropy().item(), 4)
([0.25, 0.75], -0.2877, 0.5623)
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes, random
from ..tensor import Tensor, creation
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits


def draw_categories(probs: Tensor, sample_shape: tuple, batch_shape: tuple) -> np.ndarray:
    """Indices drawn from each row of ``probs`` (..., K): shape sample_shape + batch_shape, int64.

    Inverse CDF of uniforms from minitensor's generator, all rows in one ``searchsorted``: row r's
    cumulative probabilities are shifted by r, so the rows line up in one increasing sequence."""
    k = probs.shape[-1]
    rows = np.asarray(probs.detach().numpy(), dtype=np.float64).reshape(-1, k)
    cdf = np.cumsum(rows, axis=-1)
    cdf /= cdf[:, -1:]
    offsets = np.arange(rows.shape[0], dtype=np.float64)[:, None]
    u = random.generator(None).random((math.prod(sample_shape), rows.shape[0]))
    flat = np.searchsorted((cdf + offsets).ravel(), (u + offsets.T).ravel(), side="right").reshape(u.shape)
    index = np.minimum(flat - (offsets.T * k).astype(np.int64), k - 1)
    return index.reshape(sample_shape + batch_shape).astype(dtypes.int64)


class Categorical(Distribution):
    """A batch of categorical distributions over K categories. Args: probs (..., K) or logits (..., K)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if not isinstance(probs, Tensor) or probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if not isinstance(logits, Tensor) or logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(self._param.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance=None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = tuple(batch_shape)
        param_shape = batch_shape + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = new._param = self.probs.expand(*param_shape)
        if "logits" in self.__dict__:
            new.logits = new._param = self.logits.expand(*param_shape)
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> tuple:
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return creation.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return creation.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape: tuple = ()) -> Tensor:
        """Category indices (int64) of shape sample_shape + batch_shape."""
        shape = self._extended_shape(sample_shape)
        sample_shape = shape[: len(shape) - len(self._batch_shape)]
        return Tensor._make(draw_categories(self.probs, sample_shape, self._batch_shape), False, None)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = np.broadcast_shapes(value.shape, self.logits.shape)
        index = value.expand(*shape[:-1], 1)
        return self.logits.expand(*shape).gather(-1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        """-sum p log p (a -inf logit with p = 0 counts 0: the logits are clamped to the dtype's min)."""
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = Tensor._make(np.arange(self._num_events, dtype=dtypes.int64), False, None)
        values = values.reshape(-1, *(1,) * len(self._batch_shape))
        return values.expand(self._num_events, *self._batch_shape) if expand else values
