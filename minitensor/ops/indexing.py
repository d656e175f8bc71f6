"""Index-driven ops along one dim: ``gather``, ``scatter``, ``scatter_add``, ``index_fill``.

With ``index`` an int64 tensor of the input's number of dims, along ``dim``:

- ``gather``:       out[i][j][k] = input[index[i][j][k]][j][k]          (dim 0)
- ``scatter``:      out = input; out[index[i][j][k]][j][k] = src[i][j][k]
- ``scatter_add``:  out = input; out[index[i][j][k]][j][k] += src[i][j][k]

They are three ops whose backwards call each other (``kernels/along_dim.py``
runs them): the gradient of a gather adds back at the index (``ScatterAdd``
into zeros), that of a scatter-add or a scatter takes the gradient at the
index (``Gather``), so every order of derivative is exact.  ``index_fill``
and the in-place versions build an advanced-indexing key (``_key``: the
index along ``dim``, ``arange`` grids along the other dims) for the indexing
ops ``IndexPut`` and ``x[key] = v``.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from .._args import _dim
from ..autograd.batching import shift
from ..autograd.dual import linear
from ..autograd.function import Op
from ..tensor import Tensor
from .inplace import IndexPut, apply_inplace


class Gather(Op):
    """x's values at ``index`` along ``dim`` (index's shape);  dx = grad added back at index (ScatterAdd).

    The index is an input (int64, no gradient) saved for backward, so changing it in place before
    the backward raises, as in PyTorch.
    """

    @staticmethod
    def forward(ctx, x, index, dim=0):
        ctx.save_for_backward(index)
        ctx.dim, ctx.shape_in = dim, x.shape
        return backend.gather(x, index, dim)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return ScatterAdd.call(None, grad, index, dim=ctx.dim, shape=ctx.shape_in), None

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = shift("dim")  # vmap: x and index batched (a shared index expanded), dim + 1


class ScatterAdd(Op):
    """x (zeros of ``shape`` when x is None) with ``values`` added at ``index`` along ``dim``, repeated
    indices adding up;  dx = grad, dvalues = grad at index (Gather)."""

    @staticmethod
    def forward(ctx, x, values, index, dim=0, shape=None):
        ctx.save_for_backward(index)
        ctx.dim = dim
        out = np.zeros(shape, values.dtype) if x is None else np.array(x, order="C")
        backend.scatter_add(out, index, values, dim)
        return out

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        need_x, need_values = ctx.needs_input_grad[:2]
        g_values = Gather.call(grad, index, dim=ctx.dim) if need_values else None
        return (grad if need_x else None), g_values, None

    jvp = linear  # linear in its input: the tangent goes through the op itself

    @staticmethod
    def batch(b):
        shape = b.settings["shape"]
        settings = {"dim": b.settings["dim"] % b.ndims[1] + 1, "shape": None if shape is None else (b.size, *shape)}
        return b.run(*[b.expanded(i) for i in range(3)], **settings)


class Scatter(Op):
    """x with ``values`` (index's shape, or a number) written at ``index`` along ``dim``;
    dx = grad with zeros where written (Scatter of 0), dvalues = grad at index (Gather)."""

    @staticmethod
    def forward(ctx, x, values, index, dim=0):
        ctx.save_for_backward(index)
        ctx.dim = dim
        out = np.array(x, order="C")
        backend.scatter(out, index, values, dim)
        return out

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        need_x, need_values = ctx.needs_input_grad[:2]
        g_x = Scatter.call(grad, 0.0, index, dim=ctx.dim) if need_x else None
        return g_x, (Gather.call(grad, index, dim=ctx.dim) if need_values else None), None

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = shift("dim")


def _checked_index(fn: str, input, dim, index, others=()) -> tuple:  # noqa: A002
    """(dim, index array) after PyTorch's checks; a 0-d input's index comes as 1-D."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{fn}: index must be a Tensor, got {type(index).__name__}")
    if index.dtype != np.int64:
        raise TypeError(f"{fn}: index must be an int64 tensor, got dtype {index.dtype}")
    d = _dim(dim, input.ndim)
    idx = index._data
    if idx.ndim != max(input.ndim, 1) and not (idx.ndim == 0 and input.ndim == 0):
        raise ValueError(f"{fn}: index must have as many dims as input ({input.ndim}), got shape {index.shape}")
    if input.ndim == 0:
        idx = idx.reshape(-1)
    shape_in = input.shape or (1,)
    for i, n in enumerate(idx.shape):
        if i != d and n > shape_in[i]:
            raise ValueError(
                f"{fn}: index has size {n} in dim {i}, larger than input's size {shape_in[i]} (index {index.shape}, "
                f"input {input.shape})"
            )
        for name, other in others:
            if other.ndim and n > other.shape[i]:
                raise ValueError(f"{fn}: index has size {n} in dim {i}, larger than {name}'s size {other.shape[i]}")
    if idx.size:
        low, high = backend.index_range(idx)
        if low < -shape_in[d] or high >= shape_in[d]:
            raise ValueError(f"{fn}: index out of range for dim {d} of size {shape_in[d]}: values {low}..{high}")
    return d, idx


def _key(fn: str, input, dim, index, others=()) -> tuple:  # noqa: A002
    """The advanced-indexing key of ``index`` along ``dim`` (checked as PyTorch checks it)."""
    d, idx = _checked_index(fn, input, dim, index, others)
    shape_in = input.shape or (1,)
    grids = list(np.ogrid[tuple(slice(n) for n in idx.shape)]) if idx.ndim else []
    if grids:
        grids[d] = idx % shape_in[d]
    key = tuple(grids)
    return key if input.ndim else key[0]


def gather(input, dim: int, index):  # noqa: A002
    """Values of ``input`` at ``index`` along ``dim``; the output has ``index``'s shape."""
    d, _ = _checked_index("gather", input, dim, index)
    if input.ndim == 0:
        return Gather.apply(input.reshape(1), index.reshape(-1), dim=0).reshape(index.shape)
    return Gather.apply(input, index, dim=d)


def _crop(src, shape: tuple):
    """src's leading block of ``shape`` (src may be larger than index in every dim; a 0-d src stays)."""
    return src if src.shape == shape or src.ndim == 0 else src[tuple(slice(n) for n in shape)]


def _src(fn: str, src, like):
    if isinstance(src, Tensor):
        if src.dtype != like.dtype:
            raise TypeError(f"{fn}: src must have input's dtype {like.dtype}, got {src.dtype}")
        if src.ndim != like.ndim:
            raise ValueError(f"{fn}: src must have as many dims as input ({like.ndim}), got shape {src.shape}")
        return src
    if isinstance(src, (int, float, np.number)) and not isinstance(src, bool):
        return src
    raise TypeError(f"{fn}: src must be a Tensor or a number, got {type(src).__name__}")


def scatter(input, dim: int, index, src=None, *, value=None, reduce=None):  # noqa: A002
    """A copy of ``input`` with ``src`` (a tensor or a number) written at ``index`` along ``dim``.

    ``value=`` is PyTorch's keyword for a number; ``reduce`` is not supported.
    With repeated indices one of the written values wins (as PyTorch, unspecified which).
    """
    if reduce is not None:
        raise ValueError(f"scatter: reduce is not supported, got {reduce!r}; use scatter_add for 'add'")
    if (src is None) == (value is None):
        raise TypeError("scatter: give exactly one of src and value")
    src = _src("scatter", src if value is None else value, input)
    others = (("src", src),) if isinstance(src, Tensor) else ()
    d, _ = _checked_index("scatter", input, dim, index, others)
    if isinstance(src, Tensor):
        src = _crop(src, index.shape)
    if input.ndim == 0:
        return Scatter.apply(input.reshape(1), src, index.reshape(-1), dim=0).reshape(())
    return Scatter.apply(input, src, index, dim=d)


def scatter_add(input, dim: int, index, src):  # noqa: A002
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeated indices add up)."""
    src = _src("scatter_add", src, input)
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add: src must be a Tensor, got {type(src).__name__}")
    d, _ = _checked_index("scatter_add", input, dim, index, (("src", src),))
    src = _crop(src, index.shape)
    if input.ndim == 0:
        return ScatterAdd.apply(input.reshape(1), src, index.reshape(-1), dim=0).reshape(())
    return ScatterAdd.apply(input, src, index, dim=d)


def _fill_key(fn: str, input, dim: int, index) -> tuple:  # noqa: A002
    if not isinstance(index, Tensor) or index.dtype != np.int64 or index.ndim > 1:
        raise TypeError(f"{fn}: index must be a 0-D or 1-D int64 tensor, got {index!r}")
    d = _dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    idx = index._data.reshape(-1)
    if idx.size and (idx.min() < -size or idx.max() >= size):
        raise ValueError(f"{fn}: index out of range for dim {d} of size {size}: values {idx.min()}..{idx.max()}")
    return (slice(None),) * d + (idx % size,) if input.ndim else (idx % size,)


def index_fill(input, dim: int, index, value):  # noqa: A002
    """A copy of ``input`` with the slices at ``index`` along ``dim`` set to ``value`` (a number or 0-d tensor)."""
    key = _fill_key("index_fill", input, dim, index)
    if input.ndim == 0:
        return IndexPut.apply(input.reshape(1), value, key=key).reshape(())
    return IndexPut.apply(input, value, key=key)


def index_fill_(input, dim: int, index, value):  # noqa: A002
    """``index_fill`` in place (recorded in the graph as PyTorch does)."""
    key = _fill_key("index_fill_", input, dim, index)
    if input.ndim == 0:
        key = ()
        if index.numel() == 0:
            return input
    input[key] = value
    return input


def scatter_(input, dim: int, index, src=None, *, value=None, reduce=None):  # noqa: A002
    """``scatter`` in place."""
    scatter(input.detach(), dim, index, _detached(src), value=value, reduce=reduce)  # checks the arguments
    src = src if value is None else value
    key = _key("scatter_", input, dim, index)
    input[key] = _crop(src, index.shape) if isinstance(src, Tensor) else src
    return input


def scatter_add_(input, dim: int, index, src):  # noqa: A002
    """``scatter_add`` in place."""
    scatter_add(input.detach(), dim, index, _detached(src))  # checks the arguments
    key = _key("scatter_add_", input, dim, index)

    def update(array, s):
        backend.index_add(array, key, _crop(s, index.shape))

    apply_inplace(input, "scatter_add_", update, lambda old, s: scatter_add(old, dim, index, s), src)
    return input


def _detached(x):
    return x.detach() if isinstance(x, Tensor) else x
