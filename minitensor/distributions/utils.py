"""Helpers shared by the distributions, as PyTorch's ``torch.distributions.utils``.

- ``broadcast_all``: parameters (numbers or tensors) as tensors of one shape;
- ``logits_to_probs`` / ``probs_to_logits`` / ``clamp_probs``: the two parameterisations of
  Bernoulli and categorical distributions;
- ``lazy_property``: a parameter computed from the other one on first use (then cached);
- ``xlogy``: x * log(y), 0 where x == 0 (PyTorch's ``torch.xlogy``, with its gradients);
- ``sample_shape`` checks, standard normal draws from minitensor's generator.

>>> import minitensor as mt
>>> loc, scale = broadcast_all(mt.zeros(3), 1.0)
>>> scale.shape, scale.dtype
((3,), dtype('float32'))
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import enable_grad
from ..ops import functions as fn
from ..tensor import Tensor, creation
from ..type_info import finfo

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values) -> tuple:
    """Numbers and tensors broadcast to one shape; numbers become tensors of the first tensor's dtype
    (the default dtype if there is none).  Raises ValueError for anything else."""
    if not all(isinstance(v, (Tensor, numbers.Number)) and not isinstance(v, bool) for v in values):
        raise ValueError("Input arguments must all be instances of Number or Tensor")
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), dtypes.get_default_dtype())
    tensors = [v if isinstance(v, Tensor) else creation.tensor(float(v), dtype=dtype) for v in values]
    shape = np.broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else t.expand(*shape) for t in tensors)


def broadcast_shapes(*shapes) -> tuple:
    """The shape all ``shapes`` broadcast to (ValueError naming them when they do not)."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"shapes {', '.join(map(str, shapes))} cannot be broadcast together") from None


def sample_shape_of(sample_shape) -> tuple:
    """``sample_shape`` (a tuple or list of ints) as a tuple."""
    if isinstance(sample_shape, (tuple, list)) and all(
        isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0 for s in sample_shape
    ):
        return tuple(int(s) for s in sample_shape)
    raise TypeError(f"sample_shape must be a tuple of non-negative ints such as (5,), got {sample_shape!r}")


def standard_normal(shape: tuple, dtype) -> Tensor:
    """N(0, 1) samples of ``shape`` from minitensor's generator."""
    return creation.randn(*shape, dtype=dtype)


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[:-dim], -1).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid (binary) or softmax over the last dim."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped into [eps, 1 - eps] (eps of their dtype), so that their logs are finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log p - log(1 - p) (binary) or log p, of the clamped probabilities."""
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


def xlogy(x, y: Tensor) -> Tensor:
    """x * log(y), and 0 where x == 0 and y <= 0 (PyTorch's ``torch.xlogy``, with its gradients: log(y) w.r.t. x,
    x / y w.r.t. y; at x == y == 0 both are 0, where PyTorch's w.r.t. y is 0/0 = NaN)."""
    if not isinstance(x, Tensor):
        x = creation.tensor(float(x), dtype=y.dtype)
    safe_y = fn.where((x == 0) & (y <= 0), 1.0, y)  # log(1) = 0: the value and both gradients are 0 there
    return x * safe_y.log()


class lazy_property:  # noqa: N801  (PyTorch's name)
    """A property computed once, on first use (with gradients recorded), then stored on the instance.

    ``Categorical(logits=...)`` computes ``probs`` only if asked, and the other way round.
    """

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
