"""``layer_norm``: normalise over the trailing dims, one fused op (``ops.nn_ops.LayerNorm``); ``rms_norm``:
scale by the root mean square over the trailing dims, one fused op (``ops.rms_norm.RmsNorm``)."""

from __future__ import annotations

import numpy as np

from ...ops import nn_ops
from ...ops.rms_norm import RmsNorm
from ...tensor import Tensor
from ._checks import as_input, check_float, check_same_dtype, check_tensor, float_like


def _as_shape(normalized_shape, fn: str = "layer_norm") -> tuple:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or any(not isinstance(s, int) or s <= 0 for s in shape):
        raise ValueError(f"{fn}: normalized_shape must be positive ints, got {normalized_shape!r}")
    return shape


def layer_norm(
    input: Tensor,  # noqa: A002
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each slice over the trailing ``normalized_shape`` dims to mean 0 and variance 1.

    y = (x - mean) / sqrt(var + eps) * weight + bias, with the biased variance.

    Args:
        input: (..., *normalized_shape); a NumPy array is converted (a float one to weight's dtype).
        normalized_shape: an int or a tuple: the trailing dims to normalise over.
        weight, bias: (*normalized_shape) or None.
        eps: added to the variance.

    >>> y = F.layer_norm(mt.randn(2, 5), (5,))
    >>> bool(abs(y.mean(-1)).amax() < 1e-5)
    True
    """
    if not isinstance(input, Tensor):
        input = as_input(input, "input", "layer_norm", like=float_like(weight, bias))  # noqa: A001
    check_float(input, "layer_norm")
    shape = _as_shape(normalized_shape)
    if not eps > 0:
        raise ValueError(f"layer_norm: eps must be positive (a constant row would give NaN), got {eps}")
    if input.ndim < len(shape) or input.shape[input.ndim - len(shape) :] != shape:
        raise ValueError(
            f"layer_norm: input's trailing dims must equal normalized_shape={shape}, got input of shape {input.shape}"
        )
    for name, param in (("weight", weight), ("bias", bias)):
        if param is None:
            continue
        check_tensor(param, name, "layer_norm")
        if param.shape != shape:
            raise ValueError(f"layer_norm: {name} must have shape normalized_shape={shape}, got {param.shape}")
        check_same_dtype(input, param, name, "layer_norm")
    return nn_ops.LayerNorm.apply(input, weight, bias, n_dims=len(shape), eps=float(eps))


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:  # noqa: A002
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims (no centring):

        y = x / sqrt(mean(x^2) + eps) * weight

    ``eps=None`` is the input dtype's machine epsilon (``mt.finfo(dtype).eps``), as PyTorch.  One fused
    op (``ops.rms_norm.RmsNorm``; differentiable to any order through its definition).

    >>> F.rms_norm(mt.tensor([[3.0, -3.0], [1.0, 7.0]]), (2,), eps=0.0).tolist()  # the RMS: 3, then 5
    [[1.0, -1.0], [0.2..., 1.3999...]]
    """
    input = as_input(input, "input", "rms_norm", like=float_like(weight))  # noqa: A001
    check_float(input, "rms_norm")
    shape = _as_shape(normalized_shape, "rms_norm")
    if input.ndim < len(shape) or input.shape[input.ndim - len(shape) :] != shape:
        raise ValueError(
            f"rms_norm: input's trailing dims must equal normalized_shape={shape}, got input of shape {input.shape}"
        )
    if eps is None:
        eps = float(np.finfo(input.dtype).eps)
    elif isinstance(eps, bool) or not isinstance(eps, (int, float)) or eps < 0:
        raise ValueError(f"rms_norm: eps must be a non-negative number or None, got {eps!r}")
    if weight is not None:
        check_tensor(weight, "weight", "rms_norm")
        if weight.shape != shape:
            raise ValueError(f"rms_norm: weight must have shape normalized_shape={shape}, got {weight.shape}")
        check_same_dtype(input, weight, "weight", "rms_norm")
    return RmsNorm.apply(input, weight, n_dims=len(shape), eps=float(eps))
