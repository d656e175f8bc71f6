"""ops/unfold.py (Unfold, Fold) through F.unfold and F.fold: float64 gradcheck, gradgradcheck and
PyTorch as the oracle (value, gradient, second derivative), fold as unfold's adjoint, and a
hypothesis sweep over kernel x stride x padding x dilation x shapes against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from op_checks import check_op
from strategies import seeds

import minitensor as mt
import minitensor.nn.functional as F

# (input shape of unfold, settings): overlapping, strided, dilated and padded windows, unbatched.
CASES = [
    ((2, 2, 5, 5), {"kernel_size": 2, "padding": 1, "stride": 2}),
    ((1, 3, 4, 6), {"kernel_size": (3, 2), "dilation": (1, 2)}),
    ((2, 4, 3), {"kernel_size": (2, 1), "stride": (1, 2), "padding": (0, 1)}),
]


def _fold_settings(x_shape: tuple, settings: dict) -> dict:
    return {"output_size": x_shape[-2:], **settings}


@pytest.mark.parametrize(("x_shape", "settings"), CASES)
def test_unfold_gradcheck_gradgradcheck_and_pytorch(x_shape, settings) -> None:
    x = np.random.default_rng(0).standard_normal(x_shape)
    check_op(
        lambda t: F.unfold(t, **settings), lambda t: pytest.importorskip("torch").nn.functional.unfold(t, **settings), x
    )


@pytest.mark.parametrize(("x_shape", "settings"), CASES)
def test_fold_gradcheck_gradgradcheck_and_pytorch(x_shape, settings) -> None:
    cols = F.unfold(mt.zeros(x_shape, dtype=mt.float64), **settings)
    c = np.random.default_rng(1).standard_normal(cols.shape)
    fold = _fold_settings(x_shape, settings)
    check_op(lambda t: F.fold(t, **fold), lambda t: pytest.importorskip("torch").nn.functional.fold(t, **fold), c)


@pytest.mark.parametrize(("x_shape", "settings"), CASES)
def test_fold_is_the_adjoint_of_unfold(jit_path, x_shape, settings) -> None:
    rng = np.random.default_rng(2)
    x = mt.tensor(rng.standard_normal(x_shape), dtype=mt.float64)
    cols = F.unfold(x, **settings)
    c = mt.tensor(rng.standard_normal(cols.shape), dtype=mt.float64)
    folded = F.fold(c, **_fold_settings(x_shape, settings))
    assert float((cols * c).sum()) == pytest.approx(float((x * folded).sum()), rel=1e-12)


def test_fold_of_unfold_counts_the_windows_over_each_pixel() -> None:
    ones = F.fold(F.unfold(mt.ones(1, 1, 3, 3), 2), (3, 3), 2)
    assert ones[0, 0].tolist() == [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]


@st.composite
def windows(draw) -> dict:
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    low = [max(1, d * (k - 1) + 1 - 2 * p) for k, d, p in zip(kernel, dilation, padding)]
    spatial = tuple(draw(st.integers(n, n + 4)) for n in low)
    shape = draw(st.sampled_from([(2,), ()])) + (draw(st.integers(1, 3)),) + spatial
    return {"shape": shape, "kernel_size": kernel, "dilation": dilation, "padding": padding, "stride": stride}


@given(case=windows(), jit=st.booleans(), seed=seeds)
def test_unfold_and_fold_sweep_against_pytorch(case, jit, seed) -> None:
    torch = pytest.importorskip("torch")
    settings = {k: v for k, v in case.items() if k != "shape"}
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(case["shape"])
    previous = mt.jit_enabled()
    mt.set_jit_enabled(jit)
    try:
        ours = F.unfold(mt.tensor(x, dtype=mt.float32), **settings)
        c = rng.standard_normal(ours.shape)
        back = F.fold(mt.tensor(c, dtype=mt.float32), case["shape"][-2:], **settings)
    finally:
        mt.set_jit_enabled(previous)
    theirs = torch.nn.functional.unfold(torch.tensor(x, dtype=torch.float32), **settings)
    theirs_back = torch.nn.functional.fold(torch.tensor(c, dtype=torch.float32), case["shape"][-2:], **settings)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())  # (copies: exact)
    np.testing.assert_allclose(back.numpy(), theirs_back.numpy(), rtol=1e-6, atol=1e-6)
