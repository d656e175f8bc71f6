"""kernels/conv.py and conv_depthwise.py: the numba convolutions (im2col + BLAS, the 1x1 path, the
depthwise loops, serial and parallel) against the references (unfold + matmul), forward and both
gradients, with groups, strides, dilation, padding and non-contiguous operands."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import MODES, SPLIT_IDS, SPLITS, counted_splits, jitted, reference, tolerance

from minitensor.kernels import conv as K
from minitensor.kernels import conv_depthwise, conv_direct, conv_gemm, dot_tiles
from minitensor.kernels.im2col import Window
from minitensor.kernels.phases import from_phases, phase_scratch, to_phases

# (C, Co, groups, H, W, window): general, grouped, 1x1 (the image as its own columns), strided 1x1, then depthwise:
# 3x3 'same', a channel multiplier, strided and dilated, LeNet-5's 2x2 stride 2, 5x5 'same' on an odd plane, an even
# kernel padded after more than before (multiplier 2), a stride longer than the kernel with wide padding, dilated
# stride 1, 1x1 stride 2, input rows and columns no window reaches; windows that tile the input
# (conv_depthwise.tiles): 2x3 with a multiplier and rows and columns left over, 3x3 stride 3, 2x2 stride 2 on a larger
# plane, and 2x2 with a multiplier and a row and a column left over;
# one input channel with two filters (the depthwise loops) and with six (LeNet-5's first layer: im2col + BLAS,
# ``conv_depthwise.takes``); planes of >= 128 output pixels, whose weight gradients take ``dot_tiles`` (plain and
# grouped); last, windows of >= 128 values, which take ``conv_direct``: 3x3 'same' (forward and input gradient), a
# stride and a dilation (forward only), a dilated 'same', an even kernel padded more after than before, padding wider
# than the kernel (its input gradient is no convolution with padding >= 0: im2col).
CASES = [
    (3, 4, 1, 6, 7, Window(3, 3, 1, 1, 1, 1, 1, 1, 6, 7)),
    (4, 6, 2, 7, 5, Window(3, 2, 2, 1, 1, 0, 1, 2, 4, 3)),
    (5, 3, 1, 4, 6, Window(1, 1, 1, 1, 0, 0, 1, 1, 4, 6)),
    (4, 4, 1, 5, 5, Window(1, 1, 2, 2, 0, 0, 1, 1, 3, 3)),
    (4, 4, 4, 6, 6, Window(3, 3, 1, 1, 1, 1, 1, 1, 6, 6)),
    (3, 6, 3, 5, 8, Window(2, 3, 1, 1, 0, 1, 1, 1, 4, 8)),
    (3, 3, 3, 9, 9, Window(3, 3, 2, 3, 2, 1, 2, 1, 5, 3)),
    (3, 3, 3, 8, 8, Window(2, 2, 2, 2, 0, 0, 1, 1, 4, 4)),
    (2, 2, 2, 7, 9, Window(5, 5, 1, 1, 2, 2, 1, 1, 7, 9)),
    (2, 4, 2, 6, 5, Window(4, 4, 1, 1, 1, 1, 1, 1, 6, 5)),
    (2, 2, 2, 9, 7, Window(2, 3, 3, 2, 2, 3, 1, 1, 4, 6)),
    (3, 3, 3, 8, 8, Window(3, 3, 1, 1, 2, 2, 2, 2, 8, 8)),
    (2, 2, 2, 5, 5, Window(1, 1, 2, 2, 0, 0, 1, 1, 3, 3)),
    (2, 2, 2, 7, 7, Window(2, 2, 3, 3, 0, 0, 1, 1, 2, 2)),
    (2, 4, 2, 7, 9, Window(2, 3, 2, 3, 0, 0, 1, 1, 3, 3)),
    (3, 3, 3, 10, 10, Window(3, 3, 3, 3, 0, 0, 1, 1, 3, 3)),
    (2, 2, 2, 40, 36, Window(2, 2, 2, 2, 0, 0, 1, 1, 20, 18)),
    (2, 4, 2, 9, 7, Window(2, 2, 2, 2, 0, 0, 1, 1, 4, 3)),
    (1, 2, 1, 9, 8, Window(5, 5, 1, 1, 2, 2, 1, 1, 9, 8)),
    (1, 6, 1, 9, 8, Window(5, 5, 1, 1, 2, 2, 1, 1, 9, 8)),
    (3, 5, 1, 12, 13, Window(3, 3, 1, 1, 1, 1, 1, 1, 12, 13)),
    (4, 6, 2, 17, 9, Window(3, 2, 1, 1, 1, 0, 1, 1, 17, 8)),
    (15, 16, 1, 6, 7, Window(3, 3, 1, 1, 1, 1, 1, 1, 6, 7)),
    (16, 40, 1, 12, 10, Window(3, 3, 2, 1, 0, 2, 1, 2, 5, 10)),
    (16, 16, 1, 9, 7, Window(3, 3, 1, 1, 2, 1, 2, 1, 9, 7)),
    (8, 8, 1, 7, 6, Window(4, 4, 1, 1, 1, 2, 1, 1, 7, 6)),
    (16, 32, 1, 5, 5, Window(3, 3, 1, 1, 3, 3, 1, 1, 9, 9)),
]
DEPTHWISE = [case for case in CASES if case[2] == case[0]]


def case_id(case) -> str:
    c, co, groups, h, w, win = case
    return f"C{c}-Co{co}-g{groups}-k{win.kh}x{win.kw}-s{win.sh}x{win.sw}-p{win.pt}x{win.pl}-d{win.dh}x{win.dw}"


def sum_tolerance(dtype, case) -> dict:
    """``tolerance(dtype)`` with its absolute part grown with the longest sum of the case's passes
    (16 terms and fewer as it is): the kernels and the reference sum in different orders."""
    c, co, groups, h, w, win = case
    terms = max(max(c, co) // groups * win.kh * win.kw, 2 * win.oh * win.ow)  # (the weight gradient: 2 images)
    tol = tolerance(dtype)
    return {"rtol": tol["rtol"], "atol": tol["atol"] * max(1.0, terms / 16)}


def operands(rng, c, co, groups, h, w, win, dtype, transposed: bool = False) -> tuple:
    x = rng.standard_normal((2, c, h, w)).astype(dtype)
    weight = rng.standard_normal((co, c // groups, win.kh, win.kw)).astype(dtype)
    grad = rng.standard_normal((2, co, win.oh, win.ow)).astype(dtype)
    if transposed:  # non-contiguous operands: the kernels take a contiguous copy
        x = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
        grad = np.asfortranarray(grad)
    return x, weight, rng.standard_normal(co).astype(dtype), grad


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_kernels_match_the_reference(kernel, rng, dtype, case) -> None:
    c, co, groups, h, w, win = case
    x, weight, bias, grad = operands(rng, *case, dtype, transposed=case is CASES[1])

    def run():
        return (
            K.conv2d(x, weight, bias, win, groups),
            K.conv2d(x, weight, None, win, groups),
            K.conv2d_input_grad(grad, weight, (h, w), win, groups),
            K.conv2d_weight_grad(x, grad, win, groups),
        )

    for got, expected in zip(jitted(run), reference(run)):
        assert got.dtype == np.dtype(dtype) and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, **sum_tolerance(dtype, case))


def test_the_cases_reach_both_weight_gradient_products() -> None:
    """Some cases' weight gradients run on ``dot_tiles``, others on BLAS (``dot_tiles.pays``)."""
    pays = {dot_tiles.pays(win.oh * win.ow, 8) for c, co, groups, h, w, win in CASES if groups != c}
    assert pays == {True, False}


def test_the_cases_reach_both_ways_of_each_pass() -> None:
    """Some cases' forward and input gradient run on ``conv_direct``, others on im2col + BLAS."""
    forward, input_grad = set(), set()
    for c, co, groups, h, w, win in CASES:
        weight = np.zeros((co, c // groups, win.kh, win.kw), np.float32)
        forward.add(conv_gemm.direct_forward(h, w, win, groups, weight))
        input_grad.add(conv_gemm.direct_input_grad(h, w, win, groups, weight))
    assert forward == input_grad == {True, False}


@pytest.mark.parametrize("case", DEPTHWISE, ids=case_id)
def test_depthwise_gradients_of_non_finite_inputs_match_the_reference(rng, case) -> None:
    """An inf or NaN in the input reaches only the gradients of the weights whose windows read it:
    the kernels' pitched rows must not multiply the values beside a window by 0 (0 * inf = NaN)."""
    c, co, groups, h, w, win = case
    x, weight, _, grad = operands(rng, *case, "float32")
    x[0, 0, h - 1, w - 1], x[1, c - 1, 0, w // 2], x[0, c - 1, h // 2, 0] = np.inf, -np.inf, np.nan

    def run():
        return K.conv2d_input_grad(grad, weight, (h, w), win, groups), K.conv2d_weight_grad(x, grad, win, groups)

    for got, expected in zip(jitted(run), reference(run)):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        np.testing.assert_allclose(got, expected, **tolerance("float32"))


def test_input_gradients_of_same_layers_run_as_the_forward_convolution_of_the_gradient(rng, monkeypatch) -> None:
    """A stride-1 layer whose input gradient copies no more im2col values than col2im would add back
    ('same', as many input as output channels) runs it as the forward convolution of the gradient
    with the flipped weight (``conv.as_forward``); the reference keeps the definition.  Both ways are
    among the cases that ``test_kernels_match_the_reference`` holds to the reference."""

    def routed(case) -> bool:
        c, co, groups, h, w, win = case
        return K.as_forward((2, co, win.oh, win.ow), (2, c, h, w), win, groups)

    assert {routed(case) for case in CASES} == {True, False}
    case = next(case for case in CASES if routed(case))
    c, co, groups, h, w, win = case
    x, weight, _, grad = operands(rng, *case, np.float32)
    forwards = []
    real_conv2d = K.conv2d
    monkeypatch.setattr(K, "conv2d", lambda *args: (forwards.append(args[3]), real_conv2d(*args))[1])
    got = jitted(lambda: K.conv2d_input_grad(grad, weight, (h, w), win, groups))
    assert forwards == [conv_direct.input_grad_window.py_func(win, h, w)]
    expected = reference(lambda: K.conv2d_input_grad(grad, weight, (h, w), win, groups))
    assert len(forwards) == 1
    np.testing.assert_allclose(got, expected, **sum_tolerance("float32", case))


def test_the_reference_is_the_definition(rng) -> None:
    """One output element by hand: the sum over the window's pixels and the group's channels."""
    c, co, groups, h, w, win = CASES[1]
    x, weight, bias, _ = operands(rng, *CASES[1], np.float64)
    y = reference(lambda: K.conv2d(x, weight, bias, win, groups))
    n, o, p, q = 1, 4, 2, 1  # output channel 4 is in group 1: input channels 2 and 3
    padded = np.pad(x, ((0, 0), (0, 0), (win.pt, win.pt), (win.pl, win.pl)))
    rows = p * win.sh + win.dh * np.arange(win.kh)
    cols = q * win.sw + win.dw * np.arange(win.kw)
    window = padded[n, 2:4][:, rows][:, :, cols]
    assert y[n, o, p, q] == pytest.approx(np.sum(window * weight[o]) + bias[o], rel=1e-12)


def test_windows_that_tile_the_input_are_recognised() -> None:
    tiling = [case[5] for case in DEPTHWISE if conv_depthwise.tiles(case[5], case[3], case[4])]
    assert [(w.kh, w.kw, w.oh) for w in tiling] == [(2, 2, 4), (2, 3, 3), (3, 3, 3), (2, 2, 20), (2, 2, 4)]
    assert not conv_depthwise.tiles(Window(2, 2, 2, 2, 1, 0, 1, 1, 4, 4), 8, 8)  # (padding)
    assert not conv_depthwise.tiles(Window(1, 1, 2, 2, 0, 0, 1, 1, 3, 3), 5, 5)  # (stride past the kernel)
    assert conv_depthwise.tiles(Window(1, 1, 1, 1, 0, 0, 1, 2, 2, 3), 2, 3)  # (a 1x1 kernel: its dilation is moot)
    assert not conv_depthwise.tiles(Window(1, 1, 1, 1, 0, 0, 1, 2, 2, 4), 2, 3)  # (windows past the last column)
    assert not conv_depthwise.tiles(Window(2, 2, 2, 2, 0, 0, 1, 1, 3, 2), 5, 4)  # (past the last row)


# (C, Co, H, W, window): windows reaching past the input's far edges, into its implicit zeros, as the
# forward convolution computing a transposed one has them (``K.as_forward``: a transposed 1x1
# convolution with output_padding): windows that would tile the input but for the last column or
# row, and a 3x3 window with padding before only.
PAST_THE_EDGE = [
    (1, 2, 1, 3, Window(1, 1, 1, 1, 0, 0, 1, 2, 1, 4)),
    (2, 2, 3, 4, Window(1, 1, 1, 1, 0, 0, 2, 2, 4, 5)),
    (2, 4, 5, 4, Window(2, 2, 2, 2, 0, 0, 1, 1, 3, 2)),
    (1, 1, 4, 4, Window(3, 3, 1, 1, 1, 1, 1, 1, 5, 5)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", PAST_THE_EDGE, ids=lambda case: f"C{case[0]}-Co{case[1]}-{case[2]}x{case[3]}")
def test_depthwise_windows_past_the_far_edges_read_zeros_there(rng, dtype, case) -> None:
    """Each plane is followed in memory by NaN (the next plane, and past the last one), so a kernel
    that read beyond a plane instead of the zeros around it gives NaN (the tiled loops did: garbage
    in the output_padding column of a transposed 1x1 convolution)."""
    c, co, h, w, win = case
    size = 2 * c * h * w
    memory = np.full(2 * size, np.nan, dtype)
    memory[::2] = rng.standard_normal(size)
    x = memory.reshape(2, c, h, 2 * w)[..., ::2]  # (every value followed by a NaN: the kernels take a copy)
    planes = np.full(size + h * w, np.nan, dtype)
    planes[:size] = rng.standard_normal(size)
    x_tight = planes[:size].reshape(2, c, h, w)  # (C-contiguous, the NaN right after its last plane)
    weight = rng.standard_normal((co, 1, win.kh, win.kw)).astype(dtype)
    grad = rng.standard_normal((2, co, win.oh, win.ow)).astype(dtype)
    assert conv_depthwise.takes(x, weight, c)

    def run():
        return (
            K.conv2d(x, weight, None, win, c),
            K.conv2d(x_tight, weight, None, win, c),
            K.conv2d_input_grad(grad, weight, (h, w), win, c),
            K.conv2d_weight_grad(x_tight, grad, win, c),
        )

    for got, expected in zip(jitted(run), reference(run)):
        assert not np.isnan(expected).any()
        np.testing.assert_allclose(got, expected, **tolerance(dtype))


@pytest.mark.parametrize("case", DEPTHWISE, ids=case_id)
def test_one_input_channel_per_group_takes_the_direct_loops_up_to_two_filters_each(case) -> None:
    """From three output channels per input channel on, im2col + BLAS (the columns serve them all)."""
    c, co, groups, *_ = case
    assert conv_depthwise.takes(np.empty((1, c, 2, 2)), np.empty((co, c // groups, 1, 1)), groups) == (co <= 2 * c)
    assert conv_depthwise.takes(np.empty((1, c, 2, 2)), np.empty((co, c, 1, 1)), 1) == (c == 1 and co <= 2)


@pytest.mark.parametrize("case", DEPTHWISE, ids=case_id)
def test_phases_hold_the_padded_plane(rng, case) -> None:
    """Phase (a, b) of the padded plane holds its pixels (a + sh * r, b + sw * c), zeros in the
    padding, and merging the phases gives the plane back."""
    _, _, _, h, w, win = case
    x = rng.standard_normal((1, 1, h, w))
    phases = phase_scratch(h, w, win, 1, x)[0]
    to_phases(x[0, 0], win, phases)
    sh, sw, hq, pitch = phases.shape
    padded = np.zeros((sh * hq, sw * pitch))
    padded[win.pt : win.pt + h, win.pl : win.pl + w] = x[0, 0]
    for a in range(sh):
        for b in range(sw):
            np.testing.assert_array_equal(phases[a, b], padded[a::sh, b::sw])
    back = np.empty((h, w))
    from_phases(phases, win, back)
    np.testing.assert_array_equal(back, x[0, 0])


def test_other_dtypes_and_empty_batches_take_the_reference(rng) -> None:
    win = CASES[0][5]
    x = rng.integers(-3, 3, (2, 3, 6, 7))
    weight = rng.integers(-3, 3, (4, 3, 3, 3))
    y = jitted(lambda: K.conv2d(x.astype(np.float64), weight.astype(np.float64), None, win, 1))
    np.testing.assert_array_equal(reference(lambda: K.conv2d(x, weight, None, win, 1)), y)
    empty = K.conv2d_weight_grad(np.zeros((0, 3, 6, 7), np.float32), np.zeros((0, 4, 6, 7), np.float32), win, 1)
    assert empty.shape == (4, 3, 3, 3) and not empty.any()


@pytest.mark.parametrize("on_blas_threads,dtype", SPLITS, ids=SPLIT_IDS)
def test_images_split_over_two_threads_match_one_thread(rng, dtype, on_blas_threads, two_blas_threads, monkeypatch):
    """The threaded kernels (each thread a range of images, on BLAS's threads or numba's) give the
    one-thread results, for every image count around the split (1, 2, 3, 5 images)."""
    parallel = ("_forward_parallel", "_input_grad_parallel", "_weight_grad_parallel")
    runs = counted_splits(monkeypatch, on_blas_threads, conv_gemm, parallel)
    c, co, groups, h, w, win = CASES[1]
    for n in (1, 2, 3, 5):
        x = rng.standard_normal((n, c, h, w)).astype(dtype)
        weight = rng.standard_normal((co, c // groups, win.kh, win.kw)).astype(dtype)
        bias = rng.standard_normal(co).astype(dtype)
        grad = rng.standard_normal((n, co, win.oh, win.ow)).astype(dtype)
        _assert_threaded_passes_match_serial(conv_gemm, (x, weight, bias, win, groups), grad, dtype)
    assert runs == [2] * 9  # (three passes on 2, 3 and 5 images; 1 image runs on one thread)


@pytest.mark.parametrize("on_blas_threads,dtype", SPLITS, ids=SPLIT_IDS)
@pytest.mark.parametrize("case", [5, 7], ids=["phases", "tiled"])
def test_depthwise_planes_split_over_two_threads_match_one_thread(rng, dtype, on_blas_threads, case, two_blas_threads,
                                                                 monkeypatch):  # fmt: skip
    """The depthwise passes with their planes (the weight's gradient: its channels) split over two
    threads, as tasks on BLAS's threads or on numba's, give the one-thread results."""
    parallel = ("forward_parallel", "input_grad_parallel", "weight_grad_parallel")
    runs = counted_splits(monkeypatch, on_blas_threads, conv_depthwise, parallel)
    c, co, groups, h, w, win = CASES[case]
    for n in (1, 3):
        x = rng.standard_normal((n, c, h, w)).astype(dtype)
        weight = rng.standard_normal((co, 1, win.kh, win.kw)).astype(dtype)
        grad = rng.standard_normal((n, co, win.oh, win.ow)).astype(dtype)
        _assert_threaded_passes_match_serial(conv_depthwise, (x, weight, None, win, groups), grad, dtype)
        one, two = np.empty(grad.shape, dtype), np.empty(grad.shape, dtype)  # (and the forward with a bias)
        bias = rng.standard_normal(co).astype(dtype)
        conv_depthwise.forward(x, weight, bias, win, groups, one)
        conv_depthwise.forward_threaded(x, weight, bias, win, groups, two)
        np.testing.assert_allclose(two, one, **tolerance(np.dtype(dtype).name))
    assert runs == [2] * 8  # (four passes, each split at 1 and at 3 images: 3 and 9 planes, 3 channels)


def _assert_threaded_passes_match_serial(module, forward_args: tuple, grad: np.ndarray, dtype) -> None:
    """``module``'s three passes (``forward``, ``input_grad``, ``weight_grad``) and their ``*_threaded``
    forms give the same results; ``forward_args``: (x, weight, bias, win, groups)."""
    x, weight, _, win, groups = forward_args
    for name, args, shape in [
        ("forward", forward_args, grad.shape),
        ("input_grad", (grad, weight, win, groups), x.shape),
        ("weight_grad", (x, grad, win, groups), weight.shape),
    ]:
        one, two = np.empty(shape, dtype), np.empty(shape, dtype)
        getattr(module, name)(*args, one)
        getattr(module, f"{name}_threaded")(*args, two)
        np.testing.assert_allclose(two, one, **tolerance(np.dtype(dtype).name))


@pytest.mark.parametrize("case", [0, 4], ids=["gemm", "depthwise"])
def test_mixed_dtypes_run_in_their_common_dtype_on_every_path(kernel, rng, case) -> None:
    """float32 operands with a float64 one (the functional layer refuses the mix; the kernels' callers
    need not): every pass computes in float64 on each path, equal to the reference's."""
    c, co, groups, h, w, win = CASES[case]
    x = rng.standard_normal((3, c, h, w)).astype(np.float32)
    weight = rng.standard_normal((co, c // groups, win.kh, win.kw))
    grad = rng.standard_normal((3, co, win.oh, win.ow)).astype(np.float32)

    def run():
        return (K.conv2d(x, weight, None, win, groups), K.conv2d_input_grad(grad, weight, (h, w), win, groups),
                K.conv2d_weight_grad(x, grad.astype(np.float64), win, groups))  # fmt: skip

    for got, expected in zip(jitted(run), reference(run)):
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, expected, **tolerance("float64"))
