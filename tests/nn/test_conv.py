"""nn/conv.py (the layers) and nn/functional/conv.py against PyTorch's: attributes, defaults, repr,
state-dict keys, init, no buffers; outputs and every gradient with copied weights (each padding mode, groups,
unbatched input, ``output_size=``), whole-module checkpoints read by PyTorch; and bad input: a clear
error (naming the argument, the expected and the actual value) before any kernel runs, where
PyTorch raises too."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from helpers import assert_module_matches_torch

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor import backend

torch = pytest.importorskip("torch")

# (class name, positional arguments, keyword arguments): every setting away from its default once.
LAYERS = [
    ("Conv2d", (3, 4, 3), {}),
    ("Conv2d", (3, 4, (3, 5)), {"stride": 2, "padding": 1, "dilation": 2, "bias": False, "padding_mode": "reflect"}),
    ("Conv2d", (4, 4, 3), {"padding": "same", "groups": 4, "padding_mode": "circular"}),
    ("Conv2d", (4, 8, 4), {"padding": "same", "groups": 2, "padding_mode": "replicate", "dilation": (1, 2)}),
    ("Conv2d", (2, 6, 2), {"padding": "valid", "stride": (1, 2)}),
    ("Conv1d", (3, 4, 3), {"padding": 2, "padding_mode": "reflect"}),
    ("Conv1d", (4, 2, 5), {"padding": "same", "groups": 2, "dilation": 2}),
    ("ConvTranspose2d", (3, 4, 3), {"stride": 2, "output_padding": 1}),
    (
        "ConvTranspose2d",
        (4, 2, (2, 3)),
        {"stride": (1, 2), "padding": (1, 0), "dilation": 2, "groups": 2, "output_padding": (1, 0), "bias": False},
    ),  # fmt: skip
    ("ConvTranspose1d", (4, 6, 3), {"stride": 3, "groups": 2, "dilation": 2, "padding": 1}),
]
IDS = [f"{name}-{i}" for i, (name, _, _) in enumerate(LAYERS)]


def pair(name: str, args: tuple, kwargs: dict, double: bool = True) -> tuple:
    ours = getattr(nn, name)(*args, **kwargs, dtype=mt.float64 if double else mt.float32)
    return ours, getattr(torch.nn, name)(*args, **kwargs, dtype=torch.float64 if double else torch.float32)


def _in(x: np.ndarray, double: bool) -> np.ndarray:
    """An input in the pair's dtype."""
    return x if double else x.astype(np.float32)


def _public_state(module) -> dict:
    """The layer's settings (PyTorch's attribute names), without the Module's own bookkeeping."""
    return {k: v for k, v in vars(module).items() if k == "_reversed_padding_repeated_twice" or not k.startswith("_")}


@pytest.mark.parametrize(("name", "args", "kwargs"), LAYERS, ids=IDS)
def test_attributes_repr_state_dict_and_buffers_are_pytorchs(name, args, kwargs) -> None:
    ours, theirs = pair(name, args, kwargs)
    assert repr(ours) == repr(theirs)
    assert _public_state(ours) == _public_state(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()
    ]
    assert list(ours.buffers()) == [] == list(theirs.buffers())


def test_defaults_are_pytorchs() -> None:
    ours, theirs = nn.Conv2d(3, 4, 3), torch.nn.Conv2d(3, 4, 3)
    assert _public_state(ours) == _public_state(theirs)
    assert (ours.stride, ours.padding, ours.dilation, ours.groups, ours.padding_mode) == (
        (1, 1),
        (0, 0),
        (1, 1),
        1,
        "zeros",
    )
    assert ours.weight.dtype == mt.float32 and ours.bias is not None and ours.weight.requires_grad


@pytest.mark.parametrize(
    ("name", "args", "kwargs"), [LAYERS[0], LAYERS[6], LAYERS[8]], ids=["conv2d", "conv1d", "transposed"]
)
def test_init_is_kaiming_uniform_with_pytorchs_bound(name, args, kwargs) -> None:
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias, fan_in = weight.shape[1] * kernel size."""
    mt.manual_seed(0)
    layer = getattr(nn, name)(*[a * 4 if i < 2 else a for i, a in enumerate(args)], **kwargs)  # (more samples)
    fan_in = layer.weight.shape[1] * math.prod(layer.weight.shape[2:])
    bound = 1 / math.sqrt(fan_in)
    w = layer.weight.numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound  # a uniform's spread
    if layer.bias is not None:
        assert np.abs(layer.bias.numpy()).max() <= bound
    weight = layer.weight.numpy().copy()
    layer.reset_parameters()
    assert not np.array_equal(weight, layer.weight.numpy())


@pytest.mark.parametrize(("name", "args", "kwargs"), LAYERS, ids=IDS)
@pytest.mark.parametrize("double", [True, False], ids=["float64", "float32"])
def test_output_and_gradients_equal_pytorchs(name, args, kwargs, double) -> None:
    ours, theirs = pair(name, args, kwargs, double)
    dims = 1 if name.endswith("1d") else 2
    rng = np.random.default_rng(len(kwargs))
    assert_module_matches_torch(ours, theirs, _in(rng.standard_normal((2, args[0]) + (9,) * dims), double), torch)
    ours, theirs = pair(name, args, kwargs, double)
    assert_module_matches_torch(ours, theirs, _in(rng.standard_normal((args[0],) + (8,) * dims), double), torch)


@pytest.mark.parametrize("output_size", [(12, 12), [11, 12], (1, 4, 12, 11)])
def test_conv_transpose_output_size_picks_the_output_padding(output_size) -> None:
    ours, theirs = pair("ConvTranspose2d", (3, 4, 3), {"stride": 2})
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 5))
    assert_module_matches_torch(ours, theirs, x, torch, output_size=output_size)


def test_conv_transpose_output_size_out_of_range_says_the_range() -> None:
    layer = nn.ConvTranspose2d(3, 4, 3, stride=2)
    with pytest.raises(ValueError, match=re.escape("valid sizes range from [11, 11] to [12, 12]")):
        layer(mt.randn(1, 3, 5, 5), output_size=(13, 13))
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements, got 3"):
        layer(mt.randn(1, 3, 5, 5), output_size=(1, 13, 13))


def test_a_whole_module_checkpoint_runs_in_pytorch(tmp_path) -> None:
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding="same", padding_mode="reflect"), nn.ReLU(),
                          nn.ConvTranspose2d(4, 2, 2, stride=2))  # fmt: skip
    mt.save(model, tmp_path / "model.pt")
    theirs = torch.load(tmp_path / "model.pt", weights_only=False)
    assert isinstance(theirs[0], torch.nn.Conv2d) and isinstance(theirs[2], torch.nn.ConvTranspose2d)
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(
        theirs(torch.tensor(x)).detach().numpy(), model(mt.tensor(x)).numpy(), rtol=1e-5, atol=1e-6
    )


# ------------------------------------------------------------------ bad input
def x8(*shape):
    return mt.randn(*shape)


# (call on a library's F/nn, the exception type we raise, pieces of our message)
BAD = [
    ("wrong channel count", lambda lib, F: F.conv2d(lib.randn(2, 5, 8, 8), lib.randn(4, 3, 3, 3)), ValueError,
     ["input", "3 channels", "got 5", "(2, 5, 8, 8)"]),
    ("kernel larger than the padded input", lambda lib, F: F.conv2d(lib.randn(2, 3, 2, 2), lib.randn(4, 3, 3, 3)),
     ValueError, ["kernel (3, 3)", "padded input (2, 2)"]),
    ("dilated kernel too large", lambda lib, F: F.conv1d(lib.randn(1, 2, 5), lib.randn(1, 2, 3), dilation=4, padding=1),
     ValueError, ["kernel (3,)", "(9,)", "padded input (7,)"]),
    ("groups not dividing in_channels",
     lambda lib, F: F.conv2d(lib.randn(2, 3, 8, 8), lib.randn(4, 1, 3, 3), groups=2),
     ValueError, ["in_channels", "groups", "= 2 channels", "got 3"]),
    ("groups not dividing out_channels",
     lambda lib, F: F.conv2d(lib.randn(2, 4, 8, 8), lib.randn(3, 2, 3, 3), groups=2),
     ValueError, ["out_channels", "divisible by groups=2", "(3, 2, 3, 3)"]),
    ("same with stride",
     lambda lib, F: F.conv2d(lib.randn(1, 3, 8, 8), lib.randn(4, 3, 3, 3), stride=2, padding="same"),
     ValueError, ["padding='same'", "stride=(2, 2)"]),
    ("2-D input to conv2d", lambda lib, F: F.conv2d(lib.randn(8, 8), lib.randn(4, 3, 3, 3)), ValueError,
     ["input must be 3-D (C, H, W)", "4-D (N, C, H, W)", "got 2-D", "(8, 8)"]),
    ("5-D input to conv2d", lambda lib, F: F.conv2d(lib.randn(1, 2, 3, 8, 8), lib.randn(4, 3, 3, 3)), ValueError,
     ["got 5-D", "(1, 2, 3, 8, 8)"]),
    ("4-D input to conv1d", lambda lib, F: F.conv1d(lib.randn(2, 3, 8, 8), lib.randn(4, 3, 3)), ValueError,
     ["input must be 2-D (C, L)", "3-D (N, C, L)", "got 4-D"]),
    ("3-D weight to conv2d", lambda lib, F: F.conv2d(lib.randn(2, 3, 8, 8), lib.randn(4, 3, 3)), ValueError,
     ["weight must be 4-D", "(4, 3, 3)"]),
    ("bias of the wrong size", lambda lib, F: F.conv2d(lib.randn(2, 3, 8, 8), lib.randn(4, 3, 3, 3), lib.randn(3)),
     ValueError, ["bias must have shape (4,)", "got (3,)"]),
    ("negative padding", lambda lib, F: F.conv2d(lib.randn(2, 3, 8, 8), lib.randn(4, 3, 3, 3), padding=-1), ValueError,
     ["padding must be non-negative", "-1"]),
    ("zero stride", lambda lib, F: F.conv2d(lib.randn(2, 3, 8, 8), lib.randn(4, 3, 3, 3), stride=0), ValueError,
     ["stride must be positive", "0"]),
    ("padding of 3 values", lambda lib, F: F.conv2d(lib.randn(2, 3, 8, 8), lib.randn(4, 3, 3, 3), padding=(1, 1, 1)),
     ValueError, ["padding must be an int or a tuple of 2 ints", "(1, 1, 1)"]),
    ("unknown padding string", lambda lib, F: F.conv2d(lib.randn(2, 3, 8, 8), lib.randn(4, 3, 3, 3), padding="full"),
     ValueError, ["'valid' or 'same'", "'full'"]),
    ("mixed dtypes", lambda lib, F: F.conv2d(lib.randn(2, 3, 8, 8).double(), lib.randn(4, 3, 3, 3)), TypeError,
     ["float64", "float32", "weight"]),
    ("transposed: wrong channel count", lambda lib, F: F.conv_transpose2d(lib.randn(2, 5, 8, 8), lib.randn(4, 3, 3, 3)),
     ValueError, ["weight.shape[0] = 4 channels", "got 5"]),
    ("transposed: output_padding too large",
     lambda lib, F: F.conv_transpose2d(lib.randn(2, 4, 8, 8), lib.randn(4, 3, 3, 3), output_padding=1), ValueError,
     ["output_padding must be smaller than either stride or dilation", "output_padding=(1, 1)", "stride=(1, 1)"]),
    ("transposed: no output left",
     lambda lib, F: F.conv_transpose2d(lib.randn(2, 4, 1, 1), lib.randn(4, 3, 3, 3), padding=3),
     ValueError, ["output size (-3, -3)", "positive"]),
    ("unfold: kernel larger than the input", lambda lib, F: F.unfold(lib.randn(1, 2, 8, 8), 10), ValueError,
     ["kernel (10, 10)", "spatial size (8, 8)", "(-1, -1) windows"]),
    ("unfold: 5-D input", lambda lib, F: F.unfold(lib.randn(1, 3, 8, 8, 1), 3), ValueError,
     ["3-D (C, H, W)", "4-D (N, C, H, W)", "got 5-D"]),
    ("fold: rows not a multiple of the kernel", lambda lib, F: F.fold(lib.randn(2, 28, 36), (8, 8), 3), ValueError,
     ["divisible", "3 * 3 = 9", "(28)"]),
    ("fold: wrong number of windows", lambda lib, F: F.fold(lib.randn(2, 27, 35), (8, 8), 3), ValueError,
     ["number of windows 6 * 6 = 36", "got 35"]),
    ("Conv2d: groups not dividing", lambda lib, F: lib.nn.Conv2d(3, 4, 3, groups=2), ValueError,
     ["in_channels must be divisible by groups", "in_channels=3", "groups=2"]),
    ("Conv2d: zero groups", lambda lib, F: lib.nn.Conv2d(4, 4, 3, groups=0), ValueError,
     ["groups must be a positive", "0"]),
    ("Conv2d: same with stride", lambda lib, F: lib.nn.Conv2d(4, 4, 3, stride=2, padding="same"), ValueError,
     ["padding='same'", "strided", "stride=(2, 2)"]),
    ("Conv2d: unknown padding mode", lambda lib, F: lib.nn.Conv2d(4, 4, 3, padding_mode="mirror"), ValueError,
     ["padding_mode must be one of", "'mirror'"]),
    ("ConvTranspose2d: padding mode", lambda lib, F: lib.nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"),
     ValueError, ['only "zeros" padding mode', "'reflect'"]),
    ("Conv2d: reflect padding beyond the input",
     lambda lib, F: lib.nn.Conv2d(1, 1, 3, padding=4, padding_mode="reflect")(lib.randn(1, 1, 3, 3)), ValueError,
     ["reflect"]),
]  # fmt: skip


@pytest.fixture
def no_kernels(monkeypatch):
    """Every convolution kernel of the backend fails if called: an error must come before any runs."""

    def refused(*args, **kwargs):
        raise AssertionError("a kernel ran before the bad argument was refused")

    for name in ("conv2d", "conv2d_input_grad", "conv2d_weight_grad", "im2col", "col2im"):
        monkeypatch.setattr(backend, name, refused)


@pytest.mark.parametrize(("what", "call", "error", "pieces"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_early_naming_the_argument(what, call, error, pieces, no_kernels) -> None:
    with pytest.raises(Exception):  # noqa: B017,PT011  (PyTorch refuses it too, with its own type)
        call(torch, torch.nn.functional)
    with pytest.raises(error) as info:
        call(mt, F)
    message = str(info.value)
    missing = [p for p in pieces if p not in message]
    assert not missing, f"{what}: {missing} not in {message!r}"
