"""The operands of Tensor ops: Python numbers and arrays next to Tensors, type promotion, shapes.

Every binary op (``x + y``, ``x < 2``, ``mt.where``, ``x @ w``) goes through here before its
``Function`` runs:

- ``_operand``: the other side of an op becomes a Tensor or stays a Python number;
- ``_promoted``: both sides in the dtype of the result, by PyTorch's type promotion
  (``dtypes.result_type``), so NumPy's own rules never decide it;
- ``_binary``: an op applied after that, with a clear error for shapes that do not broadcast;
- ``stretched``: an operand brought to a broadcast shape, as a view only where it needs one.
"""

from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..autograd import batching
from ..tensor import Tensor
from . import linalg as L

MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])


def _operand(x, like=None):
    """Turn the other side of a binary op into a Tensor or a Python scalar.

    A float array next to a float Tensor ``like`` takes ``like``'s dtype, so it
    neither upcasts a float32 op nor loses precision in a float64 one.
    """
    if isinstance(x, Tensor) or type(x) in (float, int, builtins.bool):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (np.ndarray, list, tuple)):
        floats = isinstance(like, Tensor) and like.dtype.kind == "f" and np.asarray(x).dtype.kind == "f"
        return Tensor(x, dtype=like.dtype if floats else None)
    raise TypeError(f"unsupported operand type for a Tensor op: {type(x).__name__}")


def stretched(t: Tensor, shape: tuple) -> Tensor:
    """``t.expand(*shape)``, or ``t`` itself where it has that shape already (no view to record and
    to run backward through: for ops that bring their operands to one shape first)."""
    return t if t.shape == shape else t.expand(*shape)


def _shape_of(x) -> tuple:
    return x.shape if isinstance(x, Tensor) else ()


def _binary(cls, a, b, name: str, floating: bool = False):
    """Apply a broadcasting binary op (after PyTorch's type promotion), with a clear error for mismatched
    shapes.  ``floating``: integers make a float result (true division)."""
    same = isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.dtype == b._data.dtype
    if not same or (floating and a._data.dtype.kind != "f"):  # (the common case, two Tensors of one dtype, skips it)
        a, b = _promoted(_operand(a, b), _operand(b, a), floating)
    try:
        return cls.apply(a, b)
    except ValueError:
        try:
            np.broadcast_shapes(_shape_of(a), _shape_of(b))
        except ValueError:
            raise ValueError(f"{name}: shapes {_shape_of(a)} and {_shape_of(b)} cannot be broadcast together") from None
        raise


def _promoted(a, b, floating: bool = False) -> tuple:
    """``a`` and ``b`` (Tensors or Python numbers) cast to the dtype of their result, as PyTorch
    promotes (``dtypes.result_type``): so NumPy's own rules (float32 and a float64 0-d array make
    float64, int32 and an int64 0-d array make int64) never decide it.  ``floating``: the result
    is a float even from integers (true division).  A Python int that does not fit an integer
    result's dtype wraps around, as in PyTorch (``uint8 + 300`` adds 44)."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if a._data.dtype == b._data.dtype and (not floating or a._data.dtype.kind == "f"):
            return a, b  # (the common case: nothing to decide)
    dtype = dtypes.result_type(a, b)
    if floating and dtype.kind != "f":
        dtype = dtypes.get_default_dtype()
    return _cast(a, dtype), _cast(b, dtype)


def _cast(x, dtype: np.dtype):
    """One operand of ``_promoted`` in ``dtype`` (a Python float or int stays a number, which
    NumPy then takes in the other operand's dtype)."""
    if isinstance(x, Tensor):
        return x if x._data.dtype == dtype else x.to(dtype)
    if type(x) is int and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= x <= info.max:
            return np.array(x, dtype=dtypes.int64).astype(dtype)  # (an int beyond int64 raises OverflowError)
    return x


@batching.elementwise_function
def _compare(ufunc, a, b) -> Tensor:
    """``a < b`` and friends: a bool tensor, the operands compared in their promoted dtype."""
    a, b = _promoted(a, _operand(b, a))
    return Tensor._make(ufunc(a._data, b._data if isinstance(b, Tensor) else b), False, None)


def _watched(mask, array: np.ndarray):
    """The mask for an op whose backward keeps it: the Tensor itself (its version is then watched,
    and an in-place change before backward raises, as in PyTorch), or a copy of any other array
    (the caller may change it in place; a list or scalar ``array`` is already a new one)."""
    if isinstance(mask, Tensor):
        return mask
    return array.copy() if array is mask else array


def _index_key(key):
    """Tensors inside an index become arrays; lists become integer/bool arrays."""
    if isinstance(key, tuple):
        return tuple(_index_key(k) for k in key)
    if isinstance(key, Tensor):
        return key._data
    if isinstance(key, list):
        return np.asarray(key)
    return key


def bmm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002
    """Batched matrix product of (b, n, m) and (b, m, p) tensors: (b, n, p), no broadcasting."""
    for name, x in (("input", input), ("mat2", mat2)):
        if not isinstance(x, Tensor) or x.ndim != 3:
            raise ValueError(f"bmm: {name} must be a 3-D Tensor, got {getattr(x, 'shape', type(x).__name__)}")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise ValueError(f"bmm: shapes {input.shape} and {mat2.shape} do not fit: expected (b, n, m) and (b, m, p)")
    return matmul(input, mat2)


def matmul(a, b) -> Tensor:
    """Matrix product with ``np.matmul`` semantics (batch dims broadcast, 1-D operands)."""
    a, b = _operand(a, b), _operand(b, a)
    sa, sb = _shape_of(a), _shape_of(b)
    if len(sa) == 0 or len(sb) == 0:
        raise ValueError(f"matmul: both operands need at least 1 dim, got shapes {sa} and {sb}")
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.dtype.kind != b._data.dtype.kind:
        if {a.dtype.kind, b.dtype.kind} == {"f", "i"}:  # float32 @ int64 stays float32
            a, b = (a, b.to(a.dtype)) if a.dtype.kind == "f" else (a.to(b.dtype), b)
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if sa[-1] != k_b:
        raise ValueError(f"matmul: shapes {sa} and {sb} are not aligned: {sa[-1]} (last dim of the first) != {k_b}")
    try:
        return L.Matmul.apply(a, b)
    except ValueError:
        raise ValueError(f"matmul: batch dims of shapes {sa} and {sb} cannot be broadcast together") from None
