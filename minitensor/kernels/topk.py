"""The indices of the k largest (or smallest) values of each row: one pass for a small k.

The order is PyTorch's ranking: by value (largest first for ``largest``),
NaN above every number (first when ``largest``, last when not); values that
rank equal come in index order (PyTorch leaves the order of ties unspecified).
The reference is the first k of a stable sort (``first_of_stable_sort``).
``topk_indices`` takes the kernel for float rows and k up to ``SMALL_K``, and
``np.partition`` for larger k (``_by_partition``; a stable sort for rows with NaN).

The kernel keeps, per row, the k best entries seen so far in a small sorted
list.  Most values rank below the k-th kept one and cost one comparison; a
better one is inserted by shifting the worse kept entries down (at most k
moves), so the pass costs about ``n + k * (number of insertions)``.  Random
rows insert about ``k * log(n / k)`` times; a row sorted the wrong way round
inserts every value, so callers use it only for small k (``SMALL_K``).

>>> topk_indices(np.array([[1.0, 3.0, 2.0, 3.0]], np.float32), 2, largest=True)
array([[1, 3]])
"""

from __future__ import annotations

import numpy as np

from . import along_dim
from .runtime.dispatch import Kernel
from .runtime.jit import njit

SMALL_K = 16  # up to this k the kernel beats np.partition even on rows sorted the wrong way round


def topk_indices(x: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """(rows, k) int64: the k best positions of each row of the 2-D ``x`` (any dtype), best first,
    ties by index (see the module docstring)."""
    floats = x.dtype.kind == "f"
    if floats and k <= SMALL_K:
        out = np.empty((x.shape[0], k), np.int64)
        if out.size:
            _TOPK.on(x)(np.ascontiguousarray(x), k, largest, out)
        return out
    if floats and np.isnan(x).any():  # (partition keys cannot rank NaN above inf)
        return first_of_stable_sort(x, k, largest)
    return _by_partition(x, k, largest)


def first_of_stable_sort(x: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """``topk_indices`` by sorting each row (any k, any dtype).

    Descending with ties in index order: sort the reversed row ascending (stable), reverse that
    order and map the positions back; NumPy sorts NaN last, so it comes first.
    """
    n = x.shape[1]
    if largest:
        order = n - 1 - _stable_argsort(x[:, ::-1])[:, ::-1]
    else:
        order = _stable_argsort(x)
    return order[:, :k]


FAST_SORT_FROM = 4096  # elements: below, the fast path's checks cost more than it saves (32 x 32: 13 µs against 5)


def _stable_argsort(rows: np.ndarray) -> np.ndarray:
    """``np.argsort(rows, axis=1, kind="stable")``.  For float rows by NumPy's SIMD quicksort, which is
    the stable order wherever a row holds no two equal values (nor -0.0 and 0.0): NaN sort as +inf (the
    SIMD sort slows down 4x on NaN) and are then put in index order at the end, and only the rows with
    equal values, or with +inf beside NaN, are sorted again stably (512 rows of 256 random float32: 0.86
    ms against 3.0; on the AVX2 AMD EPYC with 10 % NaN 2.3 against 6.0)."""
    if rows.dtype.kind != "f" or rows.size < FAST_SORT_FROM:
        return np.argsort(rows, axis=1, kind="stable")
    has_nan = np.isnan(rows)
    some_nan = has_nan.any()
    order = np.argsort(np.where(has_nan, np.inf, rows) if some_nan else rows, axis=1)
    values = along_dim.gather(rows, order, 1)
    tied = (values[:, 1:] == values[:, :-1]).any(axis=1)
    if some_nan:  # (each row's NaN take its last places, in index order: ``nonzero`` lists them so, row by row)
        nan = np.isnan(values)
        order.reshape(-1)[np.flatnonzero(nan)] = np.flatnonzero(has_nan) % rows.shape[1]
        tied |= nan.any(axis=1) & np.isposinf(values).any(axis=1)
    tied = np.flatnonzero(tied)
    if tied.size:
        order[tied] = np.argsort(rows[tied], axis=1, kind="stable")
    return order


def _by_partition(rows: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """``topk_indices`` for rows without NaN and any k, found without sorting everything (the reference:
    ``first_of_stable_sort``).

    On keys that order the values ascending (negated for ``largest``), the k-th smallest key ``t``
    (``np.partition``, linear time) splits each row: every key below ``t`` is in, and of the keys
    equal to ``t`` the first ones by index, as many as are missing.  ``np.nonzero`` lists the chosen
    positions in index order, and a stable sort of their k keys puts them in order.
    """
    if k == 0:
        return np.empty((rows.shape[0], 0), np.int64)
    keys = rows if not largest else np.negative(rows) if rows.dtype.kind == "f" else np.invert(rows)
    t = np.partition(keys, k - 1, axis=1)[:, k - 1 : k]
    below, tied = keys < t, keys == t
    missing = k - np.sum(below, axis=1, keepdims=True)
    if np.array_equal(np.sum(tied, axis=1, keepdims=True), missing):  # no tie beyond the k-th: all in
        chosen = below | tied
    else:
        chosen = below | (tied & (np.cumsum(tied, axis=1) <= missing))
    positions = np.nonzero(chosen)[1].reshape(rows.shape[0], k)
    order = np.argsort(np.take_along_axis(keys, positions, axis=1), axis=1, kind="stable")
    return np.take_along_axis(positions, order, axis=1)


def _topk_numpy(x: np.ndarray, k: int, largest: bool, out: np.ndarray) -> None:
    """Reference: the first k of a stable sort of each row."""
    out[...] = first_of_stable_sort(x, k, largest)


@njit(inline="always")
def _before(a, b, largest):
    """Does value a rank strictly before value b?  (NaN ranks above every number.)"""
    if largest:
        return a > b or (a != a and b == b)
    return a < b or (b != b and a == a)


@njit(inline="always")
def _insert(kept, index, value, j, p, largest):
    """Put (value, j) into the sorted ``kept``/``index`` at slot p or before, shifting worse entries down."""
    while p > 0 and _before(value, kept[p - 1], largest):
        kept[p] = kept[p - 1]
        index[p] = index[p - 1]
        p -= 1
    kept[p] = value
    index[p] = j


@njit
def _topk_rows(x, k, largest, out):
    """out[r] = the k best positions of row r of the 2-D ``x`` (1 <= k <= row length)."""
    rows, n = x.shape
    kept = np.empty(k, x.dtype)
    sign = x.dtype.type(1 if largest else -1)
    for r in range(rows):
        row, index = x[r], out[r]
        for j in range(k):
            _insert(kept, index, row[j], j, j, largest)
        threshold = sign * kept[k - 1]
        for j in range(k, n):
            value = row[j]
            if sign * value <= threshold:  # the common case (exact; a NaN on either side goes on)
                continue
            if _before(value, kept[k - 1], largest):  # a tie with the k-th stays out: it comes later
                _insert(kept, index, value, j, k - 1, largest)
                threshold = sign * kept[k - 1]


_TOPK = Kernel(_topk_numpy, _topk_rows)
