"""nn/parameter.py: ``Parameter`` is a leaf that requires grad and shares the tensor's data, keeps an
array's dtype, gives plain Tensors from ops (whose gradients reach it), and takes hooks."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn


# ------------------------------------------------------------------ Parameter
def test_parameter_is_a_leaf_that_requires_grad_and_shares_tensor_data():
    t = mt.zeros(2, 3)
    p = nn.Parameter(t)
    assert isinstance(p, mt.Tensor) and p.requires_grad and p.is_leaf
    p.numpy()[0, 0] = 5.0
    assert t.numpy()[0, 0] == 5.0
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert not nn.Parameter(mt.zeros(2), requires_grad=False).requires_grad


def test_parameter_from_array_keeps_dtype_and_from_list_gets_default_dtype():
    assert nn.Parameter(np.zeros(3)).dtype == mt.float64
    assert nn.Parameter([1.0, 2.0]).dtype == mt.get_default_dtype()
    with pytest.raises(TypeError, match="float"):
        nn.Parameter(np.arange(3))


def test_ops_on_parameters_give_plain_tensors_and_gradients_reach_the_parameter():
    p = nn.Parameter(mt.tensor([1.0, 2.0]))
    y = p * p
    assert type(y) is mt.Tensor
    y.sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), [2.0, 4.0])


def test_a_parameter_sets_every_field_of_a_tensor_and_takes_hooks():
    p = nn.Parameter(mt.tensor([1.0, 2.0]))
    for slot in mt.Tensor.__slots__:
        if slot != "__weakref__":
            getattr(p, slot)  # Parameter.__init__ does not call Tensor.__init__: each field by hand
    seen = []
    p.register_hook(lambda g: seen.append(g.numpy().tolist()) or g * 10)
    (p * p).sum().backward()
    assert seen == [[2.0, 4.0]]
    np.testing.assert_allclose(p.grad.numpy(), [20.0, 40.0])
