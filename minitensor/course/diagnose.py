"""A gradient check that names the bug: how a wrong analytic gradient differs from the numeric one.

``judge`` compares a function's output and gradients, for two random weightings ``w``
of the output (float64, never a plain ``.sum()``), with a reference's, to 1e-7.  When
they differ it gets the numeric gradients too (central differences of
``(w * fn(x)).sum()``), and ``diagnose`` says what the analytic gradient looks like
next to the numeric one:

=============  ==========================================================
``zero``        all zero where the numeric gradient is not
``ignores_grad`` the same for both weightings: it ignores the incoming gradient
``sign``        the numeric gradient with the sign flipped
``factor``      the numeric gradient times a constant (``2``, ``1/N``, ...)
``transposed``  the numeric gradient with its last two dims swapped
``wrong_axis``  constant along another dim than the numeric one
``missing_term`` off by a term that is, row by row, a multiple of a known array
``broadcast_sum`` (from shapes) the broadcast shape, not the input's
``unstable``    (from a forward check) not finite on large inputs
=============  ==========================================================

It claims a cause only when the pattern fits to 1e-4; otherwise it describes the
difference (largest error, where) and names nothing.

The grader runs ``judge`` on data from the child process that ran the student's code
(``tasks/_helpers.check_program``); ``gradient_check(fn, inputs)`` is the same check on a
function computed in this process.
"""

from __future__ import annotations

import numpy as np

import minitensor as mt

from .tasks._base import CheckFailure

ATOL, RTOL = 1e-5, 1e-3  # gradcheck's tolerances
FIT = 1e-4  # how exactly a pattern must fit to be claimed


class GradShapeError(ValueError):
    """A student's function returned a gradient of the wrong shape."""

    def __init__(self, what: str, got: tuple, want: tuple) -> None:
        super().__init__(f"{what} returned a gradient of shape {got}, expected {want}")
        self.what, self.got, self.want = what, tuple(got), tuple(want)


def check_shape(what: str, grad, want: tuple) -> np.ndarray:
    """``grad`` as an array, after checking it has the shape ``want`` (else ``GradShapeError``)."""
    grad = np.asarray(grad)
    if grad.shape != tuple(want):
        raise GradShapeError(what, grad.shape, want)
    return grad


def shape_diagnosis(got: tuple, want: tuple) -> tuple[str | None, str]:
    """(label, explanation) for a gradient of shape ``got`` where ``want`` was expected."""
    if len(got) == len(want) >= 2 and got[:-2] == want[:-2] and got[-2:] == want[-2:][::-1]:
        return "transposed", f"its shape {got} is the expected {want} transposed: the gradient is transposed"
    try:
        broadcast = np.broadcast_shapes(got, want) == got
    except ValueError:
        broadcast = False
    if broadcast:
        return "broadcast_sum", (
            f"it has the broadcast shape {got}, not the input's {want}: a missing broadcast sum "
            "(sum over the leading dims and over the dims where the input has size 1)"
        )
    return None, f"shape {got} where {want} was expected"


def _close(a: np.ndarray, n: np.ndarray) -> bool:
    return bool(np.all(np.abs(a - n) <= ATOL + RTOL * np.abs(n)))


def _fits(a: np.ndarray, b: np.ndarray) -> bool:
    """a equals b to FIT relative to their size."""
    return float(np.linalg.norm(a - b)) <= FIT * max(float(np.linalg.norm(b)), 1e-12)


def _factor_text(c: float) -> str:
    for k in range(2, 65):
        if abs(c - k) <= FIT * k:
            return f"{k} times the numeric one (a factor of {k} too many)"
        if abs(c - 1 / k) <= FIT / k:
            return f"1/{k} of the numeric one (a missing factor of {k})"
    return f"{c:.4g} times the numeric one (a constant factor)"


def _constant_axes(x: np.ndarray) -> set:
    return {d for d in range(x.ndim) if x.shape[d] > 1 and _fits(np.broadcast_to(x.mean(d, keepdims=True), x.shape), x)}


def _missing_term(diff: np.ndarray, features: dict, axis: int) -> bool:
    """Is each row of ``diff`` along ``axis`` a combination of the same rows of the features?"""
    rows = np.moveaxis(diff, axis, -1).reshape(-1, diff.shape[axis])
    basis = [np.moveaxis(np.broadcast_to(f, diff.shape), axis, -1).reshape(rows.shape) for f in features.values()]
    if rows.shape[1] < len(basis) + 2:  # too short a row: any difference would fit
        return False
    fitted = np.empty_like(rows)
    for r in range(rows.shape[0]):
        m = np.stack([b[r] for b in basis], axis=1)
        fitted[r] = m @ np.linalg.lstsq(m, rows[r], rcond=None)[0]
    return _fits(fitted, rows)


def diagnose(a, n, a2=None, n2=None, features: dict | None = None, axis: int = -1) -> tuple[str | None, str]:
    """(label, explanation) of how the analytic gradient ``a`` differs from the numeric ``n``.

    ``a2, n2``: the same for a second output weighting (to see whether ``a`` follows it).
    ``features``: arrays shaped like ``a`` (e.g. the softmax output) that a missing
    term of the formula would be, row by row along ``axis``, a multiple of.
    The label is None when no pattern fits (then nothing is claimed).
    """
    a, n = np.asarray(a, dtype=np.float64), np.asarray(n, dtype=np.float64)
    if a.shape != n.shape:
        return shape_diagnosis(a.shape, n.shape)
    if _close(a, n):
        return None, "the gradients agree"
    n_norm = float(np.linalg.norm(n))
    if n_norm <= 1e-12:
        return None, "the numeric gradient is zero but the analytic one is not"
    if float(np.linalg.norm(a)) <= 1e-12 * n_norm:
        return "zero", "the analytic gradient is zero where the numeric one is not: no gradient reaches this input"
    if a2 is not None and _fits(np.asarray(a2), a) and not _fits(np.asarray(n2), n):
        return "ignores_grad", (
            "the analytic gradient stays the same when the output's gradient changes: it ignores the incoming "
            "gradient (e.g. ones_like(grad) in place of the real gradient)"
        )
    both_a, both_n = (a, n) if a2 is None else (np.append(a, a2), np.append(n, n2))  # one factor for both
    c = float(np.vdot(both_a, both_n)) / float(np.vdot(both_n, both_n))
    if both_a.size >= 2 and _fits(both_a, c * both_n):
        if abs(c + 1) <= FIT:
            return "sign", "the analytic gradient is the numeric one with the sign flipped (off by a sign)"
        return "factor", "the analytic gradient is " + _factor_text(c)
    const_a, const_n = _constant_axes(a), _constant_axes(n)
    if const_a and const_n and const_a != const_n:
        return "wrong_axis", (
            f"the analytic gradient is constant along dim(s) {sorted(const_a)}, the numeric one along "
            f"{sorted(const_n)}: a reduction undone (broadcast back) over the wrong axis"
        )
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2] and _fits(a, np.swapaxes(n, -1, -2)):
        return "transposed", "the analytic gradient is the numeric one transposed (last two dims swapped)"
    if features and _missing_term(a - n, features, axis):
        return "missing_term", (
            f"the analytic gradient differs by a term that is, along dim {axis}, a multiple of "
            f"{' and '.join(features)}: a term of the backward formula is missing"
        )
    worst = np.unravel_index(int(np.argmax(np.abs(a - n))), a.shape)
    where = tuple(int(i) for i in worst)
    return None, f"no simple pattern; largest difference at {where}: analytic {a[worst]:.6g}, numeric {n[worst]:.6g}"


def numeric_gradients(fn, inputs: list, weights: list, eps: float = 1e-6) -> list:
    """For each weighting w: central differences of ``(w * fn(*inputs)).sum()`` for every input."""
    out = [[np.zeros(t.shape) for t in inputs] for _ in weights]
    with mt.no_grad():
        for i, t in enumerate(inputs):
            for idx in np.ndindex(*t.shape):
                orig = t._data[idx].copy()
                t._data[idx] = orig + eps
                plus = np.asarray(fn(*inputs).numpy(), dtype=np.float64)
                t._data[idx] = orig - eps
                minus = np.asarray(fn(*inputs).numpy(), dtype=np.float64)
                t._data[idx] = orig
                for k, w in enumerate(weights):
                    out[k][i][idx] = np.sum(w * (plus - minus)) / (2 * eps)
    return out


def autograd_gradients(fn, inputs: list, w: np.ndarray) -> list:
    """The gradients of ``(w * fn(*inputs)).sum()`` by minitensor's engine (zeros where none flows)."""
    with mt.enable_grad():
        out = fn(*inputs)
        gs = mt.autograd.grad(out, inputs, mt.tensor(w, dtype=out.dtype), allow_unused=True)
    return [np.zeros(t.shape) if g is None else g.numpy() for g, t in zip(gs, inputs)]


def reference_data(reference, inputs: list, weights: list) -> tuple:
    """(output, [gradients of every input for each weighting]) of ``reference`` (Tensors -> Tensor)."""
    with mt.no_grad():
        out = reference(*inputs).numpy()
    return out, [autograd_gradients(reference, inputs, w) for w in weights]


def output_weights(shape: tuple, seed: int) -> list:
    """The two random weightings of an output of ``shape`` the checks use."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape), rng.standard_normal(shape)]


def _equal(a: np.ndarray, r: np.ndarray) -> bool:
    return a.shape == r.shape and bool(np.allclose(a, r, rtol=1e-7, atol=1e-9))


def judge(get, inputs: list, weights: list, reference: tuple | None = None, features=None, axis: int = -1) -> None:
    """Raise ``CheckFailure`` (naming the bug when it can) unless a function's gradients are right.

    ``get(kind, weights)`` gives the function's data: for ``"gradients"`` a dict with
    ``out`` and ``grads`` (per weighting, per input; missing when ``out`` has the wrong
    shape) or ``shape_error`` ``(what, got, want)``; for ``"numeric"`` the central
    differences, laid out as ``grads``.  ``reference``: ``reference_data(...)``, which
    output and gradients must equal to 1e-7; without one, the numeric gradients judge.
    ``features``: ``(*inputs) -> {name: array shaped like a gradient}`` for ``diagnose``.
    """
    reply = get("gradients", weights)
    if "shape_error" in reply:
        what, got, want = reply["shape_error"]
        label, text = shape_diagnosis(tuple(got), tuple(want))
        raise CheckFailure(f"{what} returned a gradient of shape {tuple(got)}, expected {tuple(want)}: {text}", label)
    out, grads = reply["out"], reply.get("grads")
    if reference is not None:
        want, ref_grads = reference
        if _equal(out, want) and grads is not None:
            if all(_equal(a, r) for ga, gr in zip(grads, ref_grads) for a, r in zip(ga, gr)):
                return
    if grads is not None:
        (a1, a2), (n1, n2) = grads, get("numeric", weights)
        for i in range(len(inputs)):
            if not (_close(a1[i], n1[i]) and _close(a2[i], n2[i])):
                feats = {k: np.asarray(v) for k, v in (features(*inputs) if features else {}).items()}
                feats = {k: v for k, v in feats.items() if v.shape == a1[i].shape} or None
                label, text = diagnose(a1[i], n1[i], a2[i], n2[i], feats, axis)
                raise CheckFailure(f"gradient of input {i} (shape {tuple(inputs[i].shape)}) is wrong: {text}", label)
        if reference is None:
            return
    if grads is None or not _equal(out, want):
        raise CheckFailure("the output differs from minitensor's reference", None)
    for ga, gr in zip(grads, ref_grads):
        for i, (a, r) in enumerate(zip(ga, gr)):
            if not _equal(a, r):
                label, text = diagnose(a, r)
                if _close(a, r):  # within the finite differences' tolerance, but more than rounding
                    label, text = None, f"off by up to {np.max(np.abs(a - r)):.3g}, more than rounding (rtol 1e-7)"
                text = text.replace("numeric one", "reference's").replace("numeric ", "reference ")
                raise CheckFailure(f"gradient of input {i} differs from minitensor's own: {text}", label)


def gradient_check(
    fn, inputs: list, *, reference=None, analytic=None, features=None, axis: int = -1, seed: int = 0
) -> None:
    """``judge`` on a function computed in this process: raise ``CheckFailure`` unless its gradients are right.

    ``fn(*inputs) -> Tensor``; ``inputs``: float64 Tensors with requires_grad.
    ``reference``: the same function in minitensor's own ops.
    ``analytic(fn, inputs, w) -> [arrays]`` replaces autograd (e.g. a student's engine).
    """
    with mt.no_grad():
        shape = (reference or fn)(*inputs).shape
    weights = output_weights(shape, seed)

    def get(kind: str, ws: list):
        if kind == "numeric":
            return numeric_gradients(fn, inputs, ws)
        with mt.no_grad():
            reply = {"out": fn(*inputs).numpy()}
        if reply["out"].shape == shape:
            try:
                reply["grads"] = [(analytic or autograd_gradients)(fn, inputs, w) for w in ws]
            except GradShapeError as error:
                reply["shape_error"] = (error.what, error.got, error.want)
        return reply

    judge(get, inputs, weights, None if reference is None else reference_data(reference, inputs, weights),
          features, axis)  # fmt: skip
