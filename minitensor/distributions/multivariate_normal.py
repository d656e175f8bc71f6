"""``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None)``: N(loc, Sigma)
over vectors of size k, as PyTorch's.

Give ``loc`` (..., k) and exactly one of Sigma (..., k, k), its inverse (the precision), or its lower
Cholesky factor L (Sigma = L L^T).  Everything is computed from L:

- log p(x) = -(k log(2 pi) + |L^-1 (x - loc)|^2) / 2 - sum(log diag L);
- rsample = loc + L eps, eps ~ N(0, I); entropy = k (1 + log(2 pi)) / 2 + sum(log diag L).

Gradients of any order flow to ``loc`` and to whichever matrix was given (``linalg.cholesky`` and
``linalg.solve_triangular`` are ops; L of a precision matrix as PyTorch computes it, from the
Cholesky factor of the precision with its rows and columns reversed).

>>> import minitensor as mt
>>> d = MultivariateNormal(mt.zeros(2), covariance_matrix=mt.tensor([[4.0, 0.0], [0.0, 1.0]]))
>>> d.scale_tril.tolist(), round(d.log_prob(mt.tensor([2.0, 0.0])).item(), 4)
([[2.0, 0.0], [0.0, 1.0]], -3.031)
"""

from __future__ import annotations

import math

from ..linalg import cholesky, solve_triangular
from ..ops import functions as fn
from ..tensor import Tensor, creation
from . import constraints
from .distribution import Distribution
from .utils import broadcast_shapes, lazy_property, standard_normal


def _diagonal(matrix: Tensor) -> Tensor:
    """The diagonal of (..., k, k) as (..., k), differentiable."""
    return fn.einsum("...ii->...i", matrix)


def batch_mahalanobis(lower: Tensor, x: Tensor) -> Tensor:
    """|L^-1 x|^2 for L (..., k, k) lower triangular and x (..., k); batch dims broadcast."""
    solved = solve_triangular(lower, x.unsqueeze(-1), upper=False)  # (..., k, 1)
    return solved.pow(2).sum((-2, -1))


def precision_to_scale_tril(precision: Tensor) -> Tensor:
    """The lower factor L with L L^T = P^-1, as PyTorch computes it: from the Cholesky factor of P with its rows
    and columns reversed."""
    flipped = cholesky(precision.flip((-2, -1)))
    inverse_t = flipped.flip((-2, -1)).mT
    eye = creation.eye(precision.shape[-1], dtype=precision.dtype)
    return solve_triangular(inverse_t, eye, upper=False)


def _matrix(value, name: str) -> Tensor:
    if not isinstance(value, Tensor) or value.ndim < 2:
        raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")
    return value


class MultivariateNormal(Distribution):
    """N(loc, Sigma) over R^k; batch_shape is the broadcast of loc's and the matrix's batch dims, event_shape (k,)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None) -> None:  # fmt: skip
        if not isinstance(loc, Tensor) or loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        given, name = next(
            (m, n) for m, n in ((scale_tril, "scale_tril"), (covariance_matrix, "covariance_matrix"),
                                (precision_matrix, "precision_matrix")) if m is not None
        )  # fmt: skip
        given = _matrix(given, name)
        if given.shape[-1] != given.shape[-2] or given.shape[-1] != loc.shape[-1]:
            raise ValueError(f"{name} must be (..., k, k) with k = loc's size {loc.shape[-1]}, got {given.shape}")
        batch_shape = broadcast_shapes(given.shape[:-2], loc.shape[:-1])
        setattr(self, name, given.expand(*batch_shape, -1, -1))
        self.loc = loc.expand(*batch_shape, -1)
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: tuple, _instance=None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        k = self.event_shape[0]
        new.loc = self.loc.expand(*batch_shape, k)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*batch_shape, k, k))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, matrix: Tensor) -> Tensor:
        k = self._event_shape[0]
        return matrix.expand(*self._batch_shape, k, k)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return self._full(lower @ lower.mT)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """(L L^T)^-1 = L^-T L^-1."""
        lower = self._unbroadcasted_scale_tril
        eye = creation.eye(lower.shape[-1], dtype=lower.dtype)
        inverse = solve_triangular(lower, eye, upper=False)
        return self._full(inverse.mT @ inverse)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(*self._batch_shape, *self._event_shape)

    def rsample(self, sample_shape: tuple = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return _diagonal(self._unbroadcasted_scale_tril).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if not self._batch_shape else h.expand(*self._batch_shape)
