"""Argument normalisation shared by Tensor's methods: dims, axes, shapes, positive sizes.

Each raises a clear error naming the argument and the bad value.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np


def _dim(dim, ndim: int, name: str = "dim") -> int:
    """Normalise one dim index into [0, ndim) (a 0-d tensor has one dim for this purpose, as in PyTorch)."""
    n = ndim if ndim > 0 else 1
    if type(dim) is int and -n <= dim < n:  # the common case first (every op with a dim pays for this call)
        return dim + n if dim < 0 else dim
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, builtins.bool):
        raise TypeError(f"{name} must be an int, got {type(dim).__name__}")
    if not -n <= dim < n:
        raise ValueError(f"{name} out of range: expected a dim in [{-n}, {n - 1}], got {dim}")
    return int(dim) % n


def _positive_int(value, name: str) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, builtins.bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be positive, got {value}")


def _axes(dim, ndim: int) -> tuple:
    """``dim`` (None, int or tuple of ints) -> a sorted tuple of dims in [0, ndim)."""
    if dim is None:
        return tuple(range(ndim))
    if type(dim) is int:  # (the common case, without the set and the sort)
        d = _dim(dim, ndim)
        return (d,) if ndim else ()
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    axes = tuple(sorted({_dim(d, ndim) for d in dims}))
    if ndim == 0:
        return ()
    if len(axes) != len(dims):
        raise ValueError(f"dim contains a repeated dim: {dim}")
    return axes


def _shape_arg(shape: tuple, fn: str) -> tuple:
    """Accept ``f(2, 3)`` and ``f((2, 3))`` alike; every size must be an int."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        for s in shape:  # find the culprit (a float, or a float Tensor whose __index__ refuses)
            try:
                operator.index(s)
            except TypeError:
                raise TypeError(f"{fn}: sizes must be ints, got {type(s).__name__} {s!r} in {shape}") from None
        raise
