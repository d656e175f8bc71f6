"""``mt.finfo`` and ``mt.iinfo``: the numeric limits of a dtype, as PyTorch's ``torch.finfo``/``torch.iinfo``.

>>> import minitensor as mt
>>> mt.finfo(mt.float32).eps
1.1920928955078125e-07
>>> mt.finfo().dtype, mt.finfo().tiny          # the default float dtype
('float32', 1.1754943508222875e-38)
>>> mt.iinfo(mt.int8).max
127
"""

from __future__ import annotations

import numpy as np

from . import dtypes


def _dtype(dtype) -> np.dtype:
    """A dtype, a Tensor's dtype, or anything ``mt.dtypes.as_dtype`` reads."""
    return dtypes.as_dtype(getattr(dtype, "dtype", dtype), "dtype")


class finfo:  # noqa: N801  (PyTorch's name)
    """Limits of a float dtype (default: the default float dtype).

    Attributes: ``bits``, ``eps`` (the gap between 1 and the next number), ``max``, ``min`` (= -max),
    ``tiny`` and ``smallest_normal`` (the smallest positive normal number), ``resolution``
    (10 ** -precision in decimal digits), ``dtype`` (its name, e.g. ``'float32'``).  Python floats.
    """

    def __init__(self, dtype=None) -> None:
        d = dtypes.get_default_dtype() if dtype is None else _dtype(dtype)
        if d.kind != "f":
            raise TypeError(f"finfo: requires a floating point dtype, got {d} (use mt.iinfo for integer dtypes)")
        info = np.finfo(d)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = d.name

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:  # noqa: N801  (PyTorch's name)
    """Limits of an integer dtype: ``bits``, ``max``, ``min`` (Python ints) and ``dtype`` (its name)."""

    def __init__(self, dtype) -> None:
        d = _dtype(dtype)
        if d.kind == "b":
            raise TypeError("iinfo: bool is not supported (it has no integer limits)")
        if d.kind not in "iu":
            raise TypeError(f"iinfo: requires an integer dtype, got {d} (use mt.finfo for float dtypes)")
        info = np.iinfo(d)
        self.bits, self.max, self.min, self.dtype = int(info.bits), int(info.max), int(info.min), d.name

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
