"""Batch norm layers: ``BatchNorm1d``, ``BatchNorm2d``, ``BatchNorm3d``, as PyTorch's.

A batch norm layer normalises each channel with the batch's statistics while training and
keeps running estimates of them for evaluation.  Its state is PyTorch's: parameters ``weight``
(ones) and ``bias`` (zeros) when ``affine``; buffers ``running_mean`` (zeros), ``running_var``
(ones) and ``num_batches_tracked`` (an int64 count) when ``track_running_stats``, so state
dicts move between the two libraries.

- Training (``module.train()``): normalise by the batch's mean and biased variance per channel
  (over N and the spatial dims); update ``running = (1 - momentum) * running + momentum *
  batch`` with the *unbiased* variance, and count the batch in ``num_batches_tracked``;
  ``momentum=None`` makes the running statistics the plain average of all batches so far
  (momentum ``1 / num_batches_tracked``).
- Evaluation (``module.eval()``): normalise by the running statistics, which stay as they are
  (without ``track_running_stats`` there are none: the batch's statistics serve in both modes).

>>> bn = nn.BatchNorm2d(3)
>>> list(bn.state_dict())
['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
>>> y = bn(mt.randn(4, 3, 5, 5) * 2 + 1)         # training: the batch's statistics
>>> bn.num_batches_tracked.item(), bn.eval()(mt.zeros(1, 3, 5, 5)).shape
(1, (1, 3, 5, 5))
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import functional as F
from . import init
from ._utils import check_size, empty_parameter, float_dtype
from .functional._checks import as_input
from .module import Module


class _NormBase(Module):
    """What batch norm and instance norm layers share: the parameters, the running statistics."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        layer = type(self).__name__
        self.num_features = check_size(num_features, "num_features", layer)
        if not eps > 0:
            raise ValueError(f"{layer}: eps must be positive (a constant channel would give NaN), got {eps}")
        if momentum is not None and not 0.0 <= momentum <= 1.0:
            raise ValueError(f"{layer}: momentum must be None or in [0, 1], got {momentum}")
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        dtype = float_dtype(dtype, layer, device)
        if affine:
            self.weight = empty_parameter((self.num_features,), dtype)
            if bias:
                self.bias = empty_parameter((self.num_features,), dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor._make(np.zeros(self.num_features, dtype), False, None))
            self.register_buffer("running_var", Tensor._make(np.ones(self.num_features, dtype), False, None))
            self.register_buffer("num_batches_tracked", Tensor._make(np.zeros((), np.int64), False, None))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """running_mean = 0, running_var = 1, num_batches_tracked = 0."""
        if self.track_running_stats:
            self.running_mean._data[...] = 0
            self.running_var._data[...] = 1
            self.num_batches_tracked._data[...] = 0
            for buffer in (self.running_mean, self.running_var, self.num_batches_tracked):
                buffer._version += 1

    def reset_parameters(self) -> None:
        """The running statistics reset, weight = 1, bias = 0."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _input(self, input) -> Tensor:  # noqa: A002
        """The input as a Tensor (a NumPy array converted to the layer's dtype)."""
        like = self.weight.dtype if self.weight is not None else None
        if like is None and self.running_mean is not None:
            like = self.running_mean.dtype
        return as_input(input, "input", type(self).__name__, like=like)

    def _check_features(self, input: Tensor, dim: int) -> None:  # noqa: A002
        if input.shape[dim] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}: expected input's size at dim={dim} to match num_features="
                f"{self.num_features}, got input of shape {tuple(input.shape)}"
            )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    _ranks: tuple = ()  # the input ranks the layer takes

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002  (PyTorch's name)
        input = self._input(input)  # noqa: A001
        if input.ndim not in self._ranks:
            ranks = " or ".join(f"{r}D" for r in self._ranks)
            raise ValueError(f"{type(self).__name__}: expected {ranks} input, got shape {tuple(input.shape)} "
                             f"({input.ndim}D)")  # fmt: skip
        if self.affine or self.track_running_stats:  # (else, as PyTorch, any channel count works)
            self._check_features(input, 1)
        factor = 0.0 if self.momentum is None else self.momentum
        counts = self.training and self.track_running_stats  # this batch is counted in num_batches_tracked
        if counts and self.momentum is None:  # the cumulative average of all batches, this one included
            factor = 1.0 / (float(self.num_batches_tracked._data) + 1.0)
        use_batch_stats = self.training or self.running_mean is None
        tracked = not self.training or self.track_running_stats
        y = F.batch_norm(
            input,
            self.running_mean if tracked else None,
            self.running_var if tracked else None,
            self.weight,
            self.bias,
            use_batch_stats,
            factor,
            self.eps,
        )
        if counts:  # (counted once F.batch_norm has checked everything: an error changes nothing)
            self.num_batches_tracked._data[...] += 1
            self.num_batches_tracked._version += 1
        return y


class BatchNorm1d(_BatchNorm):
    """Batch norm of (N, C) or (N, C, L) input over N (and L) per channel C = ``num_features``.

    Args:
        num_features: C.
        eps: added to the variance.
        momentum: of the running statistics' update; None for the cumulative average.
        affine: learn ``weight`` and ``bias`` (``bias=False``: only ``weight``).
        track_running_stats: keep running statistics (and use them in eval mode).
    """

    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm of (N, C, H, W) input over N, H and W per channel (arguments as ``BatchNorm1d``)."""

    _ranks = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch norm of (N, C, D, H, W) input over N, D, H and W per channel."""

    _ranks = (5,)
