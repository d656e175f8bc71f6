"""L-BFGS: a quasi-Newton method that re-evaluates the loss through a closure, as PyTorch's ``LBFGS``.

``opt.step(closure)`` runs up to ``max_iter`` iterations on all parameters seen
as one flat vector ``x`` with gradient ``g``:

1. the direction ``d = -H g``, where ``H`` approximates the inverse Hessian from
   the last ``history_size`` pairs ``s = x_new - x_old``, ``y = g_new - g_old``
   (the two-loop recursion; a pair with ``y·s <= 1e-10`` is not kept, and ``H``
   starts as ``(y·s / y·y) I``); on the very first iteration ``d = -g``;
2. the step ``x += t d`` with ``t = lr``, except on the first iteration ever,
   ``t = min(1, 1 / sum|g|) * lr``;
3. the closure again, for the new loss and gradient.

It stops early when ``max|g| <= tolerance_grad``, when ``g·d > -tolerance_change``
(not a descent direction), after ``max_eval`` evaluations, or when the step
(``max|t d|``) or the change of the loss falls below ``tolerance_change``.  The
history, the direction and the step carry over to the next ``step`` call.
Arithmetic is in the parameters' dtype, as PyTorch's.  One parameter group only,
and no line search: ``line_search_fn="strong_wolfe"`` raises NotImplementedError.

>>> import minitensor as mt
>>> w = mt.tensor([3.0, -2.0], requires_grad=True)
>>> opt = mt.optim.LBFGS([w], lr=1.0)
>>> def closure():
...     opt.zero_grad()
...     loss = ((w - 1.0) ** 2).sum()
...     loss.backward()
...     return loss
>>> _ = opt.step(closure)
>>> [round(v, 4) for v in w.tolist()]
[1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from ..autograd.grad_mode import enable_grad
from .optimizer import Optimizer, check_number


class LBFGS(Optimizer):
    """Limited-memory BFGS on a closure (see the module docstring).

    Args:
        params: Tensors to optimize (one group).
        lr: step length (> 0).
        max_iter: iterations per ``step`` call.
        max_eval: closure evaluations per ``step`` call (default ``max_iter * 5 // 4``).
        tolerance_grad, tolerance_change: the stopping thresholds.
        history_size: how many (s, y) pairs make the Hessian estimate.
        line_search_fn: None (PyTorch's default); "strong_wolfe" is not implemented.
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1.0,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if line_search_fn is not None:
            raise NotImplementedError(f"LBFGS: line_search_fn={line_search_fn!r} is not implemented (use None)")
        max_eval = max_iter * 5 // 4 if max_eval is None else max_eval
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=None)  # fmt: skip
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS: one parameter group only (all parameters are one vector)")

    def _validate(self, settings: dict) -> None:
        check_number("lr", settings["lr"])
        for name in ("max_iter", "max_eval", "history_size"):
            if not isinstance(settings[name], int) or settings[name] < 1:
                raise ValueError(f"LBFGS: {name} must be a positive int, got {settings[name]!r}")

    def step(self, closure: Callable | None = None):
        """Run the iterations; ``closure`` (required) zeroes the gradients, computes the loss, calls
        ``backward`` and returns the loss.  Returns the closure's first loss."""
        if closure is None:
            raise ValueError("LBFGS.step needs a closure that re-evaluates the model and returns the loss")
        group = self.param_groups[0]
        state = self.state[self.param_groups[0]["params"][0]]  # (all parameters' state, under the first, as PyTorch)
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        first_loss, g = self._evaluate(closure, state)
        loss, evals = float(first_loss.item() if hasattr(first_loss, "item") else first_loss), 1
        if np.abs(g).max(initial=0.0) <= group["tolerance_grad"]:
            return first_loss
        for n_iter in range(1, group["max_iter"] + 1):
            state["n_iter"] += 1
            d = self._direction(g, state, group["history_size"])
            state["prev_g"], prev_loss = g, loss
            t = group["lr"] * (min(1.0, 1.0 / np.abs(g).sum()) if state["n_iter"] == 1 else 1.0)
            state["d"], state["t"] = d, t  # (kept even when no step follows, as PyTorch's)
            if g.dot(d) > -group["tolerance_change"]:
                break
            self._move(t, d)
            if n_iter == group["max_iter"]:
                break
            new_loss, g = self._evaluate(closure, state)
            loss, evals = float(new_loss.item() if hasattr(new_loss, "item") else new_loss), evals + 1
            if evals >= group["max_eval"] or np.abs(g).max(initial=0.0) <= group["tolerance_grad"]:
                break
            if np.abs(d * t).max(initial=0.0) <= group["tolerance_change"]:
                break
            if abs(loss - prev_loss) < group["tolerance_change"]:
                break
        return first_loss

    # ------------------------------------------------------------ state dicts
    def load_state_dict(self, state_dict: dict) -> None:
        """Restore settings and the history (flat vectors of all parameters; each history list may
        come back as a list of Tensors, as ``mt.load`` gives it, or as a 2-D array, one row per entry)."""
        super().load_state_dict({**state_dict, "state": {}})
        saved = next(iter(state_dict["state"].values()), None)
        if saved is None:
            return
        params = self.param_groups[0]["params"]
        dtype, size = params[0].dtype, sum(p._data.size for p in params)
        self.state[params[0]] = {k: _restored(k, v, dtype, size) for k, v in saved.items()}

    # ------------------------------------------------------------ the pieces
    def _evaluate(self, closure: Callable, state: dict) -> tuple:
        """(the closure's loss, the flat gradient: zeros for a parameter without one)."""
        with enable_grad():
            loss = closure()
        state["func_evals"] += 1
        params = self.param_groups[0]["params"]
        parts = [(p.grad._data if p.grad is not None else np.zeros_like(p._data)).ravel() for p in params]
        return loss, np.concatenate(parts) if parts else np.zeros(0)

    def _direction(self, g: np.ndarray, state: dict, history_size: int) -> np.ndarray:
        """-H g by the two-loop recursion over the kept (s, y) pairs (first ever: -g)."""
        if state["n_iter"] == 1:
            state.update(old_dirs=[], old_stps=[], ro=[], H_diag=1.0)
            return -g
        y, s = g - state["prev_g"], state["d"] * state["t"]
        ys = y.dot(s)
        if ys > 1e-10:  # keep the pair (the oldest goes when the history is full)
            if len(state["old_dirs"]) == history_size:
                for key in ("old_dirs", "old_stps", "ro"):
                    state[key].pop(0)
            state["old_dirs"].append(y)
            state["old_stps"].append(s)
            state["ro"].append(1.0 / ys)
            state["H_diag"] = ys / y.dot(y)
        dirs, stps, ro = state["old_dirs"], state["old_stps"], state["ro"]
        q, alphas = -g, [0.0] * len(dirs)
        for i in range(len(dirs) - 1, -1, -1):
            alphas[i] = stps[i].dot(q) * ro[i]
            q = q - alphas[i] * dirs[i]
        r = q * state["H_diag"]
        for i in range(len(dirs)):
            r = r + (alphas[i] - dirs[i].dot(r) * ro[i]) * stps[i]
        return r

    def _move(self, t: float, d: np.ndarray) -> None:
        """x += t d, parameter by parameter (in place: the graph never sees it)."""
        offset = 0
        for p in self.param_groups[0]["params"]:
            n = p._data.size
            p._data += (t * d[offset : offset + n]).reshape(p._data.shape).astype(p._data.dtype, copy=False)
            p._version += 1
            offset += n


_LISTS = ("old_dirs", "old_stps", "ro")  # the history: one entry per kept (s, y) pair
_VECTORS = ("d", "prev_g")  # flat vectors of all parameters


def _restored(key: str, value, dtype, size: int):
    """One saved state entry in this optimizer's form (lists of arrays, flat vectors, numbers)."""
    value = value._data if hasattr(value, "_data") else value
    if key in _LISTS:
        rows = np.asarray(value, dtype=dtype)
        return [np.array(r) for r in (rows.reshape(-1, size) if key != "ro" else rows.reshape(-1))]
    if key in _VECTORS:
        vector = np.asarray(value, dtype=dtype)
        if vector.size != size:
            raise ValueError(f"load_state_dict: state {key!r} has {vector.size} values, the parameters have {size}")
        return vector.reshape(size).copy()
    if key in ("func_evals", "n_iter"):
        return int(value)
    return np.asarray(value, dtype=dtype)[()]  # H_diag, t: numbers in the parameters' dtype
