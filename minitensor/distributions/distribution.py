"""``Distribution``: the base of every distribution, as PyTorch's ``torch.distributions.Distribution``.

Shapes: a distribution holds a batch of independent distributions (``batch_shape``), each over
events of ``event_shape``.  ``sample(sample_shape)`` returns ``sample_shape + batch_shape +
event_shape``; ``log_prob(value)`` returns one number per event (the value's shape without
``event_shape``).  ``sample`` is outside the graph; ``rsample`` (where ``has_rsample``) is
reparameterised: a differentiable function of the parameters and of noise drawn from
minitensor's generator (``mt.manual_seed`` makes both reproducible).

Validation (``validate_args``, on by default as in PyTorch; ``Distribution.set_default_validate_args``)
checks every parameter against ``arg_constraints`` when the distribution is made, and every value
given to ``log_prob`` against the shapes and the ``support``, with PyTorch's messages.

>>> import minitensor as mt
>>> from minitensor.distributions import Normal
>>> d = Normal(mt.zeros(3), 1.0)
>>> d.batch_shape, d.event_shape, d.sample((2,)).shape
((3,), (), (2, 3))
"""

from __future__ import annotations

import warnings

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from . import constraints
from .utils import lazy_property, sample_shape_of


class Distribution:
    """The base class: ``batch_shape``, ``event_shape``, and the methods each distribution provides
    (``sample``, ``rsample``, ``log_prob``, ``cdf``, ``icdf``, ``entropy``, ``mean``, ``mode``, ``variance``,
    ``stddev``, ``expand``, ``enumerate_support``, ``perplexity``)."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions made from now on."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: value must be True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape: tuple = (), event_shape: tuple = (), validate_args: bool | None = None) -> None:
        self._batch_shape, self._event_shape = tuple(batch_shape), tuple(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if not self._validate_args:
            return
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(
                f"{type(self)} does not define `arg_constraints`. Please set `arg_constraints = {{}}` or initialize "
                "the distribution with `validate_args=False` to turn off validation.",
                stacklevel=2,
            )
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # not computed yet: the other parameterisation was given
            value = getattr(self, param)
            if not bool(constraint.check(value).numpy().all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                    f"distribution {self!r} to satisfy the constraint {constraint!r}, but found invalid values:\n"
                    f"{value}"
                )

    def expand(self, batch_shape: tuple, _instance=None):
        """A new distribution with the parameters expanded (not copied) to ``batch_shape``."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> tuple:
        return self._batch_shape

    @property
    def event_shape(self) -> tuple:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: tuple = ()) -> Tensor:
        """``sample_shape + batch_shape + event_shape`` samples, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: tuple = ()) -> Tensor:
        """Reparameterised samples: differentiable in the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample((n,))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _extended_shape(self, sample_shape: tuple = ()) -> tuple:
        """``sample_shape + batch_shape + event_shape``."""
        return sample_shape_of(sample_shape) + self._batch_shape + self._event_shape

    def _validate_sample(self, value: Tensor) -> None:
        """Check a value given to ``log_prob``/``cdf``: a Tensor, event_shape on the right, broadcastable
        with batch_shape + event_shape, inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.ndim - len(self._event_shape)
        if tuple(value.shape[event_start:]) != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.shape} vs {self._event_shape}."
            )
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(value.shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {value.shape} vs {expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{type(self)} does not define `support` to enable sample validation. Please initialize the "
                "distribution with `validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        if not bool(support.check(value).numpy().all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be within the "
                f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method."
            )
        return type(self).__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        params = [k for k in self.arg_constraints if k in self.__dict__]
        shown = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].shape}" for p in params
        )
        return f"{type(self).__name__}({shown})"
