"""Copies and rearrangements: ``clone``, ``flip``, ``roll``, ``t``, ``narrow``, ``repeat``, ``unbind``, ``split``.

Only ``Clone``, ``Flip`` and ``Roll`` are ops of their own; the others are slices,
permutes and concatenations of existing ops, so their gradients (of every
order) come from those.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from .._args import _dim, _positive_int, _shape_arg
from ..autograd.batching import elementwise, shift
from ..autograd.dual import linear
from ..autograd.function import Op
from .shape import Index


class Clone(Op):
    """A copy of x (new memory);  dx = grad."""

    @staticmethod
    def forward(ctx, x):
        return x.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


class Flip(Op):
    """x reversed along ``dims``; the gradient is flipped back the same way."""

    @staticmethod
    def forward(ctx, x, dims=()):
        ctx.dims = dims
        return backend.flip(x, dims)  # a copy, as PyTorch (flip never returns a view)

    @staticmethod
    def backward(ctx, grad):
        return Flip.call(grad, dims=ctx.dims)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = shift("dims")


class Roll(Op):
    """x shifted cyclically by ``shifts`` along ``dims`` (all of x, flattened, when ``dims`` is None);
    the gradient is rolled back by ``-shifts``."""

    @staticmethod
    def forward(ctx, x, shifts=(), dims=None):
        ctx.shifts, ctx.dims = shifts, dims
        return np.roll(x, shifts, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        return Roll.call(grad, shifts=tuple(-s for s in ctx.shifts), dims=ctx.dims)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    @staticmethod
    def batch(b):
        shifts, dims = b.settings["shifts"], b.settings["dims"]
        if dims is None:  # (a roll of the flattened tensor: per example, over its own elements)
            x = b.values[0]
            return Roll.apply(x.reshape(b.size, -1), shifts=shifts, dims=(1,)).reshape(*x.shape)
        return b.run(b.values[0], shifts=shifts, dims=tuple(d % b.ndims[0] + 1 for d in dims))


def clone(input):  # noqa: A002
    """A differentiable copy: same values, new memory."""
    return Clone.apply(input)


def flip(input, dims):  # noqa: A002
    """Reverse the order of elements along each of ``dims`` (an int, list or tuple)."""
    dims = (dims,) if isinstance(dims, (int, np.integer)) else dims
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip: dims must be an int, list or tuple of ints, got {type(dims).__name__}")
    axes = tuple(_dim(d, input.ndim, "flip: dims") for d in dims)
    if len(set(axes)) != len(axes):
        raise ValueError(f"flip: dims contains a repeated dim: {tuple(dims)}")
    if input.ndim == 0:
        return Clone.apply(input)
    return Flip.apply(input, dims=axes)


def roll(input, shifts, dims=None):  # noqa: A002
    """Shift the elements along ``dims`` (an int or tuple), wrapping around, as ``torch.roll``:
    ``shifts`` is an int or a tuple of one int per dim; with ``dims=None`` the tensor is rolled
    as if flattened, and keeps its shape."""
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else shifts
    if not isinstance(shifts, (tuple, list)) or not all(isinstance(s, (int, np.integer)) for s in shifts):
        raise TypeError(f"roll: shifts must be an int or a tuple of ints, got {shifts!r}")
    shifts = tuple(int(s) for s in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise ValueError(f"roll: without dims, shifts must be a single int, got {shifts}")
        return Roll.apply(input, shifts=shifts, dims=None)
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(dims) != len(shifts):
        raise ValueError(f"roll: shifts and dims must have the same length, got shifts={shifts} and dims={dims}")
    axes = tuple(_dim(d, input.ndim, "roll: dims") for d in dims)
    return Roll.apply(input, shifts=shifts, dims=axes)


def t(input):  # noqa: A002
    """The transpose of a 2-D tensor; 0-D and 1-D tensors are returned as they are (as PyTorch)."""
    if input.ndim > 2:
        raise ValueError(f"t: expects a tensor with <= 2 dims, got {input.ndim} dims (shape {input.shape})")
    return input.transpose(0, 1) if input.ndim == 2 else input


def narrow(input, dim: int, start: int, length: int):  # noqa: A002
    """The slice ``start : start + length`` along ``dim`` (a view; ``start`` may be negative)."""
    if input.ndim == 0:
        raise ValueError("narrow: cannot be applied to a 0-dim tensor")
    d = _dim(dim, input.ndim)
    size = input.shape[d]
    for name, value in (("start", start), ("length", length)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError(f"narrow: {name} must be an int, got {type(value).__name__}")
    if not -size <= start <= size:
        raise ValueError(f"narrow: start out of range: expected a value in [{-size}, {size}], got {start}")
    start = start % size if start < 0 else start
    if length < 0 or start + length > size:
        raise ValueError(
            f"narrow: start ({start}) + length ({length}) exceeds dimension size ({size}), or length is negative"
        )
    return input[(slice(None),) * d + (slice(start, start + length),)]


def repeat(input, *sizes):  # noqa: A002
    """Tile the tensor ``sizes[i]`` times along dim i (``sizes`` may add leading dims), as PyTorch."""
    sizes = _shape_arg(sizes, "repeat")
    if len(sizes) < input.ndim:
        raise ValueError(
            f"repeat: the number of sizes ({len(sizes)}) can not be smaller than the tensor's dims ({input.ndim})"
        )
    if any(s < 0 for s in sizes):
        raise ValueError(f"repeat: sizes must be non-negative, got {sizes}")
    x = input.reshape((1,) * (len(sizes) - input.ndim) + input.shape)
    # Put a new dim before each dim, expand it to the repeat count, and merge the pairs.
    pairs = x.reshape(tuple(n for s in x.shape for n in (1, s)))
    expanded = pairs.expand(tuple(n for r, s in zip(sizes, x.shape) for n in (r, s)))
    return expanded.reshape(tuple(r * s for r, s in zip(sizes, x.shape)))


def unbind(input, dim: int = 0) -> tuple:  # noqa: A002
    """The slices along ``dim``, each without that dim."""
    d = _dim(dim, input.ndim)
    lead = (slice(None),) * d
    return tuple(Index.apply_each(input, [{"key": lead + (i,)} for i in range(input.shape[d])]))


def split(input, split_size_or_sections, dim: int = 0) -> tuple:  # noqa: A002
    """Pieces along ``dim``: of ``split_size_or_sections`` each (an int: the last may be smaller),
    or of the listed sizes (which must add up to the dim's size)."""
    d = _dim(dim, input.ndim)
    size = input.shape[d]
    lead = (slice(None),) * d
    if isinstance(split_size_or_sections, (list, tuple)):
        sections = list(split_size_or_sections)
        if any(not isinstance(s, (int, np.integer)) or s < 0 for s in sections) or sum(sections) != size:
            raise ValueError(
                f"split: split_size_or_sections must be non-negative ints summing to the size of dim {d} ({size}), "
                f"got {split_size_or_sections}"
            )
        bounds = np.cumsum([0] + sections).tolist()
        return tuple(Index.apply_each(input, [{"key": lead + (slice(a, b),)} for a, b in zip(bounds, bounds[1:])]))
    _positive_int(split_size_or_sections, "split: split_size")
    step = split_size_or_sections
    return tuple(Index.apply_each(input, [{"key": lead + (slice(i, i + step),)} for i in range(0, max(size, 1), step)]))
