"""Module.state_dict() as PyTorch shares it (Tensors on the module's memory, outside the graph),
and load_state_dict, which checks and casts every value before changing anything."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn


class WithBuffer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("count", mt.zeros(2))

    def forward(self, x):
        return self.fc(x) + self.count


def _snapshot(module: nn.Module) -> dict:
    return {k: np.array(v, copy=True) for k, v in module.state_dict().items()}


def test_state_dict_values_are_tensors_sharing_memory_outside_the_graph():
    model = WithBuffer()
    sd = model.state_dict()
    assert list(sd) == ["count", "fc.weight", "fc.bias"] and type(sd) is OrderedDict  # PyTorch's order
    for value, tensor in zip(sd.values(), [model.count, model.fc.weight, model.fc.bias]):
        assert type(value) is mt.Tensor and not isinstance(value, nn.Parameter)
        assert not value.requires_grad and value.grad_fn is None
        assert value.numpy() is tensor.numpy()  # the very array: sd[k].numpy() is the weight
        assert value.shape == tensor.shape and value.dtype == tensor.dtype


def test_copy_into_a_state_dict_under_no_grad_loads_the_model():
    """minGPT / nanoGPT's from_pretrained: copy each checkpoint weight into model.state_dict()[k]."""
    mt.manual_seed(0)
    model, source = WithBuffer(), WithBuffer()
    with mt.no_grad():
        source.count.fill_(3.0)
    x = mt.randn(4, 3)
    assert not np.allclose(model(x).numpy(), source(x).numpy())
    sd, weights = model.state_dict(), source.state_dict()
    version = model.fc.weight._version
    with mt.no_grad():
        for key in sd:
            sd[key].copy_(weights[key])
    np.testing.assert_array_equal(model(x).numpy(), source(x).numpy())
    assert model.count.numpy().tolist() == [3.0, 3.0]
    assert model.fc.weight._version > version  # autograd sees the change (saved tensors are checked)
    # a transposed copy, as from a Conv1D checkpoint, writes the weight too
    with mt.no_grad():
        sd["fc.weight"].copy_(mt.ones(3, 2).T)  # (PyTorch code writes .t(); minitensor has .T)
    assert (model.fc.weight.numpy() == 1.0).all()


def test_copy_into_a_state_dict_value_works_outside_no_grad_but_not_into_the_parameter():
    layer = nn.Linear(2, 2)
    layer.state_dict()["bias"].copy_(mt.tensor([5.0, 6.0]))  # does not require grad: allowed, as in PyTorch
    assert layer.bias.numpy().tolist() == [5.0, 6.0]
    with pytest.raises(RuntimeError, match="no_grad"):
        layer.bias.copy_(mt.zeros(2))


def test_a_loaded_state_dict_is_independent_of_its_source():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.load_state_dict(a.state_dict())
    with mt.no_grad():
        a.weight.fill_(9.0)
    assert not (b.weight.numpy() == 9.0).any()


def test_load_state_dict_accepts_arrays_tensors_and_the_numpy_recipe():
    a = WithBuffer()
    for sd in (a.state_dict(), {k: v.numpy() for k, v in a.state_dict().items()}, _snapshot(a)):
        b = WithBuffer()
        b.load_state_dict(sd)
        for key, value in b.state_dict().items():
            np.testing.assert_array_equal(value.numpy(), a.state_dict()[key].numpy())


@pytest.mark.parametrize(
    "bad",
    [
        np.array(["1.5", "2.5"]),  # strings, even numeric ones
        np.zeros(2, dtype=[("x", "f4")]),  # a structured dtype
        np.array([object(), object()], dtype=object),  # Python objects
        np.array([1 + 2j, 3j]),  # complex: the imaginary part would be lost
    ],
    ids=["str", "structured", "object", "complex"],
)
def test_load_state_dict_changes_nothing_when_a_value_cannot_be_cast(bad):
    layer = nn.Linear(2, 2)
    before, version = _snapshot(layer), layer.weight._version
    sd = OrderedDict([("weight", np.full((2, 2), 7.0)), ("bias", bad)])  # the good value comes first
    with pytest.raises(TypeError, match=r"'bias'.*dtype"):
        layer.load_state_dict(sd)
    for key, value in _snapshot(layer).items():
        np.testing.assert_array_equal(value, before[key])
    assert layer.weight._version == version
