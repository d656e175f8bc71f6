"""mt.linspace / mt.logspace (tensor/ranges.py) against PyTorch: values, dtypes, edge cases, errors."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
from minitensor.tensor import ranges

torch = pytest.importorskip("torch")

DTYPES = [(mt.float32, torch.float32), (mt.float64, torch.float64)]
BOUNDS = [(0, 1, 7), (-3.3, 11.7, 13), (5, -5, 10), (0, 1e-3, 101), (-7, 9, 3), (2.5, 2.5, 4), (0, 1, 2)]


@pytest.mark.parametrize("dtype, torch_dtype", DTYPES)
@pytest.mark.parametrize("start, end, steps", BOUNDS)
def test_linspace_and_logspace_match_pytorch(dtype, torch_dtype, start, end, steps):
    got = mt.linspace(start, end, steps, dtype=dtype)
    want = torch.linspace(start, end, steps, dtype=torch_dtype)
    assert got.dtype == dtype and got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-7 if dtype == mt.float32 else 1e-15, atol=1e-12)
    assert got[0].item() == want[0].item() and got[-1].item() == want[-1].item()  # both ends exact
    got = mt.logspace(start / 3, end / 3, steps, base=2.0, dtype=dtype)
    want = torch.logspace(start / 3, end / 3, steps, base=2.0, dtype=torch_dtype)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6 if dtype == mt.float32 else 1e-14)


def test_default_dtype_integer_dtype_and_tensor_bounds():
    assert mt.linspace(0, 10, 5).dtype == mt.float32  # integer bounds still give the default float dtype
    assert mt.linspace(0, 10, 5).tolist() == torch.linspace(0, 10, 5).tolist()
    assert mt.linspace(0, 10, 4, dtype=mt.int64).tolist() == torch.linspace(0, 10, 4, dtype=torch.int64).tolist()
    assert mt.logspace(0, 3, 4, dtype=mt.int64).tolist() == [1, 10, 100, 1000]
    assert mt.linspace(mt.tensor(1.0), mt.tensor(2.0), 3).tolist() == [1.0, 1.5, 2.0]
    assert mt.linspace(3, 7, 1).tolist() == [3.0] and mt.linspace(0, 1, 0).shape == (0,)
    x = mt.linspace(0, 1, 3, dtype=mt.float64, requires_grad=True)
    assert x.requires_grad and x.is_leaf


def test_bad_arguments_raise_naming_them():
    with pytest.raises(ValueError, match="steps must be non-negative, got -1"):
        mt.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="steps must be an int"):
        mt.linspace(0, 1, 2.5)
    with pytest.raises(TypeError, match="start must be a number"):
        mt.logspace("0", 1, 3)
    with pytest.raises(ValueError, match="one-element tensor"):
        mt.linspace(mt.zeros(2), 1, 3)
    with pytest.raises(TypeError, match="only float tensors can require gradients"):
        mt.linspace(0, 1, 3, dtype=mt.int64, requires_grad=True)
    with pytest.raises(ValueError, match="cuda"):
        mt.linspace(0, 1, 3, device="cuda")


def test_docstring_examples_run():
    result = doctest.testmod(ranges, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
