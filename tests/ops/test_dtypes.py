"""float32 stays float32: outputs and gradients of every op family, Python
scalars that do not upcast, the default dtype of new tensors."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import engine

# name -> (fn, input shapes); inputs are drawn in [0.1, 1) so log/sqrt/pow are valid
OPS = {
    "add": (lambda a, b: a + b, [(2, 3), (3,)]),
    "sub": (lambda a, b: a - b, [(2, 3), (2, 1)]),
    "mul": (lambda a, b: a * b, [(2, 3), (1, 3)]),
    "div": (lambda a, b: a / b, [(2, 3), (2, 3)]),
    "pow": (lambda a, b: a**b, [(2, 3), (3,)]),
    "neg": (lambda a: -a, [(4,)]),
    "exp": (lambda a: a.exp(), [(4,)]),
    "log": (lambda a: a.log(), [(4,)]),
    "sqrt": (lambda a: a.sqrt(), [(4,)]),
    "abs": (lambda a: a.abs(), [(4,)]),
    "tanh": (lambda a: a.tanh(), [(4,)]),
    "sigmoid": (lambda a: a.sigmoid(), [(4,)]),
    "relu": (lambda a: a.relu(), [(4,)]),
    "clamp": (lambda a: a.clamp(0.2, 0.8), [(4,)]),
    "sum": (lambda a: a.sum(1), [(2, 3)]),
    "mean": (lambda a: a.mean(), [(2, 3)]),
    "var": (lambda a: a.var(0), [(2, 3)]),
    "std": (lambda a: a.std(1, unbiased=False), [(2, 3)]),
    "amax": (lambda a: a.amax(-1), [(2, 3)]),
    "amin": (lambda a: a.amin(), [(2, 3)]),
    "max": (lambda a: a.max(), [(2, 3)]),
    "max_dim": (lambda a: a.max(1).values, [(2, 3)]),
    "min_dim": (lambda a: a.min(0).values, [(2, 3)]),
    "logsumexp": (lambda a: a.logsumexp(1), [(2, 3)]),
    "softmax": (lambda a: a.softmax(-1), [(2, 3)]),
    "log_softmax": (lambda a: a.log_softmax(0), [(2, 3)]),
    "reshape": (lambda a: a.reshape(3, 2), [(2, 3)]),
    "flatten": (lambda a: a.flatten(), [(2, 3)]),
    "squeeze": (lambda a: a.squeeze(), [(2, 1, 3)]),
    "unsqueeze": (lambda a: a.unsqueeze(0), [(2, 3)]),
    "permute": (lambda a: a.permute(1, 0), [(2, 3)]),
    "transpose": (lambda a: a.transpose(0, 1), [(2, 3)]),
    "T": (lambda a: a.T, [(2, 3)]),
    "expand": (lambda a: a.expand(4, 3), [(1, 3)]),
    "getitem": (lambda a: a[0, 1:], [(2, 3)]),
    "getitem_adv": (lambda a: a[[0, 0, 1]], [(2, 3)]),
    "getitem_mask": (lambda a: a[a > 0.5], [(2, 3)]),
    "chunk": (lambda a: a.chunk(2, 1)[0], [(2, 3)]),
    "split": (lambda a: a.split(1, 0)[1], [(2, 3)]),
    "cat": (lambda a, b: mt.cat([a, b], 1), [(2, 3), (2, 1)]),
    "stack": (lambda a, b: mt.stack([a, b]), [(2, 3), (2, 3)]),
    "where": (lambda a, b: mt.where(a > 0.5, a, b), [(2, 3), (3,)]),
    "masked_fill": (lambda a: a.masked_fill(a > 0.5, -1e9), [(2, 3)]),
    "matmul": (lambda a, b: a @ b, [(2, 3), (3, 4)]),
    "matmul_batched": (lambda a, b: a @ b, [(2, 2, 3), (3, 4)]),
    "matmul_vec": (lambda a, b: a @ b, [(3,), (2, 3, 4)]),
}


@pytest.fixture
def no_upcast_in_backward(monkeypatch):
    """Fail when an op's backward hands the engine a gradient of another dtype than its
    input's (the engine would cast it back, hiding a float64 detour that costs time)."""
    reduce_to_shape = engine._reduce_to_shape

    def strict(grad, shape, dtype, node, index):
        assert np.asarray(grad).dtype == dtype, f"{node.name()} returned a {np.asarray(grad).dtype} gradient"
        return reduce_to_shape(grad, shape, dtype, node, index)

    monkeypatch.setattr(engine, "_reduce_to_shape", strict)


@pytest.mark.parametrize("name", sorted(OPS))
def test_float32_in_float32_out_and_grads(name, rng, no_upcast_in_backward):
    fn, in_shapes = OPS[name]
    xs = [mt.tensor(rng.uniform(0.1, 1.0, s).astype(np.float32), requires_grad=True) for s in in_shapes]
    out = fn(*xs)
    assert out.dtype == mt.float32, f"{name} returned {out.dtype}"
    out.backward(mt.ones(out.shape))
    for i, x in enumerate(xs):
        assert x.grad is not None and x.grad.dtype == mt.float32, f"{name}: grad of input {i} is not float32"
        assert x.grad.shape == x.shape


SCALAR_OPS = {
    "x + 1": lambda x: x + 1,
    "x + 2.5": lambda x: x + 2.5,
    "2.5 - x": lambda x: 2.5 - x,
    "x * 0.1": lambda x: x * 0.1,
    "3 * x": lambda x: 3 * x,
    "x / 3.0": lambda x: x / 3.0,
    "1.0 / x": lambda x: 1.0 / x,
    "x ** 2": lambda x: x**2,
    "x ** 2.5": lambda x: x**2.5,
    "2.0 ** x": lambda x: 2.0**x,
    "x * np.float64": lambda x: x * np.float64(0.5),
    "np.float64 + x": lambda x: np.float64(0.5) + x,
    "float64 array - x": lambda x: np.array([1.0, 2.0, 3.0]) - x,
    "x * float64 array": lambda x: x * np.array([1.0, 2.0, 3.0]),
    "where scalar": lambda x: mt.where(x > 1.0, x, 0.0),
}


@pytest.mark.parametrize("name", sorted(SCALAR_OPS))
def test_python_and_numpy_scalars_do_not_upcast(name, no_upcast_in_backward):
    x = mt.tensor([0.5, 1.5, 2.0], requires_grad=True)
    out = SCALAR_OPS[name](x)
    assert out.dtype == mt.float32
    out.sum().backward()
    assert x.grad.dtype == mt.float32


def test_mixed_float32_float64_promotes_output_but_grads_keep_each_dtype():
    a = mt.tensor([1.0, 2.0], requires_grad=True)
    b = mt.tensor([3.0, 4.0], dtype=mt.float64, requires_grad=True)
    out = a * b
    assert out.dtype == mt.float64
    out.sum().backward()
    assert a.grad.dtype == mt.float32 and b.grad.dtype == mt.float64
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 4.0])


def test_cast_gradient_comes_back_in_the_input_dtype():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    assert y.dtype == mt.float64 and type(y.grad_fn).__name__ == "CastBackward"
    (y * y).sum().backward()
    assert x.grad.dtype == mt.float32
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    z = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    w = z.float()
    assert w.dtype == mt.float32
    (w * 3.0).sum().backward()
    assert z.grad.dtype == mt.float64 and z.grad.tolist() == [3.0, 3.0]
    assert x.to(mt.float32) is x


def test_int_ops():
    i = mt.tensor([1, 2, 3])
    assert i.dtype == mt.int64
    assert (i + 1).dtype == mt.int64 and (i * i).dtype == mt.int64
    assert (i / 2).dtype == mt.get_default_dtype()
    assert (i * 0.5).dtype == mt.get_default_dtype()
    assert (i + mt.tensor([0.5, 0.5, 0.5])).dtype == mt.float32
    assert i.float().dtype == mt.float32 and i.to(mt.float64).dtype == mt.float64
    assert mt.tensor([1.7, -2.2]).long().tolist() == [1, -2]


def test_tensor_of_python_floats_and_float64_arrays_is_the_default_dtype():
    assert mt.tensor([1.0, 2.0]).dtype == mt.float32
    assert mt.tensor(3.5).dtype == mt.float32
    assert mt.tensor(np.array([1.0, 2.0])).dtype == mt.float32
    assert mt.tensor(np.array([1.0]), dtype=mt.float64).dtype == mt.float64
    assert mt.tensor([True, False]).dtype == mt.bool
    assert mt.tensor([1, 2]).dtype == mt.int64
    assert mt.tensor(np.array([1, 2], dtype=np.int32)).dtype == mt.int64
    assert mt.from_numpy(np.array([1.0])).dtype == mt.float64  # from_numpy keeps the dtype


def test_set_default_dtype():
    assert mt.get_default_dtype() == mt.float32
    try:
        mt.set_default_dtype(mt.float64)
        assert mt.get_default_dtype() == mt.float64
        assert mt.tensor([1.0]).dtype == mt.float64
        assert mt.tensor(np.array([1.0], dtype=np.float64)).dtype == mt.float64
        assert mt.zeros(2).dtype == mt.float64 and mt.ones(2).dtype == mt.float64
        assert mt.randn(2).dtype == mt.float64 and mt.rand(2).dtype == mt.float64
        assert mt.arange(0.0, 1.0, 0.5).dtype == mt.float64
        assert (mt.tensor([1, 2]) / 2).dtype == mt.float64
    finally:
        mt.set_default_dtype(mt.float32)
    assert mt.tensor([1.0]).dtype == mt.float32 and mt.zeros(1).dtype == mt.float32


def test_set_default_dtype_rejects_non_floats():
    with pytest.raises(TypeError, match="float32 or float64"):
        mt.set_default_dtype(mt.int64)
    with pytest.raises(TypeError, match="dtype"):
        mt.set_default_dtype("not a dtype")
    assert mt.get_default_dtype() == mt.float32


def test_dtypes_are_numpy_dtypes():
    assert mt.float32 == np.float32 and mt.float64 == np.float64
    assert mt.int64 == np.int64 and mt.bool == np.bool_
    t = mt.zeros(2)
    assert t.dtype == t.numpy().dtype


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda x, a: x + a, 1.0 + 0.1),
        (lambda x, a: a - x, 0.1 - 1.0),
        (lambda x, a: x * a, 0.1),
        (lambda x, a: a / x, 0.1),
        (lambda x, a: x @ a.reshape(1, 1), 0.1),
        (lambda x, a: a.reshape(1, 1) @ x, 0.1),
        (lambda x, a: mt.where(np.array([False]), x, a), 0.1),
        (lambda x, a: x + a.tolist(), 1.0 + 0.1),
    ],
)
def test_float64_array_operand_keeps_float64_precision(fn, expected):
    """A float64 array next to a float64 tensor is not rounded through float32."""
    out = fn(mt.ones(1, dtype=mt.float64), np.array([0.1]))
    assert out.dtype == mt.float64
    assert out.numpy().ravel()[0] == expected


def test_float64_array_comparison_is_exact():
    x = mt.tensor([0.1, 0.2], dtype=mt.float64)
    assert (x == np.array([0.1, 0.2])).tolist() == [True, True]
    assert (np.array([0.1, 0.3]) == x).tolist() == [True, False]


def test_where_of_python_scalars_is_the_default_dtype():
    cond = np.array([True, False])
    assert mt.where(cond, 0.5, 1.0).dtype == mt.float32
    assert mt.where(cond, mt.tensor([1, 2]), 0.5).dtype == mt.float32
    assert mt.where(cond, mt.tensor([1, 2]), 3).dtype == mt.int64
    assert mt.where(cond, mt.zeros(2, dtype=mt.float64), 0.5).dtype == mt.float64
