"""Shared pieces of the tasks' checks: random float64 leaves (some non-contiguous), comparisons."""

from __future__ import annotations

import numpy as np

import minitensor as mt

from ..diagnose import diagnose
from ._base import CheckFailure


def leaf(rng: np.random.Generator, *shape: int, transposed: bool = False, low: float | None = None) -> mt.Tensor:
    """A float64 leaf with requires_grad; ``transposed``: its data is a non-contiguous view;
    ``low``: values drawn in [low, low + 1) instead of from a standard normal."""
    draw_shape = shape[:-2] + shape[-2:][::-1] if transposed and len(shape) >= 2 else shape
    data = rng.standard_normal(draw_shape) if low is None else low + rng.random(draw_shape)
    if transposed and len(shape) >= 2:
        data = np.swapaxes(data, -1, -2)
    t = mt.from_numpy(data)
    t.requires_grad_(True)
    return t


def expect_close(got, want, what: str, rtol: float = 1e-7, atol: float = 1e-9) -> None:
    """Raise ``CheckFailure`` (with a diagnosis) unless ``got`` equals the reference ``want``."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        raise CheckFailure(f"{what}: shape {got.shape}, the reference's is {want.shape}")
    if not np.all(np.isfinite(got)) and np.all(np.isfinite(want)):
        raise CheckFailure(f"{what}: not finite (inf or nan) where the reference is finite", "unstable")
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        label, text = diagnose(got, want)
        for mine, theirs in [("the analytic gradient", "the result"), ("numeric one", "reference"),
                             ("analytic ", "yours "), ("numeric ", "reference ")]:  # fmt: skip
            text = text.replace(mine, theirs)
        raise CheckFailure(f"{what} differs from the reference: {text}", label)


def stable(fn, what: str) -> None:
    """Raise ``CheckFailure`` ('unstable') when ``fn()`` (an array) is not finite."""
    with np.errstate(all="ignore"):
        out = np.asarray(fn())
    if not np.all(np.isfinite(out)):
        raise CheckFailure(
            f"{what} is not finite (inf or nan) on inputs near 1000: exp overflows; subtract the max first",
            "unstable",
        )
