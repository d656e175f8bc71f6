"""The random number generator behind init, ``randn``/``rand`` and dropout.

``mt.manual_seed(s)`` replaces it with a freshly seeded one, so everything
random that follows is reproducible.
"""

from __future__ import annotations

import numpy as np

_generator = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed minitensor's generator (init, randn/rand, dropout).

    Any int works; a negative seed is taken modulo 2**64, as PyTorch does.
    """
    global _generator
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"manual_seed: seed must be an int, got {type(seed).__name__}")
    _generator = np.random.default_rng(int(seed) % 2**64)


def generator() -> np.random.Generator:
    """The current generator (read it at each use; manual_seed replaces it)."""
    return _generator
