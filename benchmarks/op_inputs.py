"""What a benchmark case is, and the input makers that several case files share.

A case is ``Case(name, family, inputs, run, constants)``: ``inputs(rng, rows,
cols)`` makes the NumPy inputs (float arrays become leaf tensors that require
gradients, except those at the positions in ``constants``; integer and bool
arrays stay constant), and ``run(lib, F, *tensors)`` is the op, written once for
both libraries (``lib`` is ``minitensor`` or ``torch``, ``F`` its
``nn.functional``).  The main input has ``rows x cols`` float32 elements
(256 x 512 = 2^17, or 16 x 16).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

F32 = np.float32


class Case(NamedTuple):
    name: str
    family: str
    inputs: Callable  # (rng, rows, cols) -> tuple of arrays
    run: Callable  # (lib, F, *tensors) -> tensor
    constants: tuple = ()  # positions of float inputs that need no gradient


def normal(rng, r, c):
    """x (r, c), standard normal."""
    return (rng.standard_normal((r, c), dtype=F32),)


def uniform(low: float, high: float) -> Callable:
    """An input maker of x (r, c) uniform in (low, high): for ops defined on an interval."""

    def inputs(rng, r, c):
        return (rng.uniform(low, high, (r, c)).astype(F32),)

    return inputs


positive = uniform(0.5, 2.0)
near_one = uniform(0.9, 1.1)  # factors near 1: a product of a row neither overflows nor underflows


def distinct(rng, r, c):
    """x without ties (a sort of tied values may order them either way)."""
    return ((rng.permutation(r * c).reshape(r, c) / (r * c) - 0.5).astype(F32),)


def normal_pair(rng, r, c):
    """x and y (r, c), standard normal."""
    return rng.standard_normal((r, c), dtype=F32), rng.standard_normal((r, c), dtype=F32)


def with_row(rng, r, c):
    """x (r, c) and a row b (c,) that broadcasts against it."""
    return rng.standard_normal((r, c), dtype=F32), rng.standard_normal(c, dtype=F32)


def with_divisor(rng, r, c):
    """x (r, c) and a divisor y (r, c) in (0.5, 2)."""
    return rng.standard_normal((r, c), dtype=F32), rng.uniform(0.5, 2.0, (r, c)).astype(F32)


def with_row_index(rng, r, c):
    """x and r row indices (with repeats: the backward must add them up)."""
    return rng.standard_normal((r, c), dtype=F32), rng.integers(0, r, r)


def with_mask(rng, r, c):
    """x and a bool mask of its shape, ~30% True."""
    return rng.standard_normal((r, c), dtype=F32), rng.random((r, c)) < 0.3


def image_shape(r, c) -> tuple:
    """(N, C, H, W) holding r * c elements: 16 channels of 32 x 32 from 2^17 elements up, else 4 of 8 x 8."""
    if r * c >= 16 * 32 * 32:
        return r * c // (16 * 32 * 32), 16, 32, 32
    return max(1, r * c // 256), 4, 8, 8


def image(rng, r, c):
    """An image (N, C, H, W) of r * c elements."""
    return (rng.standard_normal(image_shape(r, c), dtype=F32),)


def classes(rng, r, c):
    """logits (r, c) and a class index per row."""
    return rng.standard_normal((r, c), dtype=F32), rng.integers(0, c, r)


def probs(rng, r, c):
    """probabilities (r, c) in (0.05, 0.95) and 0/1 targets."""
    return rng.uniform(0.05, 0.95, (r, c)).astype(F32), (rng.random((r, c)) < 0.5).astype(F32)
