"""kernels/class_targets.py: the per-row target pick of cross-entropy and NLL equals its NumPy
reference exactly (the same float operations in the same order), with and without class weights,
with ignored rows (whose logits may be -inf), in float32 and float64; and the losses on it keep
their values on both paths (the oracle tests against PyTorch are in tests/nn/test_loss_torch.py)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted, reference

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.kernels.class_targets import target_losses


def _case(dtype, weighted: bool, rows: int = 37, classes: int = 11):
    rng = np.random.default_rng(rows)
    x = (rng.standard_normal((rows, classes)) * 5).astype(dtype)
    target = rng.integers(0, classes, rows)
    target[::4] = -100  # ignored rows ...
    x[::8] = -np.inf  # ... some with only -inf logits, which an ignored row may have
    shift, log_total = x.max(axis=1) * 0.5, np.abs(rng.standard_normal(rows)).astype(dtype)
    shift[::8] = 0
    weight = rng.random(classes).astype(dtype) if weighted else None
    return x, shift.astype(dtype), log_total, target, weight


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_kernel_equals_reference(dtype, weighted):
    args = _case(dtype, weighted)
    kernel = jitted(lambda: target_losses(*args[:4], -100, args[4]))
    ref = reference(lambda: target_losses(*args[:4], -100, args[4]))
    for k, r, name in zip(kernel, ref, ("valid", "index", "w", "loss")):
        assert k.dtype == r.dtype, name
        np.testing.assert_array_equal(k, r, err_msg=name)
    valid, index, w, loss = kernel
    assert not valid[::4].any() and (index[::4] == 0).all() and (w[::4] == 0).all() and (loss[::4] == 0).all()
    assert np.isfinite(loss).all()


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize(
    "options", [{}, {"weight": True, "reduction": "sum"}, {"reduction": "none", "ignore_index": 2}]
)
def test_losses_on_the_kernel_and_the_reference_agree(loss, options):
    rng = np.random.default_rng(1)
    x = mt.tensor(rng.standard_normal((9, 5)), dtype=mt.float64, requires_grad=True)
    target = mt.tensor(rng.integers(0, 5, 9))
    kwargs = dict(options)
    if kwargs.pop("weight", False):
        kwargs["weight"] = mt.tensor(rng.random(5), dtype=mt.float64)
    fn = getattr(F, loss)

    def run():
        x.grad = None
        out = fn(x, target, **kwargs)
        out.sum().backward()
        return out.numpy(), x.grad.numpy()

    (out_k, grad_k), (out_r, grad_r) = jitted(run), reference(run)
    # (cross-entropy's softmax runs on the SIMD exp kernel or on np.exp: the last digit may differ)
    np.testing.assert_allclose(out_k, out_r, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(grad_k, grad_r, rtol=1e-14, atol=1e-15)
