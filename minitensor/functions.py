"""Module-level functions: ``mt.cat``, ``mt.stack``, ``mt.where`` and the
function forms of Tensor methods (``mt.exp(x)`` is ``x.exp()``)."""

from __future__ import annotations

import numpy as np

from . import dtypes
from .ops import shape as S
from .tensor import Tensor, _cast, _dim, _operand, _promoted, _shape_of, _watched, matmul  # noqa: F401  (matmul re-exported)


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


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing ``dim``; the other dims must match."""
    tensors = _tensor_list(tensors, "cat")
    first = tensors[0]
    d = _dim(dim, first.ndim)
    for i, t in enumerate(tensors):
        if t.ndim != first.ndim or t.shape[:d] + t.shape[d + 1 :] != first.shape[:d] + first.shape[d + 1 :]:
            raise ValueError(
                f"cat: tensors[{i}] has shape {t.shape}, which does not match tensors[0]'s shape {first.shape} "
                f"outside dim {d}"
            )
    return S.Cat.apply(*_same_dtype(tensors), dim=d)


def stack(tensors, dim: int = 0) -> Tensor:
    """Join equally shaped tensors along a new ``dim``."""
    tensors = _tensor_list(tensors, "stack")
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.shape != first.shape:
            raise ValueError(f"stack: tensors[{i}] has shape {t.shape}, expected tensors[0]'s shape {first.shape}")
    return S.Stack.apply(*_same_dtype(tensors), dim=_dim(dim, first.ndim + 1))


def mm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002  (PyTorch's names)
    """Matrix product of 2-D tensors, (n, m) @ (m, p) -> (n, p), without broadcasting (``torch.mm``)."""
    for name, x in (("input", input), ("mat2", mat2)):
        if not isinstance(x, Tensor) or x.ndim != 2:
            raise ValueError(f"mm: {name} must be a 2-D Tensor, got {getattr(x, 'shape', type(x).__name__)}")
    if input.shape[1] != mat2.shape[0]:
        raise ValueError(f"mm: shapes {input.shape} and {mat2.shape} do not fit: expected (n, m) and (m, p)")
    return matmul(input, mat2)


def all(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001, A002  (PyTorch's names)
    """True where every element (along ``dim``, or all of them) is nonzero: a bool tensor."""
    return _truth(np.all, input, dim, keepdim, "all")


def any(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001, A002
    """True where some element (along ``dim``, or any at all) is nonzero: a bool tensor."""
    return _truth(np.any, input, dim, keepdim, "any")


def _truth(reduce, input, dim, keepdim: bool, name: str) -> Tensor:  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
    axis = None if dim is None else _dim(dim, input.ndim)
    return Tensor._make(np.asarray(reduce(input._data, axis=axis, keepdims=keepdim)), False, None)


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:  # noqa: A002
    """|input - other| <= atol + rtol * |other|, elementwise (broadcast): a bool tensor."""
    a, b = (x._data if isinstance(x, Tensor) else np.asarray(x) for x in (input, other))
    return Tensor._make(np.asarray(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)), False, None)


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:  # noqa: A002
    """Whether ``isclose`` holds everywhere (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other) -> bool:  # noqa: A002
    """Whether the two tensors have the same shape and the same values (a Python bool)."""
    a, b = (x._data if isinstance(x, Tensor) else np.asarray(x) for x in (input, other))
    return a.shape == b.shape and bool(np.array_equal(a, b))


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
    return S.Where.apply(_watched(condition, cond), a, b)


def _method(name: str):
    def fn(input: Tensor, *args, **kwargs):  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = name
    fn.__doc__ = f"``mt.{name}(x, ...)`` is ``x.{name}(...)``."
    return fn


exp = _method("exp")
log = _method("log")
sqrt = _method("sqrt")
abs = _method("abs")  # noqa: A001
tanh = _method("tanh")
sigmoid = _method("sigmoid")
relu = _method("relu")
clamp = _method("clamp")
softmax = _method("softmax")
log_softmax = _method("log_softmax")
sum = _method("sum")  # noqa: A001
mean = _method("mean")
prod = _method("prod")
var = _method("var")
std = _method("std")
amax = _method("amax")
amin = _method("amin")
logsumexp = _method("logsumexp")
max = _method("max")  # noqa: A001
min = _method("min")  # noqa: A001
argmax = _method("argmax")
argmin = _method("argmin")
reshape = _method("reshape")
transpose = _method("transpose")
permute = _method("permute")
flatten = _method("flatten")
squeeze = _method("squeeze")
unsqueeze = _method("unsqueeze")

# Ops added for PyTorch course code (logic in ops/*), re-exported.
from .arithmetic import add, div, mul, sub  # noqa: E402, F401
from .ops.cumsum import cumsum  # noqa: E402, F401
from .ops.einsum import einsum  # noqa: E402, F401
from .ops.indexing import gather, index_fill, scatter, scatter_add  # noqa: E402, F401
from .ops.modulo import floor_divide, fmod, remainder  # noqa: E402, F401
from .ops.more_math import (  # noqa: E402, F401
    ceil,
    exp2,
    expm1,
    floor,
    frac,
    log1p,
    log2,
    log10,
    neg,
    reciprocal,
    round,  # noqa: A004  (PyTorch's name)
    rsqrt,
    sign,
    square,
    trunc,
)
from .ops.norms import norm  # noqa: E402, F401
from .ops.power import pow  # noqa: E402, F401, A004
from .ops.put import index_add, index_put, masked_scatter  # noqa: E402, F401
from .ops.reorder import clone, flip, narrow, roll, split, unbind  # noqa: E402, F401
from .ops.softplus import softplus  # noqa: E402, F401
from .ops.sort import argsort, msort, sort, unique  # noqa: E402, F401
from .ops.topk import topk  # noqa: E402, F401
from .ops.triangular import tril, triu  # noqa: E402, F401
from .ops.trig import cos, sin  # noqa: E402, F401
from .tensor import bmm  # noqa: E402, F401

chunk = _method("chunk")
