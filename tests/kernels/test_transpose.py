"""kernels/runtime/transpose.py: ``contiguous`` is ``np.ascontiguousarray``, its transposed float32
matrices copied by BLAS's ``somatcopy`` (a copy of their own, in C order, equal to NumPy's)."""

from __future__ import annotations

import numpy as np
import pytest

from minitensor.kernels.runtime import transpose


def _transposed(rng, shape: tuple, dtype) -> np.ndarray:
    """An array of ``shape`` whose matrices are stored transposed (a transposed gradient's layout)."""
    stored = rng.standard_normal(shape[:-2] + (shape[-1], shape[-2])).astype(dtype)
    return stored.swapaxes(-1, -2)


@pytest.mark.parametrize("shape", [(256, 512), (3, 128, 160), (2, 2, 130, 129)], ids=str)
def test_transposed_float32_matrices_are_copied_by_blas_as_numpy_copies_them(rng, shape, monkeypatch) -> None:
    if transpose._somatcopy() is None:
        pytest.skip("NumPy's BLAS has no cblas_somatcopy")
    a = _transposed(rng, shape, np.float32)
    calls = []
    real = transpose._somatcopy()
    monkeypatch.setattr(transpose, "_somatcopy", lambda: lambda *args: calls.append(1) or real(*args))
    got = transpose.contiguous(a)
    assert len(calls) == int(np.prod(shape[:-2]))  # one BLAS call per matrix: the BLAS path ran
    assert got.flags.c_contiguous and not np.shares_memory(got, a)
    np.testing.assert_array_equal(got, np.ascontiguousarray(a))


@pytest.mark.parametrize(
    "case", ["contiguous", "float64", "small", "strided rows", "1-D"]
)  # the layouts and dtypes NumPy copies
def test_other_arrays_are_numpys_copies(rng, case) -> None:
    a = {
        "contiguous": rng.standard_normal((200, 300)).astype(np.float32),
        "float64": _transposed(rng, (256, 512), np.float64),
        "small": _transposed(rng, (64, 64), np.float32),
        "strided rows": rng.standard_normal((400, 300)).astype(np.float32)[::2],
        "1-D": rng.standard_normal(50_000).astype(np.float32)[::3],
    }[case]
    got = transpose.contiguous(a)
    assert got.flags.c_contiguous and got.dtype == a.dtype
    np.testing.assert_array_equal(got, a)
    if a.flags.c_contiguous:
        assert got is a  # (as np.ascontiguousarray: no copy)
