"""Task: the backward rules of elementwise ops (broadcasting is undone elsewhere)."""

from __future__ import annotations

import numpy as np

from ._base import Check, Mutant, Task
from ._helpers import broadcast_pair, check_program, leaf, random_shape

SOLUTION = '''"""Week 1: backward rules of elementwise ops.

Each function gets ``grad``, the gradient of the loss with respect to the op's
output (same shape as the output), and returns the gradient with respect to each
input.  Inputs may broadcast against each other: return gradients in the
*output's* shape; summing them back to each input's shape is next week's task.
"""

import numpy as np


def mul_backward(grad, a, b):
    """out = a * b.  Returns (grad_a, grad_b), each shaped like ``grad``.

    Hint: d(out)/da = b and d(out)/db = a, element by element.
    """
    # BEGIN SOLUTION
    return grad * b, grad * a
    # END SOLUTION


def div_backward(grad, a, b):
    """out = a / b.  Returns (grad_a, grad_b), each shaped like ``grad``.

    Hint: d(a/b)/db = -a / b**2.
    """
    # BEGIN SOLUTION
    return grad / b, -grad * a / (b * b)
    # END SOLUTION


def pow_backward(grad, x, p):
    """out = x ** p for a Python float p.  Returns grad_x, shaped like ``x``.

    Hint: the power rule.
    """
    # BEGIN SOLUTION
    return grad * p * x ** (p - 1)
    # END SOLUTION


def exp_backward(grad, out):
    """out = exp(x).  Returns grad_x from the output alone (no need to keep x).

    Hint: exp is its own derivative.
    """
    # BEGIN SOLUTION
    return grad * out
    # END SOLUTION


def tanh_backward(grad, out):
    """out = tanh(x).  Returns grad_x from the output.

    Hint: tanh'(x) = 1 - tanh(x)**2.
    """
    # BEGIN SOLUTION
    return grad * (1 - out * out)
    # END SOLUTION


def relu_backward(grad, x):
    """out = max(x, 0).  Returns grad_x (take 0 as the gradient at x == 0)."""
    # BEGIN SOLUTION
    return np.where(x > 0, grad, 0.0)
    # END SOLUTION
'''


PROGRAMS = {
    "mul": lambda ops, a, b: ops.mul(a, b),
    "div": lambda ops, a, b: ops.div(a, b),
    "exp": lambda ops, x: ops.exp(x),
    "tanh": lambda ops, x: ops.tanh(x),
    "relu(x + x)": lambda ops, x: ops.relu(ops.add(x, x)),  # (inputs are never exactly 0)
    "pow": lambda ops, x, p: ops.pow(x, p),
}


def _binary(student) -> None:
    rng = np.random.default_rng(1)
    cases = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4)), broadcast_pair(rng), broadcast_pair(rng)]
    for sa, sb in cases:
        a, b = leaf(rng, *sa, transposed=len(sa) == 2), leaf(rng, *sb, low=0.5)
        check_program(student, "mul", [a, b])
        check_program(student, "div", [a, b])


def _unary(student) -> None:
    rng = np.random.default_rng(2)
    for shape in [(5,), (3, 4), (2, 3, 2), random_shape(rng)]:
        x = leaf(rng, *shape, transposed=len(shape) == 2)
        for program in ("exp", "tanh", "relu(x + x)"):
            check_program(student, program, [x])
        positive = leaf(rng, *shape, low=0.5)
        check_program(student, "pow", [positive], settings={"p": 3.0})
        check_program(student, "pow", [positive], settings={"p": -1.5})


TASK = Task(
    name="elementwise",
    title="Backward rules of elementwise ops",
    summary="mul, div, pow, exp, tanh, relu: the chain rule one element at a time",
    solution=SOLUTION,
    checks=[
        Check("mul and div (broadcasting, non-contiguous)", 5, _binary),
        Check("pow, exp, tanh, relu", 5, _unary),
    ],  # fmt: skip
    mutants=[
        Mutant("sign flip (div)", "-grad * a / (b * b)", "grad * a / (b * b)", "sign"),
        Mutant("missing factor (pow)", "grad * p * x ** (p - 1)", "grad * x ** (p - 1)", "factor"),
    ],
    programs=PROGRAMS,
)
