"""The sliding-window arguments of convolution, unfold and fold: checked, as tuples, before any work.

``kernel_size``, ``stride``, ``padding``, ``dilation`` (and ``output_padding``) are an int, or a
tuple (or list) with one int per spatial dim, as in PyTorch.  ``grid`` is the number of windows
along one dim, the output size of a convolution.
"""

from __future__ import annotations

import numbers


def as_tuple(value, dims: int, name: str, fn: str, minimum: int) -> tuple:
    """``value`` as a tuple of ``dims`` ints >= ``minimum``, else TypeError/ValueError naming ``name``.

    >>> as_tuple(2, 2, "stride", "conv2d", 1), as_tuple([1, 3], 2, "stride", "conv2d", 1)
    ((2, 2), (1, 3))
    """
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims
    if len(values) == dims and all(type(v) is int and v >= minimum for v in values):
        return values  # (the common case, without the checks below: ``numbers.Integral`` is a slow test)
    if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) for v in values):
        raise TypeError(f"{fn}: {name} must be an int or a tuple of {dims} ints, got {value!r}")
    if len(values) != dims:
        raise ValueError(f"{fn}: {name} must be an int or a tuple of {dims} ints, got {value!r}")
    if any(v < minimum for v in values):
        limit = "positive" if minimum == 1 else "non-negative" if minimum == 0 else f"at least {minimum}"
        raise ValueError(f"{fn}: {name} must be {limit}, got {value!r}")
    return tuple(int(v) for v in values)


def grid(size: int, kernel: int, stride: int, before: int, after: int, dilation: int) -> int:
    """How many windows fit along a dim of ``size`` padded by ``before`` and ``after``
    (< 1 when the dilated kernel is larger than the padded input)."""
    return (size + before + after - dilation * (kernel - 1) - 1) // stride + 1


def check_kernel_fits(spatial: tuple, kernel: tuple, pads: tuple, dilation: tuple, fn: str) -> None:
    """ValueError when the dilated kernel is larger than the padded input along some dim; ``pads``
    holds (before, after) per dim."""
    padded = tuple(n + b + a for n, (b, a) in zip(spatial, pads))
    reach = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(r > p for r, p in zip(reach, padded)):
        dilated = f" (dilated by {dilation}: {reach})" if any(d > 1 for d in dilation) else ""
        raise ValueError(
            f"{fn}: the kernel {kernel}{dilated} is larger than the padded input {padded} "
            f"(input size {spatial}, padding {tuple(b for b, _ in pads)}): the kernel must fit inside it"
        )
