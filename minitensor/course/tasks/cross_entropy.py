"""Task: the cross-entropy loss (mean over the batch), forward and backward."""

from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn.functional as F

from ._base import Check, Mutant, Task
from ._helpers import check_program, expect_close, leaf

SOLUTION = '''"""Week 9: cross-entropy, the classifier's loss.

loss = mean over the N rows of -log softmax(logits)[row, target[row]].
"""

import numpy as np


def cross_entropy_forward(logits, target):
    """logits (N, C), target (N,) ints in [0, C).  Returns (loss, cache), loss a 0-d array.

    Hint: compute log-softmax stably (shift by the row's max).
    """
    # BEGIN SOLUTION
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_p = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    n = logits.shape[0]
    loss = -np.mean(log_p[np.arange(n), target])
    return np.asarray(loss), (np.exp(log_p), target)
    # END SOLUTION


def cross_entropy_backward(grad, cache):
    """``grad``: the loss's gradient (0-d).  Returns grad_logits (N, C).

    Hint: for one row, d loss / d logits = softmax(logits) - one_hot(target); then the mean.
    """
    # BEGIN SOLUTION
    p, target = cache
    n = p.shape[0]
    d = p.copy()
    d[np.arange(n), target] -= 1.0
    return grad * d / n
    # END SOLUTION
'''


PROGRAMS = {
    "cross_entropy": lambda ops, logits, target: ops.cross_entropy(logits, target),
    "cross_entropy * sum": lambda ops, logits, target: ops.mul(ops.cross_entropy(logits, target), ops.sum(logits)),
}


def _loss(student) -> None:
    rng = np.random.default_rng(17)
    for n, c in [(4, 3), (8, 5)]:
        logits, target = rng.standard_normal((n, c)) * 3, rng.integers(0, c, n)
        loss = student.call("cross_entropy.cross_entropy_forward", logits, target, pick=0)
        expect_close(loss, F.cross_entropy(mt.tensor(logits, dtype=mt.float64), mt.tensor(target)).numpy(), "loss")
    big = np.array([[1000.0, -1000.0], [0.0, 2000.0]])
    loss = student.call("cross_entropy.cross_entropy_forward", big, np.array([0, 0]), pick=0)
    expect_close(loss, 1000.0, "loss on large logits")


def _gradient(student) -> None:
    rng = np.random.default_rng(18)
    for n, c in [(4, 3), (8, 5), (5, 5)]:
        target = rng.integers(0, c, n)
        logits = leaf(rng, n, c, transposed=True)
        for program in ("cross_entropy", "cross_entropy * sum"):
            check_program(student, program, [logits], settings={"target": target})


TASK = Task(
    name="cross_entropy",
    title="Cross-entropy",
    summary="the classifier's loss, its stable forward and its (mean) gradient",
    solution=SOLUTION,
    checks=[Check("loss equals F.cross_entropy (and is stable)", 4, _loss), Check("gradient", 6, _gradient)],
    mutants=[Mutant("cross-entropy off by a factor of N", "return grad * d / n", "return grad * d", "factor")],
    programs=PROGRAMS,
)
