"""Ways to make tensors: from data, filled with a value, or random.

Shapes may be given as separate ints or as one tuple: ``mt.zeros(2, 3)`` and
``mt.zeros((2, 3))`` are the same.  Float tensors get the default dtype
(``mt.get_default_dtype()``, float32 unless changed) unless ``dtype`` is given.
Every factory takes PyTorch's ``device=`` (None or ``'cpu'``; anything else
raises ValueError naming the device); the random ones take ``generator=``.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, random
from .._args import _shape_arg
from .._device import check_device
from .tensor import Tensor


def _float_dtype(dtype) -> np.dtype:
    return dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)


def _random_dtype(dtype, fn: str) -> np.dtype:
    """The dtype of random samples: a float dtype (default: the default float dtype)."""
    dtype = _float_dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"{fn}: dtype must be a float dtype (mt.float32 or mt.float64), got {dtype}")
    return dtype


def _check_like(t, fn: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}: expected a Tensor to take the shape of, got {type(t).__name__}")


def _check_shape(shape: tuple, fn: str) -> tuple:
    shape = _shape_arg(shape, fn)
    if any(s < 0 for s in shape):
        raise ValueError(f"{fn}: sizes must be non-negative, got shape {shape}")
    return shape


def _new(data: np.ndarray, requires_grad: bool, device=None, fn: str = "factory") -> Tensor:
    check_device(device, fn)
    t = Tensor._make(data, False, None)
    return t.requires_grad_(True) if requires_grad else t


def tensor(data, dtype=None, requires_grad: bool = False, *, device=None, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (Python numbers, lists, arrays).

    ``device`` must be None or 'cpu'; ``pin_memory`` is accepted and ignored (no GPU).

    >>> mt.tensor([[1.0, 2.0]]).shape
    (1, 2)
    """
    check_device(device, "tensor")
    return Tensor(data, dtype=dtype, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array`` (keeps its dtype).  A subclass of ndarray (a ``np.memmap``,
    a masked array's data) is held as a plain ndarray view of the same memory: the ops then run
    NumPy's functions, not the subclass's Python-level hooks (a memmap's cost 2 µs per item of
    ``np.stack``)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: array must be a numpy.ndarray, got {type(array).__name__}")
    return Tensor._make(array if type(array) is np.ndarray else array.view(np.ndarray), False, None)


def zeros(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _new(np.zeros(_check_shape(shape, "zeros"), _float_dtype(dtype)), requires_grad, device, "zeros")


def ones(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _new(np.ones(_check_shape(shape, "ones"), _float_dtype(dtype)), requires_grad, device, "ones")


def empty(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _new(np.empty(_check_shape(shape, "empty"), _float_dtype(dtype)), requires_grad, device, "empty")


def full(shape, fill_value, dtype=None, requires_grad: bool = False, *, device=None) -> Tensor:
    shape = _check_shape(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,), "full")
    if dtype is None and isinstance(fill_value, (bool, np.bool_)):
        dtype = dtypes.bool
    elif dtype is None and isinstance(fill_value, (int, np.integer)):
        dtype = dtypes.int64
    return _new(np.full(shape, fill_value, _float_dtype(dtype)), requires_grad, device, "full")


def zeros_like(t: Tensor, dtype=None, requires_grad: bool = False, *, device=None) -> Tensor:
    _check_like(t, "zeros_like")
    dtype = t.dtype if dtype is None else dtypes.as_dtype(dtype)
    return _new(np.zeros(t.shape, dtype), requires_grad, device, "zeros_like")


def ones_like(t: Tensor, dtype=None, requires_grad: bool = False, *, device=None) -> Tensor:
    _check_like(t, "ones_like")
    dtype = t.dtype if dtype is None else dtypes.as_dtype(dtype)
    return _new(np.ones(t.shape, dtype), requires_grad, device, "ones_like")


def randn(*shape, dtype=None, requires_grad: bool = False, generator=None, device=None) -> Tensor:
    """Standard normal samples from ``generator`` (default: minitensor's, see ``mt.manual_seed``)."""
    shape = _check_shape(shape, "randn")
    dtype = _random_dtype(dtype, "randn")
    draws = random.generator(generator).standard_normal(random.example_shape(shape)).astype(dtype)
    return random.as_examples(_new(draws, requires_grad, device, "randn"))  # (inside vmap: one per example)


def rand(*shape, dtype=None, requires_grad: bool = False, generator=None, device=None) -> Tensor:
    """Uniform samples in [0, 1) from ``generator`` (default: minitensor's)."""
    shape = _check_shape(shape, "rand")
    dtype = _random_dtype(dtype, "rand")
    draws = random.generator(generator).random(random.example_shape(shape)).astype(dtype)
    return random.as_examples(_new(draws, requires_grad, device, "rand"))  # (inside vmap: one per example)


def empty_like(t: Tensor, dtype=None, requires_grad: bool = False, *, device=None) -> Tensor:
    _check_like(t, "empty_like")
    check_device(device, "empty_like")
    return zeros_like(t, dtype=dtype, requires_grad=requires_grad)


def full_like(t: Tensor, fill_value, dtype=None, requires_grad: bool = False, *, device=None) -> Tensor:
    _check_like(t, "full_like")
    dtype = t.dtype if dtype is None else dtypes.as_dtype(dtype)
    return _new(np.full(t.shape, fill_value, dtype), requires_grad, device, "full_like")


def randn_like(t: Tensor, dtype=None, requires_grad: bool = False, *, device=None) -> Tensor:
    _check_like(t, "randn_like")
    check_device(device, "randn_like")
    return randn(t.shape, dtype=t.dtype if dtype is None else dtype, device=device, requires_grad=requires_grad)


def rand_like(t: Tensor, dtype=None, requires_grad: bool = False, *, device=None) -> Tensor:
    _check_like(t, "rand_like")
    check_device(device, "rand_like")
    return rand(t.shape, dtype=t.dtype if dtype is None else dtype, device=device, requires_grad=requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad: bool = False, *, device=None) -> Tensor:
    """Values from ``start`` (0 if only one bound is given) up to ``end``, exclusive."""
    if end is None:
        start, end = 0, start
    for name, value in (("start", start), ("end", end), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"arange: {name} must be a number, got {type(value).__name__}")
    if step == 0:
        raise ValueError("arange: step must be non-zero, got 0")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = dtypes.int64 if ints else dtypes.get_default_dtype()
    return _new(np.arange(start, end, step, dtype=dtypes.as_dtype(dtype)), requires_grad, device, "arange")


def eye(n: int, m: int | None = None, dtype=None, requires_grad: bool = False, *, device=None) -> Tensor:
    _check_shape((n, n if m is None else m), "eye")
    return _new(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad, device, "eye")
