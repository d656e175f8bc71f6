"""Resampling (``ops/resample.py``): ``F.interpolate`` in every mode, ``F.pad``'s reflect, replicate
and circular modes, ``pixel_shuffle``/``pixel_unshuffle``.  float64 gradchecks of first and second
order with PyTorch as the oracle (``check_op``), and a hypothesis sweep of interpolation sizes,
scales and modes against PyTorch (nearest must pick PyTorch's very pixels)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_checks import check_op

import minitensor as mt
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")
tF = torch.nn.functional

rng = np.random.default_rng(7)
X4 = rng.standard_normal((1, 2, 3, 4))
X3 = rng.standard_normal((2, 2, 4))

INTERPOLATIONS = [
    (X4, {"scale_factor": 2}),
    (X4, {"size": (4, 3), "mode": "nearest-exact"}),
    (X4, {"scale_factor": 1.5, "mode": "bilinear"}),
    (X4, {"size": (5, 6), "mode": "bilinear", "align_corners": True}),
    (X4, {"size": (2, 3), "mode": "bicubic"}),
    (X4, {"scale_factor": (1.7, 0.8), "mode": "bicubic", "align_corners": True}),
    (X4, {"size": (2, 3), "mode": "area"}),
    (X3, {"scale_factor": 2.5, "mode": "linear"}),
    (X3, {"size": 3, "mode": "linear", "align_corners": True}),
    (X3, {"scale_factor": 1.5, "mode": "nearest", "recompute_scale_factor": True}),
]


@pytest.mark.parametrize("x,kw", INTERPOLATIONS, ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_interpolate(x, kw) -> None:
    check_op(lambda t: F.interpolate(t, **kw), lambda t: tF.interpolate(t, **kw), x)


def test_interpolate_trilinear_and_nearest_3d() -> None:
    x = rng.standard_normal((1, 1, 2, 3, 2))
    for kw in ({"size": (3, 2, 4), "mode": "trilinear"}, {"scale_factor": 2}):
        check_op(lambda t, kw=kw: F.interpolate(t, **kw), lambda t, kw=kw: tF.interpolate(t, **kw), x, second=False)


PADS = [
    (X3, (2, 3), "reflect"),
    (X3[0], (-1, 3), "reflect"),
    (X4, (1, 2, 2, 0), "reflect"),
    (X3, (3, 5), "replicate"),
    (X4[0], (2, -1, 1, 3), "replicate"),
    (X3, (4, 2), "circular"),
    (X4, (-1, 3, 2, 1), "circular"),
    (rng.standard_normal((1, 1, 2, 3, 3)), (1, 2, 0, 1, 1, 1), "reflect"),
]


@pytest.mark.parametrize("x,pad,mode", PADS, ids=lambda v: str(v) if not isinstance(v, np.ndarray) else str(v.shape))
def test_pad_modes(x, pad, mode) -> None:
    check_op(lambda t: F.pad(t, pad, mode=mode), lambda t: tF.pad(t, pad, mode=mode), x)


def test_pixel_shuffle_and_unshuffle() -> None:
    x = rng.standard_normal((1, 8, 2, 3))
    check_op(lambda t: F.pixel_shuffle(t, 2), lambda t: tF.pixel_shuffle(t, 2), x)
    check_op(lambda t: F.pixel_unshuffle(t, 2), lambda t: tF.pixel_unshuffle(t, 2), x.reshape(2, 4, 2, 3)[..., :2])
    y = mt.tensor(rng.standard_normal((2, 3, 18, 4, 6)))  # extra batch dims
    np.testing.assert_array_equal(F.pixel_unshuffle(F.pixel_shuffle(y, 3), 3).numpy(), y.numpy())


@settings(max_examples=30)
@given(
    size=st.tuples(st.integers(1, 7), st.integers(1, 7)),
    out=st.one_of(
        st.tuples(st.integers(1, 9), st.integers(1, 9)).map(lambda o: {"size": o}),
        st.tuples(
            st.sampled_from([0.5, 0.75, 1.3, 1.5, 2.0, 2.5, 3.1]), st.sampled_from([0.6, 1.0, 1.9, 2.0, 3.0])
        ).map(lambda s: {"scale_factor": s}),
    ),
    mode=st.sampled_from(["nearest", "nearest-exact", "bilinear", "bicubic", "area"]),
    corners=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_interpolate_sweep_against_pytorch(size, out, mode, corners, seed) -> None:
    kw = {**out, "mode": mode}
    if mode in ("bilinear", "bicubic"):
        kw["align_corners"] = corners
    if "scale_factor" in kw and min(int(n * s) for n, s in zip(size, kw["scale_factor"])) < 1:
        return  # an empty output: refused by both
    if mode == "area" and "scale_factor" in kw:
        kw = {"size": tuple(max(int(n * s), 1) for n, s in zip(size, kw["scale_factor"])), "mode": "area"}
    x = np.random.default_rng(seed).standard_normal((1, 2, *size))
    xm, xt = mt.tensor(x, dtype=mt.float64, requires_grad=True), torch.tensor(x, requires_grad=True)
    ym, yt = F.interpolate(xm, **kw), tF.interpolate(xt, **kw)
    assert ym.shape == tuple(yt.shape)
    np.testing.assert_allclose(ym.numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = np.random.default_rng(seed + 1).standard_normal(ym.shape)
    ym.backward(mt.tensor(g, dtype=mt.float64))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-11, atol=1e-12)


def test_float32_interpolation_stays_float32_and_close_to_pytorch() -> None:
    x = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    for kw in ({"scale_factor": 1.7, "mode": "bilinear"}, {"size": (9, 4), "mode": "bicubic"}, {"scale_factor": 3}):
        y = F.interpolate(mt.tensor(x), **kw)
        assert y.dtype == mt.float32
        np.testing.assert_allclose(y.numpy(), tF.interpolate(torch.tensor(x), **kw).numpy(), rtol=1e-5, atol=1e-6)
