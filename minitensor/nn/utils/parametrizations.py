"""``nn.utils.parametrizations``, as PyTorch's: ``weight_norm`` and ``spectral_norm`` as parametrizations
(``parametrize.register_parametrization``), whose state dict keys are PyTorch's.

- ``weight_norm(module, "weight", dim=0)``: ``weight = g * v / ||v||``, the norm over every dim but
  ``dim`` (``dim=None``: over all of them); ``g`` and ``v`` are the parameters ``original0`` and
  ``original1`` of ``module.parametrizations.weight`` (Salimans and Kingma, 2016).
- ``spectral_norm(module, "weight")``: ``weight = W / sigma(W)``, ``sigma`` the largest singular value of
  ``W`` (as a matrix, ``dim`` first) estimated by power iteration, one step per training forward; its
  vectors ``_u`` and ``_v`` are buffers (Miyato et al., 2018).

>>> layer = weight_norm(nn.Linear(4, 3))
>>> [name for name, _ in layer.named_parameters()]
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...ops.norms import vector_norm
from ...tensor import Tensor
from ...tensor.creation import empty
from .. import functional as F
from ..module import Module
from . import parametrize


def norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of ``v`` over every dim but ``dim``, keeping them as size 1 (``dim=-1``: over all dims,
    a 0-d result, as PyTorch's ``norm_except_dim``)."""
    if dim == -1:
        return vector_norm(v, 2)
    return vector_norm(v, 2, tuple(d for d in range(v.ndim) if d != dim), keepdim=True)


def _check_dim(dim, weight: Tensor, fn: str) -> int:
    if dim is None:
        return -1
    if isinstance(dim, bool) or not isinstance(dim, int) or not -weight.ndim <= dim < weight.ndim:
        raise ValueError(f"{fn}: dim must be None or an int in [{-weight.ndim}, {weight.ndim - 1}], got {dim!r}")
    return dim


class _WeightNorm(Module):
    """weight = g * v / ||v|| (norm over every dim but ``dim``); right_inverse: (||weight||, weight)."""

    def __init__(self, dim: int = 0) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple:
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (see the module docstring); returns ``module``.

    ``g`` has the weight's shape with size 1 in every dim but ``dim`` (``dim=None``: 0-d).
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"weight_norm: module {type(module).__name__} has no parameter or buffer named {name!r}")
    parametrize.register_parametrization(module, name, _WeightNorm(_check_dim(dim, weight, "weight_norm")), unsafe=True)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma = u . (W v) with u, v the power iteration's singular vectors (buffers) of the
    weight as a matrix W (``dim`` first, the rest flattened); a 1-D weight is normalised instead."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        if isinstance(n_power_iterations, bool) or not isinstance(n_power_iterations, int) or n_power_iterations <= 0:
            raise ValueError(f"spectral_norm: n_power_iterations must be a positive int, got {n_power_iterations!r}")
        self.dim = dim % weight.ndim if weight.ndim else 0
        self.eps = eps
        if weight.ndim > 1:
            self.n_power_iterations = n_power_iterations
            matrix = self._as_matrix(weight.detach())
            h, w = matrix.shape
            u = empty(h, dtype=weight.dtype).normal_(0.0, 1.0)  # (minitensor's generator: mt.manual_seed)
            v = empty(w, dtype=weight.dtype).normal_(0.0, 1.0)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=eps))
            self._power_method(matrix, 15)

    def _as_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, matrix: Tensor, n_power_iterations: int) -> None:
        """``n_power_iterations`` steps u <- normalize(W v), v <- normalize(W^T u), in place in the buffers."""
        with no_grad():
            matrix = matrix.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(matrix @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(matrix.T @ self._u, dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        matrix = self._as_matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (matrix @ v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim: int | None = None
) -> Module:
    """Reparametrize ``module.<name>`` as ``W / sigma(W)`` (see the module docstring); returns ``module``.

    ``dim`` (default 0, or 1 for the transposed convolutions, as PyTorch) is the dim of output features.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"spectral_norm: module {type(module).__name__} has no parameter or buffer named {name!r}")
    if dim is None:  # (by name: the transposed convolutions keep their output channels in dim 1)
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    dim = _check_dim(dim, weight, "spectral_norm")
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
