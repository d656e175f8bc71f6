"""Copies and rearrangements: ``clone``, ``flip``, ``roll``, ``t``, ``narrow``, ``repeat``, ``unbind``, ``split``,
``movedim``/``moveaxis``, ``swapaxes``/``swapdims``, ``tensor_split``, ``hsplit``/``vsplit``/``dsplit``,
``unflatten``, ``rot90``.

Only ``Clone``, ``Flip`` and ``Roll`` are ops of their own; the others are slices,
permutes and concatenations of existing ops, so their gradients (of every
order) come from those.

>>> [p.tolist() for p in mt.tensor_split(mt.arange(7), 3)]
[[0, 1, 2], [3, 4], [5, 6]]
>>> mt.rot90(mt.tensor([[1, 2], [3, 4]]))
tensor([[2, 4],
        [1, 3]])
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from .._args import _dim, _positive_int, _shape_arg
from ..autograd.batching import elementwise, shift
from ..autograd.dual import linear
from ..autograd.function import Op
from ..tensor import Tensor
from .arguments import int_arg, tensor_input
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


def movedim(input, source, destination):  # noqa: A002
    """The dims ``source`` (an int or a sequence) moved to the positions ``destination``; the others keep
    their order."""
    tensor_input(input, "movedim")
    sources = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    targets = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(sources) != len(targets):
        raise ValueError(f"movedim: source and destination must have the same number of dims, got {sources} and "
                         f"{targets}")  # fmt: skip
    src = [_dim(d, input.ndim, "movedim: source") for d in sources]
    dst = [_dim(d, input.ndim, "movedim: destination") for d in targets]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise ValueError(f"movedim: {name} contains a repeated dim: {dims}")
    order = [None] * input.ndim
    for s_, d_ in zip(src, dst):
        order[d_] = s_
    rest = iter(d for d in range(input.ndim) if d not in src)
    return input.permute(*[o if o is not None else next(rest) for o in order]) if input.ndim else input


moveaxis = movedim


def swapaxes(input, axis0: int, axis1: int):  # noqa: A002
    """``transpose`` under NumPy's name."""
    return tensor_input(input, "swapaxes").transpose(axis0, axis1)


def swapdims(input, dim0: int, dim1: int):  # noqa: A002
    """``transpose`` (PyTorch's alias)."""
    return tensor_input(input, "swapdims").transpose(dim0, dim1)


def tensor_split(input, indices_or_sections, dim: int = 0) -> tuple:  # noqa: A002
    """Pieces along ``dim``: ``sections`` nearly equal ones (an int: the first ``size % sections`` one
    longer), or cut before each of the ``indices`` (a list, or a 1-D int tensor; a 0-d one is a count)."""
    tensor_input(input, "tensor_split")
    if input.ndim == 0:
        raise ValueError("tensor_split: input must have at least one dimension, got a 0-d tensor")
    d = _dim(dim, input.ndim)
    size = input.shape[d]
    cuts = indices_or_sections
    if isinstance(cuts, Tensor):
        if cuts.dtype.kind not in "iu" or cuts.ndim > 1:
            raise TypeError(f"tensor_split: a tensor indices_or_sections must be a 0-D or 1-D int64 tensor, got "
                            f"shape {cuts.shape} and dtype {cuts.dtype}")  # fmt: skip
        cuts = int(cuts.item()) if cuts.ndim == 0 else [int(i) for i in cuts.tolist()]
    if isinstance(cuts, (int, np.integer)) and not isinstance(cuts, bool):
        sections = int_arg(cuts, "tensor_split", "sections", low=1)
        small, extra = divmod(size, sections)
        bounds = np.cumsum([0] + [small + (i < extra) for i in range(sections)]).tolist()
    elif isinstance(cuts, (list, tuple)):  # (Python's slices between the cuts: negative ones count from the end)
        bounds = [0] + [int_arg(i, "tensor_split", "indices") for i in cuts] + [None]
    else:
        raise TypeError(f"tensor_split: indices_or_sections must be an int, a list of ints or a tensor, got "
                        f"{type(cuts).__name__}")  # fmt: skip
    lead = (slice(None),) * d
    return tuple(Index.apply_each(input, [{"key": lead + (slice(a, b),)} for a, b in zip(bounds, bounds[1:])]))


def _split_along(fn: str, input, indices_or_sections, dim: int, least: int) -> tuple:  # noqa: A002
    tensor_input(input, fn)
    if input.ndim < least:
        raise ValueError(f"{fn}: input must have at least {least} dimensions, got shape {input.shape}")
    if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(indices_or_sections, bool):
        sections = int_arg(indices_or_sections, fn, "sections", low=1)
        if input.shape[dim] % sections:
            raise ValueError(f"{fn}: cannot split dim {dim} of size {input.shape[dim]} into {sections} equal parts")
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input, indices_or_sections) -> tuple:  # noqa: A002
    """Split along dim 1 (dim 0 of a 1-D tensor): equal parts (an int) or at the given indices."""
    return _split_along("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


def vsplit(input, indices_or_sections) -> tuple:  # noqa: A002
    """Split along dim 0 (input of at least 2 dims)."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections) -> tuple:  # noqa: A002
    """Split along dim 2 (input of at least 3 dims)."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def unflatten(input, dim: int, sizes) -> Tensor:  # noqa: A002
    """Dim ``dim`` split into ``sizes`` (one of them may be -1: inferred)."""
    tensor_input(input, "unflatten")
    d = _dim(dim, input.ndim)
    sizes = _shape_arg((sizes,), "unflatten")
    if not sizes:
        raise ValueError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise ValueError(f"unflatten: sizes may hold one -1 and otherwise non-negative sizes, got {sizes}")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes:
        if known == 0 or input.shape[d] % known:
            raise ValueError(f"unflatten: cannot infer the -1 of sizes {sizes} for dim {d} of size {input.shape[d]}")
        sizes = tuple(input.shape[d] // known if s == -1 else s for s in sizes)
    elif known != input.shape[d]:
        raise ValueError(f"unflatten: sizes {sizes} must multiply to the size of dim {d}, {input.shape[d]}")
    return input.reshape(input.shape[:d] + sizes + input.shape[d + 1 :])


def rot90(input, k: int = 1, dims=(0, 1)) -> Tensor:  # noqa: A002
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first dim towards the second."""
    tensor_input(input, "rot90")
    k = int_arg(k, "rot90", "k") % 4
    if len(dims) != 2:
        raise ValueError(f"rot90: dims must be a pair of dims, got {dims}")
    a, b = (_dim(d, input.ndim, "rot90: dims") for d in dims)
    if a == b:
        raise ValueError(f"rot90: dims must be two different dims, got {tuple(dims)}")
    if k == 1:
        return flip(input, b).transpose(a, b)
    if k == 2:
        return flip(input, (a, b))
    if k == 3:
        return flip(input, a).transpose(a, b)
    return clone(input)
