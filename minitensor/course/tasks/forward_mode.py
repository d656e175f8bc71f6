"""Task: forward-mode rules (JVPs) of a few ops, checked against finite differences."""

from __future__ import annotations

import numpy as np

from ._base import Check, CheckFailure, Mutant, Task
from ._helpers import random_shape

SOLUTION = '''"""Forward mode: the JVP rules of a few ops.

Forward mode carries beside each value x its tangent dx: how x moves when the inputs
move in a chosen direction.  An op's JVP rule maps the tangents of its inputs to the
tangent of its output: for out = f(a, b), d(out) = df/da · da + df/db · db.  (Compare
with a backward rule, which maps the gradient of the output to those of the inputs.)
Every tangent has the shape of its value.
"""

import numpy as np


def mul_jvp(a, b, da, db):
    """out = a * b (same shapes).  Returns d(out).

    Hint: the product rule.
    """
    # BEGIN SOLUTION
    return da * b + a * db
    # END SOLUTION


def div_jvp(a, b, da, db):
    """out = a / b (same shapes).  Returns d(out)."""
    # BEGIN SOLUTION
    return da / b - a * db / (b * b)
    # END SOLUTION


def tanh_jvp(out, dx):
    """out = tanh(x).  Returns d(out) from the output alone.

    Hint: the Jacobian of an elementwise op is diagonal.
    """
    # BEGIN SOLUTION
    return (1 - out * out) * dx
    # END SOLUTION


def matmul_jvp(a, b, da, db):
    """out = a @ b, a: (n, k), b: (k, m).  Returns d(out), shape (n, m)."""
    # BEGIN SOLUTION
    return da @ b + a @ db
    # END SOLUTION


def softmax_jvp(y, dx, dim):
    """y = softmax(x) along ``dim``.  Returns dy from the output y and the tangent dx.

    Hint: dy_i = y_i (dx_i - sum_j y_j dx_j), the sum along ``dim``.
    """
    # BEGIN SOLUTION
    return y * (dx - (y * dx).sum(axis=dim, keepdims=True))
    # END SOLUTION
'''


def _softmax(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _differences(f, xs: list, vs: list, eps: float = 1e-6) -> np.ndarray:
    """The central difference of ``f`` at ``xs`` in the direction ``vs``: what every JVP must equal."""
    ahead = f(*[x + eps * v for x, v in zip(xs, vs)])
    behind = f(*[x - eps * v for x, v in zip(xs, vs)])
    return (ahead - behind) / (2 * eps)


def _expect(got, want: np.ndarray, what: str) -> None:
    """Raise ``CheckFailure`` unless the student's tangent equals the finite difference."""
    got = np.asarray(got, dtype=np.float64)
    if got.shape != want.shape:
        raise CheckFailure(f"{what}: a tangent of shape {got.shape}, the output's is {want.shape}")
    if not np.allclose(got, want, rtol=1e-5, atol=1e-7):
        if np.allclose(got, -want, rtol=1e-5, atol=1e-7):
            raise CheckFailure(f"{what}: the tangent is the finite difference with its sign flipped", "sign")
        worst = float(np.max(np.abs(got - want)))
        raise CheckFailure(f"{what}: differs from the finite difference by up to {worst:.3g}")


def _binary(student) -> None:
    rng = np.random.default_rng(21)
    for shape in [(4,), (3, 4), random_shape(rng)]:
        a, b = rng.standard_normal(shape), 0.5 + rng.random(shape)
        da, db = rng.standard_normal(shape), rng.standard_normal(shape)
        for name, f in (("mul_jvp", np.multiply), ("div_jvp", np.divide)):
            got = student.call(f"forward_mode.{name}", a, b, da, db)
            _expect(got, _differences(f, [a, b], [da, db]), f"{name} at shape {shape}")
            only_a = student.call(f"forward_mode.{name}", a, b, da, np.zeros(shape))
            _expect(only_a, _differences(f, [a, b], [da, np.zeros(shape)]), f"{name} with db = 0")


def _tanh(student) -> None:
    rng = np.random.default_rng(22)
    for shape in [(5,), (2, 3), random_shape(rng)]:
        x, dx = rng.standard_normal(shape), rng.standard_normal(shape)
        got = student.call("forward_mode.tanh_jvp", np.tanh(x), dx)
        _expect(got, _differences(np.tanh, [x], [dx]), f"tanh_jvp at shape {shape}")


def _matmul(student) -> None:
    rng = np.random.default_rng(23)
    for n, k, m in [(2, 3, 4), (4, 4, 4), (1, 5, 2)]:
        a, b = rng.standard_normal((n, k)), rng.standard_normal((k, m))
        da, db = rng.standard_normal((n, k)), rng.standard_normal((k, m))
        got = student.call("forward_mode.matmul_jvp", a, b, da, db)
        _expect(got, _differences(np.matmul, [a, b], [da, db]), f"matmul_jvp for ({n}, {k}) @ ({k}, {m})")


def _softmax_check(student) -> None:
    rng = np.random.default_rng(24)
    for shape, dim in [((5,), 0), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1)]:
        x, dx = rng.standard_normal(shape), rng.standard_normal(shape)
        got = student.call("forward_mode.softmax_jvp", _softmax(x, dim), dx, dim)
        want = _differences(lambda t, d=dim: _softmax(t, d), [x], [dx])
        _expect(got, want, f"softmax_jvp at shape {shape}, dim {dim}")


TASK = Task(
    name="forward_mode",
    title="Forward mode: JVP rules",
    summary="the tangents of mul, div, tanh, matmul and softmax, checked against finite differences",
    solution=SOLUTION,
    checks=[
        Check("mul and div (both tangents, and one of them zero)", 3, _binary),
        Check("tanh from its output", 2, _tanh),
        Check("matmul", 2, _matmul),
        Check("softmax along any dim", 3, _softmax_check),
    ],  # fmt: skip
    mutants=[
        Mutant("product rule with one term (mul)", "da * b + a * db", "da * b", None),
        Mutant("sign flip (tanh)", "(1 - out * out) * dx", "(out * out - 1) * dx", "sign"),
        Mutant("matmul tangent in the wrong order", "da @ b + a @ db", "da @ b + db @ a", None),
        Mutant(
            "softmax tangent without the weighted mean",
            "y * (dx - (y * dx).sum(axis=dim, keepdims=True))",
            "y * dx",
            None,
        ),  # fmt: skip
        Mutant("quotient rule's sign (div)", "da / b - a * db / (b * b)", "da / b + a * db / (b * b)", None),
    ],
)
