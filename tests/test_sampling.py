"""mt.Generator, manual_seed/seed, randint, randperm, multinomial: shapes, dtypes, ranges,
reproducibility, and the distributions (checked with generous statistical bounds)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt


def test_manual_seed_returns_the_default_generator_and_reproduces() -> None:
    g = mt.manual_seed(5)
    assert g is mt.default_generator and g.initial_seed() == 5 == mt.initial_seed()
    a = (mt.randn(3).tolist(), mt.randint(0, 100, (4,)).tolist(), mt.randperm(6).tolist())
    mt.manual_seed(5)
    assert a == (mt.randn(3).tolist(), mt.randint(0, 100, (4,)).tolist(), mt.randperm(6).tolist())


def test_seed_gives_a_fresh_seed_it_can_replay() -> None:
    s = mt.seed()
    assert isinstance(s, int) and mt.initial_seed() == s
    first = mt.rand(4).tolist()
    mt.manual_seed(s)
    assert mt.rand(4).tolist() == first


def test_own_generator_is_independent_of_the_default() -> None:
    g = mt.Generator().manual_seed(11)
    assert isinstance(g, mt.Generator) and g.manual_seed(11) is g
    mt.manual_seed(0)
    x = mt.randn(3, generator=g).tolist()
    mt.manual_seed(1)  # the default stream does not affect g
    g.manual_seed(11)
    assert mt.randn(3, generator=g).tolist() == x
    assert (
        mt.rand(2, generator=mt.Generator().manual_seed(3)).tolist()
        == mt.rand(2, generator=mt.Generator().manual_seed(3)).tolist()
    )


def test_generator_state_round_trip() -> None:
    g = mt.Generator().manual_seed(7)
    mt.randn(5, generator=g)
    state = g.get_state()
    assert state.dtype == mt.uint8 and state.ndim == 1
    after = mt.randint(0, 1000, (6,), generator=g).tolist()
    other = mt.Generator().set_state(state)
    assert mt.randint(0, 1000, (6,), generator=other).tolist() == after and other.initial_seed() == 7
    saved = mt.get_rng_state()
    y = mt.rand(3).tolist()
    mt.set_rng_state(saved)
    assert mt.rand(3).tolist() == y
    with pytest.raises(ValueError, match="set_state"):
        g.set_state(mt.zeros(3, dtype=mt.uint8))
    with pytest.raises(TypeError, match="generator"):
        mt.randn(2, generator=np.random.default_rng())


def test_randint_forms_dtype_and_range() -> None:
    torch = pytest.importorskip("torch")
    a = mt.randint(10, (1000,))
    b = mt.randint(-3, 4, size=(20, 50), dtype=mt.int32)
    c = mt.randint(low=2, high=3, size=(2, 2))
    assert a.dtype == mt.int64 == torch.randint(10, (2,)).numpy().dtype and a.shape == (1000,)
    assert 0 <= a.numpy().min() and a.numpy().max() <= 9 and len(set(a.tolist())) == 10
    assert b.shape == (20, 50) and b.dtype == mt.int32 and set(b.numpy().ravel()) == set(range(-3, 4))
    assert c.tolist() == [[2, 2], [2, 2]]
    with pytest.raises(ValueError, match="low must be < high"):
        mt.randint(3, 3, (2,))
    with pytest.raises(TypeError, match="size"):
        mt.randint(5)


def test_randperm_is_a_permutation() -> None:
    p = mt.randperm(50)
    assert p.dtype == mt.int64 and sorted(p.tolist()) == list(range(50)) and p.tolist() != list(range(50))
    assert mt.randperm(0).shape == (0,)
    with pytest.raises(ValueError, match="non-negative"):
        mt.randperm(-1)


def test_multinomial_shapes_and_frequencies() -> None:
    mt.manual_seed(0)
    probs = mt.tensor([0.1, 0.0, 0.6, 0.3])
    draws = mt.multinomial(probs * 7, 20000, replacement=True)  # unnormalised weights are fine
    assert draws.shape == (20000,) and draws.dtype == mt.int64
    freq = np.bincount(draws.numpy(), minlength=4) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.6, 0.3], atol=0.02)
    batch = mt.multinomial(mt.tensor([[0.5, 0.5, 0.0], [0.0, 0.0, 2.0]]), 1)
    assert batch.shape == (2, 1) and batch[1, 0].item() == 2 and batch[0, 0].item() in (0, 1)


def test_multinomial_without_replacement_draws_each_index_once() -> None:
    weights = mt.tensor([[1.0, 2.0, 3.0, 4.0, 0.0]] * 3)
    out = mt.multinomial(weights, 4, generator=mt.Generator().manual_seed(2))
    assert out.shape == (3, 4) and all(sorted(row) == [0, 1, 2, 3] for row in out.tolist())
    with pytest.raises(ValueError, match="num_samples=5 without replacement"):
        mt.multinomial(weights, 5)
    first = mt.multinomial(weights, 2, generator=mt.Generator().manual_seed(9)).tolist()
    assert mt.multinomial(weights, 2, generator=mt.Generator().manual_seed(9)).tolist() == first


def test_multinomial_without_replacement_favours_heavy_weights() -> None:
    mt.manual_seed(3)
    firsts = [mt.multinomial(mt.tensor([1.0, 9.0]), 2).tolist()[0] for _ in range(2000)]
    assert 0.85 < firsts.count(1) / 2000 < 0.95


@pytest.mark.parametrize(
    "weights, message",
    [([[-1.0, 2.0]], "non-negative"), ([0.0, 0.0], "positive sum"), ([[[1.0]]], "shape"), ([float("nan")], "finite")],
)
def test_multinomial_bad_weights(weights, message) -> None:
    with pytest.raises(ValueError, match=message):
        mt.multinomial(mt.tensor(weights), 1)


def test_randint_like_takes_the_shape_and_dtype_of_its_input():
    x = mt.zeros(2, 3)
    a = mt.randint_like(x, 10)
    assert a.shape == (2, 3) and a.dtype == mt.float32
    assert ((a.numpy() >= 0) & (a.numpy() < 10) & (a.numpy() == a.numpy().round())).all()
    b = mt.randint_like(x, 3, 5, dtype=mt.int64)
    assert b.dtype == mt.int64 and set(b.numpy().ravel()) <= {3, 4}
    with pytest.raises(TypeError, match="input must be a Tensor"):
        mt.randint_like([1, 2], 10)
