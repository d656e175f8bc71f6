"""nn/rms_norm.py: ``nn.RMSNorm`` and ``F.rms_norm``: PyTorch's values, gradients, second derivatives
and JVPs (eps None and given, one and two normalised dims, with and without weight), the fused op
against its definition (also under vmap), the layer's defaults, repr, state dict, init and dtype,
and bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.ops.rms_norm import RmsNorm, rms_norm_definition
from minitensor.testing import assert_close

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


@pytest.mark.parametrize("weighted", [True, False])
def test_rms_norm_op_equals_its_definition(weighted) -> None:
    """The fused op's output and first gradients against the definition's, two normalised dims."""
    x = mt.tensor(rms_rng.standard_normal((3, 2, 5)) * 3 + 1, dtype=mt.float64, requires_grad=True)
    w = mt.tensor(rms_rng.standard_normal((2, 5)), dtype=mt.float64, requires_grad=True) if weighted else None
    g = mt.tensor(rms_rng.standard_normal((3, 2, 5)), dtype=mt.float64)
    fused, defined = RmsNorm.apply(x, w, n_dims=2, eps=1e-5), rms_norm_definition(x, w, n_dims=2, eps=1e-5)
    assert_close(fused, defined, rtol=1e-12, atol=1e-12)
    inputs = (x, w) if weighted else (x,)
    for ours, theirs in zip(mt.autograd.grad(fused, inputs, g), mt.autograd.grad(defined, inputs, g), strict=True):
        assert_close(ours, theirs, rtol=1e-11, atol=1e-12)


def test_rms_norm_under_vmap_is_each_example_s() -> None:
    x = mt.tensor(rms_rng.standard_normal((4, 3, 5)), dtype=mt.float64)
    w = mt.tensor(rms_rng.standard_normal(5), dtype=mt.float64)
    batched = mt.func.vmap(lambda v: F.rms_norm(v, (5,), w, 1e-6))(x)
    assert_close(batched, mt.stack([F.rms_norm(v, (5,), w, 1e-6) for v in x]), rtol=1e-13, atol=1e-14)


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
