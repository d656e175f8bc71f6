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


# ----------------------------------------------------------------- type promotion (PyTorch's rules)
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}  # bool < integer < floating
_TORCH_NAMES = {
    "float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char", "int16": "Short",
    "int32": "Int", "int64": "Long", "uint8": "Byte", "bool": "Bool",
}  # fmt: skip


def torch_name(dtype: np.dtype) -> str:
    """PyTorch's name of a dtype in its messages (``Float`` for float32, ``Long`` for int64)."""
    return _TORCH_NAMES.get(dtype.name, dtype.name)


def category(dtype: np.dtype) -> builtins.int:
    """0 for bool, 1 for integers, 2 for floats: the order in which categories win a promotion."""
    return _CATEGORY[dtype.kind]


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """The smallest dtype both ``a`` and ``b`` fit in, as ``torch.promote_types``.

    NumPy's ``promote_types`` except that a float beats any integer as it is:
    ``int64 + float16 -> float16`` (NumPy gives float64).

    >>> promote_types(np.dtype("int32"), np.dtype("float16"))
    dtype('float16')
    """
    if a == b:
        return a
    if a.kind == "f" and b.kind != "f":
        return a
    if b.kind == "f" and a.kind != "f":
        return b
    return np.promote_types(a, b)


def result_type(*operands) -> np.dtype:
    """The dtype of an op on ``operands`` (Tensors, arrays, Python bools/ints/floats), as ``torch.result_type``.

    Operands come in three priority classes: tensors with dimensions, 0-d tensors, and Python
    numbers.  Each class promotes within itself; a lower class changes the result only when its
    *category* (bool < integer < float) is higher, and then a Python float means the default
    float dtype and a Python int means int64.  So a 0-d float64 tensor does not upcast a float32
    tensor, ``int32 + 5`` stays int32, and ``int32 * 1.5`` is float32:

    >>> result_type(mt.ones(2), mt.tensor(0.5, dtype=mt.float64))
    dtype('float32')
    >>> result_type(mt.ones(2, dtype=mt.int32), 1.5)
    dtype('float32')
    """
    dims = zeros = numbers = None
    for x in operands:
        if isinstance(x, builtins.bool):
            d = bool
        elif isinstance(x, builtins.int):
            d = int64
        elif isinstance(x, builtins.float):
            d = _default_float
        else:
            d = x.dtype
            if x.ndim == 0:
                zeros = d if zeros is None else promote_types(zeros, d)
                continue
            dims = d if dims is None else promote_types(dims, d)
            continue
        numbers = d if numbers is None else promote_types(numbers, d)
    return _combine(dims, _combine(zeros, numbers))


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """``higher``'s class wins unless ``lower`` is of a higher category (PyTorch's combine_categories)."""
    if higher is None:
        return lower
    if lower is None or higher.kind == "f":
        return higher
    if higher.kind == "b" or lower.kind == "f":
        return promote_types(higher, lower)
    return higher
