"""nn/utils/clip_grad.py: ``clip_grad_norm_`` (every norm type, edge cases) and ``clip_grad_value_``
against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
from minitensor.nn.utils import clip_grad_norm_, clip_grad_value_

torch = pytest.importorskip("torch")


def pair(shapes, scale: float, seed: int = 0):
    """Parameters with gradients, in minitensor and in PyTorch (same values)."""
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for shape in shapes:
        value, grad = rng.standard_normal(shape), rng.standard_normal(shape) * scale
        p = mt.tensor(value, dtype=mt.float64, requires_grad=True)
        p.grad = mt.tensor(grad, dtype=mt.float64)
        q = torch.tensor(value, requires_grad=True)
        q.grad = torch.tensor(grad)
        ours.append(p)
        theirs.append(q)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("scale, max_norm", [(5.0, 1.0), (0.01, 1.0), (1.0, 0.5)])
def test_clip_grad_norm_matches_torch(norm_type, scale, max_norm) -> None:
    ours, theirs = pair([(3, 4), (5,), (2, 2, 2)], scale)
    total = clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    want = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert isinstance(total, mt.Tensor) and total.ndim == 0 and total.dtype == mt.float64
    np.testing.assert_allclose(total.item(), want.item(), rtol=1e-12)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_edge_cases() -> None:
    p = mt.zeros(3, requires_grad=True)
    assert clip_grad_norm_([p], 1.0).item() == 0.0  # no gradients at all
    p.grad = mt.tensor([3.0, 4.0, 0.0])
    assert clip_grad_norm_(p, max_norm=10.0).item() == pytest.approx(5.0)  # a single Tensor works
    assert p.grad.tolist() == [3.0, 4.0, 0.0] and p.grad.dtype == mt.float32
    p.grad = mt.tensor([float("nan"), 1.0, 0.0])
    with pytest.raises(RuntimeError, match="error_if_nonfinite"):
        clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    with pytest.raises(TypeError, match="max_norm"):
        clip_grad_norm_([p], "1")
    with pytest.raises(TypeError, match=r"parameters\[1\]"):
        clip_grad_norm_([p, 3.0], 1.0)


def test_clip_grad_value_matches_torch() -> None:
    ours, theirs = pair([(4, 3), (6,)], 3.0, seed=1)
    assert clip_grad_value_(ours, 0.7) is None
    torch.nn.utils.clip_grad_value_(theirs, 0.7)
    for p, q in zip(ours, theirs):
        assert p.grad.tolist() == q.grad.tolist()
        assert np.abs(p.grad.numpy()).max() <= 0.7
