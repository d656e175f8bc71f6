"""kernels/elu.py: ELU, SELU and CELU forward and backward (from x, and from the result y for the
in-place forms) equal their NumPy references (float32 and float64; zeros of both signs, ±inf, NaN,
large |x|), a gradient that is one value throughout (``sum``'s) included; a negative input scale
takes the reference; the ops, in place and not, match PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from kernel_paths import both_paths

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.kernels import elu
from minitensor.ops.smooth_activations import SELU_ALPHA, SELU_SCALE

SPECIAL = [0.0, -0.0, 1e-8, -1e-8, 0.5, -0.5, -20.0, -100.0, -800.0, 100.0, 1e30, np.inf, -np.inf, np.nan]
# (alpha, scale, input_scale): ELU, SELU, CELU (alpha 0.5)
SETTINGS = {"elu": (1.0, 1.0, 1.0), "selu": (SELU_ALPHA, SELU_SCALE, 1.0), "celu": (0.5, 1.0, 2.0)}
TOL = {"float32": dict(rtol=3e-6, atol=1e-30), "float64": dict(rtol=1e-14, atol=1e-300)}


def inputs(dtype) -> np.ndarray:
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (1e30 is inf in float32)
        return np.concatenate([rng.standard_normal(997) * 4, SPECIAL]).astype(dtype)


def assert_close(got, expected, dtype) -> None:
    assert got.dtype == expected.dtype == np.dtype(dtype) and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, equal_nan=True, **TOL[dtype])
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(SETTINGS))
def test_kernels_equal_references(dtype, name) -> None:
    x = inputs(dtype)
    settings = SETTINGS[name]
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    uniform = np.broadcast_to(np.asarray(1.5, dtype), x.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y = elu.elu(x, *settings)
    for fn in (
        lambda: elu.elu(x, *settings),
        lambda: elu.elu_backward(g, x, *settings),
        lambda: elu.elu_backward(uniform, x, *settings),
        lambda: elu.elu_backward_of_result(g, y, *settings),
        lambda: elu.elu_backward_of_result(uniform, y, *settings),
    ):
        assert_close(*both_paths(fn), dtype)


def test_a_negative_input_scale_takes_the_reference() -> None:
    x = inputs("float32")
    with pytest.raises(AssertionError, match="reference"):  # (the kernel path refuses references: none ran)
        both_paths(lambda: elu.elu(x, -0.5, 1.0, -2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = elu.elu(x, -0.5, 1.0, -2.0)
        expected = np.where(x <= 0, -0.5 * np.expm1(np.where(x <= 0, x, 0) * -2.0), x)
    assert_close(got, expected.astype(np.float32), "float32")


@pytest.mark.parametrize("name", list(SETTINGS))
def test_ops_match_pytorch(name) -> None:
    torch = pytest.importorskip("torch")
    mine = {"elu": F.elu, "selu": F.selu, "celu": lambda t: F.celu(t, 0.5)}[name]
    theirs = {"elu": torch.nn.functional.elu, "selu": torch.nn.functional.selu,
              "celu": lambda t: torch.nn.functional.celu(t, 0.5)}[name]  # fmt: skip
    x = inputs("float32")[:-4]  # (finite: PyTorch's gradient at ±inf and NaN is its own choice)
    g = np.random.default_rng(2).standard_normal(x.shape).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    theirs(tx).backward(torch.tensor(g))
    mx = mt.tensor(x, requires_grad=True)
    y = mine(mx)
    y.backward(mt.tensor(g))
    np.testing.assert_allclose(y.numpy(), theirs(torch.tensor(x)).numpy(), rtol=3e-6, atol=1e-7)
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=3e-6, atol=1e-7)


@pytest.mark.parametrize("name", list(SETTINGS))
def test_in_place_forms_match_pytorch_from_their_result(name) -> None:
    """``elu_``, ``selu_`` and ``celu_`` keep only y and take the gradient from it, as PyTorch's in-place
    forms: the same values, 0 far in the negative tail (where the out-of-place gradient is ~1e-14), NaN at NaN."""
    torch = pytest.importorskip("torch")
    mine = {"elu": F.elu_, "selu": F.selu_, "celu": lambda t: F.celu_(t, 0.5)}[name]
    theirs = {"elu": torch.nn.functional.elu_, "selu": torch.nn.functional.selu_,
              "celu": lambda t: torch.nn.functional.celu_(t, 0.5)}[name]  # fmt: skip
    x = np.concatenate([[-30.0, np.nan], inputs("float32")[:-4]]).astype(np.float32)  # (NaN in PyTorch's vector loop)
    g = np.random.default_rng(3).standard_normal(x.shape).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ty = tx * 1
    theirs(ty)
    ty.backward(torch.tensor(g))
    mx = mt.tensor(x, requires_grad=True)
    my = mx * 1
    assert mine(my) is my
    assert my.grad_fn._saved_result is not None  # (the node keeps y, as PyTorch's ``_saved_result``)
    my.backward(mt.tensor(g))
    np.testing.assert_allclose(my.detach().numpy(), ty.detach().numpy(), rtol=3e-6, atol=1e-7)
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=3e-6, atol=1e-7, equal_nan=True)
    assert mx.grad.numpy()[0] == 0.0 and np.isnan(mx.grad.numpy()[1])
