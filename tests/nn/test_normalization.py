"""nn/normalization.py: ``nn.LayerNorm``: float64 gradcheck (with and without affine and bias),
normalisation over the trailing dims, a constant row, and validation;
``nn.RMSNorm`` and ``F.rms_norm``: PyTorch's values, gradients and second derivatives (eps None and
given, one and two normalised dims, with and without weight), defaults, repr, state dict, init, dtype, bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import gradcheck_module, randn_f64, randomize_parameters
from op_checks import check_op

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F


@pytest.mark.parametrize("normalized_shape", [6, (2, 3)])
@pytest.mark.parametrize("affine, bias", [(True, True), (True, False), (False, True)])
def test_layer_norm_gradcheck(rng, normalized_shape, affine, bias):
    norm = randomize_parameters(
        nn.LayerNorm(normalized_shape, elementwise_affine=affine, bias=bias, dtype=mt.float64), rng
    )
    assert len(list(norm.parameters())) == (2 if affine and bias else 1 if affine else 0)
    gradcheck_module(norm, randn_f64(rng, 2, 2, 6) if normalized_shape == 6 else randn_f64(rng, 4, 2, 3))


# --------------------------------------------------------------------- LayerNorm
def test_layer_norm_normalises_trailing_dims(rng):
    norm = nn.LayerNorm((3, 4))
    x = mt.tensor(rng.standard_normal((2, 3, 4)) * 5 + 3)
    y = norm(x).numpy().reshape(2, -1)
    np.testing.assert_allclose(y.mean(1), 0, atol=1e-5)
    np.testing.assert_allclose(y.var(1), 1, rtol=1e-3)
    assert norm.weight.numpy().tolist() == [[1.0] * 4] * 3 and not norm.bias.numpy().any()


def test_layer_norm_of_a_constant_row_is_finite_with_finite_gradient():
    norm = nn.LayerNorm(4, dtype=mt.float64)
    x = mt.full((2, 4), 3.0, dtype=mt.float64, requires_grad=True)
    y = norm(x)
    assert np.isfinite(y.numpy()).all()
    (y * mt.tensor(np.arange(8.0).reshape(2, 4), dtype=mt.float64)).sum().backward()
    assert np.isfinite(x.grad.numpy()).all() and np.isfinite(norm.weight.grad.numpy()).all()


def test_layer_norm_validation():
    with pytest.raises(ValueError, match="normalized_shape"):
        nn.LayerNorm(0)
    with pytest.raises(ValueError, match="eps"):
        nn.LayerNorm(3, eps=-1.0)
    norm = nn.LayerNorm(4)
    with pytest.raises(ValueError, match=r"normalized_shape=\(4,\)"):
        norm(mt.zeros(2, 5))
    with pytest.raises(TypeError, match="float64"):
        norm(mt.zeros(2, 4, dtype=mt.float64))
    affine_free = nn.LayerNorm(4, elementwise_affine=False)
    assert affine_free.weight is None and affine_free.bias is None
    assert nn.LayerNorm(4, bias=False).bias is None


# --------------------------------------------------------------- RMSNorm
rms_rng = np.random.default_rng(5)
RMS_X = rms_rng.standard_normal((2, 3, 4))


@pytest.mark.parametrize("shape,eps", [((4,), None), ((3, 4), 1e-5), ((4,), 0.5)])
def test_rms_norm_against_pytorch_to_second_order(shape, eps, torch):
    w = rms_rng.standard_normal(shape)
    check_op(
        lambda x, w: F.rms_norm(x, shape, w, eps),
        lambda x, w: torch.nn.functional.rms_norm(x, shape, w, eps),
        RMS_X,
        w,
    )
    check_op(lambda x: F.rms_norm(x, shape, eps=eps), lambda x: torch.nn.functional.rms_norm(x, shape, eps=eps), RMS_X)


def test_rms_norm_default_eps_is_the_dtype_epsilon_as_pytorch(torch):
    tiny = np.full((2, 4), 1e-5)
    for dtype, tdtype in ((mt.float32, torch.float32), (mt.float64, torch.float64)):
        ours = F.rms_norm(mt.tensor(tiny, dtype=dtype), (4,))
        theirs = torch.nn.functional.rms_norm(torch.tensor(tiny, dtype=tdtype), (4,))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5)


@pytest.mark.parametrize("args", [(4,), ([3, 4], 1e-5, False)], ids=str)
def test_rms_norm_layer_as_pytorch(args, torch):
    ours, theirs = nn.RMSNorm(*args, dtype=mt.float64), torch.nn.RMSNorm(*args, dtype=torch.float64)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy())  # init: ones
        ours.state_dict()[key].copy_(rms_rng.standard_normal(value.shape))
        value.copy_(torch.tensor(ours.state_dict()[key].numpy()))
    x, tx = mt.tensor(RMS_X, dtype=mt.float64, requires_grad=True), torch.tensor(RMS_X, requires_grad=True)
    y, ty = ours(x), theirs(tx)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-14)
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-10, err_msg=name)
    assert nn.RMSNorm(4).weight.dtype == mt.float32


def test_rms_norm_bad_arguments_raise_naming_them():
    with pytest.raises(ValueError, match=r"rms_norm: input's trailing dims must equal normalized_shape=\(5,\)"):
        F.rms_norm(mt.ones(2, 4), 5)
    with pytest.raises(ValueError, match=r"rms_norm: weight must have shape normalized_shape=\(4,\), got \(3,\)"):
        F.rms_norm(mt.ones(2, 4), 4, mt.ones(3))
    with pytest.raises(ValueError, match="rms_norm: eps must be a non-negative number or None, got -1"):
        F.rms_norm(mt.ones(2, 4), 4, eps=-1)
    with pytest.raises(ValueError, match="RMSNorm: normalized_shape must be positive, got 0"):
        nn.RMSNorm(0)
    with pytest.raises(TypeError, match="rms_norm: input dtype float32 does not match weight dtype float64"):
        F.rms_norm(mt.ones(2, 4), 4, mt.ones(4, dtype=mt.float64))
