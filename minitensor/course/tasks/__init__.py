"""The course's tasks, in teaching order (one a week).  Each module defines ``TASK``."""

from __future__ import annotations

from . import (
    adam,
    attention,
    broadcasting,
    cross_entropy,
    elementwise,
    engine,
    forward_mode,
    indexing,
    layer_norm,
    matmul,
    reductions,
    softmax,
    transformer,
)  # fmt: skip

TASKS = [m.TASK for m in (elementwise, broadcasting, reductions, matmul, indexing, softmax, layer_norm, engine,
                                cross_entropy, attention, adam, transformer, forward_mode)]  # fmt: skip
BY_NAME = {t.name: t for t in TASKS}
