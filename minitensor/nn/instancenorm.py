"""Instance norm layers: ``InstanceNorm1d``, ``InstanceNorm2d``, ``InstanceNorm3d``, as PyTorch's.

Each channel of each sample is normalised over its own spatial positions (style transfer,
small batches).  Defaults differ from batch norm's, as in PyTorch: no ``affine`` parameters and
no running statistics unless asked (``affine=True``, ``track_running_stats=True``); with running
statistics, eval mode normalises by them.  Unbatched input (C, L) / (C, H, W) works.

>>> norm = nn.InstanceNorm1d(3)
>>> y = norm(mt.randn(2, 3, 10) * 5 + 2)
>>> bool(abs(y.mean(-1)).amax() < 1e-5), list(norm.state_dict())
(True, [])
"""

from __future__ import annotations

import warnings

from ..tensor import Tensor
from . import functional as F
from .batchnorm import _NormBase


class _InstanceNorm(_NormBase):
    _spatial = 0  # the number of spatial dims

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002  (PyTorch's name)
        input = self._input(input)  # noqa: A001
        unbatched = self._spatial + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise ValueError(
                f"{type(self).__name__}: expected {unbatched}D (unbatched) or {unbatched + 1}D input, "
                f"got shape {tuple(input.shape)} ({input.ndim}D)"
            )
        dim = input.ndim - unbatched
        if input.shape[dim] != self.num_features:
            if self.affine:
                self._check_features(input, dim)
            warnings.warn(
                f"{type(self).__name__}: input's size at dim={dim} does not match num_features={self.num_features} "
                "(not used: affine=False)",
                stacklevel=2,
            )
        x = input.unsqueeze(0) if dim == 0 else input
        y = F.instance_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )
        return y.squeeze(0) if dim == 0 else y


class InstanceNorm1d(_InstanceNorm):
    """Instance norm of (N, C, L) or (C, L): each (sample, channel) over L.

    Args:
        num_features: C.
        eps: added to the variance.
        momentum: of the running statistics' update (with ``track_running_stats``).
        affine: learn per-channel ``weight`` and ``bias`` (default False).
        track_running_stats: keep running statistics and use them in eval mode (default False).
    """

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance norm of (N, C, H, W) or (C, H, W): each (sample, channel) over H and W."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance norm of (N, C, D, H, W) or (C, D, H, W)."""

    _spatial = 3
