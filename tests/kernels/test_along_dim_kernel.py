"""kernels/along_dim.py: gather, scatter and scatter-add kernels (rows and 3-D) equal their NumPy
references (``np.take_along_axis``, ``np.put_along_axis``, ``np.add.at``), on every dim, with
negative and repeated indices, an index smaller than the array, and non-contiguous inputs."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels import along_dim as K

CASES = [((5, 7), 1), ((5, 7), 0), ((3, 4, 6), 1), ((3, 4, 6), 2), ((2, 3, 4, 5), 0), ((9,), 0)]


def _index(rng, shape, dim, smaller: bool, unique: bool = False) -> np.ndarray:
    """An index along ``dim`` of ``shape`` (smaller in the other dims when ``smaller``), with negatives."""
    ishape = tuple(n if i == dim or not smaller else max(1, n - 1) for i, n in enumerate(shape))
    n = shape[dim]
    if unique:  # a permutation along dim: each target written once
        return np.moveaxis(np.argsort(rng.random(np.moveaxis(np.empty(ishape), dim, -1).shape), -1), -1, dim) - n
    return rng.integers(-n, n, ishape)


def _both(fn):
    """(fn() on the kernels, with the references refused; fn() on the references)."""
    mt.set_jit_enabled(True)
    with pytest.MonkeyPatch.context() as patch:
        for name in ("_gather_numpy", "_scatter_add_numpy", "_scatter_numpy"):
            patch.setattr(K, name, _refused)
        jitted = fn()
    with mt.jit_disabled():
        reference = fn()
    return jitted, reference


def _refused(*args):
    raise AssertionError("a NumPy reference ran on the JIT path")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", CASES)
@pytest.mark.parametrize("smaller", [False, True])
def test_gather(dtype, shape, dim, smaller) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    x.reshape(-1)[::7] = np.nan
    index = _index(rng, shape, dim, smaller)
    jitted, reference = _both(lambda: K.gather(x, index, dim))
    np.testing.assert_array_equal(jitted, reference)
    cropped = x[tuple(slice(None) if i == dim else slice(n) for i, n in enumerate(index.shape))]
    np.testing.assert_array_equal(jitted, np.take_along_axis(cropped, index, dim))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", CASES)
@pytest.mark.parametrize("smaller", [False, True])
def test_scatter_add_with_repeats(dtype, shape, dim, smaller) -> None:
    rng = np.random.default_rng(1)
    base = rng.standard_normal(shape).astype(dtype)
    index = _index(rng, shape, dim, smaller)
    values = rng.standard_normal(index.shape).astype(dtype)

    def run():
        out = base.copy()
        K.scatter_add(out, index, values, dim)
        return out

    jitted, reference = _both(run)
    # (the same additions in the same order, except that along the last dim a run of equal indices is
    # summed first, then added: a rounding apart)
    np.testing.assert_allclose(jitted, reference, rtol=1e-6 if dtype == np.float32 else 1e-14, atol=1e-6)
    assert not np.array_equal(jitted, base)


def test_scatter_add_along_the_last_dim_sums_runs_of_equal_indices() -> None:
    """cummax's gradient: long runs of one index per row (the kernel adds each run once)."""
    values = np.arange(1.0, 13.0).reshape(2, 6)
    index = np.array([[0, 0, 0, 3, 3, 0], [5, 5, 5, 5, 5, 5]])
    expected = np.full((2, 6), 0.5)
    np.add.at(expected, (np.array([[0], [1]]), index), values)

    def run():
        out = np.full((2, 6), 0.5)
        K.scatter_add(out, index, values, 1)
        return out

    for got in _both(run):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", CASES)
@pytest.mark.parametrize("smaller", [False, True])
def test_scatter(dtype, shape, dim, smaller) -> None:
    rng = np.random.default_rng(2)
    base = rng.standard_normal(shape).astype(dtype)
    index = _index(rng, shape, dim, smaller, unique=True)
    values = rng.standard_normal(index.shape).astype(dtype)
    for written in (values, 2.5):

        def run(written=written):
            out = base.copy()
            K.scatter(out, index, written, dim)
            return out

        jitted, reference = _both(run)
        np.testing.assert_array_equal(jitted, reference)
        assert not np.array_equal(jitted, base)


def test_non_contiguous_inputs_and_integers_and_empty() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 10)).astype(np.float32)[:, ::2]  # (6, 5), strided
    index = rng.integers(0, 5, (6, 3))[:, ::-1]
    jitted, reference = _both(lambda: K.gather(x, index, 1))
    np.testing.assert_array_equal(jitted, np.take_along_axis(x, index, 1))
    np.testing.assert_array_equal(reference, jitted)
    ints = np.arange(12).reshape(3, 4)
    out = np.zeros((3, 4), np.int64)
    K.scatter_add(out, np.array([[0, 0], [1, 3], [2, 2]]), ints[:, :2], 1)  # integers: the reference
    np.testing.assert_array_equal(out, [[1, 0, 0, 0], [0, 4, 0, 5], [0, 0, 17, 0]])
    assert K.gather(x, np.zeros((6, 0), np.int64), 1).shape == (6, 0)
    with mt.jit_disabled():
        assert K.gather(x, np.zeros((6, 0), np.int64), 1).shape == (6, 0)


def test_index_range_on_both_paths() -> None:
    index = np.random.default_rng(4).integers(-50, 70, (33, 7))[:, ::2]
    expected = (index.min(), index.max())
    mt.set_jit_enabled(True)
    assert K.index_range(index) == expected and K._range(index.reshape(-1).copy()) == expected
    with mt.jit_disabled():
        assert K.index_range(index) == expected
    assert K.index_range(np.array([5], np.int64)) == (5, 5)
    assert K.index_range(np.array([3, -2], np.int32)) == (-2, 3)  # other integer types: NumPy
