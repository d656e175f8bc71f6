"""nn/activation.py: the activation modules: float64 gradchecks, values, float32 kept, GELU's
``approximate`` checked, reprs; PyTorch's defaults, ``repr``, state dicts and init for every layer;
the options of their ``F.`` forms (``inplace=True``; softmin, glu, Softmax2d); bad arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import gradcheck_module, randn_f64

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F


@pytest.mark.parametrize(
    "layer",
    [nn.ReLU(), nn.GELU(), nn.GELU(approximate="tanh"), nn.Tanh(), nn.Sigmoid(), nn.Softmax(dim=1), nn.LogSoftmax(-1)],
    ids=repr,
)
def test_activation_gradcheck(rng, layer):
    x = randn_f64(rng, 3, 4, 2)
    if isinstance(layer, nn.ReLU):
        with mt.no_grad():
            x.numpy()[np.abs(x.numpy()) < 0.05] = 0.5  # away from the kink
    gradcheck_module(layer, x)


# ------------------------------------------------------------------ activations
def test_activation_values(rng):
    x = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64)
    a = x.numpy()
    np.testing.assert_allclose(nn.ReLU()(x).numpy(), np.maximum(a, 0))
    np.testing.assert_allclose(nn.Tanh()(x).numpy(), np.tanh(a))
    np.testing.assert_allclose(nn.Sigmoid()(x).numpy(), 1 / (1 + np.exp(-a)))
    e = np.exp(a - a.max(0))
    np.testing.assert_allclose(nn.Softmax(dim=0)(x).numpy(), e / e.sum(0))
    np.testing.assert_allclose(nn.LogSoftmax(dim=0)(x).numpy(), np.log(e / e.sum(0)))
    gelu = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in a.ravel()]
    np.testing.assert_allclose(nn.GELU()(x).numpy().ravel(), gelu, rtol=1e-14, atol=1e-15)
    tanh = 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))
    np.testing.assert_allclose(nn.GELU("tanh")(x).numpy(), tanh, rtol=1e-14)


def test_activations_keep_float32():
    x = mt.randn(3, 4)
    for layer in (nn.ReLU(), nn.GELU(), nn.GELU("tanh"), nn.Tanh(), nn.Softmax(-1)):
        assert layer(x).dtype == mt.float32, layer


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("fast")


def test_activation_reprs():
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.Softmax(dim=-1)) == "Softmax(dim=-1)"
    assert repr(nn.ReLU()) == "ReLU()" and repr(nn.Dropout(0.1)) == "Dropout(p=0.1)"


# (constructor arguments) for each layer: PyTorch's repr and state dict keys must be the same
LAYERS = {
    "ReLU": [(), (True,)],
    "LeakyReLU": [(), (0.2, True)],
    "ELU": [(), (0.5, True)],
    "SELU": [(), (True,)],
    "CELU": [(), (2.0, True)],
    "PReLU": [(), (4, 0.1)],
    "RReLU": [(), (0.1, 0.3, True)],
    "ReLU6": [(), (True,)],
    "Hardtanh": [(), (-2, 2, True)],
    "Hardsigmoid": [(), (True,)],
    "Hardswish": [(), (True,)],
    "Mish": [(), (True,)],
    "SiLU": [(), (True,)],
    "LogSigmoid": [()],
    "Softsign": [()],
    "Softmin": [(), (1,)],
    "Softshrink": [(), (0.3,)],
    "Hardshrink": [(), (1,)],
    "Tanhshrink": [()],
    "Threshold": [(0.1, 20), (0.1, 20, True)],
    "GLU": [(), (1,)],
    "Softmax2d": [()],
}
CONSTRUCTIONS = [(name, args) for name, all_args in LAYERS.items() for args in all_args]


@pytest.mark.parametrize("name,args", CONSTRUCTIONS, ids=[f"{n}{a}" for n, a in CONSTRUCTIONS])
def test_repr_and_state_dict_keys_equal_pytorch(name, args, torch):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@pytest.mark.filterwarnings("ignore:Implicit dimension choice for softmin")  # (Softmin() without dim)
@pytest.mark.parametrize("name,args", CONSTRUCTIONS, ids=[f"{n}{a}" for n, a in CONSTRUCTIONS])
def test_layer_output_and_input_gradient_equal_pytorch(name, args, torch):
    x = np.random.default_rng(0).uniform(-5, 5, (2, 4, 3, 2))
    ours, theirs = getattr(nn, name)(*args).double().eval(), getattr(torch.nn, name)(*args).double().eval()
    for key, value in theirs.state_dict().items():  # (PReLU's weight)
        ours.state_dict()[key].copy_(value.numpy())
    a, ta = mt.tensor(x, dtype=mt.float64, requires_grad=True), torch.tensor(x, requires_grad=True)
    h, th = a * 1.0, ta * 1.0  # (a non-leaf: the in-place layers may write into it)
    y, ty = ours(h), theirs(th)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    w = np.random.default_rng(1).standard_normal(ty.shape)
    (y * mt.tensor(w, dtype=mt.float64)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    # (1e-7: PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32)
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-7, atol=1e-12)
    for (key, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-12, err_msg=key)


def test_prelu_parameter_init_dtype_and_loading(torch):
    layer = nn.PReLU(4, init=0.1, dtype=mt.float64)
    assert layer.weight.shape == (4,) and layer.weight.dtype == mt.float64
    np.testing.assert_array_equal(layer.weight.numpy(), np.full(4, 0.1))
    np.testing.assert_array_equal(nn.PReLU().weight.numpy(), np.array([0.25], np.float32))
    layer.load_state_dict({"weight": torch.nn.PReLU(4, 0.3).state_dict()["weight"].numpy()})
    np.testing.assert_allclose(layer.weight.numpy(), 0.3)
    with pytest.raises(ValueError, match="prelu: weight must hold 1 slope or one per channel"):
        layer(mt.randn(2, 3, dtype=mt.float64))
    with pytest.raises(ValueError, match="num_parameters must be positive, got 0"):
        nn.PReLU(0)


def test_inplace_writes_into_the_input_and_records_the_graph():
    a = mt.tensor([[-1.0, 2.0], [3.0, -4.0]], requires_grad=True)
    h = a * 2.0
    out = F.leaky_relu(h, 0.1, inplace=True)
    assert out is h
    np.testing.assert_allclose(h.detach().numpy(), [[-0.2, 4.0], [6.0, -0.8]])
    h.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[0.2, 2.0], [2.0, 0.2]])
    pairs = [(F.relu_, F.relu), (F.elu_, F.elu), (F.selu_, F.selu), (F.celu_, F.celu), (F.leaky_relu_, F.leaky_relu),
             (F.hardtanh_, F.hardtanh), (F.rrelu_, F.rrelu)]  # fmt: skip
    for in_place, out_of_place in pairs:
        x = mt.tensor([-1.0, 0.5, 2.0])
        expected = out_of_place(x).numpy()
        assert in_place(x) is x
        np.testing.assert_array_equal(x.numpy(), expected, err_msg=in_place.__name__)
    x = mt.tensor([-1.0, 0.5, 8.0])
    nn.ReLU6(inplace=True)(x)
    np.testing.assert_array_equal(x.numpy(), [0.0, 0.5, 6.0])
    x = mt.tensor([0.2, 3.0])
    F.threshold_(x, 1.0, -5.0)
    np.testing.assert_array_equal(x.numpy(), [-5.0, 3.0])
    leaf = mt.tensor([1.0, -1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad cannot be modified in place"):
        nn.ReLU(inplace=True)(leaf)
    with pytest.raises(TypeError, match="relu: inplace must be a bool"):
        F.relu(mt.ones(2), inplace=1)


def test_rrelu_layer_draws_in_training_and_uses_the_mean_slope_in_eval():
    layer = nn.RReLU(0.1, 0.3)
    x = mt.full((1000,), -1.0)
    slopes = -layer(x).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    np.testing.assert_allclose(layer.eval()(x).numpy(), -0.2)


def test_softmin_glu_and_softmax2d(torch):
    x = mt.tensor([[1.0, 2.0, 3.0]])
    np.testing.assert_allclose(F.softmin(x, dim=1).numpy(), torch.nn.functional.softmin(torch.tensor(x.numpy()), 1))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        F.softmin(x)
    with pytest.raises(ValueError, match="glu: the size of dim -1 must be even"):
        F.glu(x)
    with pytest.raises(ValueError, match="glu: input must have at least one dim"):
        F.glu(mt.tensor(1.0))
    image = np.random.default_rng(2).standard_normal((2, 3, 4, 5))
    np.testing.assert_allclose(
        nn.Softmax2d()(mt.tensor(image)).numpy(), torch.nn.Softmax2d()(torch.tensor(image)).numpy(), rtol=1e-6
    )
    with pytest.raises(ValueError, match="Softmax2d: expected a 3-D"):
        nn.Softmax2d()(mt.ones(2, 3))


def test_bad_arguments_raise_naming_them():
    x = mt.ones(3)
    with pytest.raises(ValueError, match="hardtanh: min_val must be <= max_val, got min_val=1, max_val=-1"):
        F.hardtanh(x, 1, -1)
    with pytest.raises(ValueError, match="Hardtanh: max_val must be greater than min_val"):
        nn.Hardtanh(1.0, 1.0)
    with pytest.raises(ValueError, match="softshrink: lambd must be >= 0, got -1.0"):
        F.softshrink(x, -1)
    with pytest.raises(ValueError, match="celu: alpha must not be 0"):
        F.celu(x, 0.0)
    with pytest.raises(ValueError, match="rrelu: lower must be <= upper, got lower=0.5, upper=0.1"):
        F.rrelu(x, 0.5, 0.1)
    with pytest.raises(ValueError, match="RReLU: lower must be <= upper"):
        nn.RReLU(0.5, 0.1)
    with pytest.raises(TypeError, match="leaky_relu: negative_slope must be a number, got str"):
        F.leaky_relu(x, "0.1")
    with pytest.raises(TypeError, match="leaky_relu: input must be a float tensor"):
        F.leaky_relu(mt.tensor([1, 2]))
    with pytest.raises(TypeError, match="prelu: input dtype float32 does not match weight dtype float64"):
        F.prelu(x, mt.ones(1, dtype=mt.float64))
    with pytest.warns(FutureWarning, match="`min_value` is deprecated and renamed to `min_val`"):
        assert nn.Hardtanh(min_value=-2.0).min_val == -2.0


def test_relu6_is_a_hardtanh_as_in_pytorch_and_integer_inputs_pass_the_selects():
    assert isinstance(nn.ReLU6(), nn.Hardtanh)
    ints = mt.tensor([-3, 2, 9])
    assert F.relu6(ints).tolist() == [0, 2, 6] and F.relu6(ints).dtype == mt.int64
    assert F.threshold(ints, 1, 0).tolist() == [0, 2, 9]
    assert F.hardtanh(ints).tolist() == [-1, 1, 1]
