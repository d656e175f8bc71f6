"""Layers composed into models: float64 gradcheck through a Sequential of several layers, a module
used twice, float64 kept through a whole model, and the default dtype taken by every layer."""

from __future__ import annotations

from helpers import gradcheck_module, randn_f64, randomize_parameters

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck


def test_composite_model_gradcheck(rng):
    model = nn.Sequential(
        nn.Linear(4, 6, dtype=mt.float64),
        nn.LayerNorm(6, dtype=mt.float64),
        nn.GELU(),
        nn.Linear(6, 3, dtype=mt.float64),
        nn.Tanh(),
    )
    randomize_parameters(model, rng)
    gradcheck_module(model, randn_f64(rng, 2, 4))


def test_reused_module_accumulates_gradient_from_both_uses(rng):
    layer = nn.Linear(3, 3, dtype=mt.float64)
    x = randn_f64(rng, 2, 3)
    assert gradcheck(lambda t, *_: layer(layer(t)), [x, *layer.parameters()])


def test_float64_module_stays_float64(rng):
    model = nn.Sequential(
        nn.Linear(3, 4, dtype=mt.float64), nn.LayerNorm(4, dtype=mt.float64), nn.GELU(), nn.Dropout(0.2)
    )
    x = randn_f64(rng, 2, 3)
    y = model(x)
    assert y.dtype == mt.float64
    y.sum().backward()
    assert all(p.grad.dtype == mt.float64 for p in model.parameters()) and x.grad.dtype == mt.float64


def test_default_dtype_is_used_when_dtype_is_none():
    mt.set_default_dtype(mt.float64)
    try:
        assert nn.Linear(2, 2).weight.dtype == mt.float64
        assert nn.LayerNorm(2).weight.dtype == mt.float64
        assert nn.Embedding(3, 2).weight.dtype == mt.float64
    finally:
        mt.set_default_dtype(mt.float32)
