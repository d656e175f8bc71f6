"""Random number generators: the default one behind init, ``randn``/``rand`` and dropout, and ``mt.Generator``.

``mt.manual_seed(s)`` reseeds the default generator, so everything random that
follows is reproducible.  A ``mt.Generator`` of your own (PyTorch's
``torch.Generator``) can be passed as ``generator=`` to the samplers
(``randn``, ``rand``, ``randint``, ``randperm``, ``multinomial``, data loaders)
to keep one stream apart from the rest.

>>> import minitensor as mt
>>> g = mt.Generator().manual_seed(0)
>>> a = mt.randint(0, 10, (3,), generator=g)
>>> a.tolist() == mt.randint(0, 10, (3,), generator=mt.Generator().manual_seed(0)).tolist()
True
"""

from __future__ import annotations

import contextlib
import json

import numpy as np

from ._device import check_device


class Generator:
    """A seeded stream of random numbers (a NumPy ``PCG64`` underneath).

    Args:
        device: ``'cpu'`` (or None); anything else raises ValueError.
    """

    def __init__(self, device="cpu") -> None:
        self.device = check_device(device, "Generator")
        self.seed()

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed``; returns self (as PyTorch).

        Any int works; a negative seed is taken modulo 2**64, as PyTorch does.
        """
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"manual_seed: seed must be an int, got {type(seed).__name__}")
        self._initial_seed = int(seed) % 2**64
        self._rng = np.random.default_rng(self._initial_seed)
        return self

    def seed(self) -> int:
        """Reseed from fresh OS entropy; return the new seed."""
        seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the stream last started from."""
        return self._initial_seed

    def get_state(self):
        """The stream's state as a uint8 Tensor (pass it to ``set_state`` to replay)."""
        from .tensor import Tensor

        state = {"seed": self._initial_seed, "bit_generator": self._rng.bit_generator.state}
        return Tensor._make(np.frombuffer(json.dumps(state).encode(), np.uint8).copy(), False, None)

    def set_state(self, state) -> Generator:
        """Restore a state returned by ``get_state``; returns self."""
        data = bytes(np.asarray(state, dtype=np.uint8))
        try:
            saved = json.loads(data.decode())
            rng = np.random.default_rng()
            rng.bit_generator.state = saved["bit_generator"]
        except (ValueError, KeyError, TypeError):
            raise ValueError("set_state: state must be a Tensor returned by Generator.get_state()") from None
        self._initial_seed, self._rng = saved["seed"], rng
        return self

    def __repr__(self) -> str:
        return f"<minitensor.Generator device='cpu' initial_seed={self._initial_seed}>"


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed minitensor's default generator (init, randn/rand, dropout); returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from OS entropy; return the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator last started from."""
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)


def snapshot():
    """The default generator's state now (cheap: its bit generator's state), to replay its next draws."""
    return default_generator._rng.bit_generator.state


@contextlib.contextmanager
def replaying(state):
    """Within the block, the default generator draws again what it drew after ``snapshot()`` gave
    ``state``; after it, the generator is where it was (nothing replayed when ``state`` is None).
    (The fused layers' create_graph recomputes their composite on the same dropout masks.)"""
    if state is None:
        yield
        return
    bits = default_generator._rng.bit_generator
    now, bits.state = bits.state, state
    try:
        yield
    finally:
        bits.state = now


def restore(state) -> None:
    """Put the default generator back to ``state`` (from ``snapshot()``)."""
    default_generator._rng.bit_generator.state = state


_forbidden = None  # a message: random ops raise it (a transform's randomness="error")
_per_example = None  # (batch size, wrap) while vmap(randomness="different") runs: draws get a batch dim


def per_example(size: int | None, wrap=None) -> None:
    """While a ``vmap(..., randomness="different")`` runs: random tensors are drawn for each of the
    ``size`` examples and ``wrap`` makes the batch of them one batched tensor (None: draw once)."""
    global _per_example
    _per_example = None if size is None else (size, wrap)


def example_shape(shape: tuple) -> tuple:
    """The shape to draw for a random tensor of ``shape``: with a batch dim under ``per_example``."""
    return shape if _per_example is None else (_per_example[0], *shape)


def as_examples(t):
    """A random tensor drawn with ``example_shape``, as what the caller sees (batched under ``per_example``)."""
    return t if _per_example is None else _per_example[1](t)


def forbid(message: str | None) -> None:
    """Make every random op raise ``RuntimeError(message)`` (None: allow them again)."""
    global _forbidden
    _forbidden = message


def generator(gen: Generator | None = None) -> np.random.Generator:
    """The NumPy generator to draw from: ``gen``'s, or the default one's (read it at each use)."""
    if _forbidden is not None:
        raise RuntimeError(_forbidden)
    if gen is None:
        return default_generator._rng
    if not isinstance(gen, Generator):
        raise TypeError(f"generator must be a mt.Generator or None, got {type(gen).__name__}")
    return gen._rng
