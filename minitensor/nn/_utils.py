"""Small helpers shared by the layers' constructors: size and dtype checks, empty parameters."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._device import check_device
from .parameter import Parameter


def check_size(value, name: str, layer: str) -> int:
    """A positive int size, or ValueError/TypeError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{layer}: {name} must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{layer}: {name} must be positive, got {value}")
    return int(value)


def float_dtype(dtype, layer: str, device=None) -> np.dtype:
    """The parameter dtype of a new layer: the default float dtype when None.

    Also checks the layer's ``device`` argument (None or 'cpu', else ValueError).
    """
    check_device(device, layer)
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    if not dtypes.is_floating(dtype):
        raise TypeError(f"{layer}: dtype must be a float dtype (mt.float32 or mt.float64), got {dtype}")
    return dtype


def empty_parameter(shape: tuple, dtype: np.dtype) -> Parameter:
    """A Parameter of ``shape`` to be filled by an init function."""
    return Parameter(np.empty(shape, dtype=dtype))


def scale_and_shift(module, shape: tuple, dtype: np.dtype, affine: bool, bias: bool) -> None:
    """A normalisation layer's ``weight`` (ones) and ``bias`` (zeros) of ``shape``, registered as
    None where ``affine`` or ``bias`` says the layer has none (as PyTorch's norm layers)."""
    module.register_parameter("weight", Parameter(np.ones(shape, dtype)) if affine else None)
    module.register_parameter("bias", Parameter(np.zeros(shape, dtype)) if affine and bias else None)


def reset_scale_and_shift(module) -> None:
    """weight = 1, bias = 0, for those of the two the layer has."""
    if module.weight is not None:
        module.weight._data[...] = 1
        module.weight._version += 1
    if module.bias is not None:
        module.bias._data[...] = 0
        module.bias._version += 1
