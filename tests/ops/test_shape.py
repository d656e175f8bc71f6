"""ops/shape.py and the shape methods (ops/shape_methods.py): gradient checks (float64) of reshape,
permute, expand, indexing, chunk/split, cat, stack, where, masked_fill; expand_as and view_as."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import broadcast_pairs, layouts, leaf, seeds, shapes

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.ops.shape import Index


@st.composite
def reshape_targets(draw, shape: tuple):
    """A shape with the same number of elements (one dim may be -1)."""
    n = int(np.prod(shape, dtype=np.int64))
    target = []
    rest = n
    while rest > 1 and len(target) < 3:
        d = draw(st.sampled_from([k for k in range(1, rest + 1) if rest % k == 0]))
        target.append(d)
        rest //= d
    target.append(rest)
    target = draw(st.permutations(target))
    if draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    return tuple(target)


@given(data=st.data(), shape=shapes(), seed=seeds, layout=layouts)
def test_reshape_view_gradcheck(data, shape, seed, layout):
    target = data.draw(reshape_targets(shape))
    x = leaf(seed, shape, layout)
    out = x.reshape(target)
    np.testing.assert_array_equal(out.numpy(), x.numpy().reshape(target))
    assert x.view(*target).shape == out.shape == mt.reshape(x, target).shape
    assert gradcheck(lambda t: t.reshape(target) * 2.0, x)
    assert gradgradcheck(lambda t: t.reshape(target) * 2.0, x)
    assert gradcheck(lambda t: t.view(*target).exp(), x)
    assert gradgradcheck(lambda t: t.view(*target).exp(), x)


@given(data=st.data(), shape=shapes(min_dims=1, max_dims=4, max_side=3), seed=seeds, layout=layouts)
def test_flatten_gradcheck(data, shape, seed, layout):
    n = len(shape)
    start = data.draw(st.integers(-n, n - 1))
    end = data.draw(st.integers(start % n, n - 1))
    x = leaf(seed, shape, layout)
    out = x.flatten(start, end)
    s, e = start % n, end % n
    assert out.shape == shape[:s] + (int(np.prod(shape[s : e + 1])),) + shape[e + 1 :]
    np.testing.assert_array_equal(out.numpy().ravel(), x.numpy().ravel())
    assert gradcheck(lambda t: t.flatten(start, end), x)
    assert gradgradcheck(lambda t: t.flatten(start, end), x)
    assert mt.flatten(x).shape == (x.numel(),)


@given(shape=shapes(max_dims=4, max_side=2), seed=seeds, layout=layouts, data=st.data())
def test_squeeze_unsqueeze_gradcheck(shape, seed, layout, data):
    x = leaf(seed, shape, layout)
    n = len(shape)
    assert x.squeeze().shape == tuple(s for s in shape if s != 1)
    assert gradcheck(lambda t: t.squeeze(), x)
    assert gradgradcheck(lambda t: t.squeeze(), x)
    if n:
        dim = data.draw(st.integers(-n, n - 1))
        expected = shape if shape[dim] != 1 else shape[: dim % n] + shape[dim % n + 1 :]
        assert x.squeeze(dim).shape == expected == mt.squeeze(x, dim).shape
        assert gradcheck(lambda t: t.squeeze(dim), x)
        assert gradgradcheck(lambda t: t.squeeze(dim), x)
    dim = data.draw(st.integers(-n - 1, n))
    assert x.unsqueeze(dim).shape == np.expand_dims(x.numpy(), dim).shape == mt.unsqueeze(x, dim).shape
    assert gradcheck(lambda t: t.unsqueeze(dim) * 3.0, x)
    assert gradgradcheck(lambda t: t.unsqueeze(dim) * 3.0, x)


@given(shape=shapes(min_dims=1, max_dims=4, max_side=3), seed=seeds, layout=layouts, data=st.data())
def test_permute_transpose_gradcheck(shape, seed, layout, data):
    n = len(shape)
    dims = data.draw(st.permutations(range(n)))
    dims = [d - n if data.draw(st.booleans()) else d for d in dims]
    x = leaf(seed, shape, layout)
    np.testing.assert_array_equal(x.permute(*dims).numpy(), np.transpose(x.numpy(), dims))
    np.testing.assert_array_equal(x.permute(dims).numpy(), mt.permute(x, dims).numpy())
    assert gradcheck(lambda t: t.permute(*dims), x)
    assert gradgradcheck(lambda t: t.permute(*dims), x)
    d0, d1 = data.draw(st.integers(-n, n - 1)), data.draw(st.integers(-n, n - 1))
    np.testing.assert_array_equal(x.transpose(d0, d1).numpy(), np.swapaxes(x.numpy(), d0, d1))
    assert gradcheck(lambda t: mt.transpose(t, d0, d1), x)
    assert gradgradcheck(lambda t: mt.transpose(t, d0, d1), x)


@given(shape=shapes(min_dims=2, max_dims=2), seed=seeds, layout=layouts)
def test_T_gradcheck(shape, seed, layout):
    x = leaf(seed, shape, layout)
    np.testing.assert_array_equal(x.T.numpy(), x.numpy().T)
    assert gradcheck(lambda t: t.T, x)
    assert gradgradcheck(lambda t: t.T, x)
    assert gradcheck(lambda t: t.T @ t, x)
    assert gradgradcheck(lambda t: t.T @ t, x)


@given(pair=broadcast_pairs(), seed=seeds, layout=layouts, data=st.data())
def test_expand_gradcheck(pair, seed, layout, data):
    src, other = pair
    target = np.broadcast_shapes(src, other)
    x = leaf(seed, src, layout)
    lead = len(target) - len(src)
    sizes = tuple(
        -1 if i >= lead and src[i - lead] == s and data.draw(st.booleans()) else s for i, s in enumerate(target)
    )
    out = x.expand(*sizes)
    assert out.shape == target
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(x.numpy(), target))
    assert gradcheck(lambda t: t.expand(sizes), x)
    assert gradgradcheck(lambda t: t.expand(sizes), x)


# ----------------------------------------------------------------- indexing
BASIC_KEYS = [
    1,
    -1,
    slice(None),
    slice(1, None),
    slice(None, None, 2),
    slice(None, None, -1),
    (0, 1),
    (slice(None), 0),
    (None, 1),
    (Ellipsis, 0),
    (0, Ellipsis, None),
    (slice(0, 3), None, slice(None, None, 2)),
    (Ellipsis,),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
@given(seed=seeds, layout=layouts)
def test_getitem_basic_gradcheck(key, seed, layout):
    x = leaf(seed, (4, 3, 2), layout)
    np.testing.assert_array_equal(x[key].numpy(), x.numpy()[key])
    assert gradcheck(lambda t: t[key], x)
    assert gradgradcheck(lambda t: t[key], x)


ADVANCED_KEYS = {
    "repeated ints": lambda: np.array([0, 2, 0, 0, 3]),
    "2-D int array": lambda: np.array([[1, 1], [3, 0]]),
    "list": lambda: [2, 2, 1],
    "negative ints": lambda: np.array([-1, -1, 0]),
    "int tensor": lambda: mt.tensor([3, 3, 1]),
    "ints on dim 1": lambda: (slice(None), np.array([2, 0, 2])),
    "two int arrays": lambda: (np.array([0, 0, 3]), np.array([1, 1, 2])),
    "bool mask": lambda: np.array([True, False, True, True]),
    "bool tensor mask": lambda: mt.tensor([False, True, False, True]),
    "bool mask 2-D": lambda: np.arange(12).reshape(4, 3) % 5 < 2,
    "bool mask of every dim": lambda: np.arange(24).reshape(4, 3, 2) % 3 == 1,
    "mask and slice": lambda: (np.array([True, False, False, True]), slice(1, None)),
}


@pytest.mark.parametrize("name", sorted(ADVANCED_KEYS))
@given(seed=seeds, layout=layouts)
def test_getitem_advanced_gradcheck(name, seed, layout):
    key = ADVANCED_KEYS[name]()
    x = leaf(seed, (4, 3, 2), layout)
    np_key = key.numpy() if isinstance(key, mt.Tensor) else key
    np.testing.assert_array_equal(x[key].numpy(), x.numpy()[np_key])
    assert gradcheck(lambda t: t[key], x)
    assert gradgradcheck(lambda t: t[key], x)


def test_rows_of_a_non_contiguous_array_by_one_int_array_are_numpys_indexing():
    """Index takes such rows with np.take (ops/shape.py): the same values for every form of the key."""
    x = np.arange(24.0).reshape(4, 6).T  # (6, 4), not C-contiguous
    for key in (np.array([5, 0, 5, -1]), (np.array([[1, 2], [2, 1]]),), np.array(3), np.array([], dtype=np.int64)):
        got = Index.run(x, key=key)
        np.testing.assert_array_equal(got, x[key])
        assert got.shape == x[key].shape


def test_getitem_with_an_all_false_mask_selects_nothing():
    x = mt.tensor(np.ones((4, 3)), requires_grad=True)
    out = x[np.zeros(4, bool)]
    assert out.shape == (0, 3)
    (out * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((4, 3)))


def test_getitem_repeated_indices_accumulate():
    x = mt.tensor([1.0, 2.0, 3.0, 4.0], dtype=mt.float64, requires_grad=True)
    x[[0, 2, 0, 0]].backward(mt.tensor([1.0, 10.0, 100.0, 1000.0], dtype=mt.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [1101.0, 0.0, 10.0, 0.0])
    y = mt.tensor(np.zeros((2, 2)), dtype=mt.float64, requires_grad=True)
    y[mt.tensor([1, 1]), mt.tensor([0, 0])].sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [[0.0, 0.0], [2.0, 0.0]])


@given(shape=shapes(min_dims=1), seed=seeds, layout=layouts, data=st.data())
def test_chunk_split_gradcheck(shape, seed, layout, data):
    n = len(shape)
    dim = data.draw(st.integers(-n, n - 1))
    chunks = data.draw(st.integers(1, 4))
    size = data.draw(st.integers(1, 4))
    x = leaf(seed, shape, layout)
    pieces = x.chunk(chunks, dim)
    step = -(-shape[dim] // chunks)  # PyTorch: pieces of ceil(n / chunks), the last may be smaller
    assert [p.shape[dim] for p in pieces] == [min(step, shape[dim] - i) for i in range(0, shape[dim], step)]
    np.testing.assert_array_equal(np.concatenate([p.numpy() for p in pieces], axis=dim), x.numpy())
    assert gradcheck(lambda t: tuple(p * (i + 1.0) for i, p in enumerate(t.chunk(chunks, dim))), x)
    assert gradgradcheck(lambda t: tuple(p * (i + 1.0) for i, p in enumerate(t.chunk(chunks, dim))), x)
    parts = x.split(size, dim)
    assert [p.shape[dim] for p in parts] == [min(size, shape[dim] - i) for i in range(0, shape[dim], size)]
    assert gradcheck(lambda t: tuple(p.exp() for p in t.split(size, dim)), x)
    assert gradgradcheck(lambda t: tuple(p.exp() for p in t.split(size, dim)), x)


def test_chunk_sizes_match_pytorch():
    x = mt.zeros(7, 2)
    assert [p.shape[0] for p in x.chunk(3)] == [3, 3, 1]
    assert [p.shape[0] for p in x.chunk(4)] == [2, 2, 2, 1]
    assert [p.shape[0] for p in x.split(3)] == [3, 3, 1]


@given(shape=shapes(min_dims=1), seed=seeds, data=st.data(), layouts_=st.lists(layouts, min_size=1, max_size=3))
def test_cat_gradcheck(shape, seed, data, layouts_):
    n = len(shape)
    dim = data.draw(st.integers(-n, n - 1))
    ts = []
    for i, layout in enumerate(layouts_):
        s = list(shape)
        s[dim] = data.draw(st.integers(1, 3))
        ts.append(leaf(seed + i, tuple(s), layout))
    out = mt.cat(ts, dim)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([t.numpy() for t in ts], axis=dim))
    assert gradcheck(lambda *a: mt.cat(list(a), dim=dim), ts)
    assert gradgradcheck(lambda *a: mt.cat(list(a), dim=dim), ts)


@given(shape=shapes(), seed=seeds, data=st.data(), layouts_=st.lists(layouts, min_size=1, max_size=3))
def test_stack_gradcheck(shape, seed, data, layouts_):
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    ts = [leaf(seed + i, shape, layout) for i, layout in enumerate(layouts_)]
    out = mt.stack(ts, dim)
    np.testing.assert_array_equal(out.numpy(), np.stack([t.numpy() for t in ts], axis=dim))
    assert gradcheck(lambda *a: mt.stack(a, dim), ts)
    assert gradgradcheck(lambda *a: mt.stack(a, dim), ts)


@given(
    shapes3=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4).map(lambda b: b.input_shapes),
    seed=seeds,
    layout_a=layouts,
    layout_b=layouts,
)
def test_where_gradcheck(shapes3, seed, layout_a, layout_b):
    cond_shape, a_shape, b_shape = shapes3
    cond = np.random.default_rng(seed).random(cond_shape) < 0.5
    a = leaf(seed, a_shape, layout_a)
    b = leaf(seed + 1, b_shape, layout_b)
    out = mt.where(mt.tensor(cond), a, b)
    np.testing.assert_array_equal(out.numpy(), np.where(cond, a.numpy(), b.numpy()))
    assert gradcheck(lambda p, q: mt.where(cond, p, q), (a, b))
    assert gradgradcheck(lambda p, q: mt.where(cond, p, q), (a, b))
    assert gradcheck(lambda p: mt.where(cond, p, 0.5), a)
    assert gradgradcheck(lambda p: mt.where(cond, p, 0.5), a)
    assert gradcheck(lambda q: mt.where(cond, -1.0, q), b)
    assert gradgradcheck(lambda q: mt.where(cond, -1.0, q), b)


@given(pair=broadcast_pairs(), seed=seeds, layout=layouts, value=st.sampled_from([0.0, -1e9, 2.5]))
def test_masked_fill_gradcheck(pair, seed, layout, value):
    x_shape = np.broadcast_shapes(*pair)
    mask_shape = pair[0]
    mask = np.random.default_rng(seed).random(mask_shape) < 0.5
    x = leaf(seed, x_shape, layout)
    out = x.masked_fill(mt.tensor(mask), value)
    np.testing.assert_array_equal(out.numpy(), np.where(mask, value, x.numpy()))
    assert gradcheck(lambda t: t.masked_fill(mask, value), x)
    assert gradgradcheck(lambda t: t.masked_fill(mask, value), x)
    out.backward(mt.ones(x_shape, dtype=mt.float64))
    np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(~mask, x_shape).astype(float))


def test_contiguous_is_the_same_values():
    x = mt.randn(3, 4).T
    np.testing.assert_array_equal(x.contiguous().numpy(), x.numpy())


def test_chunk_and_expand_as_view_as():
    torch = pytest.importorskip("torch")
    X = np.random.default_rng(1).standard_normal((2, 3, 4))
    x = mt.tensor(X)
    assert [c.shape for c in mt.chunk(x, 2, 2)] == [tuple(c.shape) for c in torch.tensor(X).chunk(2, 2)]
    assert x[:, :1].expand_as(x).shape == X.shape
    assert x.view_as(mt.ones(6, 4)).shape == (6, 4)
    assert x.view(-1).shape == (24,) and x.size(-1) == 4 and x.contiguous() is x
    assert x[:1].squeeze(0).shape == (3, 4)
    filled = x.masked_fill(x > 0, mt.tensor(0.0))  # a 0-d tensor value
    np.testing.assert_array_equal(filled.numpy(), np.where(X > 0, 0, X).astype(np.float32))
