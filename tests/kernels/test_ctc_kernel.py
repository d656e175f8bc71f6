"""kernels/ctc.py: the forward variables, the losses and the gradient of the serial and parallel
kernels equal the NumPy references (both dtypes), on batches that mix every case: input lengths
below T, repeated labels (no skip between them), an empty target, an empty input and target, and a target
too long for its input (infeasible: inf loss, zero gradient)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import MODES, both_paths, tolerance

from minitensor.kernels import ctc as K
from minitensor.ops.ctc import extended_targets

T, C = 7, 5


def _batch(dtype: str) -> tuple:
    """(lp (T, N, C), ext, skip, states, input_lengths, target_lengths) of six samples."""
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((T, 6, C))
    lp = (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(dtype)
    targets = np.array([[1, 2, 3], [2, 2, 4], [1, 0, 0], [3, 0, 0], [1, 1, 1], [4, 3, 0]])
    target_lengths = np.array([3, 3, 0, 0, 3, 2])
    input_lengths = np.array([7, 5, 4, 0, 4, 6])  # sample 4: three equal labels need 5 steps (infeasible)
    ext, skip, states = extended_targets(targets, target_lengths, 0)
    return lp, ext, skip, states, input_lengths, target_lengths


@pytest.mark.parametrize(("kernel", "dtype"), MODES, indirect=["kernel"])
def test_alpha_and_losses_equal_reference(kernel, dtype) -> None:
    args = _batch(dtype)
    (alpha, nll), (alpha_ref, nll_ref) = both_paths(lambda: K.ctc_alpha(*args))
    assert alpha.dtype == nll.dtype == np.float64 and alpha.shape == (6, T, 7)
    np.testing.assert_array_equal(np.isinf(alpha), np.isinf(alpha_ref))
    np.testing.assert_allclose(alpha, alpha_ref, rtol=1e-12)
    np.testing.assert_allclose(nll, nll_ref, rtol=1e-12)
    assert nll[2] > 0 and nll[3] == 0.0 and nll[4] == np.inf and np.isfinite(nll[[0, 1, 5]]).all()


@pytest.mark.parametrize(("kernel", "dtype"), MODES, indirect=["kernel"])
def test_gradient_equals_reference(kernel, dtype) -> None:
    lp, ext, skip, states, input_lengths, target_lengths = _batch(dtype)
    alpha, nll = K.ctc_alpha(lp, ext, skip, states, input_lengths, target_lengths)
    grad = np.linspace(0.5, 1.5, 6)
    got, ref = both_paths(lambda: K.ctc_gradient(grad, lp, alpha, nll, ext, skip, states, input_lengths))
    assert got.dtype == ref.dtype == np.dtype(dtype) and got.shape == lp.shape
    np.testing.assert_allclose(got, ref, **tolerance(dtype))
    assert not got[:, 4].any() and not got[:, 3].any() and not got[5:, 1].any()  # infeasible, empty, past T_n


@pytest.mark.parametrize(("kernel", "dtype"), MODES, indirect=["kernel"])
def test_impossible_classes_and_a_batch_over_several_blocks_equal_reference(kernel, dtype) -> None:
    """lp of -inf (a class that cannot occur at a step: paths through it vanish, not NaN) and 23
    samples of unequal lengths (the blocks the kernels walk through time together)."""
    rng = np.random.default_rng(5)
    t_max, n, c = 9, 23, 6
    logits = rng.standard_normal((t_max, n, c))
    logits[rng.random(logits.shape) < 0.15] = -np.inf
    logits[..., 0] = rng.standard_normal((t_max, n))  # (the blank always possible)
    lp = (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(dtype)
    target_lengths = rng.integers(0, 4, n)
    targets = np.where(np.arange(3) < target_lengths[:, None], rng.integers(1, c, (n, 3)), 0)
    input_lengths = rng.integers(0, t_max + 1, n)
    ext, skip, states = extended_targets(targets, target_lengths, 0)
    (alpha, nll), (alpha_ref, nll_ref) = both_paths(lambda: K.ctc_alpha(lp, ext, skip, states, input_lengths,
                                                                       target_lengths))  # fmt: skip
    np.testing.assert_array_equal(np.isinf(alpha), np.isinf(alpha_ref))
    np.testing.assert_allclose(alpha, alpha_ref, rtol=1e-12)
    np.testing.assert_allclose(nll, nll_ref, rtol=1e-12)
    assert np.isinf(nll).any() and np.isfinite(nll).sum() > 10  # (both kinds of sample present)
    grad = rng.uniform(0.5, 1.5, n)
    got, ref = both_paths(lambda: K.ctc_gradient(grad, lp, alpha, nll, ext, skip, states, input_lengths))
    # (where lp is -inf the reference gives PyTorch's NaN, exp(-inf + inf); the kernels' 0 for a class
    # outside the target, the limit, and NaN where PyTorch's is at the target's own classes)
    assert np.isnan(got).any() and not (np.isnan(got) & ~np.isnan(ref)).any()
    defined = ~np.isnan(ref)
    np.testing.assert_allclose(got[defined], ref[defined], **tolerance(dtype))
