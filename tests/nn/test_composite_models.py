"""Layers composed into models: float64 gradcheck through a Sequential of several layers, a module
used twice, float64 kept through a whole model, the default dtype taken by every layer, and a
BatchNorm residual block (pooling and upsampling in place of convolutions) training step by step
as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import copy_weights, gradcheck_module, randn_f64, randomize_parameters

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


def _residual_net(lib):
    """(N, 4, 6, 6) -> 3 logits: x + BN-ReLU-maxpool-upsample-BN(x), ReLU, global average pooling, a
    linear head (a ResNet block's shape; convolutions are not among these layers)."""
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bn1, self.bn2 = nn.BatchNorm2d(4, momentum=None), nn.BatchNorm2d(4)
            self.pool, self.up = nn.MaxPool2d(2), nn.Upsample(scale_factor=2, mode="bilinear")
            self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))

        def forward(self, x):
            branch = self.bn2(self.up(self.pool(self.bn1(x).relu())))
            return self.head((x + branch).relu())

    return Net().double()


def test_batch_norm_residual_block_trains_as_pytorch(rng) -> None:
    """Six SGD steps (momentum, weight decay) in training mode give PyTorch's losses, parameters and
    running statistics (momentum 0.1 and the cumulative average); then the same evaluation outputs."""
    torch = pytest.importorskip("torch")
    theirs, ours = _residual_net(torch), _residual_net(mt)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
    copy_weights(theirs, ours)
    x, target = rng.standard_normal((8, 4, 6, 6)) * 2 + 1, np.arange(8) % 3
    settings = {"lr": 0.1, "momentum": 0.9, "weight_decay": 1e-3}
    optimizers = mt.optim.SGD(ours.parameters(), **settings), torch.optim.SGD(theirs.parameters(), **settings)
    for step in range(6):
        losses = []
        for lib, model, opt in zip((mt, torch), (ours, theirs), optimizers):
            loss = lib.nn.functional.cross_entropy(
                model(lib.tensor(x * (1 + step / 10), dtype=lib.float64)), lib.tensor(target)
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], rel=1e-10)
    for name, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[name].numpy(), value.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
    ours.eval(), theirs.eval()
    np.testing.assert_allclose(
        ours(mt.tensor(x, dtype=mt.float64)).numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-9
    )
