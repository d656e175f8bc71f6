"""The Tensor API: attributes, conversions, in-place helpers, operators, and
the errors bad input raises."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import f64

import minitensor as mt


# -------------------------------------------------------------- attributes
def test_attributes():
    x = mt.zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and isinstance(x.shape, tuple)
    assert x.ndim == 3 and x.dim() == 3
    assert x.dtype == mt.float32
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert x.numel() == 24 and len(x) == 2
    assert not x.requires_grad and x.grad is None and x.is_leaf and x.grad_fn is None


@pytest.mark.parametrize(
    "fn, name",
    [
        (lambda a, b: a @ b, "MatmulBackward"),
        (lambda a, b: a + b, "AddBackward"),
        (lambda a, b: a * b, "MulBackward"),
        (lambda a, b: a - b, "SubBackward"),
        (lambda a, b: a / b, "DivBackward"),
        (lambda a, b: a.sum(), "SumBackward"),
        (lambda a, b: a.exp(), "ExpBackward"),
        (lambda a, b: a.T, "PermuteBackward"),
        (lambda a, b: a.reshape(4), "ReshapeBackward"),
        (lambda a, b: a[0], "IndexBackward"),
        (lambda a, b: mt.cat([a, b]), "CatBackward"),
        (lambda a, b: a.softmax(-1), "SoftmaxBackward"),
    ],
)
def test_grad_fn_class_names(fn, name):
    a, b = mt.ones(2, 2, requires_grad=True), mt.ones(2, 2)
    out = fn(a, b)
    assert type(out.grad_fn).__name__ == name
    assert out.requires_grad and not out.is_leaf
    assert name in repr(out)


def test_numpy_is_not_a_copy_and_not_in_the_graph():
    x = mt.ones(2, 2, requires_grad=True)
    arr = x.numpy()
    assert arr is x.numpy() and isinstance(arr, np.ndarray)
    arr[0, 0] = 5.0
    assert x[0, 0].item() == 5.0


def test_item_tolist_float_int_bool():
    assert mt.tensor([[3.5]]).item() == 3.5 and isinstance(mt.tensor(2.0).item(), float)
    assert mt.tensor([1, 2]).tolist() == [1, 2]
    assert mt.tensor([[1.0], [2.0]]).tolist() == [[1.0], [2.0]]
    assert float(mt.tensor(1.5)) == 1.5 and int(mt.tensor([7])) == 7
    assert bool(mt.tensor([1.0])) and not bool(mt.tensor(0.0))


def test_item_of_many_elements_raises():
    with pytest.raises(ValueError, match="1 element"):
        mt.tensor([1.0, 2.0]).item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(mt.tensor([1.0, 2.0]))


def test_detach_shares_data_and_leaves_the_graph():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert d.numpy() is y.numpy()


def test_requires_grad_():
    x = mt.tensor([1.0, 2.0])
    assert x.requires_grad_() is x and x.requires_grad
    x.requires_grad_(False)
    assert not x.requires_grad
    x.requires_grad = True
    assert x.requires_grad
    y = x * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)


def test_len_iter_repr():
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    rows = list(x)
    assert len(rows) == 2 and rows[1].tolist() == [3.0, 4.0]
    assert "requires_grad=True" in repr(x) and "tensor(" in repr(x)
    assert "dtype=float64" in repr(mt.zeros(1, dtype=mt.float64))
    with pytest.raises(TypeError):
        len(mt.tensor(1.0))


def test_iteration_gives_views_along_dim_0_as_pytorch():
    """``for row in x`` yields views (an in-place change of a row changes x) that carry gradients
    back, as PyTorch's ``iter(x.unbind(0))``; a 0-d tensor cannot be iterated."""
    x = mt.arange(6).reshape(3, 2)
    for row in x:
        row += 10
    assert x.tolist() == [[10, 11], [12, 13], [14, 15]]
    w = mt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    total = sum((row * mt.tensor([1.0, -1.0]) * (i + 1)).sum() for i, row in enumerate(w))
    total.backward()
    assert w.grad.tolist() == [[1.0, -1.0], [2.0, -2.0]]
    assert list(mt.zeros(0, 3)) == []
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(mt.tensor(1.0))


def test_tensors_are_hashable_by_identity():
    a, b = mt.tensor([1.0]), mt.tensor([1.0])
    assert len({a, b}) == 2 and {a: 1}[a] == 1


# ------------------------------------------------------------ in place
@pytest.mark.parametrize(
    "op",
    [
        lambda t: t.zero_(),
        lambda t: t.fill_(2.0),
        lambda t: t.copy_(mt.ones(2)),
        lambda t: t.normal_(),
        lambda t: t.uniform_(),
        lambda t: t.__setitem__(0, 5.0),
        lambda t: t.__iadd__(1.0),
        lambda t: t.__isub__(1.0),
        lambda t: t.__imul__(2.0),
        lambda t: t.__itruediv__(2.0),
    ],
)
def test_in_place_on_a_leaf_requiring_grad_raises_outside_no_grad(op):
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="no_grad"):
        op(x)
    assert x.tolist() == [1.0, 2.0]
    with mt.no_grad():
        op(x)  # allowed inside no_grad
    assert x.tolist() != [1.0, 2.0]
    assert x.requires_grad and x.is_leaf and x.grad_fn is None


def test_in_place_updates_under_no_grad_like_an_optimizer_step():
    w = mt.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    data = w.numpy()
    with mt.no_grad():
        w -= 0.5 * w.grad
    assert w.numpy() is data  # really in place
    assert w.tolist() == [0.0, 0.0]
    w.grad.zero_()
    assert w.grad.tolist() == [0.0, 0.0]


def test_in_place_on_plain_tensor():
    x = mt.tensor([1.0, 2.0])
    same = x
    x += mt.tensor([1.0, 1.0])
    x *= 2
    assert x is same and x.tolist() == [4.0, 6.0]
    x[1] = 0.0
    x.fill_(3.0)
    assert x.tolist() == [3.0, 3.0]


def test_augmented_assignment_on_a_non_leaf_records_a_new_node():
    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    y = x * 2
    y += x
    y *= x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.numpy())


# ---------------------------------------------------------- operators
def test_comparisons_return_bool_tensors_without_grad():
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = mt.tensor([3.0, 2.0, 1.0])
    cases = {
        "<": (x < y, [True, False, False]),
        "<=": (x <= 2, [True, True, False]),
        ">": (x > y, [False, False, True]),
        ">=": (x >= 2.0, [False, True, True]),
        "==": (x == y, [False, True, False]),
        "!=": (x != 2, [True, False, True]),
        "reflected <": (2 < x, [False, False, True]),
        "array ==": (np.array([1.0, 0.0, 3.0]) == x, [True, False, True]),
    }
    for name, (out, expected) in cases.items():
        assert isinstance(out, mt.Tensor), name
        assert out.dtype == mt.bool and not out.requires_grad and out.grad_fn is None, name
        assert out.tolist() == expected, name
    assert (x.reshape(3, 1) < y).shape == (3, 3)


C = np.array([3.0, 4.0])
REFLECTED = {
    "2 + x": (lambda x: 2 + x, lambda a: 2 + a, lambda a: np.ones_like(a)),
    "2 - x": (lambda x: 2 - x, lambda a: 2 - a, lambda a: -np.ones_like(a)),
    "2 * x": (lambda x: 2 * x, lambda a: 2 * a, lambda a: 2 * np.ones_like(a)),
    "2 / x": (lambda x: 2 / x, lambda a: 2 / a, lambda a: -2 / a**2),
    "2 ** x": (lambda x: 2**x, lambda a: 2**a, lambda a: np.log(2) * 2**a),
    "array + x": (lambda x: np.array([1.0, 2.0]) + x, lambda a: [1.0, 2.0] + a, lambda a: np.ones_like(a)),
    "array - x": (lambda x: np.array([1.0, 2.0]) - x, lambda a: [1.0, 2.0] - a, lambda a: -np.ones_like(a)),
    "array * x": (lambda x: C * x, lambda a: C * a, lambda a: C),
    "array / x": (lambda x: C / x, lambda a: C / a, lambda a: -C / a**2),
    "array ** x": (lambda x: C**x, lambda a: C**a, lambda a: np.log(C) * C**a),
    "array @ x": (lambda x: C[None] @ x, lambda a: C[None] @ a, lambda a: C),
    "np scalar * x": (lambda x: np.float32(2.0) * x, lambda a: 2 * a, lambda a: 2 * np.ones_like(a)),
    "list + x": (lambda x: x + [1.0, 2.0], lambda a: a + [1.0, 2.0], lambda a: np.ones_like(a)),
    "-x": (lambda x: -x, lambda a: -a, lambda a: -np.ones_like(a)),
    "+x": (lambda x: +x, lambda a: a, lambda a: np.ones_like(a)),
}


@pytest.mark.parametrize("name", sorted(REFLECTED))
def test_reflected_operators_with_scalars_and_arrays_on_the_left(name):
    fn, value, grad = REFLECTED[name]
    x = f64([0.5, 1.5])
    out = fn(x)
    assert isinstance(out, mt.Tensor)
    np.testing.assert_allclose(out.numpy(), value(x.numpy()), rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), grad(x.numpy()), rtol=1e-6)


def test_unsupported_operand_raises_type_error():
    with pytest.raises(TypeError, match="str"):
        mt.ones(2) + "a"
    with pytest.raises(TypeError):
        mt.ones(2) * {1: 2}


def test_function_forms_match_methods():
    x = mt.tensor([[0.5, 1.5], [2.0, 0.1]])
    for name in ["exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu"]:
        np.testing.assert_array_equal(getattr(mt, name)(x).numpy(), getattr(x, name)().numpy())
    np.testing.assert_array_equal(mt.clamp(x, max=1.0).numpy(), x.clamp(max=1.0).numpy())
    with pytest.raises(TypeError, match="Tensor"):
        mt.exp(np.ones(2))


# ------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda: mt.zeros(2, 3) + mt.zeros(4), ["(2, 3)", "(4,)"]),
        (lambda: mt.zeros(2, 3) - mt.zeros(3, 2), ["(2, 3)", "(3, 2)"]),
        (lambda: mt.zeros(2, 3) * mt.zeros(2, 2), ["(2, 3)", "(2, 2)"]),
        (lambda: mt.zeros(5) / mt.zeros(4), ["(5,)", "(4,)"]),
        (lambda: mt.zeros(5) ** mt.zeros(4), ["(5,)", "(4,)"]),
        (lambda: mt.zeros(2, 3) @ mt.zeros(2, 3), ["(2, 3)", "(2, 3)"]),
        (lambda: mt.where(mt.zeros(3) > 0, mt.zeros(2), mt.zeros(3)), ["(3,)", "(2,)"]),
        (lambda: mt.cat([mt.zeros(2, 3), mt.zeros(2, 4)]), ["(2, 3)", "(2, 4)"]),
        (lambda: mt.stack([mt.zeros(2, 3), mt.zeros(3, 2)]), ["(2, 3)", "(3, 2)"]),
        (lambda: mt.zeros(2, 3).expand(2, 4), ["(2, 3)", "(2, 4)"]),
        (lambda: mt.zeros(2, 3).expand(3), ["(2, 3)", "(3,)"]),
        (lambda: mt.zeros(2, 3).reshape(4, 2), ["(2, 3)", "(4, 2)"]),
        (lambda: mt.zeros(2, 3).masked_fill(mt.zeros(3, 3) > 0, 1.0), ["(3, 3)", "(2, 3)"]),
    ],
)
def test_incompatible_shapes_raise_value_error_naming_both(fn, shapes):
    with pytest.raises(ValueError) as info:
        fn()
    for s in shapes:
        assert s in str(info.value)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.sum(3),
        lambda x: x.mean(-4),
        lambda x: x.var((0, 5)),
        lambda x: x.amax(3),
        lambda x: x.max(3),
        lambda x: x.argmax(-4),
        lambda x: x.logsumexp(7),
        lambda x: x.softmax(3),
        lambda x: x.log_softmax(-4),
        lambda x: x.transpose(0, 3),
        lambda x: x.unsqueeze(4),
        lambda x: x.squeeze(3),
        lambda x: x.flatten(0, 3),
        lambda x: x.permute(0, 1, 3),
        lambda x: x.size(3),
        lambda x: x.chunk(2, 3),
        lambda x: mt.cat([x, x], 3),
        lambda x: mt.stack([x, x], 4),
    ],
)
def test_out_of_range_dims_raise_value_error(fn):
    x = mt.zeros(2, 3, 4)
    with pytest.raises(ValueError, match="dim"):
        fn(x)


def test_other_bad_arguments():
    x = mt.zeros(2, 3)
    with pytest.raises(TypeError, match="dim"):
        x.sum(1.5)
    with pytest.raises(ValueError, match="permutation"):
        x.permute(0, 0)
    with pytest.raises(ValueError, match="start_dim"):
        x.flatten(1, 0)
    with pytest.raises(ValueError, match="min and max"):
        x.clamp()
    with pytest.raises(TypeError, match="bool"):
        x.masked_fill(mt.zeros(2, 3), 1.0)
    with pytest.raises(TypeError, match="bool"):
        mt.where(mt.zeros(2, 3), x, x)
    with pytest.raises(ValueError, match="non-empty"):
        mt.cat([])
    with pytest.raises(TypeError, match="tensors\\[1\\]"):
        mt.stack([x, np.zeros((2, 3))])
    with pytest.raises(ValueError, match="non-empty"):
        mt.zeros(0).max()


def test_expand_minus_one_only_for_existing_dims():
    assert mt.zeros(1, 3).expand(2, -1, -1).shape == (2, 1, 3)
    with pytest.raises(ValueError, match=r"\(-1, 3\)"):
        mt.zeros(3).expand(-1, 3)
    with pytest.raises(ValueError, match="expand"):
        mt.zeros(1, 3).expand(-2, 3)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda x: x.chunk(0), ValueError, "chunks must be positive, got 0"),
        (lambda x: x.chunk(2.0), TypeError, "chunks must be an int"),
        (lambda x: x.split(0), ValueError, "size must be positive, got 0"),
        (lambda x: x.split(-2, 1), ValueError, "size must be positive, got -2"),
        (lambda x: x.split(None), TypeError, "size must be an int"),
    ],
)
def test_chunk_split_bad_sizes(call, error, match):
    with pytest.raises(error, match=match):
        call(mt.zeros(4, 3))


def test_cast_to_int_or_bool_leaves_the_graph():
    x = mt.tensor([1.5, -2.0], requires_grad=True)
    for dtype in (mt.int64, mt.bool):
        y = x.to(dtype)
        assert y.dtype == dtype and not y.requires_grad and y.grad_fn is None
    assert x.long().tolist() == [1, -2]


# ------------------------------------------------------------ PyTorch's tensor semantics (correctness sweep, item 7)
def test_np_asarray_gives_the_numeric_array():
    t = mt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.shape == (2, 2) and a[1, 0] == 3.0
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


def test_T_on_a_tensor_that_is_not_2d_warns_as_pytorch():
    with pytest.warns(UserWarning, match="x.T"):
        assert mt.zeros(3).T.shape == (3,)
    with pytest.warns(UserWarning, match="x.T"):
        assert mt.zeros(2, 3, 4).T.shape == (4, 3, 2)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mt.zeros(2, 3).T.shape == (3, 2)


def test_transpose_of_a_0d_tensor_is_itself():
    t = mt.tensor(1.5, requires_grad=True)
    for dims in ((0, 0), (-1, 0), (0, -1)):
        out = t.transpose(*dims)
        assert out.shape == () and out.item() == 1.5
    t.transpose(0, 0).backward()
    assert t.grad.item() == 1.0
    with pytest.raises(ValueError, match="dim0"):
        t.transpose(1, 0)


def test_data_is_a_tensor_sharing_memory_outside_the_graph():
    p = mt.tensor([1.0, 2.0], requires_grad=True)
    d = p.data
    assert isinstance(d, mt.Tensor) and not d.requires_grad and d.grad_fn is None
    d += 1  # old course code: p.data.add_(...) / p.data -= lr * p.grad.data
    np.testing.assert_array_equal(p.numpy(), [2.0, 3.0])
    assert p.is_leaf and p.requires_grad
