"""Task: scaled dot-product attention, forward (with a mask) and backward."""

from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn.functional as F

from ._base import Check, Mutant, Task
from ._helpers import check_program, expect_close, leaf

SOLUTION = '''"""Week 10: attention.

out = softmax(q @ k^T / sqrt(D) + mask) @ v with q (..., L, D), k (..., S, D),
v (..., S, Dv).  ``mask``: None or a bool (L, S) array, True where a query may NOT
attend to a key (the nn.MultiheadAttention convention); such a score becomes -inf.
"""

import numpy as np


def attention_forward(q, k, v, mask):
    """Returns (out (..., L, Dv), cache)."""
    # BEGIN SOLUTION
    scale = 1.0 / np.sqrt(q.shape[-1])
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    p = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    p = p / np.sum(p, axis=-1, keepdims=True)
    return p @ v, (q, k, v, p, scale)
    # END SOLUTION


def attention_backward(grad, cache):
    """``grad``: (..., L, Dv).  Returns (grad_q, grad_k, grad_v), shaped like q, k, v.

    Hint: go back through the three steps: p @ v (a matmul), the softmax (week 6),
    the scaled q @ k^T (a matmul).  Masked scores get no gradient: p is 0 there.
    """
    # BEGIN SOLUTION
    q, k, v, p, scale = cache
    grad_v = np.swapaxes(p, -1, -2) @ grad
    grad_p = grad @ np.swapaxes(v, -1, -2)
    grad_s = p * (grad_p - np.sum(grad_p * p, axis=-1, keepdims=True)) * scale
    return grad_s @ k, np.swapaxes(grad_s, -1, -2) @ q, grad_v
    # END SOLUTION
'''

CAUSAL = np.triu(np.ones((4, 4), dtype=bool), k=1)


PROGRAMS = {"attention": lambda ops, q, k, v, mask: ops.attention(q, k, v, mask)}


def _reference(q, k, v, mask) -> np.ndarray:
    """F.scaled_dot_product_attention (whose bool mask means the opposite: True = may attend)."""
    with mt.no_grad():
        return F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mt.tensor(~mask)).numpy()


def _forward(student) -> None:
    rng = np.random.default_rng(19)
    for shape_q, shape_k, mask in [((4, 3), (5, 3), None), ((2, 4, 3), (2, 4, 3), CAUSAL),
                                   ((2, 2, 4, 8), (2, 2, 4, 8), CAUSAL)]:  # fmt: skip
        q, k, v = (leaf(rng, *s) for s in (shape_q, shape_k, shape_k))
        out = student.call("attention.attention_forward", q.numpy(), k.numpy(), v.numpy(), mask, pick=0)
        expect_close(out, _reference(q, k, v, mask), "attention_forward" + (" with a mask" if mask is not None else ""))


def _backward(student) -> None:
    rng = np.random.default_rng(20)
    for shape_q, shape_k, mask in [((3, 2), (4, 2), None), ((2, 4, 3), (2, 4, 3), CAUSAL)]:
        q, k, v = leaf(rng, *shape_q, transposed=True), leaf(rng, *shape_k), leaf(rng, *shape_k)
        check_program(student, "attention", [q, k, v], settings={"mask": mask})


TASK = Task(
    name="attention",
    title="Attention forward and backward",
    summary="scaled dot-product attention with a mask, and its three gradients",
    solution=SOLUTION,
    checks=[
        Check("forward equals F.scaled_dot_product_attention", 4, _forward),
        Check("gradients of q, k, v", 6, _backward),
    ],  # fmt: skip
    mutants=[
        Mutant("attention without the scale", "scale = 1.0 / np.sqrt(q.shape[-1])", "scale = 1.0", None),
        Mutant(
            "a mask applied after the softmax",
            "    if mask is not None:\n        scores = np.where(mask, -np.inf, scores)\n"
            "    p = np.exp(scores - np.max(scores, axis=-1, keepdims=True))\n"
            "    p = p / np.sum(p, axis=-1, keepdims=True)\n",
            "    p = np.exp(scores - np.max(scores, axis=-1, keepdims=True))\n"
            "    p = p / np.sum(p, axis=-1, keepdims=True)\n"
            "    if mask is not None:\n        p = np.where(mask, 0.0, p)\n",
            None,
        ),
    ],
    programs=PROGRAMS,
)
