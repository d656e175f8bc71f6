"""The vision ops of the random graphs (``random_graphs.py`` draws them among ``graph_ops.UNARY``'s):
max, average and adaptive pooling, the padding modes, interpolation, batch norm, group norm, local
response norm and pixel shuffle, each with a NumPy form written here independently of minitensor's kernels
(a reshape and ``max`` for pooling, ``np.pad`` for padding, ...).

They apply to the operands that suit them: 3-D values (N, C, L) for the 1-D forms and 3-D or 4-D
values ((C, H, W) unbatched or (N, C, H, W)) for the 2-D ones; max pooling only where each window's
largest value leads the next by ``MARGIN`` (a tie would make the gradient jump), batch norm only
where each channel's values are spread (its variance well above 0), group norm where each
sample's groups are.
"""

from __future__ import annotations

import numpy as np
from graph_ops import MARGIN, Op
from hypothesis import strategies as st

import minitensor.nn.functional as F


def _windows2(a: np.ndarray) -> np.ndarray:
    """The 2x2 windows (stride 2) of the last two dims: (..., H // 2, W // 2, 4)."""
    h, w = a.shape[-2] // 2 * 2, a.shape[-1] // 2 * 2
    b = a[..., :h, :w].reshape(a.shape[:-2] + (h // 2, 2, w // 2, 2))
    return np.moveaxis(b, -3, -2).reshape(a.shape[:-2] + (h // 2, w // 2, 4))


def _clear_max(windows: np.ndarray) -> bool:
    ordered = np.sort(windows, axis=-1)
    return windows.size > 0 and bool(np.min(ordered[..., -1] - ordered[..., -2]) > MARGIN)


def _max_pool2d_ok(a) -> bool:
    return a.ndim in (3, 4) and min(a.shape[-2:]) >= 2 and _clear_max(_windows2(a))


def _pairs(a: np.ndarray) -> np.ndarray:
    """The windows of 2 (stride 2) of the last dim: (..., L // 2, 2)."""
    return a[..., : a.shape[-1] // 2 * 2].reshape(a.shape[:-1] + (-1, 2))


def _max_pool1d_ok(a) -> bool:
    return a.ndim == 3 and a.shape[-1] >= 2 and _clear_max(_pairs(a))


def _avg_pool2d(a):
    return (a[..., :-1, :-1] + a[..., 1:, :-1] + a[..., :-1, 1:] + a[..., 1:, 1:]) / 4


_NUMPY_PAD = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad_ok(a) -> bool:
    return a.ndim in (2, 3) and a.shape[-1] >= 2


def _np_pad(a, mode, amounts):
    return np.pad(a, [(0, 0)] * (a.ndim - 1) + [amounts], mode=_NUMPY_PAD[mode])


def _pad_params(draw, a) -> dict:
    mode = draw(st.sampled_from(list(_NUMPY_PAD)))
    largest = a.shape[-1] - 1 if mode == "reflect" else a.shape[-1]
    return {"mode": mode, "amounts": (draw(st.integers(0, largest)), draw(st.integers(0, largest)))}


def _linear_along(a: np.ndarray, axis: int, out: int) -> np.ndarray:
    """Linear interpolation with aligned corners along ``axis`` to ``out`` positions."""
    n = a.shape[axis]
    source = np.arange(out) * ((n - 1) / (out - 1)) if out > 1 else np.zeros(1)
    low = np.minimum(np.floor(source).astype(int), n - 1)
    high = np.minimum(low + 1, n - 1)
    t = (source - low).reshape((-1,) + (1,) * (a.ndim - 1 - axis % a.ndim))
    return np.take(a, low, axis=axis) * (1 - t) + np.take(a, high, axis=axis) * t


def _bilinear(a, size):
    return _linear_along(_linear_along(a, -2, size[0]), -1, size[1])


def _bilinear_params(draw, a) -> dict:
    return {"size": (draw(st.integers(1, 4)), draw(st.integers(1, 4)))}


def _spread(a: np.ndarray) -> bool:
    if a.ndim < 2 or a.size < 2 * a.shape[1]:  # (at least 2 values per channel)
        return False
    return bool(np.min(np.var(a, axis=(0,) + tuple(range(2, a.ndim)))) > 1e-2)


def _batch_norm(a):
    axes = (0,) + tuple(range(2, a.ndim))
    centred = a - a.mean(axis=axes, keepdims=True)
    return centred / np.sqrt((centred * centred).mean(axis=axes, keepdims=True) + 1e-5)


def _group_spread(a: np.ndarray) -> bool:
    """An (N, C, *) value whose samples' halves of the channels (group_norm's two groups) are spread."""
    if a.ndim < 3 or a.shape[1] % 2 or a.size == 0:
        return False
    return bool(np.min(np.var(a.reshape(a.shape[0], 2, -1), axis=-1)) > 1e-2)


def _group_norm(a):
    rows = a.reshape(a.shape[0], 2, -1)
    centred = rows - rows.mean(axis=-1, keepdims=True)
    return (centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + 1e-5)).reshape(a.shape)


def _local_response_norm(a, size=2, alpha=0.5, beta=0.75, k=1.0):
    squares = np.pad(a * a, [(0, 0), (size // 2, (size - 1) // 2)] + [(0, 0)] * (a.ndim - 2))
    window = sum(squares[:, i : i + a.shape[1]] for i in range(size)) / size
    return a / (k + alpha * window) ** beta


def _pixel_shuffle(a):
    n, c, h, w = a.shape
    return a.reshape(n, c // 4, 2, 2, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // 4, 2 * h, 2 * w)


VISION = [
    Op("pad", 1, lambda a, mode, amounts: F.pad(a, amounts, mode=mode), _np_pad,
       lambda a, mode, amounts: f"F.pad({a}, {amounts}, mode={mode!r})", ok=_pad_ok, params=_pad_params),
    Op("max_pool2d", 1, lambda a: F.max_pool2d(a, 2), lambda a: _windows2(a).max(-1),
       lambda a: f"F.max_pool2d({a}, 2)", ok=_max_pool2d_ok),
    Op("max_pool1d", 1, lambda a: F.max_pool1d(a, 2), lambda a: _pairs(a).max(-1),
       lambda a: f"F.max_pool1d({a}, 2)", ok=_max_pool1d_ok),
    Op("avg_pool2d", 1, lambda a: F.avg_pool2d(a, 2, stride=1), _avg_pool2d,
       lambda a: f"F.avg_pool2d({a}, 2, stride=1)", ok=lambda a: a.ndim in (3, 4) and min(a.shape[-2:]) >= 2),
    Op("adaptive_avg_pool1d", 1, lambda a: F.adaptive_avg_pool1d(a, 1), lambda a: a.mean(-1, keepdims=True),
       lambda a: f"F.adaptive_avg_pool1d({a}, 1)", ok=lambda a: a.ndim in (2, 3)),
    Op("interpolate_nearest", 1, lambda a: F.interpolate(a, scale_factor=2), lambda a: np.repeat(a, 2, axis=-1),
       lambda a: f"F.interpolate({a}, scale_factor=2)", ok=lambda a: a.ndim == 3),
    Op("interpolate_bilinear", 1, lambda a, size: F.interpolate(a, size=size, mode="bilinear", align_corners=True),
       _bilinear, lambda a, size: f"F.interpolate({a}, size={size}, mode='bilinear', align_corners=True)",
       ok=lambda a: a.ndim == 4, params=_bilinear_params),
    Op("batch_norm", 1, lambda a: F.batch_norm(a, None, None, training=True), _batch_norm,
       lambda a: f"F.batch_norm({a}, None, None, training=True)", ok=_spread),
    Op("group_norm", 1, lambda a: F.group_norm(a, 2), _group_norm, lambda a: f"F.group_norm({a}, 2)",
       ok=_group_spread),
    Op("local_response_norm", 1, lambda a: F.local_response_norm(a, 2, alpha=0.5), _local_response_norm,
       lambda a: f"F.local_response_norm({a}, 2, alpha=0.5)", ok=lambda a: a.ndim >= 3),
    Op("pixel_shuffle", 1, lambda a: F.pixel_shuffle(a, 2), _pixel_shuffle, lambda a: f"F.pixel_shuffle({a}, 2)",
       ok=lambda a: a.ndim == 4 and a.shape[1] % 4 == 0),
]  # fmt: skip
