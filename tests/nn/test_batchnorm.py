"""Batch norm layers (``nn/batchnorm.py``): PyTorch's state (keys, order, buffer dtypes, defaults),
reprs and attributes; training steps against PyTorch's layers (outputs, all gradients, running mean,
unbiased running variance, ``num_batches_tracked``, ``momentum=None``'s cumulative average);
evaluation with the running statistics; state dicts moving both ways; the docstring examples."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from helpers import assert_module_matches_torch

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")

CONFIGS = [
    {},
    {"momentum": None},
    {"momentum": 0.5, "eps": 1e-3},
    {"affine": False},
    {"bias": False},
    {"track_running_stats": False},
    {"affine": False, "track_running_stats": False},
]
SHAPES = {"BatchNorm1d": [(6, 3), (4, 3, 5)], "BatchNorm2d": [(4, 3, 2, 5)]}


def _attributes(module) -> dict:
    return {k: v for k, v in vars(module).items() if not k.startswith("_") and k != "training"}


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
@pytest.mark.parametrize("name", ["BatchNorm1d", "BatchNorm2d"])
def test_state_repr_and_attributes_are_pytorchs(name, kwargs) -> None:
    ours, theirs = getattr(nn, name)(3, **kwargs), getattr(torch.nn, name)(3, **kwargs)
    assert repr(ours) == repr(theirs)
    assert _attributes(ours) == _attributes(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for (n, b), (_, tb) in zip(ours.named_buffers(), theirs.named_buffers()):
        assert b.shape == tuple(tb.shape) and str(b.dtype) == str(tb.dtype).replace("torch.", ""), n
        np.testing.assert_array_equal(b.numpy(), tb.numpy())


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
@pytest.mark.parametrize("name", ["BatchNorm1d", "BatchNorm2d"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
def test_training_then_evaluation_match_pytorch(name, kwargs, dtype) -> None:
    ours = getattr(nn, name)(3, **kwargs).to(getattr(mt, np.dtype(dtype).name))
    theirs = getattr(torch.nn, name)(3, **kwargs).to(getattr(torch, np.dtype(dtype).name))
    rng = np.random.default_rng(2)
    for shape in SHAPES[name]:
        x = (rng.standard_normal(shape) * 2 + 1).astype(dtype)
        assert_module_matches_torch(ours.train(), theirs.train(), x, torch, steps=3)
        assert_module_matches_torch(ours.eval(), theirs.eval(), x, torch, steps=1)
    if ours.track_running_stats:
        assert ours.num_batches_tracked.item() == theirs.num_batches_tracked.item()


def test_momentum_none_is_the_average_of_all_batches() -> None:
    bn = nn.BatchNorm1d(2, momentum=None).double()
    batches = [np.random.default_rng(s).standard_normal((5, 2)) * (s + 1) for s in range(4)]
    for b in batches:
        bn(mt.tensor(b, dtype=mt.float64))
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([b.mean(0) for b in batches], axis=0), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), np.mean([b.var(0, ddof=1) for b in batches], axis=0), rtol=1e-12)
    assert bn.num_batches_tracked.item() == 4


def test_training_updates_the_running_statistics_in_place_and_bumps_their_versions() -> None:
    """Views of the running statistics see the update, and their versions move by one (PyTorch's
    kernel leaves them: minitensor bumps them, so that a graph that saved them notices)."""
    bn = nn.BatchNorm2d(2)
    x = np.random.default_rng(1).standard_normal((3, 2, 2, 2)).astype(np.float32)
    first = bn.running_mean[0:1]
    before = [bn.running_mean._version, bn.running_var._version]
    bn(mt.tensor(x))
    assert first.item() == bn.running_mean[0].item() == pytest.approx(0.1 * x[:, 0].mean(), rel=1e-5)
    assert [bn.running_mean._version - before[0], bn.running_var._version - before[1]] == [1, 1]
    bn.eval()(mt.tensor(x))
    assert [bn.running_mean._version - before[0], bn.running_var._version - before[1]] == [1, 1]


def test_evaluation_normalises_by_the_running_statistics() -> None:
    bn = nn.BatchNorm2d(2, eps=1e-3).double().eval()
    with mt.no_grad():
        bn.running_mean.copy_(mt.tensor([1.0, -2.0], dtype=mt.float64))
        bn.running_var.copy_(mt.tensor([4.0, 0.25], dtype=mt.float64))
    x = np.random.default_rng(0).standard_normal((3, 2, 2, 2))
    expected = (x - np.array([1.0, -2.0])[:, None, None]) / np.sqrt(np.array([4.0, 0.25]) + 1e-3)[:, None, None]
    np.testing.assert_allclose(bn(mt.tensor(x, dtype=mt.float64)).numpy(), expected, rtol=1e-12)
    assert bn.num_batches_tracked.item() == 0  # evaluation learns nothing


def test_state_dicts_move_both_ways_and_dtype_changes_keep_the_count() -> None:
    theirs = torch.nn.BatchNorm2d(3)
    theirs(torch.randn(4, 3, 2, 2))
    ours = nn.BatchNorm2d(3)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert ours.num_batches_tracked.item() == 1
    back = torch.nn.BatchNorm2d(3)
    back.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    for k, v in theirs.state_dict().items():
        assert torch.equal(back.state_dict()[k], v)
    ours.double()
    assert ours.running_mean.dtype == mt.float64 and ours.num_batches_tracked.dtype == mt.int64
    ours.reset_running_stats()
    assert ours.num_batches_tracked.item() == 0 and ours.running_var.tolist() == [1.0, 1.0, 1.0]


def test_parameters_learn_through_an_optimizer() -> None:
    """A conv-free "network": BatchNorm2d, mean pooling, a linear head, trained a few SGD steps."""
    mt.manual_seed(0)
    model = nn.Sequential(nn.BatchNorm2d(3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(3, 2))
    opt = mt.optim.SGD(model.parameters(), lr=0.5)
    x, target = mt.randn(8, 3, 4, 4), mt.tensor(np.arange(8) % 2)
    losses = []
    for _ in range(20):
        loss = F.cross_entropy(model(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert model[0].num_batches_tracked.item() == 20


@pytest.mark.parametrize(
    "name", ["minitensor.nn.batchnorm", "minitensor.nn.functional.batch_norm", "minitensor.ops.batch_norm"]
)
def test_docstring_examples(name) -> None:
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, extraglobs={"mt": mt, "nn": nn, "F": F, "np": np}, optionflags=flags)
    assert result.attempted > 0 and result.failed == 0
