"""``ctc_loss``: the connectionist temporal classification loss, as ``torch.nn.functional.ctc_loss``
(speech and handwriting recognition: outputs per time step, targets shorter and unaligned).

The recursions and PyTorch's gradient are in ``ops/ctc.py``; this file checks the arguments, brings
the targets to one padded (N, S) array and applies the reduction: ``'mean'`` divides each sample's
loss by its target length (at least 1), then averages over the batch, as PyTorch.

>>> log_probs = mt.randn(50, 16, 20).log_softmax(2)        # (T, N, C), blank = 0
>>> targets = mt.randint(1, 20, (16, 30))                   # (N, S) padded
>>> loss = F.ctc_loss(log_probs, targets, [50] * 16, mt.randint(10, 30, (16,)))
"""

from __future__ import annotations

import numpy as np

from ...ops.ctc import CtcLoss
from ...tensor import Tensor
from ._checks import as_input, check_float, reduction_of


def _integers(value, name: str, fn: str) -> np.ndarray:
    """Lengths or targets (a Tensor, an array, a list or tuple, or an int) as an int64 array."""
    array = value._data if isinstance(value, Tensor) else np.asarray(value)
    if array.dtype.kind == "f" and np.array_equal(array, np.round(array)):
        array = array.astype(np.int64)  # (PyTorch accepts float targets holding whole numbers)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {name} must hold integers, got dtype {array.dtype}")
    return array.astype(np.int64, copy=False)


def ctc_loss(
    log_probs: Tensor,
    targets,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """CTC loss of ``log_probs`` (T, N, C) (``log_softmax`` outputs; (T, C) unbatched) against ``targets``.

    Args:
        targets: (N, S) class indices, padded (each row's first ``target_lengths[n]`` count), or all the
            targets concatenated (sum(target_lengths),); unbatched: (S,).  They must not be ``blank``'s
            index in practice (PyTorch does not check it either).
        input_lengths: (N,) time steps used of each sample (<= T); target_lengths: (N,).
        blank: the blank class.  reduction: ``'mean'`` (each loss divided by its target length, then the
            batch mean), ``'sum'`` or ``'none'`` ((N,)).  zero_infinity: impossible alignments give 0.
    """
    fn = "ctc_loss"
    reduction = reduction_of(None, None, reduction, fn)
    log_probs = as_input(log_probs, "log_probs", fn)
    check_float(log_probs, fn)
    unbatched = log_probs.ndim == 2
    if log_probs.ndim not in (2, 3):
        raise ValueError(f"{fn}: log_probs must be (T, N, C) or unbatched (T, C), got shape {log_probs.shape}")
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    t_max, n, c = lp.shape
    if isinstance(blank, bool) or not isinstance(blank, (int, np.integer)) or not 0 <= blank < c:
        raise ValueError(f"{fn}: blank must be a class index in [0, {c - 1}], got {blank!r}")
    if not isinstance(zero_infinity, bool):
        raise TypeError(f"{fn}: zero_infinity must be a bool, got {type(zero_infinity).__name__}")
    targets = _integers(targets, "targets", fn)
    input_lengths = _integers(input_lengths, "input_lengths", fn).reshape(-1)
    target_lengths = _integers(target_lengths, "target_lengths", fn).reshape(-1)
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if lengths.shape != (n,):
            raise ValueError(f"{fn}: {name} must hold one length per sample ({n}), got {lengths.size}")
    if input_lengths.size and (input_lengths.min() < 0 or input_lengths.max() > t_max):
        raise ValueError(f"{fn}: input_lengths must be in [0, {t_max}] (T of log_probs), got {input_lengths.tolist()}")
    if target_lengths.size and target_lengths.min() < 0:
        raise ValueError(f"{fn}: target_lengths must be non-negative, got {target_lengths.tolist()}")
    padded = _padded(targets.reshape(1, -1) if unbatched else targets, target_lengths, fn)
    counted = np.arange(padded.shape[1]) < target_lengths[:, None]
    if np.any(counted & ((padded < 0) | (padded >= c))):
        bad = padded[counted & ((padded < 0) | (padded >= c))][0]
        raise ValueError(f"{fn}: targets hold class index {bad}, outside [0, {c - 1}]")
    settings = {"input_lengths": input_lengths, "target_lengths": target_lengths, "blank": int(blank)}
    nll = CtcLoss.apply(lp, targets=padded, zero_infinity=zero_infinity, **settings)
    if reduction == "none":
        return nll[0] if unbatched else nll
    if reduction == "sum":
        return nll.sum()
    return (nll / np.maximum(target_lengths, 1).astype(nll.dtype)).mean()


def _padded(targets: np.ndarray, target_lengths: np.ndarray, fn: str) -> np.ndarray:
    """The targets as (N, S): padded rows as they are, a concatenation (1-D) split by the lengths."""
    n = target_lengths.size
    if targets.ndim == 2:
        if targets.shape[0] != n:
            raise ValueError(f"{fn}: targets must have one row per sample ({n}), got shape {targets.shape}")
        if n and target_lengths.max() > targets.shape[1]:
            raise ValueError(
                f"{fn}: target_lengths {target_lengths.tolist()} exceed the targets' length {targets.shape[1]}"
            )
        return targets
    if targets.ndim != 1 or targets.size != target_lengths.sum():
        raise ValueError(
            f"{fn}: targets must be (N, S) padded or 1-D holding sum(target_lengths) = {target_lengths.sum()} "
            f"labels, got shape {targets.shape}"
        )
    padded = np.zeros((n, int(target_lengths.max(initial=0))), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
    for row, (start, length) in enumerate(zip(starts, target_lengths)):
        padded[row, :length] = targets[start : start + length]
    return padded
