"""Connectionist temporal classification: ``CtcLoss``, ``-log p(target | log_probs)`` summed over every
alignment of the target to the T time steps (Graves et al., 2006), as PyTorch's ``ctc_loss``.

Notation, for one sample: ``lp`` (T, C) log-probabilities, the target ``l`` of S labels, and the
extended target ``l'`` = (blank, l1, blank, l2, ..., lS, blank) of L = 2S + 1 states.  An alignment
walks through ``l'`` one time step at a time: it stays, moves to the next state, or skips a blank
(from a label to the next label, when the two labels differ).

Forward (alpha) recursion, in log space (``lse`` = log-sum-exp; -inf where no path leads)::

    alpha_0(0) = lp_0(blank),   alpha_0(1) = lp_0(l1)
    alpha_t(s) = lse(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) if the skip is allowed) + lp_t(l'_s)
    nll        = -lse(alpha_{T-1}(L-1), alpha_{T-1}(L-2))

Backward (beta) recursion, the same from the end; then, with ``lcab_t(c) = lse over the states s with
l'_s = c of alpha_t(s) + beta_t(s)``, the gradient is PyTorch's::

    d nll / d lp_t(c) = exp(lp_t(c)) - exp(lcab_t(c) + nll - lp_t(c))          (0 for t beyond the input's length)

The second term is the derivative of ``nll``; the first, ``exp(lp)``, is what PyTorch adds: it assumes
``lp = log_softmax(logits)``, whose backward then removes it (each row of ``exp(lp)`` sums to 1, a
constant).  Through ``log_softmax`` the gradient is therefore exact; on raw ``lp`` it is PyTorch's.
Both recursions run in the backend (``kernels/ctc.py``: one sample's states in one loop).

Second order (``create_graph=True``): the gradient of ``_plain``, the same loss (plus the sum of
``exp(lp)`` over the counted time steps, so that its gradient is the one above) written in Tensor ops:
the forward recursion in probability space, each step rescaled to sum 1 (Rabiner's scaling), so no
log of 0 appears where no path leads.

Forward mode: the JVP is the transpose of that gradient (``jvp``), so forward and reverse mode give
the same Jacobian; on Tensors (a tangent that is itself differentiated) it is the JVP of ``_plain``.

A sample whose target cannot fit its input (too long, counting the blanks needed between repeated
labels) has loss inf, as PyTorch; its gradient is 0 (PyTorch's is NaN unless ``zero_infinity``).
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.composite import composite_jvp
from ..autograd.function import Op
from ..tensor import Tensor
from .nn_ops import composite, on_arrays, save_with_state
from .shape import cat, where


def extended_targets(targets: np.ndarray, target_lengths: np.ndarray, blank: int) -> tuple:
    """For padded targets (N, S): the extended targets ``ext`` (N, L) (blank between and around the
    labels; blank also past each target's end), ``skip`` (N, L) (may state s be reached from s - 2) and
    each target's number of states ``2 S_n + 1``."""
    n, s = targets.shape
    labels = backend.where(np.arange(s) < target_lengths[:, None], targets, blank)
    ext = np.full((n, 2 * s + 1), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    skip = np.zeros(ext.shape, dtype=bool)
    skip[:, 3::2] = labels[:, 1:] != labels[:, :-1]
    return ext, skip, 2 * target_lengths + 1


class CtcLoss(Op):
    """The CTC negative log-likelihood of each sample, (N,), of ``log_probs`` (T, N, C).

    Settings: ``targets`` (N, S) int64 (each row's first ``target_lengths[n]`` entries count),
    ``input_lengths`` and ``target_lengths`` (N,) int64, ``blank``, ``zero_infinity`` (infinite losses,
    and their gradients, become 0).
    """

    @staticmethod
    def forward(ctx, log_probs, targets=None, input_lengths=None, target_lengths=None, blank=0, zero_infinity=False):
        ext, skip, states = extended_targets(targets, target_lengths, blank)
        alpha, nll = backend.ctc_alpha(log_probs, ext, skip, states, input_lengths, target_lengths)
        feasible = np.isfinite(nll)
        save_with_state(ctx, log_probs, state=(alpha, ext, skip, states, nll))
        ctx.settings = {"targets": targets, "input_lengths": input_lengths, "target_lengths": target_lengths,
                        "blank": blank, "feasible": feasible}  # fmt: skip
        out = backend.where(feasible, nll, 0.0) if zero_infinity else nll
        return out.astype(log_probs.dtype)

    @staticmethod
    def backward(ctx, grad):
        if not on_arrays(grad):
            return composite(_plain, ctx.saved_tensors[:1], ctx, grad, **ctx.settings)
        log_probs, (alpha, ext, skip, states, nll) = ctx.saved_tensors
        return backend.ctc_gradient(grad, log_probs, alpha, nll, ext, skip, states, ctx.settings["input_lengths"])

    @staticmethod
    def jvp(ctx, dlp):
        # the transpose of backward's Jacobian (so jacfwd and jacrev agree, and through log_softmax, whose
        # tangents' rows sum to 0 against exp(lp), both are the exact derivative): each sample's loss moves
        # by its gradient (T, C) dotted with its tangent.  PyTorch has no forward AD for ctc_loss.
        if isinstance(dlp, Tensor) or isinstance(ctx.inputs[0], Tensor):
            return composite_jvp(lambda lp: _plain(lp, **ctx.settings), ctx.inputs, (dlp,))
        ones = np.ones(ctx.output.shape, ctx.output.dtype)
        return (CtcLoss.backward(ctx, ones) * dlp).sum((0, 2))


def _plain(log_probs, targets=None, input_lengths=None, target_lengths=None, blank=0, feasible=None):
    """The loss (N,) in Tensor ops (plus the sum of exp(lp) over each sample's time steps: see the module
    docstring), by the scaled forward recursion in probability space.  Infeasible samples give 0."""
    t_max, n, _ = log_probs.shape
    if t_max == 0:
        return log_probs.sum((0, 2)) * 0.0
    ext, skip, states = extended_targets(targets, target_lengths, blank)
    index = Tensor(ext)
    present = (np.arange(ext.shape[1]) < states[:, None]).astype(log_probs.dtype)
    first = present * (np.arange(ext.shape[1]) < 2)
    skip = skip.astype(log_probs.dtype)
    probs = log_probs.exp()
    alpha, log_scale = None, 0.0
    for t in range(t_max):
        y = probs[t].gather(1, index) * present
        if alpha is None:
            step = y * first
        else:
            zero = alpha[:, :1] * 0.0
            moved = cat([zero, alpha[:, :-1]], 1)
            skipped = cat([zero, zero, alpha[:, :-2]], 1) * skip if ext.shape[1] > 2 else 0.0
            step = (alpha + moved + skipped) * y
        active = (t < input_lengths) & feasible
        total = step.sum(1)
        scale = where(active, total, 1.0)
        step = step / scale.unsqueeze(1)
        alpha = step if alpha is None else where(active[:, None], step, alpha)
        log_scale = log_scale + scale.log()
    rows = np.arange(n)
    end = alpha[rows, states - 1] + where(states > 1, alpha[rows, np.maximum(states - 2, 0)], 0.0)
    end = where(feasible & (input_lengths > 0), end, 1.0)
    counted = (np.arange(t_max)[:, None] < input_lengths[None, :]) & feasible[None, :]  # (T, N)
    extra = (probs * counted[:, :, None].astype(log_probs.dtype)).sum((0, 2))
    return where(feasible, -(log_scale + end.log()), 0.0) + extra
