"""nn/functional/dropout.py: ``F.dropout`` scales the kept values, is the identity when not training or
at p = 0, refuses a p outside [0, 1] and integer tensors, and gives a zero gradient at p = 1."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F


# ------------------------------------------------------------------- dropout
def test_dropout_function():
    x = mt.ones(1000)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    mt.manual_seed(0)
    y = F.dropout(x, 0.25)
    assert set(np.unique(y.numpy()).tolist()) == {0.0, np.float32(1 / 0.75).item()}
    assert y.dtype == mt.float32
    assert not F.dropout(x, 1.0).numpy().any()
    for p in (-1e-9, 1.0001):
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            F.dropout(x, p)
    with pytest.raises(TypeError, match="float tensor"):
        F.dropout(mt.tensor([1, 2]), 0.5)


def test_dropout_p_one_gives_zero_gradient():
    x = mt.ones(5, requires_grad=True)
    F.dropout(x, 1.0).backward(mt.ones(5))
    assert not x.grad.numpy().any() and np.isfinite(x.grad.numpy()).all()
