"""What a child process does with the student's code (run there, never in the grader).

Each probe is a function of the workbook ``wb`` (the student's module for the task,
the reference modules for the others) and of plain data from the grader; it returns
plain data (arrays, lists, dicts) for the grader to compare with its own references:

``call``       a student's function, e.g. ``softmax.softmax_forward(x, dim)``: its result as
               an array (``pick``: one element of a tuple result, e.g. ``(loss, cache)[0]``)
``gradients``  a task's program (``Task.programs``) on the student's ops: its output and, for
               each output weighting ``w``, the gradient of ``(w * out).sum()`` for every input,
               by minitensor's engine over the student's backward rules (``engine``: by the
               student's own engine)
``numeric``    the same gradients by central differences (for the diagnosis of a failure)
others         the task's own (``Task.probes``): the Adam path, the engine's order, the milestone

>>> from minitensor.course.workbook import reference_workbook
>>> run(reference_workbook(), "elementwise", "call", {"function": "elementwise.exp_backward",
...     "args": [np.ones(2), np.full(2, 3.0)]})
array([3., 3.])
"""

from __future__ import annotations

import numpy as np

import minitensor as mt

from .diagnose import GradShapeError, autograd_gradients, check_shape, numeric_gradients
from .engine_adapter import backward_with
from .ops import build
from .tasks import BY_NAME
from .tasks._helpers import leaves


def preload() -> None:
    """Import and build everything the probes use, once, in the helper (its children are forks of it)."""
    from . import milestone  # noqa: F401
    from .workbook import reference_workbook

    build(reference_workbook())


def as_array(x, what: str) -> np.ndarray:
    """A student's result as an array of numbers (``TypeError`` naming ``what`` otherwise)."""
    array = np.asarray(x.detach().numpy() if isinstance(x, mt.Tensor) else x)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{what} returned {type(x).__name__} of dtype {array.dtype}, not an array of numbers")
    return array


def _program(wb, task: str, name: str, settings: dict):
    ops = build(wb)
    program = BY_NAME[task].programs[name]
    return lambda *tensors: program(ops, *tensors, **settings)


def call(wb, task: str, function: str, args: list, pick: int | None = None) -> np.ndarray:
    module, name = function.split(".")
    result = getattr(getattr(wb, module), name)(*args)
    return as_array(result if pick is None else result[pick], function)


def gradients(wb, task: str, program: str, inputs: list, settings: dict, weights: list, engine: bool = False) -> dict:
    fn, xs = _program(wb, task, program, settings), leaves(inputs)
    with mt.no_grad():
        reply = {"out": as_array(fn(*xs), program)}
    if weights and reply["out"].shape != weights[0].shape:
        return reply  # (the grader reports the wrong output)
    try:
        reply["grads"] = [_engine_gradients(wb, fn, xs, w) if engine else autograd_gradients(fn, xs, w)
                          for w in weights]  # fmt: skip
    except GradShapeError as error:
        reply["shape_error"] = [error.what, list(error.got), list(error.want)]
    return reply


def _engine_gradients(wb, fn, xs: list, w: np.ndarray) -> list:
    """The gradients the student's engine (``wb.engine.backpropagate``) leaves in ``.grad``."""
    for t in xs:
        t.grad = None
    with mt.enable_grad():
        backward_with(wb.engine, fn(*xs), w)
    return [np.zeros(t.shape) if t.grad is None else check_shape("backpropagate", as_array(t.grad, "backpropagate"),
                                                                  t.shape) for t in xs]  # fmt: skip


def numeric(wb, task: str, program: str, inputs: list, settings: dict, weights: list) -> list:
    return numeric_gradients(_program(wb, task, program, settings), leaves(inputs), weights)


GENERIC = {"call": call, "gradients": gradients, "numeric": numeric}


def run(wb, task: str, probe: str, args: dict):
    """Probe ``probe`` of task ``task`` (generic, or the task's own) on workbook ``wb``."""
    if probe in GENERIC:
        return GENERIC[probe](wb, task, **args)
    return BY_NAME[task].probes[probe](wb, **args)
