"""Dropout of whole channels (``dropout1d``, ``dropout2d``, ``dropout3d``) and the dropout of
self-normalising networks (``alpha_dropout``, ``feature_alpha_dropout``), as PyTorch's.

Each draws a mask from minitensor's generator (``mt.manual_seed``) and returns
``input * m`` (``+ b`` for the alpha forms) with the mask as a constant, so the gradient is
``dy * m`` and every higher derivative follows.

- Channel dropout zeroes each channel of each sample (``input[n, c]``, all its positions) with
  probability ``p`` and scales the kept ones by ``1 / (1 - p)``: the mask is (N, C, 1, ...).
- Alpha dropout (for SELU networks) sets dropped values to SELU's negative saturation
  ``-alpha'`` (alpha' = 1.7580993408473766) and then applies the affine map ``a * x + b`` that
  keeps the mean 0 and the variance 1: ``a = ((1 - p) * (1 + p * alpha'^2))^(-1/2)``,
  ``b = -a * alpha' * p`` (PyTorch's constants).  ``feature_alpha_dropout`` drops channels.

>>> _ = mt.manual_seed(0)
>>> y = F.dropout2d(mt.ones(2, 3, 4, 4), p=0.5)       # each (n, c) plane all 0 or all 2
>>> sorted(set(y.reshape(6, 16).amax(-1).tolist()) | set(y.reshape(6, 16).amin(-1).tolist()))
[0.0, 2.0]
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import random
from ...tensor import Tensor
from ._checks import as_input, check_float

ALPHA = 1.7580993408473766  # -SELU's negative saturation: scale * alpha of SELU


def _probability(p, fn: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}: dropout probability p has to be between 0 and 1, but got {p!r}")
    return float(p)


def _keep(shape: tuple, p: float, dtype) -> np.ndarray:
    """1.0 with probability 1 - p, else 0.0 (minitensor's generator), in ``dtype``."""
    return (random.generator().random(shape) >= p).astype(dtype)


def _apply(input: Tensor, multiplier: np.ndarray, shift, inplace: bool) -> Tensor:  # noqa: A002
    """input * multiplier (+ shift), the arrays constants; in place when asked."""
    m = Tensor._make(multiplier, False, None)
    b = None if shift is None else Tensor._make(shift, False, None)
    if inplace:
        return input.mul_(m) if b is None else input.mul_(m).add_(b)
    return input * m if b is None else input * m + b


def _dropout(fn: str, input, p, training: bool, inplace: bool, alpha: bool, lead: int | None = None) -> Tensor:  # noqa: A002
    """Dropout, plain or ``alpha``, of each element, or (``lead``) of each slice of the ``lead``
    leading dims (the channels of each sample: 2; of an unbatched input: 1)."""
    if not training or p == 0 or input.numel() == 0:
        return input
    check_float(input, fn)
    shape = input.shape if lead is None else input.shape[:lead] + (1,) * (input.ndim - lead)
    dtype = input.dtype
    if p == 1:
        return _apply(input, np.zeros(shape, dtype), None, inplace)
    keep = _keep(shape, p, dtype)
    if not alpha:
        return _apply(input, keep * dtype.type(1.0 / (1.0 - p)), None, inplace)
    a = 1.0 / np.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    shift = ((keep - 1) * (ALPHA * a) + ALPHA * a * p).astype(dtype)
    return _apply(input, (keep * a).astype(dtype), shift, inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of (N, C, L) or unbatched (C, L) input with probability ``p`` (scaling the
    kept ones by 1 / (1 - p)); identity when not ``training``."""
    input = as_input(input, "input", "dropout1d")  # noqa: A001
    p = _probability(p, "dropout1d")
    if input.ndim not in (2, 3):
        raise ValueError(f"dropout1d: input must be 2-D (C, L) or 3-D (N, C, L), got shape {tuple(input.shape)}")
    return _dropout("dropout1d", input, p, training, inplace, False, lead=input.ndim - 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of (N, C, H, W) input with probability ``p``.  As PyTorch: a 3-D input is
    read as (N, C, L) (with a warning), not as an unbatched (C, H, W)."""
    input = as_input(input, "input", "dropout2d")  # noqa: A001
    p = _probability(p, "dropout2d")
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated (PyTorch); "
            "dropout2d is for (N, C, H, W) or (C, H, W) inputs; use dropout instead",
            stacklevel=2,
        )
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
            "is desired - input is interpreted as shape (N, C, L) (as PyTorch); use dropout1d to say so",
            stacklevel=2,
        )
    return _dropout("dropout2d", input, p, training, inplace, False, lead=min(input.ndim, 2))


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of (N, C, D, H, W) or unbatched (C, D, H, W) input with probability ``p``."""
    input = as_input(input, "input", "dropout3d")  # noqa: A001
    p = _probability(p, "dropout3d")
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated (PyTorch); "
                      "dropout3d is for 4-D or 5-D inputs", stacklevel=2)  # fmt: skip
    return _dropout("dropout3d", input, p, training, inplace, False, lead=1 if input.ndim == 4 else min(input.ndim, 2))


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:  # noqa: A002
    """Alpha dropout of each element (see the module docstring).  Note ``training`` defaults to
    False, as in PyTorch: the module ``nn.AlphaDropout`` passes its training flag."""
    input = as_input(input, "input", "alpha_dropout")  # noqa: A001
    return _dropout("alpha_dropout", input, _probability(p, "alpha_dropout"), training, inplace, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:  # noqa: A002
    """Alpha dropout of whole channels (the mask (N, C, 1, ...))."""
    input = as_input(input, "input", "feature_alpha_dropout")  # noqa: A001
    p = _probability(p, "feature_alpha_dropout")
    return _dropout("feature_alpha_dropout", input, p, training, inplace, True, lead=min(input.ndim, 2))
