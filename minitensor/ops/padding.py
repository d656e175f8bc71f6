"""``pad``: grow (or, with negative amounts, crop) the last dims of a tensor.

``pad`` lists (before, after) amounts from the last dim backwards, as
PyTorch: ``(1, 2)`` pads the last dim by 1 before and 2 after, ``(1, 2, 0, 3)``
also the dim before it.

- ``'constant'`` is the op ``ConstantPad``: the input copied into a tensor
  filled with ``value``; its gradient is the same op with the amounts negated
  (cropping the gradient back), so every order of derivative is exact.
- ``'reflect'``, ``'replicate'`` and ``'circular'`` read the input at computed
  indices (``x[ix_(rows, cols)]``, the indexing op), whose gradient adds each
  padded cell's gradient back to the cell it copies.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Op


class ConstantPad(Op):
    """``value`` around x: ``pads[d] = (before, after)`` for each dim (negative crops).

    The gradient is the incoming gradient cropped back (the same op with the amounts negated; on
    arrays simply a view of the crop, which the engine copies or sums as it needs).
    """

    @staticmethod
    def forward(ctx, x, pads=(), value=0.0):
        ctx.pads = pads
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
            return grad[_inner(grad.shape, ctx.pads)]
        return ConstantPad.call(grad, pads=crop, value=0.0)

    @staticmethod
    def jvp(ctx, dx):
        return ConstantPad.call(dx, pads=ctx.pads, value=0.0)  # (the margins are constants)

    @staticmethod
    def batch(b):
        return b.run(b.values[0], pads=((0, 0), *b.settings["pads"]), value=b.settings["value"])


def _inner(shape: tuple, pads) -> tuple:
    """The key of ``shape`` without the margins that positive amounts in ``pads`` add."""
    return tuple(slice(max(b, 0), n - max(a, 0)) for n, (b, a) in zip(shape, pads))


def _source_index(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """For each position of the padded dim, the input position it copies."""
    i = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    if mode == "circular":
        return i % n
    period = 2 * (n - 1)  # reflect: ... 2 1 [0 1 2 ... n-1] n-2 ...
    i = np.abs(i) % period if period else np.zeros_like(i)
    return np.where(i >= n, period - i, i)


_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode: str = "constant", value=None):  # noqa: A002
    """Pad the last ``len(pad) // 2`` dims of ``input`` by ``pad`` = (last_before, last_after, ...)."""
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
    dims = input.ndim - k
    for n, (b, a) in zip(input.shape[dims:], amounts[dims:]):
        if min(b, a) < 0:
            raise ValueError(f"pad: negative padding {pad} is only supported in 'constant' mode")
        if mode == "reflect" and max(b, a) >= n:
            raise ValueError(f"pad: reflect padding {pad} must be smaller than the padded dim's size {n}")
        if mode == "circular" and max(b, a) > n:
            raise ValueError(f"pad: circular padding {pad} must be at most the padded dim's size {n}")
    index = [_source_index(n, b, a, mode) for n, (b, a) in zip(input.shape[dims:], amounts[dims:])]
    return input[(slice(None),) * dims + np.ix_(*index)]
