"""Changing the spatial size: ``interpolate`` (and its old names ``upsample``, ``upsample_nearest``,
``upsample_bilinear``), ``pixel_shuffle`` and ``pixel_unshuffle``, as PyTorch's.

``interpolate`` resamples the dims after (N, C): one for (N, C, L) input, two for (N, C, H, W),
three for (N, C, D, H, W), by the op ``ops/resample.py`` (whose taps follow PyTorch's source
positions exactly, so nearest picks the same pixels).  Modes: ``'nearest'``, ``'nearest-exact'``,
``'linear'`` (3-D input), ``'bilinear'`` and ``'bicubic'`` (4-D), ``'trilinear'`` (5-D), ``'area'``
(adaptive average pooling; 3-D and 4-D).  ``antialias=True`` is not supported.

>>> x = mt.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
>>> F.interpolate(x, scale_factor=2, mode="nearest")[0, 0].tolist()[0]
[1.0, 1.0, 2.0, 2.0]
>>> F.interpolate(x, size=(3, 3), mode="bilinear", align_corners=True)[0, 0].tolist()[1]
[2.0, 2.5, 3.0]
>>> F.pixel_shuffle(mt.arange(8.0).reshape(1, 8, 1, 1), 2).shape
(1, 2, 2, 2)
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ...ops import resample as rs
from ...tensor import Tensor
from ._checks import as_input
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

_MODES = {"nearest": None, "nearest-exact": None, "area": None, "linear": 3, "bilinear": 4, "bicubic": 4,
          "trilinear": 5}  # fmt: skip
_DIM_NAMES = ("D", "H", "W")


def _per_dim(value, dims: int, name: str, kind) -> tuple:
    """An int/float or a sequence of ``dims`` of them as a tuple."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims
    if len(values) != dims:
        raise ValueError(
            f"interpolate: {name} must be one number or {dims} (one per spatial dim of the input), got {value!r}"
        )
    for v in values:
        if isinstance(v, bool) or not isinstance(v, kind):
            raise TypeError(f"interpolate: {name} must hold {'ints' if kind is numbers.Integral else 'numbers'}, "
                            f"got {value!r}")  # fmt: skip
    return values


def interpolate(
    input: Tensor,  # noqa: A002  (PyTorch's name)
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of ``input`` to ``size``, or by ``scale_factor`` (exactly one of them).

    Args:
        input: (N, C, L), (N, C, H, W) or (N, C, D, H, W).
        size: the output's spatial size: an int (every dim) or one int per spatial dim.
        scale_factor: a number or one per spatial dim; the output size is ``floor(n * scale)``,
            and the source positions use ``1 / scale`` (unless ``recompute_scale_factor``, which
            uses ``n / out`` as with ``size``).
        mode: see the module docstring.
        align_corners: for the linear and cubic modes: True maps the corner pixels' centres onto
            each other (``i * (n - 1) / (out - 1)``); False (default) their outer edges.
    """
    input = as_input(input, "input", "interpolate")  # noqa: A001
    if mode not in _MODES:
        raise ValueError(f"interpolate: mode must be one of {tuple(_MODES)}, got {mode!r}")
    if input.ndim not in (3, 4, 5) or (mode == "area" and input.ndim == 5):
        raise ValueError(
            f"interpolate: input must be 3-D (N, C, L), 4-D (N, C, H, W) or 5-D (N, C, D, H, W)"
            f"{' (3-D or 4-D for area)' if mode == 'area' else ''}, got shape {tuple(input.shape)}"
        )
    if _MODES[mode] is not None and input.ndim != _MODES[mode]:
        raise ValueError(f"interpolate: mode {mode!r} needs {_MODES[mode]}-D input, got shape {tuple(input.shape)}")
    if align_corners is not None and _MODES[mode] is None:
        raise ValueError(
            "interpolate: align_corners can only be set with the interpolating modes linear, bilinear, bicubic "
            f"and trilinear, got align_corners={align_corners} with mode {mode!r}"
        )
    if antialias:
        raise ValueError("interpolate: antialias=True is not supported by minitensor")
    if input.dtype.kind != "f":
        raise TypeError(f"interpolate: input must be a float tensor, got dtype {input.dtype}")
    dims = input.ndim - 2
    if (size is None) == (scale_factor is None):
        raise ValueError(
            "interpolate: only one of size or scale_factor should be defined"
            if size is not None
            else "interpolate: either size or scale_factor should be defined"
        )
    sizes = tuple(input.shape[2:])
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("interpolate: recompute_scale_factor is not meaningful with an explicit size")
        out = _per_dim(size, dims, "size", numbers.Integral)
        scales = (None,) * dims
    else:
        scales = tuple(float(s) for s in _per_dim(scale_factor, dims, "scale_factor", numbers.Real))
        out = rs.output_sizes(sizes, None, scales)
        if recompute_scale_factor:
            scales = (None,) * dims
    if min(sizes) < 1 or min(out) < 1:
        names = _DIM_NAMES[3 - dims :]
        raise ValueError(
            "interpolate: input and output sizes must be positive, got input ("
            + ", ".join(f"{k}: {v}" for k, v in zip(names, sizes))
            + ") and output ("
            + ", ".join(f"{k}: {v}" for k, v in zip(names, out))
            + ")"
        )
    if mode == "area":
        return (adaptive_avg_pool1d if dims == 1 else adaptive_avg_pool2d)(input, out)
    kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    corners = bool(align_corners)
    taps = [rs.interpolation_taps(n, o, kind, corners, s, input.dtype, shortcuts=dims == 2)
            for n, o, s in zip(sizes, out, scales)]  # fmt: skip
    return rs.resample(input, taps)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):  # noqa: A002
    """Deprecated name of ``interpolate`` (warns, as PyTorch)."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):  # noqa: A002
    """Deprecated: ``interpolate(input, size, scale_factor, mode='nearest')`` (warns)."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):  # noqa: A002
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)`` (warns)."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)  # fmt: skip
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ------------------------------------------------------------------ pixel shuffle
def _factor(value, name: str, fn: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}: {name} must be an int, got {value!r}")
    if value <= 0:
        raise ValueError(f"{fn}: {name} must be positive, got {value}")
    return int(value)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r), r = ``upscale_factor``: each group of r^2
    channels becomes an r x r block of pixels (a reshape and a permute: its gradient is the inverse)."""
    input = as_input(input, "input", "pixel_shuffle")  # noqa: A001
    r = _factor(upscale_factor, "upscale_factor", "pixel_shuffle")
    if input.ndim < 3:
        raise ValueError(f"pixel_shuffle: input must have at least 3 dims (*, C, H, W), got shape {tuple(input.shape)}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise ValueError(
            f"pixel_shuffle: the channel dim (dim -3) of input must be divisible by upscale_factor^2 = {r * r}, "
            f"got input of shape {tuple(input.shape)}"
        )
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """The inverse of ``pixel_shuffle``: (*, C, H * r, W * r) -> (*, C * r^2, H, W)."""
    input = as_input(input, "input", "pixel_unshuffle")  # noqa: A001
    r = _factor(downscale_factor, "downscale_factor", "pixel_unshuffle")
    if input.ndim < 3:
        raise ValueError(
            f"pixel_unshuffle: input must have at least 3 dims (*, C, H, W), got shape {tuple(input.shape)}"
        )
    *lead, c, h, w = input.shape
    for name, size in (("height (dim -2)", h), ("width (dim -1)", w)):
        if size % r:
            raise ValueError(
                f"pixel_unshuffle: the {name} of input must be divisible by downscale_factor={r}, "
                f"got input of shape {tuple(input.shape)}"
            )
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)
