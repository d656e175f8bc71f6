"""``pad``: grow (or, with negative amounts, crop) the last dims of a tensor.

``pad`` lists (before, after) amounts from the last dim backwards, as
PyTorch: ``(1, 2)`` pads the last dim by 1 before and 2 after, ``(1, 2, 0, 3)``
also the dim before it.

- ``'constant'`` is the op ``ConstantPad``: the input copied into a tensor
  filled with ``value``; its gradient is the same op with the amounts negated
  (cropping the gradient back), so every order of derivative is exact.
- ``'reflect'``, ``'replicate'`` and ``'circular'`` read the input at computed
  positions (``ops/resample.py``'s ``Resample``: a gather kernel), whose gradient adds each
  padded cell's gradient back to the cell it copies (its transpose, a scatter-add).
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.function import Op
from .resample import pad_taps, resample


class ConstantPad(Op):
    """``value`` around x: ``pads[d] = (before, after)`` for each dim (negative crops).

    The gradient is the incoming gradient cropped back (the same op with the amounts negated; on
    arrays a copy of the crop).  Padding (or cropping) only the last two dims, the images' case,
    is one kernel pass (``backend.pad_planes`` / ``crop_planes``).
    """

    @staticmethod
    def forward(ctx, x, pads=(), value=0.0):
        ctx.pads = pads
        planes = _planes(x.ndim, pads)
        if planes is not None:
            return backend.pad_planes(x, *planes, value)
        shape = tuple(n + b + a for n, (b, a) in zip(x.shape, pads))
        out = np.empty(shape, dtype=x.dtype)
        out[_inner(shape, pads)] = x[_inner(x.shape, [(-b, -a) for b, a in pads])]
        for d, (b, a) in enumerate(pads):  # fill the margins, one slab per side (corners twice)
            lead = (slice(None),) * d
            if b > 0:
                out[lead + (slice(0, b),)] = value
            if a > 0:
                out[lead + (slice(shape[d] - a, None),)] = value
        return out

    @staticmethod
    def backward(ctx, grad):
        crop = tuple((-b, -a) for b, a in ctx.pads)
        if isinstance(grad, np.ndarray) and all(b <= 0 and a <= 0 for b, a in crop):
            planes = _planes(grad.ndim, ctx.pads)
            return backend.crop_planes(grad, *planes) if planes is not None else grad[_inner(grad.shape, ctx.pads)]
        return ConstantPad.call(grad, pads=crop, value=0.0)

    @staticmethod
    def jvp(ctx, dx):
        return ConstantPad.call(dx, pads=ctx.pads, value=0.0)  # (the margins are constants)

    @staticmethod
    def batch(b):
        return b.run(b.values[0], pads=((0, 0), *b.settings["pads"]), value=b.settings["value"])


def _planes(ndim: int, pads):
    """(top, bottom, left, right) when ``pads`` adds (>= 0) only to the last two of ``ndim`` dims (at
    least 2), else None."""
    if ndim < 2 or len(pads) != ndim or any(b or a for b, a in pads[:-2]):
        return None
    (top, bottom), (left, right) = pads[-2:]
    return (top, bottom, left, right) if min(top, bottom, left, right) >= 0 else None


def _inner(shape: tuple, pads) -> tuple:
    """The key of ``shape`` without the margins that positive amounts in ``pads`` add."""
    return tuple(slice(max(b, 0), n - max(a, 0)) for n, (b, a) in zip(shape, pads))


_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode: str = "constant", value=None):  # noqa: A002
    """Pad the last ``len(pad) // 2`` dims of ``input`` by ``pad`` = (last_before, last_after, ...).

    ``'constant'`` pads any dims of any input with ``value`` (default 0).  The other modes pad,
    as PyTorch's, the last 1, 2 or 3 dims of an input with one or two more dims (e.g. 2 or 3 dims
    for ``pad`` of length 2); negative amounts crop.  ``'reflect'`` needs each amount smaller
    than its dim, ``'circular'`` at most its (cropped) dim.
    """
    if not isinstance(pad, (tuple, list)) or any(not isinstance(p, (int, np.integer)) for p in pad):
        raise TypeError(f"pad: pad must be a tuple of ints, got {pad!r}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(
            f"pad: pad must have an even length of at most 2 * input dims ({2 * input.ndim}), got length {len(pad)}"
        )
    if mode not in _MODES:
        raise ValueError(f"pad: mode must be one of {_MODES}, got {mode!r}")
    k = len(pad) // 2
    amounts = [(0, 0)] * (input.ndim - k) + [(int(pad[2 * j]), int(pad[2 * j + 1])) for j in reversed(range(k))]
    for n, (b, a) in zip(input.shape, amounts):
        if n + b + a < 0:
            raise ValueError(f"pad: padding {pad} makes a dim of size {n} negative")
    if mode == "constant":
        return ConstantPad.apply(input, pads=tuple(amounts), value=0.0 if value is None else value)
    if value not in (None, 0, 0.0):
        raise ValueError(f"pad: value is only used in 'constant' mode, got value={value} with mode {mode!r}")
    return resample(input, [pad_taps(n, b, a, mode) for n, (b, a) in _checked_pads(input, amounts, pad, mode, k)])


def _checked_pads(input, amounts: list, pad, mode: str, k: int) -> list:  # noqa: A002
    """[(size, (before, after))] of the ``k`` padded dims, checked as PyTorch checks them."""
    if not 1 <= k <= 3 or input.ndim not in (k + 1, k + 2):
        raise ValueError(
            f"pad: mode {mode!r} pads the last 1, 2 or 3 dims of an input with one or two more dims "
            f"(pad of length {2 * k} needs a {k + 1}-D or {k + 2}-D input), got input of shape {tuple(input.shape)}"
        )
    first = input.ndim - k
    if any(n == 0 for n in input.shape[1 if input.ndim == k + 2 else 0 :]):
        raise ValueError(f"pad: mode {mode!r} needs non-empty dims (but the batch), got shape {tuple(input.shape)}")
    padded = list(zip(input.shape[first:], amounts[first:]))
    for d, (n, (b, a)) in enumerate(padded, start=first):
        if mode == "reflect" and max(b, a) >= n:
            raise ValueError(
                f"pad: reflect padding {(b, a)} at dim {d} must be smaller than the padded dim's size {n} "
                f"(input of shape {tuple(input.shape)})"
            )
        kept = n - max(-b, 0) - max(-a, 0)
        if n + b + a == 0 or kept <= 0:
            raise ValueError(f"pad: padding {(b, a)} at dim {d} leaves nothing of its size {n}")
        if mode == "circular" and max(b, a) > kept:
            raise ValueError(
                f"pad: circular padding {(b, a)} at dim {d} wraps around more than once: at most the dim's size "
                f"{kept} (after cropping), input {tuple(input.shape)}"
            )
    return padded
