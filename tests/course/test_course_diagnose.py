"""The gradient check that names the bug: each pattern on made-up gradients, and no claim ever
made on correct ops (the graph fuzzer's random programs) or on an unstructured error."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, note, settings
from random_graphs import evaluate, graphs

import minitensor as mt
from minitensor.course.diagnose import diagnose, gradient_check, numeric_gradients, shape_diagnosis
from minitensor.course.tasks._base import CheckFailure


@pytest.fixture
def n(rng) -> np.ndarray:
    return rng.standard_normal((3, 4))


def test_each_pattern_is_named(n, rng) -> None:
    assert diagnose(n, n)[0] is None
    assert diagnose(-n, n)[0] == "sign"
    label, text = diagnose(n / 4, n)
    assert label == "factor" and "a missing factor of 4" in text
    assert diagnose(np.zeros_like(n), n)[0] == "zero"
    square = rng.standard_normal((2, 3, 3))
    assert diagnose(np.swapaxes(square, -1, -2), square)[0] == "transposed"
    ones, other = np.ones((3, 4)), rng.standard_normal((3, 4))
    assert diagnose(ones, n, ones, other)[0] == "ignores_grad"
    w = rng.standard_normal(4)
    assert diagnose(np.broadcast_to(w, (4, 4)), np.broadcast_to(w[:, None], (4, 4)))[0] == "wrong_axis"
    y = rng.random((3, 4))
    s = rng.standard_normal((3, 1))
    assert diagnose(n + s * y, n, features={"y": y})[0] == "missing_term"
    assert diagnose(n + s * y, n)[0] is None  # without the feature, nothing is claimed


def test_shapes_are_explained() -> None:
    assert shape_diagnosis((2, 3), (3, 2))[0] == "transposed"
    assert shape_diagnosis((4, 2, 3), (2, 3))[0] == "broadcast_sum"
    assert shape_diagnosis((2, 3), (2, 1))[0] == "broadcast_sum"
    assert shape_diagnosis((5,), (2, 3))[0] is None


def test_a_wrong_gradient_is_caught_and_named(rng) -> None:
    class Twice(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x = x
            return np.sin(x)

        @staticmethod
        def backward(ctx, grad):
            return 2 * grad * np.cos(ctx.x)

    x = mt.tensor(rng.standard_normal((2, 3)), dtype=mt.float64, requires_grad=True)
    with pytest.raises(CheckFailure, match="2 times the numeric one") as info:
        gradient_check(Twice.apply, [x])
    assert info.value.cause == "factor"
    gradient_check(lambda t: t.tanh() * t, [x])  # a correct op passes


def _flat(graph):
    return lambda *xs: mt.cat([o.reshape(-1) for o in evaluate(graph, list(xs), "mt")])


@settings(max_examples=50)
@given(graph=graphs())
def test_no_cause_is_claimed_on_correct_ops(graph) -> None:
    """The fuzzer's random programs (correct ops): the check passes, the diagnosis claims nothing,
    even when the analytic gradient is then spoiled by noise with no structure."""
    note(str(graph))
    leaves = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in graph.leaves]
    fn = _flat(graph)
    gradient_check(fn, leaves)
    rng = np.random.default_rng(0)
    w1, w2 = (rng.standard_normal(fn(*leaves).shape) for _ in range(2))
    (n1, n2) = numeric_gradients(fn, leaves, [w1, w2])
    for i, t in enumerate(leaves):
        a1, a2 = (mt.autograd.grad(fn(*leaves), [t], mt.tensor(w), allow_unused=True)[0] for w in (w1, w2))
        a1, a2 = (np.zeros(t.shape) if a is None else a.numpy() for a in (a1, a2))
        assert diagnose(a1, n1[i], a2, n2[i])[0] is None
        scale = 0.1 + np.abs(n1[i])
        noise1, noise2 = (rng.standard_normal(t.shape) * scale for _ in range(2))
        label, text = diagnose(a1 + noise1, n1[i], a2 + noise2, n2[i])
        assert label is None, text


def test_the_reference_catches_what_finite_differences_tolerate(sandbox) -> None:
    """A gradient off by 1e-5 relative passes gradcheck's tolerance, not the reference's (1e-7)."""
    from minitensor.course.grader import grade_task
    from minitensor.course.tasks import BY_NAME

    task = BY_NAME["elementwise"]
    text = task.solution_text().replace("grad * (1 - out * out)", "grad * (1 - out * out) * (1 + 1e-5)")
    results = grade_task(task, text, sandbox=sandbox)
    assert [r.score for r in results] == [5, 0]
    assert "differs from minitensor's own: off by up to" in results[1].output and results[1].cause is None
