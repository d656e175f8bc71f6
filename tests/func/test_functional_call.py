"""func/functional_call.py against torch.func: functional_call (dicts, tied weights, strict, restore on
error) and stack_module_state."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.func import functional_call, grad, stack_module_state

torch = pytest.importorskip("torch")


class Tied(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(2, 2, bias=False)
        self.b = self.a

    def forward(self, x):
        return self.a(x) + self.b(x)


def test_the_given_tensors_replace_parameters_and_buffers_for_the_call_only() -> None:
    m = nn.Linear(3, 2)
    weight = m.weight
    out = functional_call(m, {"weight": mt.zeros(2, 3), "bias": mt.ones(2)}, (mt.ones(4, 3),))
    np.testing.assert_array_equal(out.numpy(), np.ones((4, 2)))
    assert m.weight is weight
    out = functional_call(m, ({"weight": mt.zeros(2, 3)}, {"bias": mt.ones(2) * 2}), mt.ones(1, 3))  # (one arg)
    np.testing.assert_array_equal(out.numpy(), [[2.0, 2.0]])


def test_the_originals_come_back_when_the_forward_raises() -> None:
    m = nn.Linear(3, 2)
    weight = m.weight
    with pytest.raises(ValueError):
        functional_call(m, {"weight": mt.zeros(2, 3)}, (mt.ones(4, 5),))
    assert m.weight is weight


def test_errors_as_pytorch() -> None:
    m = nn.Linear(2, 2)
    with pytest.raises(ValueError, match=r"\['weight'\] appeared in multiple dictionaries"):
        functional_call(m, ({"weight": mt.zeros(2, 2)}, {"weight": mt.zeros(2, 2)}), (mt.ones(2),))
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'foo'.\n\tMissing key\\(s\\): 'bias'"):
        functional_call(m, {"weight": mt.zeros(2, 2), "foo": mt.ones(1)}, (mt.ones(2),), strict=True)
    with pytest.raises(ValueError, match=r"multiple values for keys \['a.weight', 'b.weight'\], which are tied"):
        functional_call(Tied(), {"a.weight": mt.zeros(2, 2), "b.weight": mt.ones(2, 2)}, (mt.ones(2),))


def test_tied_weights_follow_the_given_tensor_as_pytorch() -> None:
    ours = functional_call(Tied(), {"a.weight": mt.eye(2)}, (mt.ones(2),))
    np.testing.assert_array_equal(ours.numpy(), [2.0, 2.0])


def test_gradients_through_functional_call_equal_pytorchs() -> None:
    m, tm = nn.Linear(3, 2, dtype=mt.float64), torch.nn.Linear(3, 2, dtype=torch.float64)
    with mt.no_grad():
        m.weight.copy_(mt.tensor(tm.weight.detach().numpy(), dtype=mt.float64))
        m.bias.copy_(mt.tensor(tm.bias.detach().numpy(), dtype=mt.float64))
    x = np.random.default_rng(0).standard_normal((4, 3))
    ours = grad(lambda p: (functional_call(m, p, (mt.tensor(x, dtype=mt.float64),)) ** 2).sum())(
        dict(m.named_parameters())
    )
    theirs = torch.func.grad(lambda p: (torch.func.functional_call(tm, p, (torch.tensor(x),)) ** 2).sum())(
        dict(tm.named_parameters())
    )
    for name in theirs:
        np.testing.assert_allclose(ours[name].numpy(), theirs[name].detach().numpy(), rtol=1e-12)


def test_stack_module_state_as_pytorch() -> None:
    models = [nn.Linear(3, 2) for _ in range(4)]
    params, buffers = stack_module_state(models)
    assert list(params) == ["weight", "bias"] and buffers == {}
    assert params["weight"].shape == (4, 2, 3) and params["weight"].requires_grad and params["weight"].is_leaf
    np.testing.assert_array_equal(params["bias"].numpy()[2], models[2].bias.numpy())
    models[1].eval()
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        stack_module_state(models)
    with pytest.raises(RuntimeError, match="same class"):
        stack_module_state([nn.Linear(2, 2), nn.ReLU()])
