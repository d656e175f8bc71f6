"""Shape ops: reshape, permute, expand, indexing, cat, stack, where.

None of these compute anything: their backward moves the gradient back to
where each input element came from.
"""

from __future__ import annotations

import numpy as np

from .. import backend, dtypes
from .._args import _dim
from ..autograd.batching import elementwise, reshaped, shift
from ..autograd.dual import linear
from ..autograd.function import Op
from ..tensor import Tensor
from .operands import _cast, _operand, _promoted, _shape_of, _watched


class Reshape(Op):
    """Also serves view, flatten, squeeze and unsqueeze."""

    @staticmethod
    def forward(ctx, x, shape=()):
        ctx.shape_in = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape_in)  # (an array's or a Tensor's reshape)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = reshaped("shape")  # vmap: the batch dim first, then the new shape


class Permute(Op):
    """Reorder dims (transpose is a permute of two dims)."""

    @staticmethod
    def forward(ctx, x, dims=()):
        ctx.dims = dims
        return x.transpose(dims)

    @staticmethod
    def backward(ctx, grad):
        undo = sorted(range(len(ctx.dims)), key=ctx.dims.__getitem__)  # the inverse permutation
        return np.transpose(grad, undo)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    @staticmethod
    def batch(b):
        dims = b.settings["dims"]
        return b.run(b.values[0], dims=(0, *(d % len(dims) + 1 for d in dims)))


class Expand(Op):
    """Broadcast to a larger shape without copying; the engine sums the gradient back."""

    @staticmethod
    def forward(ctx, x, shape=()):
        return backend.broadcast(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return grad

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = reshaped("shape")


def _may_repeat(key) -> bool:
    """Does an index use integer arrays (which may name a position twice)?  Slices, ints and bool
    masks name each position at most once."""
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, list) or isinstance(k, np.ndarray) and k.dtype != np.bool_ for k in parts)


class Index(Op):
    """``x[key]``; repeated integer indices accumulate their gradients.  Rows picked by one integer
    array from a non-contiguous x (e.g. a transposed gradient, in ``IndexAdd``'s backward) are taken
    with ``np.take``: NumPy's indexing walks such an x element by element (5x slower at 2^17)."""

    @staticmethod
    def forward(ctx, x, key=None):
        ctx.shape_in, ctx.key = x.shape, own_arrays(key) if ctx.needs_input_grad[0] else key
        rows = key[0] if type(key) is tuple and len(key) == 1 else key
        if type(rows) is np.ndarray and rows.dtype.kind in "iu" and x.ndim > 1 and not x.flags.c_contiguous:
            return np.take(x, rows, axis=0)
        return np.asarray(x[key])

    @staticmethod
    def backward(ctx, grad):
        return IndexAdd.call(grad, key=ctx.key, shape=ctx.shape_in)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    @staticmethod
    def batch(b):
        key = b.settings["key"]
        key = key if isinstance(key, tuple) else (key,)
        out = b.run(b.values[0], key=(slice(None), *key))
        apart = _advanced_apart(key)  # (NumPy puts separated advanced indices' dims first)
        return out if apart is None else out.movedim(apart, 0)


def _advanced_apart(key: tuple) -> int | None:
    """The number of dims the advanced indices (arrays, and integers among them) of ``key`` make, when
    they are separated by a slice (NumPy then puts those dims first); None when they are together."""
    arrays = [k for k in key if isinstance(k, np.ndarray) and k.ndim > 0]
    if not arrays:
        return None
    advanced = [
        i for i, k in enumerate(key) if isinstance(k, (np.ndarray, int, np.integer)) and not isinstance(k, bool)
    ]
    if advanced == list(range(advanced[0], advanced[-1] + 1)):
        return None
    return np.broadcast(*[np.nonzero(a)[0] if a.dtype == np.bool_ else a for a in arrays]).ndim


def own_arrays(key):
    """``key`` with its index arrays copied: the backward keeps the key, and the caller may change
    the arrays (or the tensors they came from) in place before it runs."""
    if isinstance(key, tuple):
        return tuple(k.copy() if isinstance(k, np.ndarray) else k for k in key)
    return key.copy() if isinstance(key, np.ndarray) else key


class IndexAdd(Op):
    """Zeros of ``shape`` with ``values`` added at ``[key]`` (the backward of ``Index``:
    repeated integer indices add up).  Its own backward is ``grad[key]``."""

    @staticmethod
    def forward(ctx, values, key=None, shape=()):
        ctx.key = key
        out = np.zeros(shape, dtype=values.dtype)
        if _may_repeat(key):
            backend.index_add(out, key, values)  # np.add.at, with a kernel for integer-array keys
        else:
            out[key] = values
        return out

    @staticmethod
    def backward(ctx, grad):
        return Index.call(grad, key=ctx.key)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    @staticmethod
    def batch(b):
        key = b.settings["key"]
        key = key if isinstance(key, tuple) else (key,)
        values = b.expanded(0)
        apart = _advanced_apart(key)
        values = values if apart is None else values.movedim(0, apart)
        return b.run(values, key=(slice(None), *key), shape=(b.size, *b.settings["shape"]))


class MaskedSelect(Op):
    """``x[mask]`` for a bool ``mask`` over x's first ``lead`` dims, given as ``rows``: the flat
    positions of its True entries (``np.flatnonzero``), so the op is a take of rows.  (NumPy's
    boolean indexing branches on every element: ~5x slower on a random mask.)  Its backward puts
    the gradient back at the rows (``MaskedScatter``)."""

    @staticmethod
    def forward(ctx, x, rows=None, lead=1):
        ctx.shape_in, ctx.rows, ctx.lead = x.shape, rows, lead
        return np.take(x.reshape((-1,) + x.shape[lead:]), rows, axis=0)

    @staticmethod
    def backward(ctx, grad):
        return MaskedScatter.call(grad, rows=ctx.rows, lead=ctx.lead, shape=ctx.shape_in)

    jvp = linear  # linear in its input: the tangent goes through the op itself

    @staticmethod
    def batch(b):
        x, lead = b.values[0], b.settings["lead"]
        rows = x.reshape(b.size, -1, *x.shape[1 + lead :])
        return Index.apply(rows, key=(slice(None), b.settings["rows"]))


class MaskedScatter(Op):
    """Zeros of ``shape`` with ``values`` put at ``rows`` of its first ``lead`` dims flattened
    (the backward of ``MaskedSelect``; rows never repeat).  Its own backward is ``MaskedSelect``."""

    @staticmethod
    def forward(ctx, values, rows=None, lead=1, shape=()):
        ctx.rows, ctx.lead = rows, lead
        out = np.zeros(shape, dtype=values.dtype)
        out.reshape((-1,) + shape[lead:])[rows] = values
        return out

    @staticmethod
    def backward(ctx, grad):
        return MaskedSelect.call(grad, rows=ctx.rows, lead=ctx.lead)

    jvp = linear  # linear in its input: the tangent goes through the op itself


def index(x, key):
    """``x[key]`` (key: basic and advanced NumPy indices): a bool mask over x's leading dims is a
    ``MaskedSelect``, any other key an ``Index``."""
    if type(key) is np.ndarray and key.dtype == np.bool_ and 0 < key.ndim and key.shape == x.shape[: key.ndim]:
        return MaskedSelect.apply(x, rows=np.flatnonzero(key), lead=key.ndim)
    return Index.apply(x, key=key)


class Cat(Op):
    """Concatenate inputs along ``dim``."""

    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        ctx.splits = np.cumsum([x.shape[dim] for x in xs])[:-1]
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return tuple(np.split(grad, ctx.splits, axis=ctx.dim))

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = shift("dim")  # vmap: every input batched, dim + 1


class Stack(Op):
    """Stack equally shaped inputs along a new ``dim``."""

    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        return np.stack(xs, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        lead = (slice(None),) * ctx.dim
        return tuple(grad[lead + (i,)] for i in range(grad.shape[ctx.dim]))

    jvp = linear  # linear in its input: the tangent goes through the op itself

    @staticmethod
    def batch(b):
        dim = b.settings["dim"]
        dim = dim if dim >= 0 else dim + b.ndims[0] + 1
        return b.run(*[b.expanded(i) for i in range(len(b.values))], dim=dim + 1)


class Where(Op):
    """``where(cond, a, b)``: a where cond is True, else b; cond gets no gradient.

    ``da = where(cond, grad, 0)``, ``db = where(cond, 0, grad)``; on arrays of one shape both are
    one kernel pass (``kernels/where.py``, also the forward's), NumPy's ``where`` otherwise."""

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        return backend.where(cond, a, b)

    @staticmethod
    def backward(ctx, grad):
        (cond,) = ctx.saved_tensors
        need = ctx.needs_input_grad[1:]
        if type(grad) is np.ndarray:
            return None, *backend.where_backward(cond, grad, need)
        zero = np.zeros((), dtype=grad.dtype)
        ga = backend.where(cond, grad, zero) if need[0] else None
        gb = backend.where(cond, zero, grad) if need[1] else None
        return None, ga, gb

    jvp = linear  # linear in its input: the tangent goes through the op itself

    batch = elementwise  # vmap: an elementwise op runs on the whole batch at once


def _tensor_list(tensors, fn: str) -> list:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}: tensors must be a list or tuple of Tensors, got {type(tensors).__name__}")
    if not tensors:
        raise ValueError(f"{fn}: tensors must be a non-empty list or tuple, got an empty {type(tensors).__name__}")
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: tensors[{i}] must be a Tensor, got {type(t).__name__}")
    return tensors


def _same_dtype(tensors: list) -> list:
    """The tensors cast to their promoted dtype (``dtypes.result_type``), for cat and stack."""
    dtype = tensors[0].dtype
    for t in tensors:
        if t.dtype != dtype:
            break
    else:
        return tensors
    dtype = dtypes.result_type(*tensors)
    return [_cast(t, dtype) for t in tensors]


def axis_alias(dim: int, axis, fn: str) -> int:
    """PyTorch's (and NumPy's) ``axis=`` for ``dim``."""
    if axis is None:
        return dim
    if dim != 0:
        raise TypeError(f"{fn}() got both dim={dim!r} and its alias axis={axis!r}")
    return axis


def cat(tensors, dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors along an existing ``dim`` (or ``axis``, its alias); the other dims must match."""
    dim = axis_alias(dim, axis, "cat")
    tensors = _tensor_list(tensors, "cat")
    first = tensors[0]
    d = _dim(dim, first.ndim)
    for i, t in enumerate(tensors):
        if t.ndim != first.ndim or t.shape[:d] + t.shape[d + 1 :] != first.shape[:d] + first.shape[d + 1 :]:
            raise ValueError(
                f"cat: tensors[{i}] has shape {t.shape}, which does not match tensors[0]'s shape {first.shape} "
                f"outside dim {d}"
            )
    return Cat.apply(*_same_dtype(tensors), dim=d)


def stack(tensors, dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join equally shaped tensors along a new ``dim`` (or ``axis``, its alias)."""
    dim = axis_alias(dim, axis, "stack")
    tensors = _tensor_list(tensors, "stack")
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.shape != first.shape:
            raise ValueError(f"stack: tensors[{i}] has shape {t.shape}, expected tensors[0]'s shape {first.shape}")
    return Stack.apply(*_same_dtype(tensors), dim=_dim(dim, first.ndim + 1))


def where(condition, input, other) -> Tensor:  # noqa: A002  (PyTorch's names)
    """``input`` where ``condition`` (bool) is True, else ``other``; all three broadcast."""
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != dtypes.bool:
        raise TypeError(f"where: condition must be a bool tensor, got dtype {cond.dtype}")
    a, b = _operand(input, other), _operand(other, input)
    try:
        np.broadcast_shapes(cond.shape, _shape_of(a), _shape_of(b))
    except ValueError:
        raise ValueError(
            f"where: condition {cond.shape}, input {_shape_of(a)} and other {_shape_of(b)} cannot be broadcast together"
        ) from None
    a, b = _promoted(a, b)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):  # two numbers: the promoted dtype decides
        a = Tensor._make(np.asarray(a, dtype=dtypes.result_type(a, b)), False, None)
    return Where.apply(_watched(condition, cond), a, b)
