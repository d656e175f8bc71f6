"""PyTorch's legacy typed constructors: ``mt.FloatTensor``, ``mt.LongTensor`` ...

As in PyTorch, ``mt.LongTensor([1, 2])`` makes a tensor from data, while
``mt.FloatTensor(2, 3)`` (ints only) makes one of that shape (zero-filled here;
uninitialised in PyTorch).  ``isinstance(t, mt.FloatTensor)`` checks the dtype.

>>> import minitensor as mt
>>> mt.LongTensor([1, 2]).dtype, mt.FloatTensor(2, 3).shape
(dtype('int64'), (2, 3))
>>> isinstance(mt.tensor([1.0]), mt.FloatTensor)
True
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .tensor import Tensor


class _TypedTensorMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype


class _TypedTensor(metaclass=_TypedTensorMeta):
    dtype = dtypes.float32

    def __new__(cls, *args) -> Tensor:
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return Tensor._make(np.zeros(args, cls.dtype), False, None)
        if len(args) != 1:
            raise TypeError(f"{cls.__name__}: expected sizes (ints) or one sequence of data, got {args!r}")
        return Tensor(args[0], dtype=cls.dtype)


def _typed(name: str, dtype: np.dtype) -> type:
    return _TypedTensorMeta(name, (_TypedTensor,), {"dtype": dtype, "__module__": __name__})


FloatTensor = _typed("FloatTensor", dtypes.float32)
DoubleTensor = _typed("DoubleTensor", dtypes.float64)
HalfTensor = _typed("HalfTensor", dtypes.float16)
LongTensor = _typed("LongTensor", dtypes.int64)
IntTensor = _typed("IntTensor", dtypes.int32)
ByteTensor = _typed("ByteTensor", dtypes.uint8)
BoolTensor = _typed("BoolTensor", dtypes.bool)
