"""The containers: Sequential, ModuleList, ModuleDict, Identity."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn


def test_sequential_runs_in_order_and_supports_indexing():
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = mt.randn(5, 3)
    manual = seq[2](seq[1](seq[0](x)))
    np.testing.assert_allclose(seq(x).numpy(), manual.numpy())
    assert len(seq) == 3 and seq[-1] is seq[2]
    assert [type(m).__name__ for m in seq] == ["Linear", "ReLU", "Linear"]
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is seq[0]
    with pytest.raises(IndexError, match="out of range"):
        seq[3]
    seq.append(nn.Tanh())
    assert len(seq) == 4 and isinstance(seq[3], nn.Tanh)
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"] and isinstance(seq[1], nn.Linear)
    seq[0] = nn.Identity()
    assert isinstance(seq[0], nn.Identity)


def test_sequential_from_ordered_dict_keeps_names():
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
    assert list(seq.state_dict()) == ["fc.weight", "fc.bias"]
    assert seq.fc is seq[0]


def test_module_list_operations():
    layers = nn.ModuleList([nn.Linear(2, 2)])
    layers.append(nn.ReLU())
    layers.extend([nn.Tanh()])
    layers.insert(1, nn.Identity())
    assert [type(m).__name__ for m in layers] == ["Linear", "Identity", "ReLU", "Tanh"]
    assert list(layers._modules) == ["0", "1", "2", "3"]
    assert isinstance(layers[-1], nn.Tanh) and len(layers) == 4
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    layers += [nn.Sigmoid()]
    del layers[0]
    assert [type(m).__name__ for m in layers] == ["Identity", "ReLU", "Tanh", "Sigmoid"]
    layers[0] = nn.Linear(1, 1)
    assert len(list(layers.parameters())) == 2
    with pytest.raises(IndexError):
        layers[10]
    with pytest.raises(NotImplementedError):
        layers(mt.zeros(1))


def test_module_dict_operations():
    d = nn.ModuleDict({"a": nn.Linear(2, 2)})
    d["b"] = nn.ReLU()
    assert list(d) == ["a", "b"] and "a" in d and len(d) == 2
    assert [k for k, _ in d.items()] == ["a", "b"] and list(d.keys()) == ["a", "b"]
    assert isinstance(d.pop("b"), nn.ReLU) and len(list(d.values())) == 1
    del d["a"]
    assert len(d) == 0


def test_identity_returns_its_input():
    x = mt.randn(2)
    assert nn.Identity(3, flag=True)(x) is x
