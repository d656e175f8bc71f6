"""The constants and small utilities of the root namespace: mt.inf, nan, pi, e, newaxis, is_tensor, numel."""

from __future__ import annotations

import math

import minitensor as mt


def test_constants_are_pythons_floats():
    assert mt.inf == math.inf and mt.pi == math.pi and mt.e == math.e and math.isnan(mt.nan)


def test_newaxis_adds_a_dim():
    assert mt.newaxis is None
    assert mt.zeros(2, 3)[:, mt.newaxis].shape == (2, 1, 3)


def test_masking_with_minus_inf_gives_a_softmax_of_zero_there():
    scores = mt.zeros(2, 2).masked_fill(mt.tensor([[False, True], [False, False]]), -mt.inf)
    assert scores.softmax(-1).tolist() == [[1.0, 0.0], [0.5, 0.5]]


def test_is_tensor_and_numel():
    assert mt.is_tensor(mt.zeros(1)) and not mt.is_tensor([1.0])
    assert mt.numel(mt.zeros(2, 3)) == 6


def test_manual_seed_makes_every_sampler_reproducible():
    def draw():
        mt.manual_seed(7)
        return mt.randn(3).tolist(), mt.rand(2).tolist(), mt.randint_like(mt.zeros(4), 10).tolist()

    assert draw() == draw()
