"""Task: one step of Adam (with AdamW's decoupled weight decay)."""

from __future__ import annotations

import numpy as np

import minitensor as mt

from ..ops import WorkbookAdamW
from ._base import Check, Mutant, Task
from ._helpers import arrays, expect_close

SOLUTION = '''"""Week 11: the Adam step.

Adam keeps, per parameter, running means of the gradient (m) and of its square (v).
Both start at 0, so early on they are too small: bias correction divides them by
(1 - beta**t).  Weight decay is decoupled (AdamW): the weights shrink by
lr * weight_decay before the step.
"""

import numpy as np


def adam_step(param, grad, m, v, t, lr, beta1, beta2, eps, weight_decay):
    """Step ``t`` (1, 2, ...) of AdamW.  Returns (new param, new m, new v), arrays like ``param``.

    m = beta1 * m + (1 - beta1) * grad;  v likewise with grad**2 and beta2;
    param -= lr * m_hat / (sqrt(v_hat) + eps), m_hat and v_hat bias-corrected.
    """
    # BEGIN SOLUTION
    param = param * (1 - lr * weight_decay)
    m = beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad * grad
    m_hat = m / (1 - beta1**t)
    v_hat = v / (1 - beta2**t)
    return param - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    # END SOLUTION
'''


def _run(make, start: np.ndarray, grads: list) -> list:
    """The parameter after each step of an optimizer ``make(params)`` fed ``grads``."""
    p = mt.tensor(start.copy(), dtype=mt.float64, requires_grad=True)
    opt, path = make([p]), []
    for g in grads:
        p.grad = mt.tensor(g, dtype=mt.float64)
        opt.step()
        path.append(p.numpy().copy())
    return path


def _path(wb, start: np.ndarray, grads: list, settings: dict) -> list:
    """(In the student's process) the parameter after each step of AdamW with the workbook's ``adam_step``."""
    return _run(lambda ps: WorkbookAdamW(wb.adam.adam_step, ps, **settings), start, grads)


def _steps(student, weight_decay: float) -> None:
    rng = np.random.default_rng(21)
    start, grads = rng.standard_normal((3, 4)), [rng.standard_normal((3, 4)) for _ in range(5)]
    settings = {"lr": 1e-2, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": weight_decay}
    mine = arrays(student.probe("path", start=start, grads=grads, settings=settings), [(3, 4)] * 5, "the steps")
    ref = _run(lambda ps: mt.optim.AdamW(ps, **settings), start, grads)
    for t, (a, b) in enumerate(zip(mine, ref), start=1):
        before = start if t == 1 else ref[t - 2]
        expect_close(a - before, b - before, f"the update of step {t}", rtol=1e-6)


TASK = Task(
    name="adam",
    title="The Adam step",
    summary="moment estimates, bias correction and decoupled weight decay, against mt.optim.AdamW",
    solution=SOLUTION,
    checks=[
        Check("five steps equal mt.optim.AdamW", 6, lambda student: _steps(student, 0.0)),
        Check("with weight decay", 4, lambda student: _steps(student, 0.1)),
    ],  # fmt: skip
    mutants=[
        Mutant(
            "Adam without bias correction",
            "m_hat = m / (1 - beta1**t)\n    v_hat = v / (1 - beta2**t)",
            "m_hat = m\n    v_hat = v",
            "factor",
        )
    ],
    probes={"path": _path},
)
