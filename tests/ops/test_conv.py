"""ops/conv.py (Conv, ConvTranspose, ConvWeight) through F.conv1d/conv2d/conv_transpose1d/conv_transpose2d:
float64 gradcheck and gradgradcheck, PyTorch as the oracle of the value, the gradient and the
second derivative and the JVP (``op_checks.check_op``), a third derivative, forward over reverse (the
backward's ops in forward mode), and hypothesis sweeps over stride x
padding x dilation x groups x shapes (batched and unbatched, float32 and float64, the numba
kernels and the NumPy references) against PyTorch's forward and backward."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from op_checks import check_jvp, check_op
from strategies import seeds

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.ops.conv import ConvWeight


def _torch():
    """PyTorch, or the test skips (imported per test: the gradchecks run without it)."""
    return pytest.importorskip("torch")


# (name, input shape, weight shape, settings): each family member with the settings that change its
# anatomy: groups, stride, dilation, asymmetric 'same' padding, depthwise, unbatched, 1-D.
CONV = [
    ("conv2d", (2, 4, 5, 6), (6, 2, 3, 2), {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2), "groups": 2}),
    ("conv2d", (1, 2, 5, 5), (3, 2, 2, 2), {"padding": "same", "dilation": (1, 2)}),
    ("conv2d", (3, 4, 4), (3, 3, 1, 1), {"stride": 2}),
    ("conv2d", (2, 3, 5, 4), (6, 1, 3, 3), {"padding": 1, "groups": 3}),  # depthwise, channel multiplier 2
    ("conv1d", (2, 2, 7), (4, 2, 3), {"stride": 2, "padding": 2, "dilation": 2}),
    ("conv1d", (3, 6), (2, 3, 4), {"padding": "same"}),
]
TRANSPOSED = [
    (
        "conv_transpose2d",
        (2, 4, 3, 3),
        (4, 3, 3, 2),
        {"stride": (2, 1), "padding": (1, 0), "output_padding": (1, 0), "groups": 2, "dilation": (1, 2)},
    ),  # fmt: skip
    ("conv_transpose2d", (2, 3, 3), (2, 2, 2, 2), {"stride": 1, "dilation": 3, "output_padding": 2}),
    ("conv_transpose1d", (1, 2, 4), (2, 3, 3), {"stride": 3, "padding": 1, "output_padding": 2}),
    # a 1x1 kernel with output_padding: the forward convolution that computes it has windows past the
    # gradient's far edges (the depthwise loops read beyond each plane there, found by the vision fuzz test)
    ("conv_transpose2d", (2, 1, 3, 4), (1, 2, 1, 1), {"dilation": 2, "output_padding": 1}),
    ("conv_transpose1d", (1, 3), (1, 2, 1), {"dilation": 2, "output_padding": 1}),
]


@pytest.mark.parametrize(
    ("index", "name", "x_shape", "w_shape", "settings"), [(i, *c) for i, c in enumerate(CONV + TRANSPOSED)]
)
def test_gradcheck_gradgradcheck_and_pytorch(index, name, x_shape, w_shape, settings) -> None:
    rng = np.random.default_rng(index)
    bias = index % 3 != 1  # (without a bias in every third case)
    channels = w_shape[0] if "transpose" not in name else w_shape[1] * settings.get("groups", 1)
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)] + (
        [rng.standard_normal(channels)] if bias else []
    )

    def ours(*ts):
        return getattr(F, name)(*ts, **settings)

    def theirs(*ts):
        return getattr(_torch().nn.functional, name)(*ts, **settings)

    check_op(ours, theirs, *arrays)


def test_conv_weight_op_is_pytorchs_weight_gradient() -> None:
    """ConvWeight on its own (as the backward uses it): gradcheck, gradgradcheck, and torch.nn.grad's value."""
    rng = np.random.default_rng(3)
    x, g = rng.standard_normal((2, 4, 6, 5)), rng.standard_normal((2, 6, 3, 2))
    win = mt.backend.conv_window((3, 2), (2, 2), (1, 0), (1, 1), (3, 2))
    xs = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in (x, g)]
    assert gradcheck(lambda a, b: ConvWeight.apply(a, b, win=win, groups=2), xs)
    assert gradgradcheck(lambda a, b: ConvWeight.apply(a, b, win=win, groups=2), xs)
    torch = _torch()
    expected = torch.nn.grad.conv2d_weight(torch.tensor(x), (6, 2, 3, 2), torch.tensor(g), 2, (1, 0), 1, 2)
    np.testing.assert_allclose(ConvWeight.apply(*xs, win=win, groups=2).numpy(), expected.numpy(), rtol=1e-12)
    check_jvp(
        lambda a, b: ConvWeight.apply(a, b, win=win, groups=2),
        lambda a, b: torch.nn.grad.conv2d_weight(a, (6, 2, 3, 2), b, 2, (1, 0), 1, 2),
        x,
        g,
    )


def test_forward_over_reverse_equals_pytorchs() -> None:
    """A Hessian-vector product, jvp of grad, of a loss through a convolution: forward mode through
    the backward's ConvTranspose and ConvWeight (their JVP rules on Tensors)."""
    torch = _torch()
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((2, 2, 6, 6)), rng.standard_normal((3, 2, 3, 3))
    dx, dw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    results = []
    for lib, func in [(mt, mt.func), (torch, torch.func)]:
        conv = lib.nn.functional.conv2d

        def loss(a, b, conv=conv):
            return (conv(a, b, stride=2, padding=1).tanh() ** 2).sum()

        as_t = [lib.tensor(a, dtype=lib.float64) for a in (x, w, dx, dw)]
        _, hvp = func.jvp(func.grad(loss, argnums=(0, 1)), tuple(as_t[:2]), tuple(as_t[2:]))
        results.append([t.detach().numpy() for t in hvp])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_third_derivative_equals_pytorchs() -> None:
    """Any order: d/dx of d/dw of d/dx of sum(conv(x, w) * conv(x, w)) (nonzero: the loss is quartic)."""
    torch = _torch()
    rng = np.random.default_rng(5)
    x, w, v = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3)), rng.standard_normal((1, 2, 5, 5))
    results = []
    libraries = [(mt, F.conv2d, lambda a: mt.tensor(a, requires_grad=True, dtype=mt.float64)),
                 (torch, torch.nn.functional.conv2d, lambda a: torch.tensor(a, requires_grad=True))]  # fmt: skip
    for lib, conv, make in libraries:
        tx, tw, tv = make(x), make(w), make(v)
        loss = (conv(tx, tw, padding=1) ** 2).sum()
        (gx,) = lib.autograd.grad(loss, [tx], create_graph=True)
        (gw,) = lib.autograd.grad((gx * tv).sum(), [tw], create_graph=True)
        (gxx,) = lib.autograd.grad((gw * gw).sum(), [tx])
        results.append(gxx.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9)


def test_create_graph_records_the_family() -> None:
    x = mt.randn(1, 2, 4, 4, dtype=mt.float64, requires_grad=True)
    w = mt.randn(3, 2, 3, 3, dtype=mt.float64, requires_grad=True)
    gx, gw = mt.autograd.grad(F.conv2d(x, w).sum(), [x, w], create_graph=True)
    assert type(gx.grad_fn).__name__ == "ConvTransposeBackward" and type(gw.grad_fn).__name__ == "ConvWeightBackward"


# ------------------------------------------------------------------ hypothesis sweeps against PyTorch
@st.composite
def settings_of(draw, transposed: bool) -> dict:
    """A random convolution: its F function, input and weight shapes, and its settings."""
    dims = draw(st.sampled_from([2, 1]))
    groups = draw(st.sampled_from([1, 2, 3]))
    c_in, c_out = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(dims))
    settings = {"stride": stride, "dilation": dilation, "groups": groups}
    kinds = ["pairs", "int"] + ([] if transposed else ["valid"] + (["same"] if set(stride) == {1} else []))
    kind = draw(st.sampled_from(kinds))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(dims)) if kind == "pairs" else draw(st.integers(0, 2))
    settings["padding"] = padding if kind in ("pairs", "int") else kind
    pads = (padding,) * dims if kind == "int" else padding if kind == "pairs" else (0,) * dims
    if transposed:
        settings["output_padding"] = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
        low = [max(1, (2 * p - d * (k - 1)) // s + 2) for p, d, k, s in zip(pads, dilation, kernel, stride)]
        weight = (c_in, c_out // groups) + kernel
    else:
        low = [max(1, d * (k - 1) + 1 - 2 * p) for p, d, k in zip(pads, dilation, kernel)]
        weight = (c_out, c_in // groups) + kernel
    spatial = tuple(draw(st.integers(n, n + 4)) for n in low)
    batch = draw(st.sampled_from([(2,), (1,), ()]))
    name = ("conv_transpose" if transposed else "conv") + f"{dims}d"
    return {"name": name, "x": batch + (c_in,) + spatial, "w": weight, "bias": draw(st.booleans()), **settings}


def _forward_backward(lib, F_, case: dict, arrays: list, dtype) -> list:
    tensors = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    settings = {k: v for k, v in case.items() if k not in ("name", "x", "w", "bias")}
    y = getattr(F_, case["name"])(*tensors, **settings)
    g = lib.tensor(np.random.default_rng(0).standard_normal(tuple(y.shape)), dtype=dtype)
    (y * g).sum().backward()
    return [y.detach().numpy()] + [t.grad.numpy() for t in tensors]


def _sweep(case: dict, jit: bool, double: bool, seed: int) -> None:
    torch = _torch()
    rng = np.random.default_rng(seed)
    channels = case["w"][1] * case["groups"] if "transpose" in case["name"] else case["w"][0]
    arrays = [rng.standard_normal(case["x"]), rng.standard_normal(case["w"])]
    arrays += [rng.standard_normal(channels)] if case["bias"] else []
    previous = mt.jit_enabled()
    mt.set_jit_enabled(jit)
    try:
        ours = _forward_backward(mt, F, case, arrays, mt.float64 if double else mt.float32)
    finally:
        mt.set_jit_enabled(previous)
    theirs = _forward_backward(torch, torch.nn.functional, case, arrays, torch.float64 if double else torch.float32)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-10 if double else 2e-4, atol=1e-12 if double else 2e-5)


@given(case=settings_of(transposed=False), jit=st.booleans(), double=st.booleans(), seed=seeds)
def test_conv_sweep_against_pytorch(case, jit, double, seed) -> None:
    _sweep(case, jit, double, seed)


@given(case=settings_of(transposed=True), jit=st.booleans(), double=st.booleans(), seed=seeds)
def test_conv_transpose_sweep_against_pytorch(case, jit, double, seed) -> None:
    _sweep(case, jit, double, seed)


def test_the_channels_last_path_passes_gradcheck() -> None:
    """A 16-channel 3x3 convolution of 5 x 5 images runs its forward and its input gradient on the
    channels-last window rows (``kernels/conv_direct.py``): float64 gradcheck of input, weight and bias."""
    from minitensor.kernels import conv_gemm
    from minitensor.kernels.im2col import Window

    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal((1, 16, 5, 5)), rng.standard_normal((16, 16, 3, 3)), rng.standard_normal(16)
    win = Window(3, 3, 1, 1, 1, 1, 1, 1, 5, 5)
    assert conv_gemm.direct_forward(5, 5, win, 1, w) and conv_gemm.direct_input_grad(5, 5, win, 1, w)
    inputs = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in (x, w, b)]
    assert gradcheck(lambda *ts: F.conv2d(*ts, padding=1), inputs)
