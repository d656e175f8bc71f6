"""Module-level functions (``mt.exp(x)``, ``mt.cat(...)``): the function forms of Tensor methods,
and the functions the op files define, gathered for ``minitensor/__init__.py`` to export."""

from __future__ import annotations

import numpy as np

from .._args import _dim
from ..autograd import batching
from ..tensor import Tensor
from .arithmetic import add, div, mul, sub  # noqa: F401  (re-exported, as those below)
from .binary_math import (  # noqa: F401
    addcdiv,
    addcmul,
    copysign,
    float_power,
    heaviside,
    hypot,
    lerp,
    logaddexp,
    logaddexp2,
    true_divide,
)
from .cdist import cdist  # noqa: F401
from .counting import bincount, bucketize, histc, histogram, searchsorted  # noqa: F401
from .cumsum import cumsum  # noqa: F401
from .decompositions import torch_cholesky as cholesky  # noqa: F401
from .decompositions import torch_svd as svd  # noqa: F401
from .determinant import det, logdet, slogdet  # noqa: F401
from .diagonal import block_diag, diag, diag_embed, diagflat, diagonal, trace, tril_indices, triu_indices  # noqa: F401
from .einsum import einsum  # noqa: F401
from .gamma import digamma, lgamma, polygamma  # noqa: F401
from .grids import cartesian_prod, combinations, meshgrid  # noqa: F401
from .hyperbolic import acosh, arccosh, arcsinh, arctanh, asinh, atanh, cosh, sinh  # noqa: F401
from .indexing import gather, index_fill, scatter, scatter_add  # noqa: F401
from .logic import (  # noqa: F401
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    eq,
    ge,
    gt,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    le,
    logical_and,
    logical_or,
    logical_xor,
    lt,
    ne,
)
from .logic import ge as greater_equal  # noqa: F401
from .logic import gt as greater  # noqa: F401
from .logic import le as less_equal  # noqa: F401
from .logic import lt as less  # noqa: F401
from .logic import ne as not_equal  # noqa: F401
from .matrix_functions import matrix_power  # noqa: F401
from .method_forms import clamp_max, clamp_min, clip  # noqa: F401
from .method_forms import torch_qr as qr  # noqa: F401
from .modulo import floor_divide, fmod, remainder  # noqa: F401
from .more_math import (  # noqa: F401
    ceil,
    deg2rad,
    exp2,
    expm1,
    fix,
    floor,
    frac,
    log1p,
    log2,
    log10,
    nan_to_num,
    neg,
    rad2deg,
    reciprocal,
    round,  # noqa: A004  (PyTorch's name)
    rsqrt,
    sgn,
    sign,
    signbit,
    square,
    trunc,
)
from .norms import norm  # noqa: F401
from .operands import bmm, matmul  # noqa: F401
from .order_stats import kthvalue, median, mode, nanmedian, nanquantile, quantile  # noqa: F401
from .power import pow  # noqa: F401, A004
from .products import chain_matmul, cross, dot, ger, inner, kron, outer, tensordot, vdot  # noqa: F401
from .put import index_add, index_put, masked_scatter  # noqa: F401
from .reorder import (  # noqa: F401
    clone,
    dsplit,
    flip,
    hsplit,
    moveaxis,
    movedim,
    narrow,
    roll,
    rot90,
    split,
    swapaxes,
    swapdims,
    tensor_split,
    unbind,
    unflatten,
    vsplit,
)
from .scan import cummax, cummin, cumprod, diff, logcumsumexp  # noqa: F401
from .selection import index_copy, index_select, masked_select, repeat_interleave, take, take_along_dim  # noqa: F401
from .shape import cat, stack, where  # noqa: F401
from .softplus import softplus  # noqa: F401
from .solve import inv as inverse  # noqa: F401
from .solve import pinverse  # noqa: F401
from .sort import argsort, msort, sort, unique, unique_consecutive  # noqa: F401
from .special import erf, erfc, erfinv, i0, logit, sinc, xlogy  # noqa: F401
from .statistics import aminmax, count_nonzero, nanmean, nansum, std_mean, var_mean  # noqa: F401
from .topk import topk  # noqa: F401
from .triangular import tril, triu  # noqa: F401
from .trig import acos, arccos, arcsin, arctan, arctan2, asin, atan, atan2, cos, sin, tan  # noqa: F401


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


@batching.per_example
def _truth(reduce, input, dim, keepdim: bool, name: str) -> Tensor:  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
    axis = None if dim is None else _dim(dim, input.ndim)
    return Tensor._make(np.asarray(reduce(input._data, axis=axis, keepdims=keepdim)), False, None)


@batching.elementwise_function
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

chunk = _method("chunk")
divide = _method("divide")
multiply = _method("multiply")
subtract = _method("subtract")
negative = _method("negative")
absolute = _method("absolute")
