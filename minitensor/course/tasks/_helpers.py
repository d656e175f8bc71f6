"""Shared pieces of the tasks' checks (run in the grader): random float64 leaves, comparisons, the gradient check.

The student's results come from their child process (grader.Student) as plain data,
which the checks first make sure has the shape they asked for (``arrays``).
"""

from __future__ import annotations

import numpy as np

import minitensor as mt

from ..diagnose import diagnose, judge, output_weights, reference_data
from ..ops import reference_ops
from ._base import CheckFailure


def leaf(rng: np.random.Generator, *shape: int, transposed: bool = False, low: float | None = None) -> mt.Tensor:
    """A float64 leaf with requires_grad; ``transposed``: its data is a non-contiguous view;
    ``low``: values drawn in [low, low + 1) instead of from a standard normal."""
    draw_shape = shape[:-2] + shape[-2:][::-1] if transposed and len(shape) >= 2 else shape
    data = rng.standard_normal(draw_shape) if low is None else low + rng.random(draw_shape)
    if transposed and len(shape) >= 2:
        data = np.swapaxes(data, -1, -2)
    t = mt.from_numpy(data)
    t.requires_grad_(True)
    return t


def leaves(arrays: list) -> list:
    """float64 leaves with requires_grad on the very ``arrays`` (a transposed view stays one): a child's inputs."""
    out = []
    for a in arrays:
        t = mt.from_numpy(a)
        t.requires_grad_(True)
        out.append(t)
    return out


def random_shape(rng: np.random.Generator, min_ndim: int = 1, max_ndim: int = 3) -> tuple:
    """A random shape: ``min_ndim``-``max_ndim`` dims of sizes 2-4."""
    return tuple(int(s) for s in rng.integers(2, 5, int(rng.integers(min_ndim, max_ndim + 1))))


def broadcast_pair(rng: np.random.Generator) -> tuple:
    """Two random shapes that broadcast: some dims set to 1, some leading dims left out of the second."""
    out = random_shape(rng)
    a = tuple(1 if rng.random() < 0.3 else s for s in out)
    b = tuple(1 if rng.random() < 0.3 else s for s in out)[int(rng.integers(0, len(out))) :]
    return a, b


def malformed(what: str) -> CheckFailure:
    return CheckFailure(f"the process running your code sent malformed data ({what})")


def arrays(value, shapes: list, what: str) -> list:
    """``value`` if it is a list of arrays of these ``shapes`` (else a failure: the child is the student's)."""
    if not (isinstance(value, list) and len(value) == len(shapes)
            and all(isinstance(a, np.ndarray) and a.shape == tuple(s) for a, s in zip(value, shapes))):  # fmt: skip
        raise malformed(f"{what}: not {len(shapes)} arrays of shapes {shapes}")
    return value


def expect_close(got, want, what: str, rtol: float = 1e-7, atol: float = 1e-9) -> None:
    """Raise ``CheckFailure`` (with a diagnosis) unless ``got`` equals the reference ``want``."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        raise CheckFailure(f"{what}: shape {got.shape}, the reference's is {want.shape}")
    if not np.all(np.isfinite(got)) and np.all(np.isfinite(want)):
        raise CheckFailure(f"{what}: not finite (inf or nan) where the reference is finite", "unstable")
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        label, text = diagnose(got, want)
        for mine, theirs in [("the analytic gradient", "the result"), ("numeric one", "reference"),
                             ("analytic ", "yours "), ("numeric ", "reference ")]:  # fmt: skip
            text = text.replace(mine, theirs)
        raise CheckFailure(f"{what} differs from the reference: {text}", label)


def stable(out: np.ndarray, what: str) -> None:
    """Raise ``CheckFailure`` ('unstable') when ``out`` (a student's result on large inputs) is not finite."""
    if not np.all(np.isfinite(out)):
        raise CheckFailure(
            f"{what} is not finite (inf or nan) on inputs near 1000: exp overflows; subtract the max first",
            "unstable",
        )


def check_program(student, program: str, inputs: list, *, settings: dict | None = None, engine: bool = False,
                  features=None, axis: int = -1, seed: int = 0) -> None:  # fmt: skip
    """Raise ``CheckFailure`` (naming the bug when it can) unless the student's gradients of ``program`` are right.

    ``program``: a name in the task's ``programs``, run with ``settings`` on ``inputs``
    (float64 leaves).  In the student's child process it runs on their ops (their
    backward rules under minitensor's engine, or under their own engine with
    ``engine``); here, on minitensor's own ops, for the reference.  ``diagnose.judge``
    compares; ``features`` and ``axis`` help it name the bug.
    """
    settings = settings or {}
    fn = student.task.programs[program]
    ops = reference_ops()

    def reference(*tensors):
        return fn(ops, *tensors, **settings)

    with mt.no_grad():
        weights = output_weights(reference(*inputs).shape, seed)
    data, shapes = [t.numpy() for t in inputs], [tuple(t.shape) for t in inputs]

    def get(kind: str, ws: list):
        args = {"program": program, "inputs": data, "settings": settings, "weights": ws}
        reply = student.probe(kind, **({**args, "engine": engine} if kind == "gradients" else args))
        if kind == "numeric":
            return _per_weighting(reply, ws, shapes)
        if not (isinstance(reply, dict) and isinstance(reply.get("out"), np.ndarray)):
            raise malformed(f"{program}: no output")
        if "shape_error" in reply:
            what, got, want = reply["shape_error"] if isinstance(reply["shape_error"], list) else (None,) * 3
            if not (isinstance(what, str) and isinstance(got, list) and isinstance(want, list)):
                raise malformed(f"{program}: a shape error")
        elif "grads" in reply:
            reply["grads"] = _per_weighting(reply["grads"], ws, shapes)
        return reply

    judge(get, inputs, weights, reference_data(reference, inputs, weights), features, axis)


def _per_weighting(value, weights: list, shapes: list) -> list:
    if not (isinstance(value, list) and len(value) == len(weights)):
        raise malformed(f"not the gradients of {len(weights)} output weightings")
    return [arrays(g, shapes, "gradients") for g in value]
