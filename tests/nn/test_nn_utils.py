"""nn.utils (clip_grad_norm_, clip_grad_value_, parameters <-> vector) and the optimizer
features PyTorch training scripts rely on, against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import optim
from minitensor.autograd import gradcheck
from minitensor.nn.utils import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters

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


def test_parameters_to_vector_and_back() -> None:
    ours, theirs = pair([(2, 3), (4,)], 1.0, seed=2)
    vec = parameters_to_vector(ours)
    assert vec.tolist() == torch.nn.utils.parameters_to_vector(theirs).tolist()
    weights = mt.tensor(np.random.default_rng(3).standard_normal(10))
    assert gradcheck(lambda a, b: parameters_to_vector([a, b]) * weights, ours)
    new = mt.arange(10.0, dtype=mt.float64)
    with mt.no_grad():
        vector_to_parameters(new, ours)
    assert ours[0].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and ours[1].tolist() == [6.0, 7.0, 8.0, 9.0]
    with pytest.raises(ValueError, match="vec has 3 elements, the parameters hold 10"):
        vector_to_parameters(mt.zeros(3), ours)


def test_zero_grad_defaults_to_none_as_pytorch() -> None:
    model = nn.Linear(3, 2)
    opt = optim.AdamW(model.parameters(), lr=1e-3)
    model(mt.randn(4, 3)).sum().backward()
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    model(mt.randn(4, 3)).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in model.parameters())


def test_mingpt_style_parameter_groups_match_torch() -> None:
    """Two groups with different weight decay (minGPT's configure_optimizers), lr changed by hand."""
    rng = np.random.default_rng(4)
    w0, b0, g = rng.standard_normal((3, 3)), rng.standard_normal(3), rng.standard_normal((3, 3))
    w, b = mt.tensor(w0, dtype=mt.float64, requires_grad=True), mt.tensor(b0, dtype=mt.float64, requires_grad=True)
    tw, tb = torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    groups = lambda a, c: [{"params": [a], "weight_decay": 0.1}, {"params": [c], "weight_decay": 0.0}]  # noqa: E731
    opt = optim.AdamW(groups(w, b), lr=1e-2, betas=(0.9, 0.95))
    topt = torch.optim.AdamW(groups(tw, tb), lr=1e-2, betas=(0.9, 0.95))
    for step in range(5):
        for o in (opt, topt):
            for group in o.param_groups:
                group["lr"] = 1e-2 * (step + 1) / 5  # a hand-written warmup, as in nanoGPT
        for (p, q), o in (((w, b), opt), ((tw, tb), topt)):
            o.zero_grad(set_to_none=True)
            loss = (p * (mt.tensor(g) if o is opt else torch.tensor(g))).sum() + (q * q).sum()
            loss.backward()
            o.step()
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(b.numpy(), tb.detach().numpy(), rtol=1e-10)
    assert [grp["weight_decay"] for grp in opt.param_groups] == [0.1, 0.0]
