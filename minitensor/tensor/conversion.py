"""``as_tensor``: data as a tensor, sharing memory with it where it can (PyTorch's ``torch.as_tensor``).

- a Tensor comes back as it is (the same object), or converted with ``to(dtype)`` (differentiable);
- a NumPy array (or NumPy scalar) keeps its dtype and shares its memory, unless ``dtype`` asks for
  another dtype (then it is a converted copy);
- anything else (Python numbers, nested lists) is read as ``mt.tensor`` reads it.

>>> import numpy as np
>>> a = np.zeros(3)
>>> t = mt.as_tensor(a)
>>> a[0] = 1.0
>>> t.tolist(), t.dtype        # same memory, NumPy's float64 kept
([1.0, 0.0, 0.0], dtype('float64'))
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._device import check_device
from .tensor import Tensor


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a Tensor, without a copy where possible; ``dtype`` converts, ``device`` must be None or 'cpu'."""
    check_device(device, "as_tensor")
    dtype = None if dtype is None else dtypes.as_dtype(dtype, "as_tensor: dtype")
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    if isinstance(data, (np.ndarray, np.generic)):
        array = np.asarray(data)
        if array.dtype.kind not in "biuf":
            raise TypeError(
                f"as_tensor: NumPy arrays of dtype {array.dtype} are not supported (numbers and bools only)"
            )
        if dtype is not None and array.dtype != dtype:
            array = array.astype(dtype)
        return Tensor._make(array if type(array) is np.ndarray else array.view(np.ndarray), False, None)
    return Tensor(data, dtype=dtype)
