"""mt.as_tensor (tensor/conversion.py): shares memory where PyTorch does, dtypes as PyTorch's."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
from minitensor.tensor import conversion


def test_numpy_arrays_are_shared_and_keep_their_dtype():
    a = np.arange(3.0)
    t = mt.as_tensor(a)
    a[0] = 9.0
    assert t.dtype == mt.float64 and t.tolist() == [9.0, 1.0, 2.0]
    assert mt.as_tensor(np.arange(3, dtype=np.int32)).dtype == mt.int32
    assert mt.as_tensor(np.float64(2.0)).dtype == mt.float64


def test_a_different_dtype_makes_a_converted_copy():
    a = np.arange(3.0)
    t = mt.as_tensor(a, dtype=mt.float32)
    a[0] = 7.0
    assert t.dtype == mt.float32 and t.tolist() == [0.0, 1.0, 2.0]


def test_tensors_come_back_as_they_are_or_converted_in_the_graph():
    x = mt.ones(2, requires_grad=True)
    assert mt.as_tensor(x) is x and mt.as_tensor(x, dtype=mt.float32) is x
    y = mt.as_tensor(x, dtype=mt.float64)
    assert y.dtype == mt.float64 and y.grad_fn is not None
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_python_data_is_read_as_mt_tensor_reads_it():
    assert mt.as_tensor([1, 2]).dtype == mt.int64
    assert mt.as_tensor(1.5).dtype == mt.get_default_dtype()
    assert mt.as_tensor([1.5], dtype=mt.float64).dtype == mt.float64
    assert mt.as_tensor([1.0], device="cpu").device == mt.device("cpu")


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="cuda"):
        mt.as_tensor([1.0], device="cuda")
    with pytest.raises(TypeError, match="not supported"):
        mt.as_tensor(np.array(["a"]))
    with pytest.raises(TypeError, match="dtype"):
        mt.as_tensor([1.0], dtype="no such dtype")


def test_docstring_examples_run():
    result = doctest.testmod(conversion, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
