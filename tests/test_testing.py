"""minitensor.testing (assert_close, make_tensor, assert_allclose) against torch.testing: same verdicts and messages."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.testing
from minitensor.testing import _comparison, _creation, assert_close, make_tensor

torch = pytest.importorskip("torch")


def _cases(lib) -> list:
    """(actual, expected, kwargs) written once for either library."""
    t = lib.tensor
    nan, inf = math.nan, math.inf
    return [
        (t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.1]), {}),
        (t([1.0, 2.0]), t([1.0, 2.0 + 1e-6]), {}),
        (t(1.0), t(2.0), {}),
        (t(2), t(3), {}),
        (t([1, 2]), t([1, 3]), {}),
        (t([5, 7], dtype=lib.int32), t([5, 2], dtype=lib.int32), {}),
        (t([1.0, 2.0]), t([1.0, 2.0], dtype=lib.float64), {}),
        (t([1.0, 2.0]), t([1.0, 2.0], dtype=lib.float64), {"check_dtype": False}),
        (t([1.0, 2.0, 3.0], dtype=lib.float16), t([1.0, 2.0, 3.01], dtype=lib.float16), {}),
        (t([[0.0, 1.0], [1e-3, 4.0]], dtype=lib.float64), t([[0.0, 1.0], [0.0, 4.5]], dtype=lib.float64), {}),
        (t([0.0]), t([1e-6]), {"rtol": 0, "atol": 0}),
        (t([1.0, 1.5]), t([1.0, 1.6]), {"rtol": 0.1, "atol": 0.0}),
        (t([nan, 1.0]), t([nan, 1.0]), {}),
        (t([nan, 1.0]), t([nan, 1.0]), {"equal_nan": True}),
        (t([nan, 1.0]), t([2.0, 1.0]), {}),
        (t([inf, 1.0]), t([inf, 1.0]), {}),
        (t([inf, 1.0]), t([-inf, 1.0]), {}),
        (t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.0], [3.0, 5.0]]), {"msg": "boom"}),
        (lib.ones(2), lib.zeros(2), {"msg": lambda m: "X" + m}),
        ((1, 2), [1, 3], {}),
        ([lib.ones(2), lib.ones(2)], [lib.ones(2)], {}),
        ({"a": lib.ones(2)}, {"a": lib.zeros(2)}, {}),
        ({"a": 1}, {"b": 1}, {}),
        (1.0, 1.1, {}),
        (np.float32(1.0), 1.0, {}),
        (None, 1, {}),
        (True, False, {}),
        (np.ones(2), np.zeros(2), {}),
        ("a", 1, {}),
        (lib.ones(2), lib.ones(2), {"rtol": 1e-3}),
    ]


def _verdict(assert_fn, actual, expected, kwargs) -> str:
    try:
        assert_fn(actual, expected, **kwargs)
    except Exception as e:  # noqa: BLE001  (the verdict is the exception's type and message)
        text = str(e).replace("<class 'torch.Tensor'>", "Tensor").replace("torch.float", "float")  # dtype names
        return f"{type(e).__name__}: {text}".replace("<class 'minitensor.tensor.tensor.Tensor'>", "Tensor")
    return "ok"


@pytest.mark.parametrize("index", range(len(_cases(mt))))
def test_verdict_and_message_equal_pytorchs(index):
    got = _verdict(assert_close, *_cases(mt)[index])
    want = _verdict(torch.testing.assert_close, *_cases(torch)[index])
    assert got == want


def test_shape_mismatch_names_the_attribute():
    with pytest.raises(AssertionError, match=r"'shape' do not match: \(2, 3\) != \(3, 2\)"):
        assert_close(mt.ones(2, 3), mt.ones(3, 2))


def test_gradients_are_compared_outside_the_graph():
    x = mt.ones(3, requires_grad=True)
    assert_close(x * 2, mt.full((3,), 2.0))


@pytest.mark.parametrize(
    "dtype, low, high",
    [(mt.float32, -9, 9), (mt.float64, 2.0, 3.0), (mt.int64, -9, 10), (mt.uint8, 0, 10), (mt.int8, -128, 127)],
)
def test_make_tensor_draws_in_range(dtype, low, high):
    bounds = {} if dtype == mt.float32 else {"low": low, "high": high}  # float32: the defaults
    t = make_tensor(50, 4, dtype=dtype, device="cpu", **bounds)
    a = t.numpy()
    assert t.shape == (50, 4) and t.dtype == dtype
    assert a.min() >= low and a.max() < high
    assert len(np.unique(a)) > 1


def test_make_tensor_options():
    b = make_tensor((100,), dtype=mt.bool, device="cpu")
    assert b.dtype == mt.bool and set(b.numpy().tolist()) == {False, True}
    x = make_tensor(3, 5, dtype=mt.float64, device="cpu", requires_grad=True, noncontiguous=True)
    assert x.requires_grad and x.is_leaf and not x.numpy().flags.c_contiguous and x.shape == (3, 5)
    z = make_tensor(200, dtype=mt.int64, device="cpu", low=-1, high=2, exclude_zero=True)
    assert 0 not in z.numpy() and set(z.numpy().tolist()) <= {-1, 1}
    f = make_tensor(200, dtype=mt.float32, device="cpu", low=0, high=1e-30, exclude_zero=True)
    assert (f.numpy() != 0).all()
    mt.manual_seed(3)
    a = make_tensor(4, dtype=mt.float32, device="cpu")
    mt.manual_seed(3)
    assert_close(make_tensor(4, dtype=mt.float32, device="cpu"), a)


def test_make_tensor_errors_are_pytorchs():
    for kwargs, match in [
        ({"dtype": mt.int64, "requires_grad": True}, "`requires_grad=True` is not supported"),
        ({"dtype": mt.float32, "low": 2, "high": 1}, "`low` must be less than `high`, but got 2 >= 1"),
        ({"dtype": mt.float32, "low": math.nan}, "cannot be NaN"),
        ({"dtype": mt.uint8, "low": -5, "high": -1}, r"only supports \[0, 256\)"),
        ({"dtype": mt.float32, "noncontiguous": True, "memory_format": "channels_last"}, "mutually exclusive"),
    ]:
        with pytest.raises(ValueError, match=match):
            make_tensor(3, device="cpu", **kwargs)
    with pytest.raises(ValueError, match="cuda"):
        make_tensor(3, dtype=mt.float32, device="cuda")
    with pytest.warns(FutureWarning, match="low==high"):
        make_tensor(3, dtype=mt.float32, device="cpu", low=1.0, high=1.0)


def test_assert_allclose_is_deprecated_and_looser():
    with pytest.warns(FutureWarning, match="deprecated"):
        minitensor.testing.assert_allclose(mt.tensor([1.0]), [1.00005])
    with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="not close"):
        minitensor.testing.assert_allclose(mt.tensor([1.0]), [1.001])


@pytest.mark.parametrize("module", [minitensor.testing, _comparison, _creation])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0
