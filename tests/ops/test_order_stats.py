"""kthvalue, median, nanmedian, mode, quantile, nanquantile (ops/order_stats.py): PyTorch's values, indices
and tie rules; gradients (float64 gradcheck, second order, PyTorch as the oracle) of the values."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
from minitensor.ops.order_stats import _ranked_index
from minitensor.ops.sort import _order

rng = np.random.default_rng(16)
DISTINCT = (rng.permutation(24).reshape(2, 3, 4) + rng.uniform(0.1, 0.4, (2, 3, 4))) / 4  # (no ties: smooth)


@pytest.mark.parametrize("dim, keepdim", [(0, False), (2, True), (-2, False)])
def test_kthvalue_median_nanmedian_values_are_differentiable(dim, keepdim):
    check_op(lambda x: mt.kthvalue(x, 2, dim, keepdim).values, lambda x: x.kthvalue(2, dim, keepdim).values, DISTINCT)
    check_op(lambda x: x.median(dim, keepdim).values, lambda x: x.median(dim, keepdim).values, DISTINCT)
    check_op(lambda x: mt.nanmedian(x, dim, keepdim)[0], lambda x: x.nanmedian(dim, keepdim)[0], DISTINCT)


def test_median_of_all_shares_the_gradient_among_ties_as_pytorch():
    torch = pytest.importorskip("torch")
    data = np.array([[2.0, 1.0, 2.0], [2.0, 3.0, np.nan]])
    for fn in ("median", "nanmedian"):
        for values in (data, np.nan_to_num(data, nan=5.0)):
            x, tx = mt.tensor(values, dtype=mt.float64, requires_grad=True), torch.tensor(values, requires_grad=True)
            out, tout = getattr(mt, fn)(x), getattr(torch, fn)(tx)
            np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())
            (out * 3).backward()
            (tout * 3).backward()
            np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    check_op(mt.median, lambda x: x.median(), DISTINCT)


def test_mode_value_gradient_goes_to_its_last_occurrence():
    torch = pytest.importorskip("torch")
    data = np.array([[3.0, 1.0, 3.0, 2.0, 1.0], [2.0, 2.0, 7.0, 7.0, 7.0]])
    x, tx = mt.tensor(data, dtype=mt.float64, requires_grad=True), torch.tensor(data, requires_grad=True)
    out, tout = mt.mode(x, 1), torch.mode(tx, 1)
    assert out.indices.tolist() == tout.indices.tolist() == [4, 4]
    (out.values * mt.tensor([2.0, 3.0], dtype=mt.float64)).sum().backward()
    (tout.values * torch.tensor([2.0, 3.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("interpolation", ["linear", "midpoint", "lower", "higher", "nearest"])
def test_quantile_gradients(interpolation):
    q = mt.tensor([0.1, 0.5, 0.8], dtype=mt.float64)
    torch = pytest.importorskip("torch")
    tq = torch.tensor([0.1, 0.5, 0.8], dtype=torch.float64)
    check_op(lambda x: mt.quantile(x, q, 1, interpolation=interpolation),
             lambda x: torch.quantile(x, tq, 1, interpolation=interpolation), DISTINCT)  # fmt: skip
    check_op(lambda x: x.nanquantile(0.3, None, True, interpolation=interpolation),
             lambda x: x.nanquantile(0.3, None, True, interpolation=interpolation), DISTINCT)  # fmt: skip


def test_quantile_and_median_ignore_or_meet_nan_as_pytorch():
    torch = pytest.importorskip("torch")
    data = np.array([[0.0, np.nan, 2.0, 1.0], [np.nan] * 4])
    for fn in ("quantile", "nanquantile"):
        ours = getattr(mt, fn)(mt.tensor(data, dtype=mt.float64), 0.5, dim=1).numpy()
        np.testing.assert_array_equal(ours, getattr(torch, fn)(torch.tensor(data), 0.5, dim=1).numpy())


def test_zero_dim_inputs():
    s = mt.tensor(3.0)
    for result in (mt.median(s, 0), mt.kthvalue(s, 1), mt.mode(s), mt.nanmedian(s, 0)):
        assert result.values.shape == result.indices.shape == () and result.indices.item() == 0


def test_bad_arguments_name_themselves():
    x = mt.ones(2, 3)
    with pytest.raises(ValueError, match=r"kthvalue: k must be in \[1, 3\] \(the size of dim 1\), got 4"):
        mt.kthvalue(x, 4)
    with pytest.raises(ValueError, match=r"quantile: q values must be in the range \[0, 1\], got \[1.5\]"):
        mt.quantile(x, 1.5)
    with pytest.raises(ValueError, match="quantile: interpolation must be one of"):
        mt.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(TypeError, match="quantile: q must have input's dtype"):
        mt.quantile(x, mt.tensor([0.5], dtype=mt.float64))
    with pytest.raises(ValueError, match="median: cannot take it over dim 0, of size 0"):
        mt.median(mt.ones(0, 2), 0)


def test_ranked_index_is_the_stable_sorts_pick_with_ties_nan_and_signed_zeros() -> None:
    """kthvalue's and median's partition picks the index the stable sort (NaN last) puts at the rank."""
    rng = np.random.default_rng(3)
    for trial in range(120):
        shape = tuple(int(n) for n in rng.integers(1, 6, size=rng.integers(1, 4)))
        x = (
            rng.choice(np.array([-1.0, -0.0, 0.0, 2.0, np.nan]), size=shape)
            if trial % 3
            else rng.standard_normal(shape)
        )
        x = x.astype(bool) if trial % 7 == 0 else x
        d = int(rng.integers(0, len(shape)))
        rank = rng.integers(0, shape[d], size=[1 if i == d else n for i, n in enumerate(shape)])
        expected = np.take_along_axis(_order(x, d, False), rank, axis=d)
        np.testing.assert_array_equal(_ranked_index(x, d, rank), expected)


def test_mode_is_the_longest_run_of_the_stable_order_and_its_last_element() -> None:
    """mode's value and index are those of the stable sort (NaN last, each NaN a run of its own): the
    first longest run of equal values, and the index its last element has, with ties, NaN and ±0."""
    rng = np.random.default_rng(5)
    for trial in range(120):
        shape = tuple(int(n) for n in rng.integers(1, 6, size=rng.integers(1, 4)))
        few = np.array([-1.0, -0.0, 0.0, 2.0, np.nan])
        x = rng.choice(few, size=shape) if trial % 3 else rng.standard_normal(shape)
        x = np.full(shape, np.nan) if trial % 11 == 0 else x.astype(bool) if trial % 7 == 0 else x
        d = int(rng.integers(0, len(shape)))
        order = np.moveaxis(_order(x, d, False), d, -1).reshape(-1, shape[d])
        values = np.take_along_axis(np.moveaxis(x, d, -1).reshape(order.shape), order, axis=1)
        expected = []
        for row, ordered in zip(order, values):
            runs = []  # the length of the run of equal values starting at each position (NaN != NaN)
            for i, v in enumerate(ordered):
                differ = ordered[i + 1 :] != v
                runs.append(1 + int(np.argmax(differ)) if differ.any() else len(ordered) - i)
            starts = [r if i == 0 or ordered[i - 1] != ordered[i] else 0 for i, r in enumerate(runs)]
            first = int(np.argmax(starts))  # the first longest run
            expected.append(row[first + runs[first] - 1])
        got = mt.mode(mt.tensor(x), d).indices.numpy().reshape(-1)  # (the other dims in order, as the rows)
        np.testing.assert_array_equal(got, np.array(expected), err_msg=f"trial {trial}")
