"""Numerical edge cases, forward and backward, on both kernel paths (numba and the NumPy references).

SPEC: the library never produces NaN from finite inputs.  Checked here for
extreme logits (±1e4, float32 values near 3e38, exp of 88), -inf entries,
constant rows in layer norm and fully masked attention rows; and empty
tensors (size-0 dims) through elementwise ops and reductions, where minitensor
follows NumPy and PyTorch:

- ``sum`` over no elements is 0; ``mean`` (and ``var``/``std``) over no
  elements is NaN, silently as in PyTorch (NumPy warns "Mean of empty slice");
- ``logsumexp`` over no elements is -inf (log 0), as PyTorch;
- ``max``/``min``/``amax``/``amin`` over a size-0 dim raise ValueError;
- ``softmax`` along a size-0 dim is an empty tensor.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")  # overflow/invalid warnings are failures here


@pytest.fixture(params=["jit", "numpy"], autouse=True)
def kernel_path(request):
    """Run every test once with the numba kernels and once with their NumPy references."""
    previous = mt.jit_enabled()
    mt.set_jit_enabled(request.param == "jit")
    yield request.param
    mt.set_jit_enabled(previous)


def run(fn, *arrays, seed: int = 0):
    """fn on float32 leaves made from ``arrays``; backward with a random weighting of the output
    (1 for a 0-d output); returns (output, grads) as arrays."""
    leaves = [mt.tensor(np.asarray(a, np.float32), requires_grad=True) for a in arrays]
    out = fn(*leaves)
    weights = np.random.default_rng(seed).standard_normal(out.shape).astype(np.float32) if out.ndim else 1.0
    out.backward(mt.tensor(weights))
    return out.numpy(), [t.grad.numpy() for t in leaves]


def assert_finite(*arrays) -> None:
    for a in arrays:
        assert np.isfinite(a).all(), f"non-finite values: {a}"


def softmax64(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """A float64 reference (shifted by the max of the finite values)."""
    x = np.asarray(x, np.float64)
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


BIG = np.array([[1e4, -1e4, 0.0, 5e3], [-1e4, -1e4, -1e4, -1e4], [1e4, 1e4, -1e4, 1e4]], np.float32)
NEAR_MAX = np.array([[3e38, 1e38, 0.0], [3e38, 3e38, 3e38], [-3e38, -3e38, -1e38]], np.float32)
WITH_NEG_INF = np.array([[-np.inf, 1.0, 2.0, -np.inf], [0.0, -np.inf, -np.inf, -np.inf]], np.float32)


# ------------------------------------------------------------------ softmax family
@pytest.mark.parametrize("logits", [BIG, NEAR_MAX], ids=["1e4", "3e38"])
def test_softmax_of_extreme_finite_logits(logits) -> None:
    out, (grad,) = run(lambda x: x.softmax(-1), logits)
    assert_finite(out, grad)
    np.testing.assert_allclose(out, softmax64(logits), atol=1e-6)


@pytest.mark.parametrize("logits", [BIG, NEAR_MAX], ids=["1e4", "3e38"])
def test_log_softmax_of_extreme_finite_logits(logits) -> None:
    out, (grad,) = run(lambda x: x.log_softmax(-1), logits)
    assert_finite(out, grad)
    x = logits.astype(np.float64)
    m = x.max(-1, keepdims=True)
    expected = x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-3)


@pytest.mark.parametrize("logits", [BIG, NEAR_MAX], ids=["1e4", "3e38"])
def test_logsumexp_of_extreme_finite_logits(logits) -> None:
    out, (grad,) = run(lambda x: x.logsumexp(-1), logits)
    assert_finite(out, grad)
    x = logits.astype(np.float64)
    m = x.max(-1)
    np.testing.assert_allclose(out, m + np.log(np.exp(x - m[:, None]).sum(-1)), rtol=1e-6)


@pytest.mark.parametrize("logits", [BIG, NEAR_MAX], ids=["1e4", "3e38"])
def test_cross_entropy_of_extreme_finite_logits(logits) -> None:
    target = mt.tensor([0, 1, 2])
    out, (grad,) = run(lambda x: F.cross_entropy(x, target), logits)
    assert_finite(out, grad)
    p = softmax64(logits)
    onehot = np.eye(logits.shape[1])[[0, 1, 2]]
    np.testing.assert_allclose(grad, (p - onehot) / 3, atol=1e-6)  # d mean(CE) / d logits = (p - onehot) / N


def test_softmax_with_minus_inf_entries() -> None:
    out, (grad,) = run(lambda x: x.softmax(-1), WITH_NEG_INF)
    assert_finite(out, grad)
    assert (out[np.isneginf(WITH_NEG_INF)] == 0).all()
    assert (grad[np.isneginf(WITH_NEG_INF)] == 0).all()
    np.testing.assert_allclose(out.sum(-1), 1.0, rtol=1e-6)


def test_log_softmax_with_minus_inf_entries_is_minus_inf_there_only() -> None:
    out, (grad,) = run(lambda x: x.log_softmax(-1), WITH_NEG_INF)
    assert_finite(grad)
    assert np.array_equal(np.isneginf(out), np.isneginf(WITH_NEG_INF))
    assert not np.isnan(out).any()


def test_logsumexp_with_minus_inf_entries() -> None:
    out, (grad,) = run(lambda x: x.logsumexp(-1), WITH_NEG_INF)
    assert_finite(out, grad)
    np.testing.assert_allclose(out, [np.log(np.exp(1.0) + np.exp(2.0)), 0.0], rtol=1e-6)


def test_logsumexp_of_an_all_minus_inf_row_is_minus_inf_not_nan() -> None:
    out = mt.tensor([[-np.inf, -np.inf], [0.0, 1.0]]).logsumexp(-1).numpy()
    assert out[0] == -np.inf and np.isfinite(out[1])


def test_cross_entropy_with_minus_inf_logits_on_other_classes() -> None:
    target = mt.tensor([2, 0])
    out, (grad,) = run(lambda x: F.cross_entropy(x, target), WITH_NEG_INF)
    assert_finite(out, grad)


def test_cross_entropy_whose_target_logit_is_minus_inf_is_inf_not_nan() -> None:
    loss = F.cross_entropy(mt.tensor(WITH_NEG_INF, requires_grad=True), mt.tensor([0, 0]), reduction="none")
    assert loss.numpy()[0] == np.inf and np.isfinite(loss.numpy()[1])


# ------------------------------------------------------------------ float32 near overflow
def test_exp_of_88_is_finite_and_so_is_its_gradient() -> None:
    out, (grad,) = run(lambda x: x.exp(), np.array([88.0, -88.0, 0.0]))
    assert_finite(out, grad)
    np.testing.assert_allclose(out, np.exp([88.0, -88.0, 0.0]), rtol=1e-6)


@pytest.mark.parametrize("op", ["sigmoid", "tanh", "gelu", "gelu_tanh", "relu", "abs"])
def test_saturating_activations_at_extremes(op) -> None:
    fns = {
        "gelu": lambda x: F.gelu(x),
        "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    }
    fn = fns.get(op, lambda x: getattr(x, op)())
    with warnings.catch_warnings():
        if (
            op == "gelu"
        ):  # exact GELU's backward squares x: NumPy warns of overflow past 1.8e19 (exp(-inf) = 0 is right)
            warnings.simplefilter("ignore", RuntimeWarning)
        out, (grad,) = run(fn, np.array([1e4, -1e4, 88.0, -88.0, 3e38, -3e38, 1.5]))
    assert_finite(out, grad)


def test_logsumexp_of_two_near_max_values_does_not_overflow() -> None:
    out, (grad,) = run(lambda x: x.logsumexp(-1), np.array([[3e38, 3e38]]))
    assert_finite(out, grad)
    assert out[0] == np.float32(3e38)  # log(2) is far below float32 resolution at 3e38
    assert grad[0, 0] == grad[0, 1] != 0  # the two maxima share the gradient


# ------------------------------------------------------------------ layer norm, std
@pytest.mark.parametrize("value", [0.0, 3.0, -7.5, 1e30])
def test_layer_norm_of_a_constant_row(value: float) -> None:
    norm = nn.LayerNorm(4)
    with mt.no_grad():
        norm.bias.copy_(mt.tensor([0.1, 0.2, 0.3, 0.4]))
    x = np.full((2, 4), value, np.float32)
    out, (grad,) = run(norm, x)
    assert_finite(out, grad, norm.weight.grad.numpy(), norm.bias.grad.numpy())
    np.testing.assert_allclose(out, np.tile([0.1, 0.2, 0.3, 0.4], (2, 1)), rtol=1e-6)  # xhat = 0: the bias


def test_layer_norm_of_one_constant_row_leaves_the_others_alone() -> None:
    x = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]], np.float32)
    out, (grad,) = run(lambda t: F.layer_norm(t, (3,)), x)
    assert_finite(out, grad)
    row = x[1].astype(np.float64)
    np.testing.assert_allclose(out[1], (row - row.mean()) / np.sqrt(row.var() + 1e-5), rtol=1e-5)


@pytest.mark.parametrize("reduction", ["std", "var"])
def test_std_and_var_of_a_constant_row(reduction: str) -> None:
    out, (grad,) = run(lambda x: getattr(x, reduction)(-1), np.full((3, 4), 2.5))
    assert_finite(out, grad)
    np.testing.assert_array_equal(out, 0.0)


# ------------------------------------------------------------------ attention, fully masked rows
def test_sdpa_row_with_every_key_masked() -> None:
    allow = np.ones((3, 5), bool)
    allow[1] = False  # query 1 may attend to no key (SDPA's bool mask: True = may attend)
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 4)))
    out, grads = run(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mt.tensor(allow)), q, k, v)
    assert_finite(out, *grads)
    np.testing.assert_array_equal(out[:, 1], 0.0)
    unmasked, _ = run(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), q, k, v)
    np.testing.assert_allclose(out[:, [0, 2]], unmasked[:, [0, 2]], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("mask_kind", ["key_padding_bool", "attn_mask_float"])
def test_mha_rows_with_every_key_masked(need_weights: bool, mask_kind: str) -> None:
    mt.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    with mt.no_grad():
        mha.out_proj.bias.copy_(mt.arange(8, dtype=mt.float32))
    if mask_kind == "key_padding_bool":
        pad = np.zeros((2, 3), bool)
        pad[1] = True  # every key of batch element 1 is padding
        masks = {"key_padding_mask": mt.tensor(pad)}
        dead = (1, slice(None))
    else:
        attn = np.zeros((3, 3), np.float32)
        attn[0] = -np.inf  # query 0 may attend to no key
        masks = {"attn_mask": mt.tensor(attn)}
        dead = (slice(None), 0)

    def fn(x):
        return mha(x, x, x, need_weights=need_weights, **masks)[0]

    out, (grad,) = run(fn, np.random.default_rng(2).standard_normal((2, 3, 8)))
    assert_finite(out, grad, *(p.grad.numpy() for p in mha.parameters()))
    np.testing.assert_allclose(out[dead], np.broadcast_to(np.arange(8.0), out[dead].shape), atol=1e-6)


# ------------------------------------------------------------------ empty tensors
EMPTY = np.zeros((0, 3), np.float32)


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu", "__neg__"])
def test_unary_ops_on_an_empty_tensor(op: str) -> None:
    out, (grad,) = run(lambda x: getattr(x, op)(), EMPTY)
    assert out.shape == grad.shape == (0, 3)


@pytest.mark.parametrize("op", ["__add__", "__sub__", "__mul__", "__truediv__"])
def test_binary_ops_broadcasting_an_empty_tensor(op: str) -> None:
    out, (g_empty, g_row) = run(lambda x, y: getattr(x, op)(y), EMPTY, np.ones(3))
    assert out.shape == g_empty.shape == (0, 3)
    np.testing.assert_array_equal(g_row, 0.0)  # summed over no rows


def test_matmul_with_an_empty_inner_dim_is_zeros() -> None:
    out, (ga, gb) = run(lambda a, b: a @ b, np.zeros((2, 0)), np.zeros((0, 4)))
    np.testing.assert_array_equal(out, np.zeros((2, 4)))
    assert ga.shape == (2, 0) and gb.shape == (0, 4)


def test_sum_over_no_elements_is_zero() -> None:
    out, (grad,) = run(lambda x: x.sum(), EMPTY)
    assert out == 0 and grad.shape == (0, 3)
    out, _ = run(lambda x: x.sum(0), EMPTY)
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0])
    out, _ = run(lambda x: x.sum(1), EMPTY)
    assert out.shape == (0,)


@pytest.mark.parametrize("reduction", ["mean", "var", "std"])
def test_mean_var_std_over_no_elements_are_nan_without_numpys_empty_slice_warning(reduction: str) -> None:
    with warnings.catch_warnings():  # minitensor/_silence.py's filter, as users have it (0/0 is the answer here)
        warnings.filterwarnings("ignore", "(divide by zero|invalid value)", RuntimeWarning, r"minitensor\.")
        out, (grad,) = run(lambda x: getattr(x, reduction)(0), EMPTY)
    assert np.isnan(out).all() and out.shape == (3,)
    assert grad.shape == (0, 3)


def test_mean_along_a_non_empty_dim_of_an_empty_tensor_is_empty() -> None:
    out, (grad,) = run(lambda x: x.mean(1), EMPTY)
    assert out.shape == (0,) and grad.shape == (0, 3)


@pytest.mark.parametrize(
    "reduce",
    [
        lambda x: x.max(),
        lambda x: x.min(),
        lambda x: x.max(dim=0),
        lambda x: x.amax(),
        lambda x: x.amin(dim=0),
        lambda x: mt.amax(x, dim=(0, 1)),
    ],
    ids=["max", "min", "max-dim", "amax", "amin-dim", "amax-tuple"],
)
def test_max_and_min_over_no_elements_raise(reduce) -> None:
    with pytest.raises(ValueError, match=r"\(0, 3\)"):
        reduce(mt.tensor(EMPTY))


def test_max_along_a_non_empty_dim_of_an_empty_tensor_is_empty() -> None:
    out, (grad,) = run(lambda x: x.amax(1), EMPTY)
    assert out.shape == (0,) and grad.shape == (0, 3)


def test_logsumexp_over_no_elements_is_minus_inf() -> None:
    out, (grad,) = run(lambda x: x.logsumexp(0), EMPTY)
    np.testing.assert_array_equal(out, [-np.inf] * 3)
    assert grad.shape == (0, 3)


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_of_an_empty_tensor_is_empty(op: str, dim: int) -> None:
    out, (grad,) = run(lambda x: getattr(x, op)(dim), EMPTY)
    assert out.shape == grad.shape == (0, 3)


def test_layers_on_an_empty_batch() -> None:
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.GELU())
    out, (grad,) = run(model, EMPTY)
    assert out.shape == (0, 4) and grad.shape == (0, 3)
    np.testing.assert_array_equal(model[0].weight.grad.numpy(), 0.0)


def test_cross_entropy_of_an_empty_batch_is_zero_not_nan() -> None:
    out, (grad,) = run(lambda x: F.cross_entropy(x, mt.zeros(0, dtype=mt.int64)), EMPTY)
    assert out == 0 and grad.shape == (0, 3)


# ------------------------------------------------------------------ no NaN from finite inputs (random extremes)
@pytest.mark.parametrize("seed", range(5))
def test_no_nan_from_random_extreme_finite_inputs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((4, 6)) * 10.0 ** rng.integers(-3, 5, size=(4, 6))).astype(np.float32)
    target = mt.tensor(rng.integers(0, 6, size=4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # float32 intermediates may overflow; results must not be NaN
        for fn in (
            lambda t: t.softmax(-1),
            lambda t: t.log_softmax(-1),
            lambda t: t.logsumexp(-1),
            lambda t: F.cross_entropy(t, target),
            lambda t: F.layer_norm(t, (6,)),
            lambda t: t.sigmoid() * t.tanh(),
            lambda t: t.std(-1),
        ):
            out, (grad,) = run(fn, x, seed=seed)
            assert not np.isnan(out).any() and not np.isnan(grad).any()
