"""PyTorch as an oracle: with copied weights, outputs and all gradients agree; state dict keys and init match.

Skipped when torch is not installed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import copy_weights

import minitensor as mt
import minitensor.nn as nn

torch = pytest.importorskip("torch")

TOL = {mt.float64: {"rtol": 1e-6, "atol": 1e-9}, mt.float32: {"rtol": 1e-4, "atol": 1e-5}}
TORCH_DTYPE = {mt.float64: torch.float64, mt.float32: torch.float32}


def _close(actual, expected, dtype, what: str) -> None:
    np.testing.assert_allclose(actual, expected, err_msg=what, **TOL[dtype])


def compare(ours: nn.Module, theirs, x: np.ndarray, dtype, input_grad: bool = True) -> None:
    """Same output, same input gradient and same gradient of every parameter, for a random output weighting."""
    theirs = theirs.to(TORCH_DTYPE[dtype])
    copy_weights(theirs, ours)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())
    float_input = x.dtype.kind == "f"
    x_ours = mt.tensor(x, dtype=dtype if float_input else None, requires_grad=input_grad and float_input)
    x_theirs = torch.tensor(x.astype(dtype) if float_input else x, requires_grad=input_grad and float_input)
    y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
    assert y_ours.dtype == dtype and y_ours.shape == tuple(y_theirs.shape)
    _close(y_ours.numpy(), y_theirs.detach().numpy(), dtype, "output")
    g = np.random.default_rng(7).standard_normal(y_ours.shape).astype(dtype)
    y_ours.backward(mt.tensor(g, dtype=dtype))
    y_theirs.backward(torch.tensor(g))
    if input_grad and float_input:
        _close(x_ours.grad.numpy(), x_theirs.grad.numpy(), dtype, "input gradient")
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        _close(p.grad.numpy(), theirs_params[name].grad.numpy(), dtype, f"gradient of {name}")


DTYPES = [mt.float64, mt.float32]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(7,), (4, 7), (2, 3, 7)])
def test_linear_matches_torch(rng, dtype, bias, shape):
    ours, theirs = nn.Linear(7, 5, bias=bias, dtype=dtype), torch.nn.Linear(7, 5, bias=bias)
    compare(ours, theirs, rng.standard_normal(shape), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "kwargs", [{}, {"elementwise_affine": False}, {"bias": False}, {"eps": 1e-3}], ids=lambda k: str(k) or "default"
)
@pytest.mark.parametrize("normalized_shape", [8, (3, 8)])
def test_layer_norm_matches_torch(rng, dtype, kwargs, normalized_shape):
    theirs = torch.nn.LayerNorm(normalized_shape, **kwargs)
    with torch.no_grad():
        for p in theirs.parameters():  # not the trivial ones/zeros init
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    x = rng.standard_normal((2, 3, 8)) * 3 + 1
    compare(nn.LayerNorm(normalized_shape, dtype=dtype, **kwargs), theirs, x, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "ours, theirs",
    [
        (lambda: nn.GELU(), lambda: torch.nn.GELU()),
        (lambda: nn.GELU("tanh"), lambda: torch.nn.GELU("tanh")),
        (lambda: nn.ReLU(), lambda: torch.nn.ReLU()),
        (lambda: nn.Tanh(), lambda: torch.nn.Tanh()),
        (lambda: nn.Sigmoid(), lambda: torch.nn.Sigmoid()),
        (lambda: nn.Softmax(dim=-1), lambda: torch.nn.Softmax(dim=-1)),
        (lambda: nn.Softmax(dim=0), lambda: torch.nn.Softmax(dim=0)),
        (lambda: nn.LogSoftmax(dim=1), lambda: torch.nn.LogSoftmax(dim=1)),
    ],
    ids=["gelu", "gelu_tanh", "relu", "tanh", "sigmoid", "softmax-1", "softmax0", "log_softmax1"],
)
def test_activations_match_torch(rng, dtype, ours, theirs):
    x = rng.standard_normal((3, 4, 5)) * 4
    x[np.abs(x) < 0.05] = 0.5  # relu's kink
    compare(ours(), theirs(), x, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("padding_idx", [None, 0, -2])
def test_embedding_matches_torch(rng, dtype, padding_idx):
    theirs = torch.nn.Embedding(10, 4, padding_idx=padding_idx)
    idx = rng.integers(0, 10, size=(3, 6))
    idx[0, :3] = [0, 8, 8]  # padding rows and repeats
    compare(nn.Embedding(10, 4, padding_idx=padding_idx, dtype=dtype), theirs, idx, dtype)


def test_embedding_padding_init_matches_torch():
    ours, theirs = nn.Embedding(6, 3, padding_idx=-1), torch.nn.Embedding(6, 3, padding_idx=-1)
    assert ours.padding_idx == theirs.padding_idx == 5
    assert not ours.weight.numpy()[5].any() and not theirs.weight.detach().numpy()[5].any()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_mlp_with_dropout_in_eval_mode_matches_torch(rng, dtype):
    def build(lib):
        return lib.Sequential(
            lib.Linear(6, 8), lib.LayerNorm(8), lib.GELU(), lib.Dropout(0.5), lib.Linear(8, 3), lib.Tanh()
        )

    ours = build(nn).to(dtype).eval()
    compare(ours, build(torch.nn).eval(), rng.standard_normal((4, 6)), dtype)


# ------------------------------------------------------------ state dict keys
def _nested(lib):
    class Block(lib.Module):
        def __init__(self):
            super().__init__()
            self.proj = lib.Linear(4, 4)
            self.norm = lib.LayerNorm(4, bias=False)
            self.register_buffer("running", (mt if lib is nn else torch).zeros(4))

    class Model(lib.Module):
        def __init__(self):
            super().__init__()
            self.embed = lib.Embedding(10, 4, padding_idx=0)
            self.blocks = lib.ModuleList([Block() for _ in range(2)])
            self.head = lib.Sequential(lib.LayerNorm(4), lib.Linear(4, 2), lib.ReLU())
            self.gate = lib.Parameter((mt if lib is nn else torch).ones(2))
            self.ff = lib.Sequential(lib.Linear(4, 4, bias=False), lib.Identity())
            zeros = (mt if lib is nn else torch).zeros
            self.extras = lib.ParameterList([lib.Parameter(zeros(3)), lib.Parameter(zeros(2, 2))])
            self.named = lib.ParameterDict({"alpha": lib.Parameter(zeros(1))})

    return Model()


def test_nested_state_dict_keys_order_and_counts_equal_torch():
    ours, theirs = _nested(nn), _nested(torch.nn)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())
    for key, value in ours.state_dict().items():
        assert value.shape == tuple(theirs.state_dict()[key].shape), key


def test_torch_state_dict_loads_directly():
    ours, theirs = _nested(nn), _nested(torch.nn)
    ours.load_state_dict(theirs.state_dict())  # torch tensors have __array__
    for key, value in ours.state_dict().items():
        np.testing.assert_array_equal(value, theirs.state_dict()[key].numpy())


def test_weights_roundtrip_between_torch_and_minitensor():
    ours, theirs = _nested(nn).double(), _nested(torch.nn).double()
    copy_weights(theirs, ours)
    back = _nested(torch.nn).double()
    back.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in ours.state_dict().items()})
    for key, value in back.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), theirs.state_dict()[key].numpy())


def test_repr_matches_torch():
    ours, theirs = _nested(nn), _nested(torch.nn)
    assert repr(ours.head) == repr(theirs.head)
    for kwargs in ({}, {"bias": False}, {"elementwise_affine": False}):
        assert repr(nn.LayerNorm(4, **kwargs)) == repr(torch.nn.LayerNorm(4, **kwargs))
    assert repr(ours.blocks) == repr(theirs.blocks)
    assert repr(nn.ModuleList([nn.Linear(2, 2)] * 3 + [nn.ReLU()])) == repr(
        torch.nn.ModuleList([torch.nn.Linear(2, 2)] * 3 + [torch.nn.ReLU()])
    )


# ----------------------------------------------------------------------- init
@pytest.mark.parametrize("shape", [(5, 3), (7, 4, 3), (6, 2, 3, 3)])
def test_fan_computation_matches_torch(shape):
    ours = nn.init._calculate_fan_in_and_fan_out(mt.empty(*shape))
    assert ours == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


@pytest.mark.parametrize(
    "nonlinearity, param", [("linear", None), ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
                            ("leaky_relu", 0.2), ("selu", None), ("conv2d", None)]
)  # fmt: skip
def test_gain_matches_torch(nonlinearity, param):
    expected = torch.nn.init.calculate_gain(nonlinearity, param)
    assert nn.init.calculate_gain(nonlinearity, param) == pytest.approx(expected)


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("xavier_uniform_", {}),
        ("xavier_uniform_", {"gain": 1.7}),
        ("xavier_normal_", {}),
        ("kaiming_uniform_", {}),
        ("kaiming_uniform_", {"a": math.sqrt(5)}),
        ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
        ("kaiming_normal_", {}),
        ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "tanh"}),
    ],
)
def test_init_statistics_match_torch(name, kwargs):
    mt.manual_seed(0)
    torch.manual_seed(0)
    ours = getattr(nn.init, name)(mt.empty(150, 80, 2), **kwargs).numpy()
    theirs = getattr(torch.nn.init, name)(torch.empty(150, 80, 2), **kwargs).numpy()
    assert abs(ours.std() - theirs.std()) < 0.03 * theirs.std()
    assert abs(ours.mean()) < 0.03 * theirs.std()
    if "uniform" in name:  # the same bound: both fill [-bound, bound] almost to the edge
        assert np.abs(ours).max() <= np.abs(theirs).max() * 1.002
        assert np.abs(theirs).max() <= np.abs(ours).max() * 1.002


@pytest.mark.parametrize("in_features, out_features", [(1, 3), (16, 4), (300, 20)])
def test_linear_default_init_matches_torch_bounds(in_features, out_features):
    mt.manual_seed(0)
    torch.manual_seed(0)
    ours = [nn.Linear(in_features, out_features) for _ in range(30)]
    theirs = [torch.nn.Linear(in_features, out_features) for _ in range(30)]
    for attr in ("weight", "bias"):
        ours_max = max(np.abs(getattr(m, attr).numpy()).max() for m in ours)
        theirs_max = max(np.abs(getattr(m, attr).detach().numpy()).max() for m in theirs)
        bound = 1 / math.sqrt(in_features)
        assert ours_max <= bound and theirs_max <= bound
        assert ours_max > 0.95 * bound and theirs_max > 0.95 * bound
