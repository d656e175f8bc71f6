"""Pooling kernels (``kernels/pool.py``, ``kernels/window_mean.py``): the argmax of each window, the
mean of each window and its transpose, numba (serial and parallel) against the NumPy reference, on
windows as the pooling ops make them (padding, dilation, ceil_mode, adaptive), ties and NaN included."""

from __future__ import annotations

import doctest
import functools
import itertools

import numpy as np
import pytest
from kernel_paths import MODES, jitted, reference, tolerance

from minitensor.kernels import pool, window_mean
from minitensor.ops.pool_geometry import IDENTITY, adaptive, output_size, sliding

# (H, W, kernel, stride, padding, dilation, ceil_mode) of sliding windows along H and along W
SLIDING = [
    (6, 7, 2, 2, 0, 1, False),
    (5, 9, 3, 2, 1, 1, True),
    (8, 5, 3, 1, 1, 2, False),
    (1, 11, 4, 3, 2, 1, True),
]


def _windows(h, w, k, s, p, d, ceil):
    rows = sliding(h, output_size(h, min(k, h), s, 0, 1, ceil), min(k, h), s, 0, 1) if h > 1 else IDENTITY
    cols = sliding(w, output_size(w, k, s, p, d, ceil), k, s, p, d)
    return rows, cols


@pytest.fixture(params=["runs", "columns"])
def strategy(request, monkeypatch) -> str:
    """Max pooling by runs or by columns (``pool.by_columns``), whichever the windows would choose."""
    monkeypatch.setattr(pool, "by_columns", lambda *args: request.param == "columns")
    return request.param


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("case", SLIDING + ["adaptive", "wide", "big"])
def test_max_pool_matches_reference(kernel, strategy, rng, dtype, case) -> None:
    """Sliding windows (padding, dilation, ceil_mode: some cut short by the edges), adaptive ones
    (of two sizes), wide ones (of 64 taps or more along W) and big ones (11-12 x 11-12 taps), by
    runs and by columns: the same values and indices as the reference."""
    if case == "adaptive":
        (h, w), rows, cols = (7, 10), adaptive(7, 3), adaptive(10, 4)
    elif case == "wide":  # 70 taps along W
        (h, w), rows, cols = (7, 140), adaptive(7, 3), adaptive(140, 2)
    elif case == "big":  # 32 x 32 planes to 3 x 3
        (h, w), rows, cols = (32, 32), adaptive(32, 3), adaptive(32, 3)
    else:
        (h, w), rows, cols = case[:2], *_windows(*case)
    x = rng.standard_normal((6, h, w)).astype(dtype)
    x[1] = 1.0  # every window tied: the first of the window wins
    x[2, :, ::3] = np.nan  # NaN wins, the last NaN of a window
    x[3] = np.round(x[3])  # some ties
    x[4, ::2] = -np.inf  # windows of -inf only: their first tap
    x[5] = np.where(rng.random((h, w)) < 0.5, -0.0, 0.0)  # zeros of both signs: the first one's
    got, expected = (
        jitted(lambda: pool.max_pool(x, rows, cols)),
        reference(lambda: pool.max_pool(x, rows, cols)),
    )
    np.testing.assert_array_equal(got[1], expected[1])
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(expected[0]))
    assert got[0].dtype == np.dtype(dtype) and got[1].dtype == np.int64


def _random_windows(rng, n: int):
    """Windows along a dim of size n: adaptive, or sliding with a random kernel (up to 12 wide: runs
    of many pairs), stride, padding, dilation and ceil_mode."""
    if rng.random() < 0.3:
        return adaptive(n, int(rng.integers(1, n + 1)))
    k = int(rng.integers(1, min(n, 12) + 1))
    d = 2 if rng.random() < 0.3 and 2 * (k - 1) < n else 1
    p, s, ceil = int(rng.integers(0, k // 2 + 1)), int(rng.integers(1, 4)), bool(rng.integers(0, 2))
    return sliding(n, output_size(n, k, s, p, d, ceil), k, s, p, d)


def test_windows_of_many_taps_that_overlap_little_are_pooled_by_columns() -> None:
    """``by_columns`` on 32 x 32 planes: adaptive pooling to 3 x 3 or 1 x 1, windows of 8 x 8 and of
    11 x 11 every 5; by runs windows of 2 x 2 and 3 x 3, and any window sliding by 1."""

    def columns(k, stride):
        windows = sliding(32, output_size(32, k, stride, 0, 1, False), k, stride, 0, 1)
        return pool.by_columns(windows.count, windows.count, 32, 32)

    assert all(pool.by_columns(adaptive(32, o).count, adaptive(32, o).count, 32, 32) for o in (1, 3))
    assert columns(8, 8) and columns(11, 5)
    assert not any(columns(k, s) for k, s in ((2, 2), (3, 2), (3, 3), (3, 1), (8, 1), (11, 1)))


def test_max_pool_on_random_windows_matches_reference(rng, strategy) -> None:
    """40 random geometries by runs and by columns (the serial kernel: the parallel one runs the
    same blocks), with NaN, -inf and many ties, planes from 1 (one block) to 40 (blocks of several
    planes)."""
    for _ in range(40):
        h, w = rng.integers(1, 40, 2)
        rows, cols = _random_windows(rng, int(h)), _random_windows(rng, int(w))
        x = rng.standard_normal((int(rng.integers(1, 40)), h, w)).astype(np.float32)
        x[rng.random(x.shape) < 0.3] = 1.0
        x[rng.random(x.shape) < 0.05] = np.nan
        x[rng.random(x.shape) < 0.05] = -np.inf
        run = functools.partial(pool.max_pool, x, rows, cols)
        got, expected = jitted(run), reference(run)
        np.testing.assert_array_equal(got[1], expected[1])
        np.testing.assert_array_equal(got[0], expected[0])


def test_only_dilated_windows_can_hold_no_tap_of_the_input() -> None:
    """``pool.empty_windows`` looks for windows without a tap inside the input only where the taps
    are dilated: every sliding geometry PyTorch allows (padding at most half the kernel) without
    dilation has a tap in each window; with dilation some have none (and then the kernels' values
    and indices are -inf and PyTorch's, on both paths)."""
    empty = []  # (n, dilation, windows)
    for n, k, s, d, ceil in itertools.product(range(1, 12), range(1, 6), range(1, 4), (1, 2, 3), (False, True)):
        for p in range(k // 2 + 1):
            out = output_size(n, k, s, p, d, ceil)
            windows = sliding(n, out, k, s, p, d) if out >= 1 else None
            if windows is not None and (windows.count == 0).any():
                empty.append((n, d, windows))
    assert empty and all(d > 1 for n, d, windows in empty)
    for n, _, windows in empty[:5]:
        x = np.arange(2.0 * 3 * n).reshape(2, 3, n)
        for run in (jitted, reference):
            value, index = run(lambda: pool.max_pool(x, IDENTITY, windows))  # noqa: B023
            mask = pool.empty_windows(IDENTITY, windows)[0]
            assert np.isneginf(value[:, 0, mask]).all() and not np.isneginf(value[:, 0, ~mask]).any()
            np.testing.assert_array_equal(index[:, 0, mask], np.broadcast_to(windows.start[mask], (2, mask.sum())))


def test_max_pool_rule_on_ties_and_nan() -> None:
    """PyTorch's rule, spelled out: the first maximum in row-major order, a NaN wins (the last)."""
    x = np.array([[[1.0, 3.0, 3.0, 2.0, np.nan, 5.0, np.nan, 0.0]]])
    cols = sliding(8, 2, 4, 4, 0, 1)
    for run in (jitted, reference):
        value, index = run(lambda: pool.max_pool(x, IDENTITY, cols))
        assert index.tolist() == [[[1, 6]]]
        assert value[0, 0, 0] == 3.0 and np.isnan(value[0, 0, 1])


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("case", SLIDING[:2] + [SLIDING[3], "adaptive", "whole rows", "whole planes"])
def test_window_mean_and_transpose_match_reference(kernel, rng, dtype, case) -> None:
    if case == "adaptive":
        (h, w), rows, cols = (7, 10), adaptive(7, 3), adaptive(10, 4)
    elif case == "whole rows":  # windows as wide as the plane: global pooling (one contiguous run each)
        (h, w), rows, cols = (7, 10), adaptive(7, 2), adaptive(10, 1)
    elif case == "whole planes":  # one window per plane (global pooling: one flat loop over the planes)
        (h, w), rows, cols = (5, 3), adaptive(5, 1), adaptive(3, 1)
    else:
        h, w = case[:2]
        rows, cols = _windows(h, w, *case[2:4], case[4], 1, case[6])
    rows, cols = rows[:2], cols[:2]
    x = rng.standard_normal((6, h, w)).astype(dtype)
    divisor = rng.uniform(1, 4, (rows[0].size, cols[0].size))
    g = rng.standard_normal((6, rows[0].size, cols[0].size)).astype(dtype)

    def run():
        mean = window_mean.window_mean(x, rows, cols, divisor)
        return mean, window_mean.window_mean_transpose(g, rows, cols, divisor, (h, w))

    for got, expected in zip(jitted(run), reference(run)):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, expected, **tolerance(dtype))
    y, t = reference(run)  # the transpose is the adjoint: <mean(x), g> = <x, transpose(g)>
    np.testing.assert_allclose((y * g).sum(), (x * t).sum(), rtol=1e-4 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("module", [pool, window_mean], ids=lambda m: m.__name__)
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module, extraglobs={"np": np})
    assert result.attempted > 0 and result.failed == 0
