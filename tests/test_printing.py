"""mt.set_printoptions / get_printoptions / printoptions (tensor/printing.py) and the Tensor repr that follows them."""

from __future__ import annotations

import doctest
import math

import pytest

import minitensor as mt
from minitensor.tensor import printing


@pytest.fixture(autouse=True)
def default_options():
    mt.set_printoptions(profile="default")
    yield
    mt.set_printoptions(profile="default")


def test_defaults_are_pytorchs():
    assert mt.get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
                                     "sci_mode": None}  # fmt: skip


def test_precision_threshold_and_edgeitems_shape_the_repr():
    assert repr(mt.tensor([1.12345])) == "tensor([1.1235])"
    mt.set_printoptions(precision=2)
    assert repr(mt.tensor([1.12345])) == "tensor([1.12])"
    mt.set_printoptions(threshold=5)
    assert repr(mt.arange(10)) == "tensor([0, 1, 2, ..., 7, 8, 9])"
    mt.set_printoptions(edgeitems=1)
    assert repr(mt.arange(10)) == "tensor([0, ..., 9])"
    mt.set_printoptions(profile="default")
    assert repr(mt.arange(10)) == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"


def test_an_empty_tensor_shows_its_size_and_dtype_as_pytorchs():
    assert repr(mt.zeros(0)) == "tensor([])"
    assert repr(mt.zeros(2, 0)) == "tensor([], size=(2, 0))"
    assert repr(mt.zeros(0, 3, dtype=mt.float64, requires_grad=True)) == (
        "tensor([], size=(0, 3), dtype=float64, requires_grad=True)"
    )
    assert repr(mt.zeros(0, dtype=mt.int64)) == "tensor([], dtype=int64)"
    assert repr(mt.zeros(0, 0, dtype=mt.bool)) == "tensor([], size=(0, 0), dtype=bool)"


def test_profiles():
    mt.set_printoptions(profile="short")
    assert mt.get_printoptions()["precision"] == 2 and mt.get_printoptions()["edgeitems"] == 2
    mt.set_printoptions(profile="full")
    assert mt.get_printoptions()["threshold"] == math.inf
    assert "..." not in repr(mt.arange(5000))
    mt.set_printoptions(profile="short", precision=3)  # the profile first, then the options given
    assert mt.get_printoptions()["precision"] == 3


def test_linewidth_wraps_lines():
    mt.set_printoptions(linewidth=30)
    assert max(len(line) for line in repr(mt.arange(40)).splitlines()) <= 30
    mt.set_printoptions(linewidth=1000)
    assert len(repr(mt.arange(40)).splitlines()) == 1


def test_sci_mode_forces_or_forbids_scientific_notation():
    mt.set_printoptions(sci_mode=True)
    assert repr(mt.tensor([0.1, -0.25])) == "tensor([ 1.0000e-01, -2.5000e-01])"
    assert repr(mt.tensor([1.0, float("nan"), -float("inf")])) == "tensor([1.0000e+00,        nan,       -inf])"
    mt.set_printoptions(sci_mode=False)
    assert repr(mt.tensor([1e-5, 1.0])) == "tensor([0.0000, 1.0000])"
    mt.set_printoptions(sci_mode=None)
    assert "e-05" in repr(mt.tensor([1e-5, 1.0]))  # automatic: the spread calls for it


def test_sci_mode_matches_pytorch_exactly():
    torch = pytest.importorskip("torch")
    values = [[0.1, -0.25, 1e-5], [123.5, float("nan"), -float("inf")]]
    for sci_mode in (True, False):
        mt.set_printoptions(sci_mode=sci_mode)
        torch.set_printoptions(sci_mode=sci_mode)
        try:
            want = repr(torch.tensor(values)).replace("torch.", "")
        finally:
            torch.set_printoptions(profile="default")
        assert repr(mt.tensor(values)) == want


def test_printoptions_context_restores():
    with mt.printoptions(precision=1):
        assert repr(mt.tensor([1.26])) == "tensor([1.3])"
    assert mt.get_printoptions()["precision"] == 4


def test_bad_options_raise_and_change_nothing():
    with pytest.raises(ValueError, match="profile must be one of"):
        mt.set_printoptions(precision=2, profile="long")
    with pytest.raises(ValueError, match="precision must be a number >= 0, got -1"):
        mt.set_printoptions(precision=-1, threshold=5)
    with pytest.raises(ValueError, match="sci_mode must be None, True or False"):
        mt.set_printoptions(sci_mode="yes")
    assert mt.get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
                                     "sci_mode": None}  # fmt: skip


def test_docstring_examples_run():
    result = doctest.testmod(printing, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
