"""Functions of matrices built on the decompositions: ``matrix_norm``, ``norm`` (``torch.linalg.norm``),
``matrix_power``, ``matrix_rank``, ``cond``, and the small ones ``vecdot``, ``linalg.matmul``,
``linalg.diagonal``.

All are compositions of differentiable ops, so their gradients (of every order) come from those:

- ``matrix_norm``: 'fro' is the 2-norm of all entries; 'nuc', 2 and -2 are the sum, largest and
  smallest singular value (``svdvals``); inf, -inf, 1, -1 the largest/smallest absolute row/column
  sum (``amax``/``amin``: ties share the gradient);
- ``matrix_power(A, n)``: repeated squaring (``inv`` first for n < 0; the identity for n = 0).

>>> a = mt.tensor([[1.0, -2.0], [3.0, 4.0]])
>>> mt.linalg.matrix_norm(a, 1), mt.linalg.matrix_norm(a, float("inf")), mt.linalg.matrix_rank(a)
(tensor(6.), tensor(7.), tensor(2))
>>> mt.linalg.matrix_power(a, 2)
tensor([[ -5., -10.],
        [ 15.,  10.]])
"""

from __future__ import annotations

import math

import numpy as np

from .._args import _dim
from ..autograd import batching
from ..tensor import Tensor
from .arguments import bool_arg, int_arg, matrix_input, number_arg, tensor_input
from .decompositions import svdvals
from .diagonal import diagonal as _diagonal
from .norms import vector_norm
from .operands import matmul as _matmul
from .products import vecdot as _vecdot
from .reorder import movedim
from .solve import _cutoff, inv

_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def _two_dims(dim, ndim: int, fn: str) -> tuple:
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise ValueError(f"{fn}: dim must be a pair of dims, got {dim!r}")
    d0, d1 = (_dim(d, ndim, f"{fn}: dim") for d in dim)
    if d0 == d1:
        raise ValueError(f"{fn}: dim must name two different dims, got {tuple(dim)}")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None):  # noqa: N803, A002
    """The ``ord`` norm of the matrices in dims ``dim``: 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2."""
    tensor_input(A, "linalg.matrix_norm", "A")
    if ord not in _MATRIX_ORDS:
        raise ValueError(f"linalg.matrix_norm: ord must be one of {_MATRIX_ORDS}, got {ord!r}")
    x = A if dtype is None else A.to(dtype)
    matrix_input(x, "linalg.matrix_norm")
    d0, d1 = _two_dims(dim, x.ndim, "linalg.matrix_norm")
    keepdim = bool_arg(keepdim, "linalg.matrix_norm", "keepdim")
    if ord == "fro":
        return vector_norm(x, 2, dim=(d0, d1), keepdim=keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(movedim(x, (d0, d1), (-2, -1)))
        out = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        for d in sorted((d0, d1)) if keepdim else ():
            out = out.unsqueeze(d)
        return out
    summed, kept = (d1, d0) if ord in (math.inf, -math.inf) else (d0, d1)  # (row sums for inf, column sums for 1)
    sums = x.abs().sum(summed, keepdim=True)
    out = sums.amax(kept, keepdim=True) if ord > 0 else sums.amin(kept, keepdim=True)
    return out if keepdim else out.squeeze((d0, d1))


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: N803, A002
    """``torch.linalg.norm``: a vector norm over one dim (or all, flattened, when ``ord`` and ``dim`` are
    None), a matrix norm over two (``dim`` a pair, or a 2-D input with ``ord`` given)."""
    tensor_input(A, "linalg.norm", "A")
    x = A if dtype is None else A.to(dtype)
    if isinstance(dim, (tuple, list)) and len(dim) == 2:
        return matrix_norm(x, "fro" if ord is None else ord, dim, keepdim)
    if dim is None and ord is not None:
        if x.ndim == 2:
            return matrix_norm(x, ord, (-2, -1), keepdim)
        if x.ndim != 1:
            raise ValueError(f"linalg.norm: with ord and no dim the input must be 1-D or 2-D, got shape {x.shape}")
    if isinstance(ord, str):
        raise ValueError(f"linalg.norm: the vector norm's ord must be a number, got {ord!r}")
    return vector_norm(x, 2 if ord is None else ord, dim, keepdim)


def matrix_power(A, n: int):  # noqa: N803
    """A multiplied by itself ``n`` times (n = 0: the identity; n < 0: powers of the inverse)."""
    matrix_input(A, "linalg.matrix_power", square=True) if A.dtype.kind == "f" else tensor_input(A, "matrix_power")
    n = int_arg(n, "linalg.matrix_power", "n")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"linalg.matrix_power: A must be a batch of square matrices, got shape {A.shape}")
    if n == 0:
        identity = np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape)
        return Tensor._make(identity.copy(), False, None)
    base = inv(A) if n < 0 else A
    n = abs(n)
    result = None
    while n:
        if n & 1:
            result = base if result is None else _matmul(result, base)
        n >>= 1
        if n:
            base = _matmul(base, base)
    return result


@batching.per_example  # (reads the values: under vmap, once per example)
def matrix_rank(A, *, atol=None, rtol=None, hermitian: bool = False, tol=None):  # noqa: N803
    """The number of singular values (absolute eigenvalues with ``hermitian``) above ``max(atol, rtol * the
    largest)``; rtol defaults to eps * max(m, n) when neither is given.  int64, no gradient."""
    matrix_input(A, "linalg.matrix_rank")
    if tol is not None:  # (PyTorch's older name of atol)
        atol = tol
    atol, rtol = (v.item() if isinstance(v, Tensor) else v for v in (atol, rtol))
    for name, value in (("atol", atol), ("rtol", rtol)):
        if value is not None:
            number_arg(value, "linalg.matrix_rank", name)
    data = A._data
    if bool_arg(hermitian, "linalg.matrix_rank", "hermitian"):
        s = np.abs(np.linalg.eigvalsh(data))
    else:
        s = np.linalg.svd(data, compute_uv=False)
    rank = np.sum(s > _cutoff(s, atol, rtol, data.shape), axis=-1)
    return Tensor._make(np.asarray(rank, dtype=np.int64), False, None)


def cond(A, p=None):  # noqa: N803
    """The condition number ``norm(A, p) * norm(inv(A), p)``; p None or 2: largest / smallest singular value
    (any shape), -2: smallest / largest."""
    matrix_input(A, "linalg.cond")
    if p is None or p in (2, -2):
        s = svdvals(A)
        ratio = s.amax(-1) / s.amin(-1)
        return ratio if p in (None, 2) else 1 / ratio
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def vecdot(x, y, *, dim: int = -1):
    """The dot products of the vectors along ``dim`` (x and y broadcast)."""
    tensor_input(x, "linalg.vecdot", "x")
    tensor_input(y, "linalg.vecdot", "y")
    if x.dtype.kind != "f" or y.dtype.kind != "f":
        raise TypeError(f"linalg.vecdot: expected floating point tensors, got {x.dtype} and {y.dtype}")
    return _vecdot(x, y, dim)


def matmul(input, other):  # noqa: A002
    """``torch.linalg.matmul``: ``input @ other``."""
    return _matmul(tensor_input(input, "linalg.matmul"), tensor_input(other, "linalg.matmul", "other"))


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):  # noqa: N803
    """``torch.linalg.diagonal``: ``diagonal`` with the last two dims as the default."""
    return _diagonal(A, offset, dim1, dim2)
