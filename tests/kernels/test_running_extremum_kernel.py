"""kernels/running_extremum.py: cummax / cummin's indices, the kernel against its NumPy reference
and against PyTorch's rule (ties move the index on; a NaN holds until the next NaN)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted, reference

from minitensor.kernels.running_extremum import running_extremum_index


def _values(rng, shape, dtype) -> np.ndarray:
    """Small integers (many ties) with NaN, inf and -inf sprinkled in."""
    x = rng.integers(-3, 4, shape).astype(dtype)
    flat = x.reshape(-1)
    for value in (np.nan, np.inf, -np.inf, np.nan):
        flat[rng.integers(0, flat.size)] = value
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, dim", [((40,), 0), ((5, 30), 1), ((6, 7, 9), 1), ((4, 3, 8), 0)], ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_kernel_equals_reference(rng, dtype, shape, dim, largest) -> None:
    x = _values(rng, shape, dtype)
    got = jitted(lambda: running_extremum_index(x, dim, largest))
    expected = reference(lambda: running_extremum_index(x, dim, largest))
    assert got.dtype == np.int64 and got.shape == x.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("largest", [True, False])
def test_the_rule_as_pytorch_states_it(largest) -> None:
    x = np.array([1.0, 3.0, 3.0, np.nan, 5.0, np.nan, 0.0, -np.inf], np.float32)
    expected = [0, 1, 2, 3, 3, 5, 5, 5] if largest else [0, 0, 0, 3, 3, 5, 5, 5]
    for run in (jitted, reference):
        assert run(lambda: running_extremum_index(x, 0, largest)).tolist() == expected


def test_integers_and_empty_rows_take_the_reference() -> None:
    ints = np.array([[2, 2, 1, 5, 5]])
    assert running_extremum_index(ints, 1, True).tolist() == [[0, 1, 1, 3, 4]]
    assert running_extremum_index(ints, 1, False).tolist() == [[0, 1, 2, 2, 2]]
    assert running_extremum_index(np.zeros((3, 0)), 1, True).shape == (3, 0)
