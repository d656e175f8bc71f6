"""Resampling kernels (``kernels/resample.py``): a sparse map of taps per dim and its transpose,
numba (serial and parallel) against the NumPy reference, with and without weights (interpolation
and the padding modes), repeated taps (whose gradients add up) included."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from kernel_paths import MODES, SPLIT_IDS, SPLITS, counted_splits, jitted, reference, tolerance

from minitensor.kernels import resample


def _taps(rng, out: int, n: int, count: int, weighted: bool) -> tuple:
    index = rng.integers(0, n, (out, count))
    return index, rng.standard_normal((out, count)) if weighted else None


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("taps", [(1, 1, False, False), (2, 2, True, True), (4, 4, True, True), (1, 3, False, True),
                                  (2, 1, True, False)])  # fmt: skip
def test_resample_and_transpose_match_reference(kernel, rng, dtype, taps) -> None:
    """One tap of weight 1 per dim (a plain gather), taps with weights, and the two mixed."""
    t, s, weighted_rows, weighted_cols = taps
    h, w, ho, wo = 5, 7, 9, 4
    rows, cols = _taps(rng, ho, h, t, weighted_rows), _taps(rng, wo, w, s, weighted_cols)
    x = rng.standard_normal((6, h, w)).astype(dtype)
    g = rng.standard_normal((6, ho, wo)).astype(dtype)

    def run():
        return resample.resample(x, rows, cols), resample.resample_transpose(g, rows, cols, (h, w))

    for got, expected in zip(jitted(run), reference(run)):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, expected, **tolerance(dtype))
    y, xt = reference(run)  # the transpose is the adjoint
    np.testing.assert_allclose((y * g).sum(), (x * xt).sum(), rtol=1e-4 if dtype == "float32" else 1e-12)


def test_docstring_examples() -> None:
    result = doctest.testmod(resample, extraglobs={"np": np})
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("on_blas_threads,dtype", SPLITS, ids=SPLIT_IDS)
def test_planes_split_over_two_threads_match_one_thread(rng, dtype, on_blas_threads, two_blas_threads, monkeypatch):
    """The passes with their planes split over two threads (tasks on BLAS's threads, or numba's pool
    where BLAS has none) give the one-thread results: weights on either dim or both, and the gathers."""
    parallel = ("_resample_parallel", "_transpose_parallel", "_gather_parallel", "_scatter_add_parallel")
    runs = counted_splits(monkeypatch, on_blas_threads, resample, parallel)
    h, w, ho, wo = 5, 7, 9, 4
    for t, s, weighted_rows, weighted_cols in [(2, 2, True, True), (1, 3, False, True), (2, 1, True, False)]:
        (ih, wh), (iw, ww) = _taps(rng, ho, h, t, weighted_rows), _taps(rng, wo, w, s, weighted_cols)
        wh, ww = (None if a is None else a.astype(dtype) for a in (wh, ww))
        x = rng.standard_normal((3, h, w)).astype(dtype)
        g = rng.standard_normal((3, ho, wo)).astype(dtype)
        iw_t, ww_t = np.ascontiguousarray(iw.T), None if ww is None else np.ascontiguousarray(ww.T)
        one, two = np.empty((3, ho, wo), dtype), np.empty((3, ho, wo), dtype)
        resample._resample_planes(x, ih, wh, iw_t, ww_t, one)
        resample._resample_threaded(x, ih, wh, iw_t, ww_t, two)
        np.testing.assert_allclose(two, one, **tolerance(dtype))
        one, two = np.zeros((3, h, w), dtype), np.zeros((3, h, w), dtype)
        resample._transpose_planes(g, ih, wh, iw, ww, one)
        resample._transpose_threaded(g, ih, wh, iw, ww, two)
        np.testing.assert_allclose(two, one, **tolerance(dtype))
    rows, cols = rng.integers(0, h, ho), rng.integers(0, w, wo)  # one tap of weight 1: the gathers
    one, two = np.empty((3, ho, wo), dtype), np.empty((3, ho, wo), dtype)
    resample._gather_planes(x, rows, cols, one)
    resample._gather_threaded(x, rows, cols, two)
    np.testing.assert_array_equal(two, one)
    one, two = np.zeros((3, h, w), dtype), np.zeros((3, h, w), dtype)
    resample._scatter_add_planes(g, rows, cols, one)
    resample._scatter_add_threaded(g, rows, cols, two)
    np.testing.assert_array_equal(two, one)
    assert runs == [2] * 8  # (three weighted tap layouts and the gathers, two passes each)


def test_int32_taps_and_weights_of_another_dtype_give_the_reference(kernel, rng) -> None:
    """Taps as int32 and float64 weights for float32 planes: the kernels read int64 taps and x's dtype."""
    rows, cols = _taps(rng, 9, 5, 2, True), _taps(rng, 4, 7, 2, True)
    rows, cols = (rows[0].astype(np.int32), rows[1]), (cols[0].astype(np.int32), cols[1])
    x = rng.standard_normal((6, 5, 7)).astype(np.float32)
    g = rng.standard_normal((6, 9, 4)).astype(np.float32)

    def run():
        return resample.resample(x, rows, cols), resample.resample_transpose(g, rows, cols, (5, 7))

    for got, expected in zip(jitted(run), reference(run)):
        np.testing.assert_allclose(got, expected, **tolerance("float32"))
