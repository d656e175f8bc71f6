"""Attention kernels against the NumPy reference for every mask kind, fully masked rows, and float64
gradchecks of the attention ops on the jitted paths.

With the ``kernel`` fixture at "serial" attention takes the serial fused kernels (BLAS called from
numba, one head after the other), at "parallel" the parallel ones (one head per thread), and the
parallel row kernels for the softmax of a single head or where numba has no BLAS to call."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import MODES, jitted, reference, tolerance

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck
from minitensor.kernels import attention, attention_softmax
from minitensor.kernels.runtime import blas, blas_threads
from minitensor.ops.attention import Attention
from minitensor.ops.fused.attention import SelfAttention, heads_attention

N, H, L, S = 3, 2, 5, 7
MASKS = ["none", "float", "bool", "key_padding", "causal", "per_head", "padding_and_causal"]


SMALL_HEAD_MACS = attention.SMALL_HEAD_MACS  # (the module's own, which the fixture below sets aside)


@pytest.fixture(autouse=True)
def fused_heads_at_any_size(monkeypatch) -> None:
    """These small heads take the fused kernels (outside tests, heads below ``SMALL_HEAD_MACS`` take
    the unfused pass), and the ``kernel`` fixture at "parallel" the parallel ones (outside tests they
    wait for passes of ``BLAS_SPIN_SECONDS``)."""
    monkeypatch.setattr(attention, "SMALL_HEAD_MACS", 0)
    monkeypatch.setattr(attention, "BLAS_SPIN_SECONDS", 0.0)


def make_mask(rng, kind: str, dtype) -> np.ndarray | None:
    """An additive mask of the given kind, broadcastable to (N, H, L, S), with fully masked rows
    where the kind allows them."""
    if kind == "none":
        return None
    if kind == "float":
        return rng.standard_normal((L, S)).astype(dtype)
    if kind == "bool":
        blocked = rng.random((L, S)) < 0.4
        blocked[1] = True  # query 1 may attend to no key
        return np.where(blocked, -np.inf, 0.0).astype(dtype)
    if kind == "causal":
        return np.triu(np.full((L, S), -np.inf, dtype), 1)
    pad = np.zeros((N, 1, 1, S), dtype)
    pad[0, ..., 4:] = -np.inf
    pad[2] = -np.inf  # every key of batch element 2 is padding
    if kind == "key_padding":
        return pad
    if kind == "per_head":
        return np.where(rng.random((N, H, L, S)) < 0.3, -np.inf, rng.standard_normal((N, H, L, S))).astype(dtype)
    return pad + np.triu(np.full((L, S), -np.inf, dtype), 1)


def qkv(rng, dtype, lead=(N, H), length=L):
    return (
        rng.standard_normal(lead + (length, 4)).astype(dtype),
        rng.standard_normal(lead + (S, 4)).astype(dtype),
        rng.standard_normal(lead + (S, 3)).astype(dtype),
    )


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("with_dropout", [False, True])
def test_forward_and_backward_match_reference(kernel, rng, dtype, mask_kind, with_dropout) -> None:
    q, k, v = qkv(rng, dtype)
    mask = make_mask(rng, mask_kind, dtype)
    drop = ((rng.random((N, H, L, S)) > 0.25) / 0.75).astype(dtype) if with_dropout else None
    grad = rng.standard_normal((N, H, L, 3)).astype(dtype)

    def run():
        out, p = attention.attention_forward(q, k, v, mask, 0.7, drop)
        return (out, p, *attention.attention_backward(grad, q, k, v, p, 0.7, drop))

    results, expected = jitted(run), reference(run)
    for a, b in zip(results, expected):
        assert a.dtype == np.dtype(dtype) and np.isfinite(a).all()
        np.testing.assert_allclose(a, b, **tolerance(dtype))
    p = results[1]
    if mask_kind in ("key_padding", "padding_and_causal"):
        assert (p[2] == 0).all() and (results[0][2] == 0).all()  # fully padded batch: zero weights and output
        assert (results[2][2] == 0).all()  # ... and no gradient to its queries
    if mask_kind == "bool":
        assert (p[:, :, 1] == 0).all()
    live = ~(p == 0).all(-1)
    np.testing.assert_allclose(p.sum(-1)[live], 1.0, rtol=1e-5)


@pytest.mark.parametrize("lead", [(), (4,), (2, 3, 2)], ids=["no-batch", "one-batch-dim", "three-batch-dims"])
@pytest.mark.parametrize("keep_probs", [True, False])
def test_any_number_of_leading_dims(kernel, rng, lead, keep_probs) -> None:
    q, k, v = qkv(rng, "float64", lead)
    mask = np.where(rng.random((L, S)) < 0.3, -np.inf, 0.0)
    grad = rng.standard_normal(lead + (L, 3))

    def run():
        out, p = attention.attention_forward(q, k, v, mask, 0.5, None, keep_probs=keep_probs)
        assert (p is None) == (not keep_probs)
        if p is None:
            return (out,)
        return (out, p, *attention.attention_backward(grad, q, k, v, p, 0.5, None))

    for a, b in zip(jitted(run), reference(run), strict=True):
        np.testing.assert_allclose(a, b, **tolerance("float64"))


MASK_SHAPES = [(2, 1, 3, L, S), (1, 2, 1, 1, S), (2, 2, 3, L, S), (L, 1), (3, 1, S), "broadcast view"]


@pytest.mark.parametrize("mask_shape", MASK_SHAPES, ids=str)
def test_masks_broadcast_over_any_dims(kernel, rng, mask_shape) -> None:
    """Masks that broadcast over some of three leading dims, over the keys, or arrive as a
    zero-stride view: the kernels read one compact copy (``_mask_4d``) and broadcast by index."""
    lead = (2, 2, 3)
    q, k, v = qkv(rng, "float64", lead)
    if mask_shape == "broadcast view":
        mask = np.broadcast_to(np.where(rng.random((2, 1, 1, 1, S)) < 0.3, -np.inf, 0.0), lead + (L, S))
    else:
        mask = np.where(rng.random(mask_shape) < 0.3, -np.inf, rng.standard_normal(mask_shape))
    grad = rng.standard_normal(lead + (L, 3))

    def run():
        out, p = attention.attention_forward(q, k, v, mask, 0.5, None)
        return (out, p, *attention.attention_backward(grad, q, k, v, p, 0.5, None))

    expected = reference(run)
    for a, b in zip(jitted(run), expected, strict=True):
        np.testing.assert_allclose(a, b, **tolerance("float64"))
    scores = 0.5 * np.einsum("...ld,...sd->...ls", q, k) + mask
    top = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0))
    total = e.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(expected[1], e / np.where(total > 0, total, 1), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kernel", ["parallel"], indirect=True)
def test_broadcast_heads_and_a_strided_out(kernel, rng) -> None:
    """k and v shared by all heads (broadcast), and ``out`` a strided view with three batch dims,
    which the fused kernel cannot write in place: the result is copied into it."""
    q = rng.standard_normal((2, 3, 2, L, 4)).astype(np.float32)
    k = rng.standard_normal((2, 1, 1, S, 4)).astype(np.float32)
    v = rng.standard_normal((1, 3, 1, S, 3)).astype(np.float32)
    out = np.zeros((2, 3, 2, L, 6), np.float32)[..., ::2]

    def run():
        out[...] = 0
        attention.attention_forward(q, k, v, None, 0.5, None, out=out)
        return out.copy()

    np.testing.assert_allclose(jitted(run), reference(run), **tolerance("float32"))


@pytest.mark.parametrize("kernel", ["parallel"], indirect=True)
def test_blas_threads_set_lower_from_outside(kernel, rng, two_blas_threads) -> None:
    """BLAS's thread count set below minitensor's from outside (as threadpoolctl does): the threaded
    passes split the heads over BLAS's count, not more (more rows would be an error)."""
    if not blas_threads.available():
        pytest.skip("NumPy's BLAS is not OpenBLAS on pthreads here")
    q, k, v = qkv(rng, "float32")
    expected = jitted(lambda: attention.attention_forward(q, k, v, None, 0.5, None))
    functions = blas.thread_functions()
    functions["set"](1)
    try:
        got = jitted(lambda: attention.attention_forward(q, k, v, None, 0.5, None))
    finally:
        functions["set"](2)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, **tolerance("float32"))


@pytest.mark.parametrize("lengths", [(0, S), (L, 0), (0, 0)], ids=["no-queries", "no-keys", "neither"])
def test_empty_queries_or_keys(kernel, rng, lengths) -> None:
    """L = 0 or S = 0, as PyTorch: an empty output, or for queries without keys an output of zeros
    (softmax over no keys is empty); the gradients are zeros of the inputs' shapes, on both paths."""
    l, s = lengths
    q = rng.standard_normal((N, H, l, 4))
    k, v = rng.standard_normal((N, H, s, 4)), rng.standard_normal((N, H, s, 3))
    mask = np.zeros((l, s))

    def run():
        out, p = attention.attention_forward(q, k, v, mask, 0.5, None)
        return (out, *attention.attention_backward(rng.standard_normal(out.shape), q, k, v, p, 0.5, None))

    for results in (jitted(run), reference(run)):
        for got, want_shape in zip(results, [(N, H, l, 3), q.shape, k.shape, v.shape]):
            assert got.shape == want_shape
            np.testing.assert_array_equal(got, np.zeros(want_shape))


def test_the_fused_kernels_run(kernel, rng, monkeypatch) -> None:
    """On this machine numba can call NumPy's BLAS, and the comparisons above really run the fused
    kernels (forward and backward) of the fixture's kind."""
    assert blas.available(), "numba cannot call NumPy's BLAS here: the fused attention kernels never run"
    ran = []
    kind = "_threaded" if kernel == "parallel" else "_serial"
    names = ["_forward" + kind, "_backward" + kind]
    for name in names:
        kernel_fn = getattr(attention, name)
        monkeypatch.setattr(attention, name, lambda *args, f=kernel_fn, n=name: (ran.append(n), f(*args))[1])
    q, k, v = qkv(rng, "float32")
    out, p = attention.attention_forward(q, k, v, None, 0.5, None)
    attention.attention_backward(np.ones_like(out), q, k, v, p, 0.5, None)
    assert ran == names


@pytest.mark.parametrize("kernel", ["parallel"], indirect=True)
def test_without_blas_for_numba_the_unfused_path_runs(kernel, rng, monkeypatch) -> None:
    """Where no BLAS is found for numba, attention takes NumPy's products and the row kernels."""
    monkeypatch.setitem(blas._state, "found", [None])
    for name in ("_forward_heads", "_backward_heads", "_forward_heads_parallel", "_backward_heads_parallel"):
        monkeypatch.setattr(attention, name, None)  # (calling one would fail)
    q, k, v = qkv(rng, "float32")
    mask = make_mask(rng, "padding_and_causal", "float32")
    grad = rng.standard_normal((N, H, L, 3)).astype(np.float32)

    def run():
        out, p = attention.attention_forward(q, k, v, mask, 0.7, None)
        return (out, p, *attention.attention_backward(grad, q, k, v, p, 0.7, None))

    for a, b in zip(jitted(run), reference(run), strict=True):
        np.testing.assert_allclose(a, b, **tolerance("float32"))


def test_many_small_heads_take_the_unfused_pass(rng, monkeypatch) -> None:
    """``MANY_HEADS`` or more heads whose products take at most ``SMALL_HEAD_MACS`` multiply-adds (the
    demo's 256 of 8 x 8 x 8, 32 of 16 x 16 x 16) take NumPy's stacked products, where a BLAS call a head
    would cost more; fewer small heads, and larger ones (the course's 32 x 32 x 16), the fused kernels.
    The small heads' results equal the reference's."""
    monkeypatch.setattr(attention, "SMALL_HEAD_MACS", SMALL_HEAD_MACS)
    cases = [((64, 4, 8, 8), True), ((16, 2, 16, 16), True), ((4, 4, 8, 8), False), ((32, 4, 32, 16), False)]
    for (n, h, length, d), small in cases:
        q = np.empty((n, h, length, d), np.float32)
        run = attention._implementation(q, q, (n, h, length, length), "unfused", "serial", "threaded")
        assert (run == "unfused") == small
    q, k, v = (rng.standard_normal((8, 4, 8, 8)).astype(np.float32) for _ in range(3))
    grad = rng.standard_normal(q.shape).astype(np.float32)

    def run():
        out, p = attention.attention_forward(q, k, v, None, 0.35, None)
        return (out, p, *attention.attention_backward(grad, q, k, v, p, 0.35, None))

    for a, b in zip(jitted(run), reference(run), strict=True):
        np.testing.assert_allclose(a, b, **tolerance("float32"))


@pytest.mark.parametrize("on_blas_threads", [True, False])
def test_when_the_heads_are_offered_to_threads(monkeypatch, on_blas_threads) -> None:
    """Outside the tests' fixture, the threaded pass is offered to ``choose`` (which weighs the work
    against a launch): on BLAS's threads always, with work to share only for heads whose products
    outweigh their fixed costs (not the demo's 8 x 8 x 8 heads; the GPT-sized, medium and large
    layers' heads); on numba's only for a pass whose estimated serial time reaches
    ``BLAS_SPIN_SECONDS``: the large layer's."""
    monkeypatch.setattr(attention, "BLAS_SPIN_SECONDS", 0.1)
    if not on_blas_threads:
        monkeypatch.setattr(blas_threads, "_state", {"searched": True, "run": None})
    elif not blas_threads.available():
        pytest.skip("NumPy's BLAS is not OpenBLAS on pthreads here")
    offered = []

    def choose(x, unfused, serial, parallel, ns, launch=None):
        offered.append((parallel, launch, ns > 0))
        return serial

    monkeypatch.setattr(attention, "choose", choose)
    shapes = {"demo": (64, 4, 8, 8), "GPT": (16, 4, 64, 32), "medium": (16, 8, 128, 32), "large": (8, 8, 512, 64)}
    for n, h, length, d in shapes.values():
        q = np.empty((n, h, length, d), np.float32)
        attention._implementation(q, q, (n, h, length, length), "unfused", "serial", "threaded")
    if on_blas_threads:
        launch = blas_threads.LAUNCH_SECONDS
        assert offered == [("threaded", launch, False)] + [("threaded", launch, True)] * 3  # (demo: nothing to share)
    else:
        assert offered == [(None, None, True)] * 3 + [("threaded", None, True)]


@pytest.mark.parametrize("kernel", ["parallel"], indirect=True)
@pytest.mark.parametrize("mask_kind", ["none", "padding_and_causal", "per_head"])
def test_numba_threads_where_blas_threads_are_missing(kernel, rng, monkeypatch, mask_kind) -> None:
    """Where NumPy's BLAS is not OpenBLAS on pthreads, the threaded passes run numba's ``_parallel``
    kernels, with the same results (float32: they loop over the serial bodies, tested in both dtypes;
    ``kernel_paths.SPLITS``)."""
    dtype = "float32"
    monkeypatch.setattr(blas_threads, "_state", {"searched": True, "run": None})
    ran = []
    for name in ("_forward_heads_parallel", "_backward_heads_parallel"):
        kernel_fn = getattr(attention, name)
        monkeypatch.setattr(attention, name, lambda *args, f=kernel_fn, n=name: (ran.append(n), f(*args))[1])
    q, k, v = qkv(rng, dtype)
    mask = make_mask(rng, mask_kind, dtype)
    drop = ((rng.random((N, H, L, S)) > 0.25) / 0.75).astype(dtype)
    grad = rng.standard_normal((N, H, L, 3)).astype(dtype)

    def run():
        out, p = attention.attention_forward(q, k, v, mask, 0.7, drop)
        return (out, p, *attention.attention_backward(grad, q, k, v, p, 0.7, drop))

    for a, b in zip(jitted(run), reference(run), strict=True):
        np.testing.assert_allclose(a, b, **tolerance(dtype))
    assert ran == ["_forward_heads_parallel", "_backward_heads_parallel"]


@pytest.mark.parametrize("kernel", ["parallel"], indirect=True)
def test_threaded_passes_run_on_blas_threads(kernel, rng, monkeypatch, two_blas_threads) -> None:
    """With OpenBLAS on pthreads (NumPy's wheels), the threaded passes run their tasks through
    ``blas_threads.run``, one record row per thread, covering every head once; a strided dropout
    array (which the tasks would misread) goes to numba's kernels."""
    if not blas_threads.available():
        pytest.skip("NumPy's BLAS is not OpenBLAS on pthreads here")
    rows = []
    real_run = blas_threads.run
    monkeypatch.setattr(
        blas_threads, "run", lambda task, r, **kw: (rows.append(r[:, :2].tolist()), real_run(task, r, **kw))[1]
    )
    q, k, v = qkv(rng, "float32")
    out, p = jitted(lambda: attention.attention_forward(q, k, v, None, 0.5, None))
    jitted(lambda: attention.attention_backward(np.ones_like(out), q, k, v, p, 0.5, None))
    assert rows == [[[0, N * H // 2], [N * H // 2, N * H]]] * 2
    drop = np.repeat(((rng.random((N, H, L, S)) > 0.25) / 0.75).astype(np.float32), 2, axis=-1)[..., ::2]
    forward = [jitted(lambda d=d: attention.attention_forward(q, k, v, None, 0.5, d)) for d in (drop, drop.copy())]
    strided, contiguous = forward
    assert len(rows) == 3  # (only the contiguous one on BLAS's threads)
    for a, b in zip(strided, contiguous, strict=True):
        np.testing.assert_array_equal(a, b)


def test_probabilities_match_float64_math(kernel, rng) -> None:
    q, k, _ = qkv(rng, "float32", length=64)
    mask = make_mask(rng, "key_padding", "float32")
    p = jitted(lambda: attention_softmax.attention_probs(q, k, mask, 0.3))
    s = 0.3 * np.einsum("nhld,nhsd->nhls", q.astype(np.float64), k.astype(np.float64)) + mask
    with np.errstate(invalid="ignore"):  # (-inf - -inf in the fully padded rows)
        e = np.exp(s - s.max(-1, keepdims=True), where=np.isfinite(s), out=np.zeros_like(s))
        exact = np.nan_to_num(e / e.sum(-1, keepdims=True))
    np.testing.assert_allclose(p, exact, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kernel", ["serial", "parallel"], indirect=True)
@pytest.mark.parametrize("mask_kind", MASKS)
def test_attention_op_gradcheck_on_the_jit_path(kernel, rng, mask_kind) -> None:
    q, k, v = (mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in qkv(rng, "float64", (2, 1), length=3))
    mask = make_mask(rng, mask_kind, "float64")
    if mask is not None:  # (N, H, L, S) masks for N=3, H=2: keep the part for N=2, H=1, L=3
        mask = np.broadcast_to(mask, (N, H, L, S))[:2, :1, :3]
    drop = (rng.random((2, 1, 3, S)) > 0.3) / 0.7

    def fn(q, k, v):
        return Attention.apply(q, k, v, mask=mask, scale=0.6, dropout_mask=drop)

    assert jitted(lambda: gradcheck(fn, [q, k, v]))


def _self_attention_weights(rng, e: int, dtype=mt.float64) -> list:
    shapes = ((3 * e, e), (3 * e,), (e, e), (e,))
    return [mt.tensor(rng.standard_normal(s) * 0.5, dtype=dtype, requires_grad=True) for s in shapes]


@pytest.mark.parametrize("kernel", ["serial", "parallel"], indirect=True)
@pytest.mark.parametrize("batch_first", [False, True])
def test_fused_self_attention_gradcheck_on_the_jit_path(kernel, rng, batch_first) -> None:
    """The heads' kernels (heads_forward / heads_backward) inside the fused SelfAttention node."""
    x = mt.tensor(rng.standard_normal((2, 3, 4) if batch_first else (3, 2, 4)), dtype=mt.float64, requires_grad=True)
    mask = np.zeros((2, 1, 1, 3))
    mask[1, ..., 2] = -np.inf
    drop = (rng.random((2, 2, 3, 3)) > 0.3) / 0.7
    kwargs = {"heads": 2, "batch_first": batch_first, "mask": mask, "scale": 0.7, "dropout_mask": drop}
    weights = _self_attention_weights(rng, 4)
    assert jitted(lambda: gradcheck(lambda *xs: SelfAttention.apply(*xs, **kwargs), [x, *weights]))


@pytest.mark.parametrize("kernel", ["serial", "parallel"], indirect=True)
@pytest.mark.parametrize("parts", [1, 2])
def test_heads_attention_on_strided_projections_as_on_contiguous_ones(kernel, rng, parts) -> None:
    """C-contiguous projections go to the kernels as they are (``heads_forward``); others (views of
    transposed arrays, whose heads BLAS could not read in place) through ``attention_forward``,
    which copies them: the same outputs and weights."""
    widths = (3 * 8,) if parts == 1 else (8, 2 * 8)  # (N, L, width) per projection, E = 8, 2 heads
    arrays = [rng.standard_normal((5, 2, w)).astype(np.float32).transpose(1, 0, 2) for w in widths]

    def run(projections):
        return heads_attention(projections, 2, True, None, 0.5, None, True)

    assert not any(a.flags.c_contiguous for a in arrays)
    strided = jitted(lambda: run(arrays))
    contiguous = jitted(lambda: run([np.ascontiguousarray(a) for a in arrays]))
    for a, b in zip(strided, contiguous, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kernel", ["serial", "parallel"], indirect=True)
def test_fused_self_attention_dropout_mask_broadcasts(kernel, rng) -> None:
    """A dropout mask of shape (L, S) acts as its broadcast to (N, H, L, S), forward and backward."""
    x0 = rng.standard_normal((2, 3, 4))  # (N, L, E), E = 4, 2 heads
    drop = (rng.random((3, 3)) > 0.3) / 0.7
    grad = rng.standard_normal((2, 3, 4))
    weights = _self_attention_weights(rng, 4)

    def run(mask):
        x = mt.tensor(x0, dtype=mt.float64, requires_grad=True)
        out = SelfAttention.apply(x, *weights, heads=2, batch_first=True, scale=0.7, dropout_mask=mask)
        out.backward(grad)
        return out.numpy(), x.grad.numpy()

    small = jitted(lambda: run(drop))
    full = jitted(lambda: run(np.broadcast_to(drop, (2, 2, 3, 3)).copy()))
    for a, b in zip(small, full, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_attention_layer_same_on_both_paths(kernel, rng, need_weights) -> None:
    mt.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    x = rng.standard_normal((3, 9, 16)).astype(np.float32)
    pad = np.zeros((3, 9), bool)
    pad[1, 6:] = True

    def run():
        mha.zero_grad()
        inp = mt.tensor(x, requires_grad=True)
        out, _ = mha(inp, inp, inp, key_padding_mask=mt.tensor(pad), need_weights=need_weights, is_causal=False)
        out.backward(mt.ones(out.shape))
        return [out.numpy(), inp.grad.numpy()] + [p.grad.numpy() for p in mha.parameters()]

    for a, b in zip(jitted(run), reference(run)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("scale", [-0.8, 0.0, 2.5])
def test_any_scale(kernel, rng, scale) -> None:
    """A positive scale rides on the softmax's shift; zero or negative ones scale the scores first."""
    q, k, v = qkv(rng, "float32")
    results = jitted(lambda: attention.attention_forward(q, k, v, None, scale, None))
    expected = reference(lambda: attention.attention_forward(q, k, v, None, scale, None))
    for a, b in zip(results, expected):
        np.testing.assert_allclose(a, b, **tolerance("float32"))
