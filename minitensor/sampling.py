"""Random integers: ``randint``, ``randint_like``, ``randperm``, ``multinomial`` (PyTorch's, not differentiable).

Each draws from ``generator`` (a ``mt.Generator``) or, by default, from the
generator ``mt.manual_seed`` seeds.

>>> import minitensor as mt
>>> _ = mt.manual_seed(0)
>>> probs = mt.tensor([[0.0, 1.0, 0.0]])
>>> mt.multinomial(probs, num_samples=1).tolist()
[[1]]
"""

from __future__ import annotations

import numpy as np

from . import dtypes, random
from ._args import _shape_arg
from ._device import check_device
from .tensor import Tensor


def _int_dtype(dtype, fn: str) -> np.dtype:
    dtype = dtypes.int64 if dtype is None else dtypes.as_dtype(dtype)
    if dtype.kind not in "iuf":
        raise TypeError(f"{fn}: dtype must be an integer or float dtype, got {dtype}")
    return dtype


def _int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) and not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return int(value)


def randint(
    low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """Integers drawn uniformly from ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``.

    Shapes ``size`` (a tuple); the dtype is int64 unless ``dtype`` is given.
    """
    if size is None:
        low, high, size = 0, low, high
    if size is None or high is None:
        raise TypeError("randint: expected randint(high, size) or randint(low, high, size), got no size")
    low, high = _int(low, "randint: low"), _int(high, "randint: high")
    if low >= high:
        raise ValueError(f"randint: low must be < high, got low={low}, high={high}")
    shape = _shape_arg((size,), "randint")
    check_device(device, "randint")
    data = random.generator(generator).integers(low, high, shape).astype(_int_dtype(dtype, "randint"))
    return Tensor._make(data, False, None).requires_grad_(requires_grad)


def randint_like(input: Tensor, low=0, high=None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:  # noqa: A002
    """Integers from ``[low, high)`` shaped like ``input``, in its dtype unless ``dtype`` is given:
    ``randint_like(x, high)`` or ``randint_like(x, low, high)``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"randint_like: input must be a Tensor, got {type(input).__name__}")
    if high is None:
        low, high = 0, low
    dtype = input.dtype if dtype is None else dtype
    return randint(low, high, input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` is given)."""
    n = _int(n, "randperm: n")
    if n < 0:
        raise ValueError(f"randperm: n must be non-negative, got {n}")
    check_device(device, "randperm")
    data = random.generator(generator).permutation(n).astype(_int_dtype(dtype, "randperm"))
    return Tensor._make(data, False, None).requires_grad_(requires_grad)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:  # noqa: A002
    """Indices drawn from the categorical distribution of each row of weights.

    Args:
        input: (C,) or (N, C) non-negative weights (they need not sum to 1).
        num_samples: how many indices to draw per row.
        replacement: draw with replacement; without it an index is drawn at most
            once per row, so ``num_samples`` must not exceed the number of non-zero weights.

    Returns:
        (num_samples,) or (N, num_samples) int64 indices.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial: input must be a Tensor, got {type(input).__name__}")
    num_samples = _int(num_samples, "multinomial: num_samples")
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise ValueError(f"multinomial: input must be a non-empty (C,) or (N, C) tensor, got shape {input.shape}")
    if num_samples < 1:
        raise ValueError(f"multinomial: num_samples must be positive, got {num_samples}")
    weights = np.asarray(input._data, dtype=np.float64).reshape(-1, input.shape[-1])
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError("multinomial: input must hold finite, non-negative weights")
    totals = weights.sum(axis=1)
    if (totals <= 0).any():
        raise ValueError("multinomial: every row of input must have a positive sum")
    nonzero = (weights > 0).sum(axis=1).min()
    if not replacement and num_samples > nonzero:
        raise ValueError(
            f"multinomial: cannot draw num_samples={num_samples} without replacement from a row "
            f"with only {nonzero} non-zero weights"
        )
    rng = random.generator(generator)
    rows = [rng.choice(weights.shape[1], num_samples, replace=replacement, p=w / t) for w, t in zip(weights, totals)]
    out = np.stack(rows).astype(dtypes.int64)
    return Tensor._make(out if input.ndim == 2 else out[0], False, None)
