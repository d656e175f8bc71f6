"""nn.utils.parametrize (nn/utils/parametrize.py): PyTorch's class swap, repr and state dict keys, values
and gradients against PyTorch, right_inverse on assignment, chains, cached(), buffers, unsafe,
remove_parametrizations (both ways, keeping the Parameter object), and bad arguments."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.nn.utils import parametrize as P

torch = pytest.importorskip("torch")
TP = torch.nn.utils.parametrize


def symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(0, 1)

        def right_inverse(self, a):
            return a.triu()

    return Symmetric()


def scaled(lib):
    class Scaled(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = lib.nn.Parameter(lib.ones(1, dtype=lib.float64) * 2.0)

        def forward(self, x):
            return x * self.scale

    return Scaled()


def pair(*makers):
    """A float64 Linear(3, 3) of each library with the same weights and the parametrizations of ``makers``."""
    ours, theirs = nn.Linear(3, 3, dtype=mt.float64), torch.nn.Linear(3, 3, dtype=torch.float64)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    for make in makers:
        P.register_parametrization(ours, "weight", make(mt))
        TP.register_parametrization(theirs, "weight", make(torch))
    return ours, theirs


def test_structure_values_and_gradients_equal_pytorch():
    ours, theirs = pair(symmetric, scaled)
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert repr(ours).replace("Symmetric", "S") == repr(theirs).replace("Symmetric", "S")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), err_msg=key)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    x = np.random.default_rng(0).standard_normal((4, 3))
    ours(mt.tensor(x, dtype=mt.float64)).sum().backward()
    theirs(torch.tensor(x)).sum().backward()
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-12, err_msg=name)
    assert P.is_parametrized(ours) and P.is_parametrized(ours, "weight") and not P.is_parametrized(ours, "bias")
    assert P.type_before_parametrizations(ours) is nn.Linear


def test_assignment_runs_right_inverse_and_keeps_the_original_parameter():
    ours, theirs = pair(symmetric)
    original = ours.parametrizations.weight.original
    a = np.arange(9.0).reshape(3, 3)
    ours.weight = mt.tensor(a, dtype=mt.float64)
    theirs.weight = torch.tensor(a)
    assert ours.parametrizations.weight.original is original
    np.testing.assert_array_equal(original.numpy(), theirs.parametrizations.weight.original.detach().numpy())
    np.testing.assert_array_equal(ours.weight.detach().numpy(), np.triu(a) + np.triu(a, 1).T)
    with_no_inverse = nn.Linear(2, 2)
    P.register_parametrization(with_no_inverse, "weight", scaled(mt).to(mt.float32))
    with pytest.raises(RuntimeError, match="Scaled does not implement right_inverse"):
        with_no_inverse.weight = mt.ones(2, 2)


def test_an_optimizer_trains_the_original():
    ours, _ = pair(symmetric)
    optimizer = mt.optim.SGD(ours.parameters(), lr=0.1)
    before = ours.parametrizations.weight.original.numpy().copy()
    ours(mt.ones(2, 3, dtype=mt.float64)).pow(2).sum().backward()
    optimizer.step()
    assert not np.allclose(ours.parametrizations.weight.original.numpy(), before)
    w = ours.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)


def test_cached_computes_each_tensor_once_per_block():
    ours, _ = pair(symmetric)
    assert ours.weight is not ours.weight
    with P.cached():
        first = ours.weight
        with P.cached():
            assert ours.weight is first
        assert ours.weight is first
    assert ours.weight is not first


def test_remove_parametrizations_both_ways():
    for leave, expected in ((True, "parametrized"), (False, "original")):
        ours, theirs = pair(symmetric)
        original = ours.parametrizations.weight.original
        value = (ours.weight if leave else original).detach().numpy().copy()
        P.remove_parametrizations(ours, "weight", leave_parametrized=leave)
        TP.remove_parametrizations(theirs, "weight", leave_parametrized=leave)
        assert type(ours) is nn.Linear and "parametrizations" not in ours._modules, expected
        assert ours.weight is original  # the same Parameter object, with the values asked for
        np.testing.assert_array_equal(ours.weight.numpy(), value)
        np.testing.assert_allclose(ours.weight.numpy(), theirs.weight.detach().numpy())
        assert list(ours.state_dict()) == list(theirs.state_dict())


def test_a_buffer_can_be_parametrized_and_unsafe_allows_a_new_shape():
    module = nn.Module()
    module.register_buffer("table", mt.ones(2, 3))

    class Flat(nn.Module):
        def forward(self, x):
            return x.reshape(-1)

    with pytest.raises(ValueError, match="may not change the shape or dtype"):
        P.register_parametrization(module, "table", Flat())
    assert not P.is_parametrized(module)
    P.register_parametrization(module, "table", Flat(), unsafe=True)
    assert module.table.shape == (6,) and list(module.state_dict()) == ["parametrizations.table.original"]


def test_bad_arguments_raise_naming_them():
    with pytest.raises(ValueError, match="has no parameter, buffer or parametrized tensor named 'kernel'"):
        P.register_parametrization(nn.Linear(2, 2), "kernel", symmetric(mt))
    with pytest.raises(TypeError, match="parametrization must be an nn.Module"):
        P.register_parametrization(nn.Linear(2, 2), "weight", lambda x: x)
    with pytest.raises(ValueError, match="has no parametrization on 'weight'"):
        P.remove_parametrizations(nn.Linear(2, 2), "weight")


def test_docstring_examples_run():
    result = doctest.testmod(P, extraglobs={"mt": mt, "nn": nn}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
