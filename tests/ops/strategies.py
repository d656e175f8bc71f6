"""Hypothesis strategies for op tests: shapes, broadcast pairs and float64 leaves.

Values come from a NumPy generator seeded by hypothesis (``seeds``), so every
example is reproducible and arrays are cheap to draw.  ``layouts`` says how a
leaf's array is laid out in memory:

- ``"contiguous"``: a fresh C-ordered array;
- ``"transposed"``: the transpose of an array of the reversed shape;
- ``"strided"``: every second element of a bigger array (``big[::2, ::2]``).

``leaf(...)`` wraps the array without copying (``mt.from_numpy``), so the op
and ``gradcheck``'s in-place perturbations really see the strided memory.

Values can be kept away from kinks: ``away=0.1`` keeps ``|x| >= 0.1``
(relu, abs), ``low > 0`` keeps them positive (log, sqrt), ``distinct=True``
makes every value differ from every other by at least 0.05 (max/min ties).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

layouts = st.sampled_from(["contiguous", "transposed", "strided"])
seeds = st.integers(0, 2**32 - 1)


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4):
    """Array shapes such as (), (3,), (2, 1, 4)."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcast_pairs(min_dims: int = 0, max_dims: int = 3, max_side: int = 4):
    """Two shapes that broadcast together (size-1 dims, different ranks)."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side
    ).map(lambda b: b.input_shapes)


def values(
    seed: int, shape: tuple, low: float = -2.0, high: float = 2.0, away: float = 0.0, distinct: bool = False
) -> np.ndarray:
    """A C-ordered float64 array of ``shape`` with values in [low, high].

    ``away > 0`` keeps ``|x| >= away``; ``distinct`` spaces all values >= 0.05 apart.
    """
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    if distinct:
        flat = low + (rng.permutation(n) + rng.uniform(0.1, 0.3, n)) * ((high - low) / max(n, 1))
        return flat.reshape(shape)
    x = rng.uniform(low, high, shape)
    if away > 0:
        x = np.where(x >= 0, np.maximum(x, away), np.minimum(x, -away))
    return x


def lay_out(x: np.ndarray, layout: str, seed: int) -> np.ndarray:
    """The same values as ``x`` in the memory layout ``layout`` (a view, not a copy)."""
    if layout == "transposed" and x.ndim >= 2:
        return np.ascontiguousarray(x.T).T
    if layout == "strided" and x.ndim >= 1:
        big = np.random.default_rng(seed).standard_normal(tuple(2 * s for s in x.shape))
        view = big[(slice(None, None, 2),) * x.ndim]
        view[...] = x
        return view
    return x.copy()


def leaf(seed: int, shape: tuple, layout: str = "contiguous", requires_grad: bool = True, **kw) -> mt.Tensor:
    """A float64 leaf Tensor viewing an array laid out as ``layout`` (see ``values`` for kw)."""
    t = mt.from_numpy(lay_out(values(seed, shape, **kw), layout, seed + 1))
    return t.requires_grad_(requires_grad)


@st.composite
def dims_of(draw, ndim: int, allow_none: bool = True, allow_tuple: bool = True):
    """A ``dim`` argument for a reduction over an ``ndim``-D tensor: None, int (maybe negative) or tuple."""
    options = ["int"] if ndim > 0 else []
    if allow_none or ndim == 0:
        options.append("none")
    if allow_tuple and ndim > 1:
        options.append("tuple")
    kind = draw(st.sampled_from(options))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    picked = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(d - ndim if draw(st.booleans()) else d for d in picked)


def reduced_count(shape: tuple, dim) -> int:
    """How many elements one output element of a reduction over ``dim`` sums."""
    if dim is None:
        return int(np.prod(shape, dtype=np.int64))
    dims = dim if isinstance(dim, tuple) else (dim,)
    return int(np.prod([shape[d] for d in dims], dtype=np.int64))
