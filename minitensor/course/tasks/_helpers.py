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


def random_shape(rng: np.random.Generator, min_ndim: int = 1, max_ndim: int = 3) -> tuple:
    """A random shape: ``min_ndim``-``max_ndim`` dims of sizes 2-4."""
    return tuple(int(s) for s in rng.integers(2, 5, int(rng.integers(min_ndim, max_ndim + 1))))


def broadcast_pair(rng: np.random.Generator) -> tuple:
    """Two random shapes that broadcast: some dims set to 1, some leading dims left out of the second."""
    out = random_shape(rng)
    a = tuple(1 if rng.random() < 0.3 else s for s in out)
    b = tuple(1 if rng.random() < 0.3 else s for s in out)[int(rng.integers(0, len(out))) :]
    return a, b


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
