"""Where a parameter or a value may lie, as PyTorch's ``torch.distributions.constraints``.

A ``Constraint`` answers ``check(value)`` with a bool tensor (one answer per event: ``event_dim``
rightmost dims are checked together).  Distributions use them to validate their arguments
(``arg_constraints``) and the values given to ``log_prob`` (``support``).

>>> import minitensor as mt
>>> positive.check(mt.tensor([1.0, -1.0])).tolist()
[True, False]
>>> simplex.check(mt.tensor([[0.5, 0.5], [0.9, 0.3]])).tolist()
[True, False]
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor

__all__ = [
    "Constraint", "boolean", "dependent", "dependent_property", "greater_than", "greater_than_eq",
    "half_open_interval", "independent", "integer_interval", "interval", "is_dependent", "less_than",
    "lower_cholesky", "lower_triangular", "nonnegative", "nonnegative_integer", "one_hot", "positive",
    "positive_definite", "positive_integer", "real", "real_vector", "simplex", "square", "symmetric", "unit_interval",
]  # fmt: skip


def _bool(array: np.ndarray) -> Tensor:
    return Tensor._make(np.asarray(array, dtype=bool), False, None)


class Constraint:
    """A region of values; ``is_discrete`` and ``event_dim`` (how many rightmost dims make one event)."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        """A bool tensor: whether each event of ``value`` satisfies the constraint."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (it cannot be checked)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented) -> None:
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented) -> _Dependent:
        is_discrete = self._is_discrete if is_discrete is NotImplemented else is_discrete
        event_dim = self._event_dim if event_dim is NotImplemented else event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property whose value is a constraint computed from the instance (``support`` of ``Uniform``)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented) -> None:
        property.__init__(self, fn)
        self._is_discrete, self._event_dim = is_discrete, event_dim

    def __call__(self, fn) -> _DependentProperty:
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` with its ``reinterpreted_batch_ndims`` rightmost batch dims joined into the event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"independent: base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        if isinstance(reinterpreted_batch_ndims, bool) or not isinstance(reinterpreted_batch_ndims, int):
            raise TypeError(f"independent: reinterpreted_batch_ndims must be an int, got {reinterpreted_batch_ndims!r}")
        if reinterpreted_batch_ndims < 0:
            raise ValueError(f"independent: reinterpreted_batch_ndims must be >= 0, got {reinterpreted_batch_ndims}")
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value).numpy()
        if result.ndim < self.reinterpreted_batch_ndims:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.ndim}")
        result = result.reshape(result.shape[: result.ndim - self.reinterpreted_batch_ndims] + (-1,))
        return _bool(result.all(-1))

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        v = np.asarray(value)
        return _bool(((v == 0) | (v == 1)).all(-1) & (v.sum(-1) == 1))


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound) -> None:
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value):
        return value == value  # False for NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound) -> None:
        self.lower_bound = lower_bound

    def check(self, value):
        return value > self.lower_bound

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return value >= self.lower_bound


class _LessThan(Constraint):
    def __init__(self, upper_bound) -> None:
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """[lower_bound, upper_bound]."""

    def __init__(self, lower_bound, upper_bound) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    """[lower_bound, upper_bound)."""

    def check(self, value):
        return (value >= self.lower_bound) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Non-negative vectors that sum to 1 (within 1e-6), along the last dim."""

    event_dim = 1

    def check(self, value):
        v = np.asarray(value)
        return _bool((v >= 0).all(-1) & (np.abs(v.sum(-1) - 1) < 1e-6))


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        v = np.asarray(value)
        return _bool((np.tril(v) == v).reshape(v.shape[:-2] + (-1,)).all(-1))


class _LowerCholesky(Constraint):
    """Lower triangular with a positive diagonal."""

    event_dim = 2

    def check(self, value):
        v = np.asarray(value)
        lower = (np.tril(v) == v).reshape(v.shape[:-2] + (-1,)).all(-1)
        return _bool(lower & (np.diagonal(v, axis1=-2, axis2=-1) > 0).all(-1))


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return _bool(np.full(value.shape[:-2], value.shape[-2] == value.shape[-1]))


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not square.numpy().all():
            return square
        v = np.asarray(value)
        return _bool(np.isclose(v, np.swapaxes(v, -1, -2), atol=1e-6).all((-2, -1)))


class _PositiveDefinite(_Symmetric):
    """Symmetric with positive eigenvalues (PyTorch asks whether a Cholesky factorisation exists: the same)."""

    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.numpy().all():
            return symmetric
        return _bool(np.linalg.eigvalsh(np.asarray(value, dtype=np.float64)).min(-1) > 0)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
square = _Square()
symmetric = _Symmetric()
positive_definite = _PositiveDefinite()
