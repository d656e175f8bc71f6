"""Products of vectors and tensors: ``dot``, ``vdot``, ``vecdot``, ``inner``, ``outer``/``ger``, ``cross``,
``kron``, ``tensordot``, ``chain_matmul``/``multi_dot`` (pairwise distances, ``cdist``: cdist.py).

Most are compositions of ``matmul``, broadcasting products, reshapes and permutes, so their gradients
(of every order) come from those ops; ``cross``, ``outer`` and ``kron`` are ops of their own,
bilinear, whose gradients are written with ops again:

- ``tensordot(a, b, dims)``: the contracted dims moved last in ``a`` and first in ``b``, both
  flattened to matrices, one ``matmul``;
- ``cross(a, b, dim)``: ``c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}`` (indices mod 3): the op ``Cross``
  (one kernel pass; its gradients are cross products again), defined by rolls;
- ``vecdot(a, b, dim)``: the dot products of the vectors along ``dim``, the op ``VecDot``: one pass
  without the (a * b) temporary forward, ``g * b`` and ``g * a`` (g along dim) backward;
- ``outer(a, b)``: the op ``Outer``, whose gradients are two matrix-vector products;
- ``kron(a, b)``: the op ``Kron``, whose gradients are two ``tensordot``s; its forward, and its
  definition, ``a`` and ``b`` interleaved by reshapes, one broadcasting product;
- ``multi_dot``: the matrix chain multiplied in the order that costs the fewest multiplications
  (the classic dynamic programme), as PyTorch's.

>>> mt.cross(mt.tensor([1.0, 0.0, 0.0]), mt.tensor([0.0, 1.0, 0.0]), dim=0)
tensor([0., 0., 1.])
>>> mt.kron(mt.tensor([[1, 2]]), mt.tensor([[1], [10]]))
tensor([[ 1,  2],
        [10, 20]])
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import backend, dtypes
from .._args import _dim
from ..autograd.batching import decompose
from ..autograd.dual import as_tensor, bilinear
from ..autograd.function import Op
from ..tensor import Tensor
from .arguments import tensor_input
from .operands import matmul, stretched
from .reorder import roll


def _same_dtype(fn: str, a: Tensor, b: Tensor) -> None:
    if a.dtype != b.dtype:
        raise TypeError(f"{fn}: expected both tensors to have the same dtype, got {dtypes.torch_name(a.dtype)} and "
                        f"{dtypes.torch_name(b.dtype)}")  # fmt: skip


def dot(input, tensor):  # noqa: A002
    """The dot product of two 1-D tensors of the same size and dtype (a 0-d tensor)."""
    tensor_input(input, "dot")
    tensor_input(tensor, "dot", "tensor")
    if input.ndim != 1 or tensor.ndim != 1 or input.shape != tensor.shape:
        raise ValueError(f"dot: expected two 1-D tensors of the same size, got shapes {input.shape} and {tensor.shape}")
    _same_dtype("dot", input, tensor)
    return matmul(input, tensor)


def vdot(input, other):  # noqa: A002
    """``dot`` with the first vector conjugated: for real tensors, ``dot``."""
    tensor_input(other, "vdot", "other")
    return dot(input, other)


def inner(input, other):  # noqa: A002
    """Sums of products over the last dims: ``input.shape[:-1] + other.shape[:-1]`` (a 0-d operand: a product)."""
    tensor_input(input, "inner")
    tensor_input(other, "inner", "other")
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise ValueError(f"inner: the last dims must match, got shapes {input.shape} and {other.shape}")
    return tensordot(input, other, ([-1], [-1]))


def vecdot(x: Tensor, y: Tensor, dim: int = -1) -> Tensor:
    """The dot products of the vectors along ``dim`` of x and y (they broadcast): ``(x * y).sum(dim)``
    as one op."""
    shape = _broadcast_shape("vecdot", x, y)
    d = _dim(dim, len(shape))
    dtype = dtypes.result_type(x, y)
    return VecDot.apply(_as_operand(x, shape, dtype), _as_operand(y, shape, dtype), dim=d)


def vecdot_definition(a, b, dim: int):
    """``VecDot``'s definition in Tensor ops."""
    return (a * b).sum(dim)


class VecDot(Op):
    """y = the sum over ``dim`` of a * b (a and b of one shape and dtype).  Bilinear: with g the
    gradient unsqueezed at dim, da = g * b and db = g * a (products again: every order is exact);
    its tangent is the product rule."""

    @staticmethod
    def forward(ctx, a, b, dim=-1):
        ctx.dim = dim
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        if dim == a.ndim - 1 and a.dtype.kind == "f":
            return backend.row_dots(a, b)  # (one pass, float64 sums)
        letters = "abcdefghijklmnopqrstuvwxyz"[: a.ndim]  # (einsum: one pass, no a * b temporary)
        return np.asarray(np.einsum(f"{letters},{letters}->{letters.replace(letters[dim], '')}", a, b))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        # (a 0-d output's gradient may come as a NumPy scalar: np.expand_dims makes it an array)
        g = grad.unsqueeze(ctx.dim) if isinstance(grad, Tensor) else np.expand_dims(grad, ctx.dim)
        return backend.multiply(g, b) if need_a else None, backend.multiply(g, a) if need_b else None

    jvp = bilinear  # the product rule

    batch = decompose(vecdot_definition)  # vmap: the definition (a product and a sum), whose ops have rules


def outer(input, vec2):  # noqa: A002
    """The outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]``."""
    tensor_input(input, "outer")
    tensor_input(vec2, "outer", "vec2")
    if input.ndim != 1 or vec2.ndim != 1:
        raise ValueError(f"outer: expected two 1-D tensors, got shapes {input.shape} and {vec2.shape}")
    dtype = dtypes.result_type(input, vec2)
    return Outer.apply(input.to(dtype), vec2.to(dtype))


class Outer(Op):
    """out[i, j] = a[i] * b[j] for 1-D a and b (one dtype).  Bilinear: da = grad @ b, db = a @ grad,
    two matrix-vector products (no (M, N) temporaries), written with ``@`` so that they are
    differentiable again; its tangent is the product rule."""

    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        return np.multiply.outer(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        if type(grad) is np.ndarray:  # (first order: BLAS's products, whatever grad's layout)
            return backend.matmul(grad, b) if need_a else None, backend.matmul(a, grad) if need_b else None
        return grad @ b if need_a else None, a @ grad if need_b else None

    jvp = bilinear  # the product rule

    batch = decompose(lambda a, b: a.unsqueeze(-1) * b.unsqueeze(-2))  # vmap: the broadcast product


ger = outer


def cross(input, other, dim=None):  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (input and other broadcast).  ``dim=None`` takes the first
    dim of size 3, with PyTorch's deprecation warning (``linalg.cross`` uses -1)."""
    tensor_input(input, "cross")
    tensor_input(other, "cross", "other")
    shape = _broadcast_shape("cross", input, other)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated. Please either pass the dim "
                      "explicitly or simply use torch.linalg.cross.", UserWarning, stacklevel=2)  # fmt: skip
        dim = next((d for d, size in enumerate(shape) if size == 3), None)
        if dim is None:
            raise ValueError(f"cross: no dimension of size 3 in input (shape {shape})")
    d = _dim(dim, len(shape))
    if shape[d] != 3:
        raise ValueError(f"cross: dim {dim} must have size 3, got {shape[d]} (shape {shape})")
    dtype = dtypes.result_type(input, other)
    return Cross.apply(_as_operand(input, shape, dtype), _as_operand(other, shape, dtype), dim=d)


def _broadcast_shape(fn: str, a, b) -> tuple:
    """The shape ``a`` and ``b`` broadcast to, or ``fn``'s ValueError naming both shapes."""
    try:
        return np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"{fn}: shapes {a.shape} and {b.shape} cannot be broadcast together") from None


def _as_operand(t, shape: tuple, dtype):
    """``t`` broadcast to ``shape`` in ``dtype``; no node where it has both already."""
    t = stretched(t, shape)
    return t if t.dtype == dtype else t.to(dtype)


def cross_definition(a, b, dim: int):
    """``Cross``'s definition in Tensor ops: ``c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}`` as rolls."""
    return roll(a, -1, dim) * roll(b, -2, dim) - roll(a, -2, dim) * roll(b, -1, dim)


class Cross(Op):
    """c = a × b along ``dim`` (size 3) of a and b (one shape and dtype).  It is bilinear, and
    ``<a × b, g> = <a, b × g> = <b, g × a>``: da = b × g, db = g × a (the op again, so every order
    of derivative is exact); its tangent is da × b + a × db."""

    @staticmethod
    def forward(ctx, a, b, dim=-1):
        ctx.save_for_backward(a, b)
        ctx.dim = dim
        return backend.cross(a, b, dim)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        da = Cross.call(b, grad, dim=ctx.dim) if need_a else None
        return da, Cross.call(grad, a, dim=ctx.dim) if need_b else None

    jvp = bilinear  # the product rule

    batch = decompose(cross_definition)  # vmap: the definition (rolls and products), whose ops have rules


def kron(input, other):  # noqa: A002
    """The Kronecker product: blocks ``input[i, j, ...] * other`` (the shorter shape padded with leading 1s)."""
    tensor_input(input, "kron")
    tensor_input(other, "kron", "other")
    n = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (n - input.ndim) + input.shape)
    b = other.reshape((1,) * (n - other.ndim) + other.shape)
    dtype = dtypes.result_type(a, b)
    return Kron.apply(a.to(dtype), b.to(dtype))


def kron_definition(a, b):
    """``Kron``'s definition (Tensor ops), for a and b of one ndim: interleaved by reshapes, one
    broadcasting product."""
    spread_a = a.reshape(tuple(v for s in a.shape for v in (s, 1)))
    spread_b = b.reshape(tuple(v for s in b.shape for v in (1, s)))
    return (spread_a * spread_b).reshape(tuple(x * y for x, y in zip(a.shape, b.shape)))


class Kron(Op):
    """The Kronecker product of a and b of one ndim and dtype: out[i * q + k, ...] = a[i, ...] * b[k, ...]
    (forward: the definition on arrays).
    Bilinear: with the gradient seen as (a0, b0, a1, b1, ...) (each out dim split in two), da is its
    contraction with b over the b dims and db its contraction with a over the a dims: two
    ``tensordot``s (BLAS on arrays, the op again on Tensors), no (out-sized) temporaries."""

    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        ctx.split = tuple(v for x, y in zip(a.shape, b.shape) for v in (x, y))  # (a0, b0, a1, b1, ...)
        return kron_definition(a, b)  # (on arrays: one broadcasting product, a little faster than np.kron)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        g = grad.reshape(ctx.split)
        a_dims, b_dims = list(range(0, g.ndim, 2)), list(range(1, g.ndim, 2))
        contract = np.tensordot
        if not isinstance(grad, (np.ndarray, np.generic)):  # create_graph: the op again, on Tensors (and constants)
            contract = tensordot
            a, b = as_tensor(a), as_tensor(b)
        da = contract(g, b, (b_dims, list(range(len(b_dims))))) if need_a else None
        db = contract(a, g, (list(range(len(a_dims))), a_dims)) if need_b else None
        return da, db

    jvp = bilinear  # the product rule

    batch = decompose(kron_definition)  # vmap: the definition (reshapes and a product)


def tensordot(a, b, dims=2):
    """Contract ``a``'s last ``dims`` dims with ``b``'s first (an int), or the listed pairs of dims
    (``([a dims], [b dims])``); the result has a's free dims then b's."""
    tensor_input(a, "tensordot", "a")
    tensor_input(b, "tensordot", "b")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        if not 0 <= dims <= min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: dims must be in [0, {min(a.ndim, b.ndim)}], got {dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    else:
        raise TypeError(f"tensordot: dims must be an int or a pair of lists of dims, got {dims!r}")
    if len(dims_a) != len(dims_b):
        raise ValueError(f"tensordot: both lists of dims must have the same length, got {dims_a} and {dims_b}")
    dims_a = [_dim(d, a.ndim, "tensordot: dims") for d in dims_a]
    dims_b = [_dim(d, b.ndim, "tensordot: dims") for d in dims_b]
    for i, j in zip(dims_a, dims_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: contracted dims differ in size: a's dim {i} ({a.shape[i]}) and b's dim {j} "
                             f"({b.shape[j]})")  # fmt: skip
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    k = math.prod(a.shape[d] for d in dims_a)
    left = a.permute(*free_a, *dims_a).reshape(math.prod(a.shape[d] for d in free_a), k)
    right = b.permute(*dims_b, *free_b).reshape(k, math.prod(b.shape[d] for d in free_b))
    return matmul(left, right).reshape(tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b))


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (the first may be 1-D: a row; the last 1-D: a column), multiplied
    in the cheapest order."""
    if not isinstance(tensors, (list, tuple)) or len(tensors) < 2:
        raise ValueError(f"multi_dot: expected a list of at least 2 tensors, got {tensors!r}")
    for i, t in enumerate(tensors):
        tensor_input(t, "multi_dot", f"tensors[{i}]")
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            raise ValueError(f"multi_dot: tensors[{i}] must be {' or '.join(f'{n}-D' for n in allowed)}, got shape "
                             f"{t.shape}")  # fmt: skip
    first, last = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = [t.reshape(1, -1) if i == 0 and first else t for i, t in enumerate(tensors)]
    mats[-1] = mats[-1].reshape(-1, 1) if last else mats[-1]
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ValueError(f"multi_dot: tensors[{i}] {tensors[i].shape} and tensors[{i + 1}] {tensors[i + 1].shape} "
                             "cannot be multiplied")  # fmt: skip
    sizes = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    out = _chain(mats, _chain_order(sizes), 0, len(mats) - 1)
    if first and last:
        return out.reshape(())
    return out.reshape(-1) if first or last else out


def _chain_order(sizes: list) -> list:
    """split[i][j]: where the cheapest product of matrices i..j splits (matrix k is sizes[k] x sizes[k+1])."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = min(
                (cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1], k) for k in range(i, j)
            )
    return split


def _chain(mats: list, split: list, i: int, j: int) -> Tensor:
    if i == j:
        return mats[i]
    k = split[i][j]
    return matmul(_chain(mats, split, i, k), _chain(mats, split, k + 1, j))


def chain_matmul(*matrices) -> Tensor:
    """The product of 2-D matrices (PyTorch's deprecated form of ``linalg.multi_dot``; it warns as PyTorch does)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.", UserWarning, stacklevel=2)  # fmt: skip
    for i, m in enumerate(matrices):
        if not isinstance(m, Tensor) or m.ndim != 2:
            raise ValueError(f"chain_matmul: expected 2-D tensors, got {getattr(m, 'shape', type(m).__name__)} "
                             f"at position {i}")  # fmt: skip
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(list(matrices))
