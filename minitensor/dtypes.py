"""The dtypes minitensor knows, and the default float dtype.

A dtype is a ``numpy.dtype``: ``mt.float32 == np.float32`` is True and
``t.dtype`` is exactly ``t.numpy().dtype``.
"""

from __future__ import annotations

import builtins

import numpy as np

float32 = np.dtype("float32")
float64 = np.dtype("float64")
int64 = np.dtype("int64")
bool = np.dtype("bool")  # noqa: A001  (mirrors torch.bool)
float16 = np.dtype("float16")
int32 = np.dtype("int32")
int16 = np.dtype("int16")
int8 = np.dtype("int8")
uint8 = np.dtype("uint8")
dtype = np.dtype  # ``isinstance(t.dtype, mt.dtype)``

# PyTorch's other names for the same dtypes.
half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001


class UnsupportedDtype:
    """A PyTorch dtype NumPy does not have (``mt.bfloat16``): it can be named and compared,
    but making data with it raises a TypeError."""

    def __init__(self, name: str, advice: str) -> None:
        self.name, self.advice = name, advice

    def __repr__(self) -> str:
        return f"minitensor.{self.name}"


bfloat16 = UnsupportedDtype("bfloat16", "NumPy has no bfloat16; use mt.float32 (or mt.float16)")

_FLOATS = (float32, float64)
_default_float = float32


def get_default_dtype() -> np.dtype:
    """The float dtype of new tensors made from Python floats (float32 unless changed)."""
    return _default_float


def set_default_dtype(dtype) -> None:
    """Set the default float dtype: ``mt.float32`` or ``mt.float64``."""
    global _default_float
    d = as_dtype(dtype, "dtype")
    if d not in _FLOATS:
        raise TypeError(f"set_default_dtype: dtype must be float32 or float64, got {d}")
    _default_float = d


def as_dtype(dtype, name: str = "dtype") -> np.dtype:
    """Turn anything NumPy accepts as a dtype into a ``numpy.dtype``, or raise TypeError."""
    if dtype is builtins.float:
        return _default_float
    if isinstance(dtype, UnsupportedDtype):
        raise TypeError(f"{name}: minitensor does not support {dtype.name} ({dtype.advice})")
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name} must be a dtype such as mt.float32, got {dtype!r}") from None


def is_floating(dtype: np.dtype) -> builtins.bool:
    return dtype.kind == "f"
