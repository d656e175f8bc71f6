"""meshgrid, cartesian_prod, combinations (ops/grids.py): float64 gradcheck, second order and PyTorch as the
oracle; meshgrid's indexing warning as PyTorch's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
from minitensor.ops.grids import _combination_indices

rng = np.random.default_rng(21)
A, B, C = rng.standard_normal(2), rng.standard_normal(3), rng.standard_normal(4)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("which", [0, 1, 2])
def test_meshgrid_each_grid(indexing, which):
    torch = pytest.importorskip("torch")
    check_op(lambda *v: mt.meshgrid(*v, indexing=indexing)[which],
             lambda *v: torch.meshgrid(*v, indexing=indexing)[which], A, B, C)  # fmt: skip


def test_meshgrid_without_indexing_warns_and_takes_ij():
    with pytest.warns(UserWarning, match="required to pass the indexing argument"):
        x, y = mt.meshgrid(mt.tensor(A), mt.tensor(B))
    assert x.shape == y.shape == (2, 3)
    assert mt.meshgrid([mt.tensor(A), mt.tensor(B)], indexing="xy")[0].shape == (3, 2)


def test_cartesian_prod():
    torch = pytest.importorskip("torch")
    check_op(mt.cartesian_prod, torch.cartesian_prod, A, B)


@pytest.mark.parametrize("r, repeat", [(2, False), (3, True), (1, False)])
def test_combinations(r, repeat):
    torch = pytest.importorskip("torch")
    check_op(lambda x: mt.combinations(x, r, repeat), lambda x: torch.combinations(x, r, repeat), C)
    assert mt.combinations(mt.tensor([1, 2]), 3).shape == (0, 3)


def test_errors():
    with pytest.raises(ValueError, match="meshgrid: indexing must be one of 'ij', 'xy'; got 'yx'"):
        mt.meshgrid(mt.tensor(A), indexing="yx")
    with pytest.raises(ValueError, match=r"combinations: input must be a 1-D tensor, got shape \(2, 2\)"):
        mt.combinations(mt.ones(2, 2))


@pytest.mark.parametrize("repeat", [False, True])
def test_combination_indices_are_itertools_in_its_order(repeat) -> None:
    pick = itertools.combinations_with_replacement if repeat else itertools.combinations
    for n in range(7):
        for r in range(1, 5):
            expected = np.array(list(pick(range(n), r)), dtype=np.int64).reshape(-1, r)
            np.testing.assert_array_equal(_combination_indices(n, r, repeat), expected)
