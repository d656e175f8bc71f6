"""nn/linear.py: ``nn.Linear``: float64 gradcheck w.r.t. input and parameters (also a non-contiguous
input), shapes and formula, PyTorch's default init bounds, and validation;
``nn.Bilinear`` and ``F.bilinear``: PyTorch's values, gradients and second derivatives (batched,
unbatched, extra leading dims, with and without bias), defaults, init bound, repr, state dict, bad arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import gradcheck_module, randn_f64
from op_checks import check_op

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck


# ------------------------------------------------------------------- gradients
@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_gradcheck(rng, shape, bias):
    layer = nn.Linear(5, 4, bias=bias, dtype=mt.float64)
    gradcheck_module(layer, randn_f64(rng, *shape))


def test_linear_gradcheck_on_non_contiguous_input(rng):
    layer = nn.Linear(3, 2, dtype=mt.float64)
    x = randn_f64(rng, 3, 4)
    assert gradcheck(lambda t, *_: layer(t.transpose(0, 1)), [x, *layer.parameters()])


# ------------------------------------------------------------------------ Linear
def test_linear_shapes_and_formula(rng):
    layer = nn.Linear(4, 3)
    assert layer.weight.shape == (3, 4) and layer.bias.shape == (3,)
    assert layer.weight.dtype == mt.float32
    x = mt.tensor(rng.standard_normal((2, 5, 4)))
    y = layer(x)
    assert y.shape == (2, 5, 3) and y.dtype == mt.float32
    np.testing.assert_allclose(y.numpy(), x.numpy() @ layer.weight.numpy().T + layer.bias.numpy(), rtol=1e-5, atol=1e-6)
    assert nn.Linear(4, 3, bias=False).bias is None


def test_linear_default_init_bounds_and_reproducibility():
    mt.manual_seed(0)
    a = nn.Linear(100, 50)
    bound = 1 / math.sqrt(100)
    assert np.abs(a.weight.numpy()).max() <= bound and np.abs(a.bias.numpy()).max() <= bound
    assert np.abs(a.weight.numpy()).max() > 0.9 * bound  # spread over the whole interval
    assert abs(a.weight.numpy().std() - bound / math.sqrt(3)) < 0.05 * bound
    mt.manual_seed(0)
    b = nn.Linear(100, 50)
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    np.testing.assert_array_equal(a.bias.numpy(), b.bias.numpy())


def test_linear_validation():
    with pytest.raises(ValueError, match="in_features"):
        nn.Linear(0, 3)
    with pytest.raises(ValueError, match="out_features"):
        nn.Linear(3, -1)
    with pytest.raises(TypeError, match="in_features"):
        nn.Linear(2.5, 3)
    with pytest.raises(TypeError, match="dtype"):
        nn.Linear(2, 3, dtype=mt.int64)
    layer = nn.Linear(4, 3)
    with pytest.raises(ValueError, match=r"in_features=4, got 5"):
        layer(mt.zeros(2, 5))
    with pytest.raises(TypeError, match="float64.*float32"):
        layer(mt.zeros(2, 4, dtype=mt.float64))
    with pytest.raises(TypeError, match="Tensor or a NumPy array, got list"):
        layer([[0.0] * 4] * 2)  # (NumPy arrays are accepted: tests/nn/test_array_inputs.py)


# -------------------------------------------------------------- Bilinear
bilinear_rng = np.random.default_rng(9)
BILINEAR_W, BILINEAR_B = bilinear_rng.standard_normal((5, 3, 4)), bilinear_rng.standard_normal(5)


@pytest.mark.parametrize("lead", [(2,), (), (2, 3)], ids=str)
def test_bilinear_against_pytorch_to_second_order(lead, torch):
    x1, x2 = bilinear_rng.standard_normal((*lead, 3)), bilinear_rng.standard_normal((*lead, 4))
    check_op(F.bilinear, torch.nn.functional.bilinear, x1, x2, BILINEAR_W, BILINEAR_B)
    check_op(F.bilinear, torch.nn.functional.bilinear, x1, x2, BILINEAR_W)


def test_bilinear_layer_as_pytorch(torch):
    for bias in (True, False):
        ours, theirs = nn.Bilinear(3, 4, 5, bias), torch.nn.Bilinear(3, 4, 5, bias)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for name, p in ours.named_parameters():  # init: U(-1/sqrt(in1), 1/sqrt(in1))
            assert p.shape == tuple(getattr(theirs, name).shape) and np.abs(p.numpy()).max() <= 1 / np.sqrt(3)
    ours = nn.Bilinear(3, 4, 5, dtype=mt.float64)
    ours.load_state_dict({"weight": BILINEAR_W, "bias": BILINEAR_B})
    x1, x2 = bilinear_rng.standard_normal((6, 3)), bilinear_rng.standard_normal((6, 4))
    expected = torch.nn.functional.bilinear(
        torch.tensor(x1), torch.tensor(x2), torch.tensor(BILINEAR_W), torch.tensor(BILINEAR_B)
    )
    y = ours(mt.tensor(x1, dtype=mt.float64), mt.tensor(x2, dtype=mt.float64))
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-12)


def test_bilinear_bad_arguments_raise_naming_them():
    w = mt.ones(5, 3, 4)
    with pytest.raises(ValueError, match=r"bilinear: input2's last dim must be 4 \(weight \(5, 3, 4\)\), got shape"):
        F.bilinear(mt.ones(2, 3), mt.ones(2, 3), w)
    with pytest.raises(ValueError, match="bilinear: input1 .* and input2 .* must have the same leading dims"):
        F.bilinear(mt.ones(2, 3), mt.ones(3, 4), w)
    with pytest.raises(ValueError, match=r"bilinear: weight must be 3-D"):
        F.bilinear(mt.ones(2, 3), mt.ones(2, 4), mt.ones(3, 4))
    with pytest.raises(ValueError, match=r"bilinear: bias must have shape \(5,\)"):
        F.bilinear(mt.ones(2, 3), mt.ones(2, 4), w, mt.ones(4))
    with pytest.raises(ValueError, match="Bilinear: in2_features must be positive"):
        nn.Bilinear(3, 0, 5)
