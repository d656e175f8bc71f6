"""mt.finfo / mt.iinfo (type_info.py) against torch.finfo / torch.iinfo."""

from __future__ import annotations

import doctest

import pytest

import minitensor as mt
from minitensor import type_info

torch = pytest.importorskip("torch")

FLOATS = [(mt.float16, torch.float16), (mt.float32, torch.float32), (mt.float64, torch.float64)]
INTS = [(mt.uint8, torch.uint8), (mt.int8, torch.int8), (mt.int16, torch.int16), (mt.int32, torch.int32),
        (mt.int64, torch.int64)]  # fmt: skip


@pytest.mark.parametrize("dtype, torch_dtype", FLOATS)
def test_finfo_matches_pytorch(dtype, torch_dtype):
    got, want = mt.finfo(dtype), torch.finfo(torch_dtype)
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(got, name) == getattr(want, name), name
    assert repr(got) == repr(want)


@pytest.mark.parametrize("dtype, torch_dtype", INTS)
def test_iinfo_matches_pytorch(dtype, torch_dtype):
    got, want = mt.iinfo(dtype), torch.iinfo(torch_dtype)
    assert (got.bits, got.max, got.min, got.dtype) == (want.bits, want.max, want.min, want.dtype)
    assert repr(got) == repr(want)


def test_default_dtype_tensor_dtype_and_equality():
    assert mt.finfo() == mt.finfo(mt.float32)
    mt.set_default_dtype(mt.float64)
    try:
        assert mt.finfo().dtype == "float64"
    finally:
        mt.set_default_dtype(mt.float32)
    assert mt.finfo(mt.ones(1, dtype=mt.float16)).bits == 16  # a tensor stands for its dtype
    assert mt.iinfo(mt.long) != mt.iinfo(mt.int32)


def test_wrong_kinds_raise_type_error():
    with pytest.raises(TypeError, match="floating point dtype, got int64"):
        mt.finfo(mt.int64)
    with pytest.raises(TypeError, match="integer dtype, got float32"):
        mt.iinfo(mt.float32)
    with pytest.raises(TypeError, match="bool is not supported"):
        mt.iinfo(mt.bool)


def test_docstring_examples_run():
    result = doctest.testmod(type_info, extraglobs={"mt": mt}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
