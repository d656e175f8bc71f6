"""The smooth activations (ops/smooth_activations.py) through their ``F.`` forms: float64 gradcheck and
second order, PyTorch's values and gradients (first and second order), large inputs, NaN and 0."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from helpers import away_from
from op_checks import check_op

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.ops import smooth_activations

torch = pytest.importorskip("torch")
TF = torch.nn.functional

CASES = [
    ("elu", F.elu, TF.elu),
    ("elu(0.5)", lambda x: F.elu(x, 0.5), lambda x: TF.elu(x, 0.5)),
    ("selu", F.selu, TF.selu),
    ("celu", F.celu, TF.celu),
    ("celu(2.5)", lambda x: F.celu(x, 2.5), lambda x: TF.celu(x, 2.5)),
    ("mish", F.mish, TF.mish),
    ("logsigmoid", F.logsigmoid, TF.logsigmoid),
    ("softsign", F.softsign, TF.softsign),
    ("tanhshrink", F.tanhshrink, TF.tanhshrink),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("name,ours,theirs", CASES, ids=IDS)
def test_against_pytorch_to_second_order(name, ours, theirs):
    x = away_from(np.random.default_rng(0).uniform(-6, 6, (3, 5)), [0.0])  # (the ELUs' second derivative jumps at 0)
    check_op(ours, theirs, x)


@pytest.mark.parametrize("name,ours,theirs", CASES, ids=IDS)
def test_large_inputs_zero_and_nan_as_pytorch(name, ours, theirs):
    # 64 copies of each point, so that PyTorch runs its vectorised loop on all of them on any CPU (its scalar
    # loop, which only a tensor's last few elements take, answers the ELUs' gradient at NaN as grad * scale)
    points = np.repeat([-1000.0, -60.0, -0.0, 0.0, 1e-12, 60.0, 1000.0, np.nan], 64)
    # (float32: PyTorch's softsign gradient is its composite's, 1e-4 relative off at |x| = 60)
    for dtype, tdtype, rtol in ((mt.float64, torch.float64, 1e-9), (mt.float32, torch.float32, 2e-4)):
        x = mt.tensor(points, dtype=dtype, requires_grad=True)
        tx = torch.tensor(points, dtype=tdtype, requires_grad=True)
        y, ty = ours(x), theirs(tx)
        assert y.dtype == dtype
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=rtol, atol=1e-20)
        (g,) = mt.autograd.grad(y.sum(), x, create_graph=True)  # (the backward formula)
        (tg,) = torch.autograd.grad(ty.sum(), tx, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=rtol, atol=1e-20)
        (g_kernel,) = mt.autograd.grad(ours(x).sum(), x)  # (first order: the kernel, where the op has one)
        np.testing.assert_allclose(g_kernel.numpy(), tg.detach().numpy(), rtol=rtol, atol=1e-20)
        finite = np.isfinite(points)
        (gg,) = mt.autograd.grad((g * mt.tensor(finite.astype(points.dtype), dtype=dtype)).sum(), x)
        assert np.all(np.isfinite(gg.numpy()[finite])), f"{name}: a second derivative is not finite"


def test_integer_inputs_give_floats_where_pytorch_does():
    ints = mt.tensor([-2, 0, 3])
    for name in ("softsign", "tanhshrink"):
        y = getattr(F, name)(ints)
        assert y.dtype == mt.float32
        np.testing.assert_allclose(y.numpy(), getattr(TF, name)(torch.tensor([-2, 0, 3])).numpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="elu: input must be a float tensor"):
        F.elu(ints)


def test_docstring_examples_run():
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(smooth_activations, extraglobs={"mt": mt}, optionflags=flags)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logsigmoid_matches_pytorch_at_special_values(dtype) -> None:
    """Values (with the sign of their zeros) and gradients at huge, tiny and special inputs (on the
    softplus kernel with beta = -1), repeated past PyTorch's 16-element vectorised loop."""
    x = np.array([-1e4, -100.0, -20.0, -1.0, -0.0, 0.0, 1e-8, 1.0, 20.0, 1e4, np.inf, -np.inf] * 2, dtype)
    mx = mt.tensor(x, dtype=getattr(mt, dtype), requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    y, ty = F.logsigmoid(mx), torch.nn.functional.logsigmoid(tx)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6)
    np.testing.assert_array_equal(np.signbit(y.detach().numpy()), np.signbit(ty.detach().numpy()))
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu_gradients_to_second_order_forward_mode_and_against_pytorch(dim) -> None:
    x = np.random.default_rng(7).uniform(-3, 3, (4, 6))
    check_op(lambda t: F.glu(t, dim), lambda t: torch.nn.functional.glu(t, dim), x)


def test_glu_backward_of_a_sum_and_of_a_strided_input() -> None:
    """The one-node backward (both halves into one array) takes sum's one-value gradient and a
    transposed input; it equals the gradient of the definition in Tensor ops."""
    data = np.random.default_rng(8).standard_normal((6, 5)).T  # (5, 6), not contiguous
    grads = []
    for fn in (lambda t: F.glu(t, -1), lambda t: smooth_activations.glu(t, -1)):
        x = mt.tensor(data, dtype=mt.float64, requires_grad=True)
        fn(x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-14)
