"""Loss functions: ``cross_entropy``, ``nll_loss``, ``mse_loss`` (each one op from ``ops.loss``).

Shapes, with C classes: ``input`` is (N, C), (N, C, d1, ...) or one unbatched
sample (C,); class-index ``target`` is (N,), (N, d1, ...) or () and holds
integers in [0, C) or ``ignore_index``.  ``reduction`` is ``'mean'`` (PyTorch's
weighted mean over the counted targets), ``'sum'`` or ``'none'`` (one loss per
target, shaped like it).  ``input`` and ``target`` may be NumPy arrays (a float
target takes the input's dtype; see ``_checks.as_input``).

>>> logits = mt.tensor([[2.0, 0.5, -1.0], [0.0, 1.0, 0.0]], requires_grad=True)
>>> loss = F.cross_entropy(logits, mt.tensor([0, 1]))
>>> loss.backward()              # logits.grad = (softmax(logits) - onehot(target)) / 2
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np

from ...autograd.batching import BatchedTensor, physical
from ...ops import loss as L
from ...tensor import Tensor
from ._checks import as_input, check_float, float_like

_REDUCTIONS = ("none", "mean", "sum")


def cross_entropy(
    input: Tensor,  # noqa: A002
    target,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross-entropy between logits and targets: ``-log softmax(input)[target]``, fused in one op.

    Args:
        input: unnormalised scores (logits), (N, C), (N, C, d1, ...) or (C,).
        target: class indices (int64), shaped like ``input`` without the class
            dim; or class probabilities (float), shaped like ``input``.
        weight: optional (C,) rescaling of each class's loss.
        ignore_index: a target value that contributes neither loss nor gradient
            (class-index targets only).
        reduction: ``'mean'`` (divided by the summed weight of the counted
            targets; 0 when there are none, where PyTorch gives NaN), ``'sum'`` or ``'none'``.
        label_smoothing: in [0, 1]; the target becomes ``(1 - s) * onehot + s / C``.

    Returns:
        A 0-d Tensor, or with ``reduction='none'`` the per-target losses.

    >>> F.cross_entropy(mt.zeros(2, 4), mt.tensor([1, 3])).item()  # log(4)  # doctest: +ELLIPSIS
    1.3862943...
    """
    fn = "cross_entropy"
    input, n_classes = _check_input(input, fn)  # noqa: A001
    _check_options(reduction, fn)
    _check_label_smoothing(label_smoothing, fn)
    weights = _weight(weight, n_classes, input, fn)
    target_array = target._data if isinstance(target, Tensor) else np.asarray(target)  # (in vmap: one example's shape)
    if target_array.dtype.kind == "f":
        if target_array.shape != input.shape:
            raise ValueError(
                f"{fn}: class-probability (float) targets must have the input's shape {input.shape}, "
                f"got {target_array.shape}; class-index targets must be int64"
            )
        target = _same_dtype(target, input, fn)
        return L.SoftCrossEntropy.apply(
            input, target, weight=weights, reduction=reduction, label_smoothing=float(label_smoothing)
        )
    target_array = _class_indices(target, input, n_classes, ignore_index, fn)
    return L.CrossEntropy.apply(
        input,
        target_array,
        weight=weights,
        ignore_index=ignore_index,
        reduction=reduction,
        label_smoothing=float(label_smoothing),
    )


def nll_loss(
    input: Tensor,  # noqa: A002
    target,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood ``-input[target]`` of log-probabilities (e.g. ``F.log_softmax`` output).

    Args:
        input: log-probabilities, (N, C), (N, C, d1, ...) or (C,).
        target: int64 class indices, shaped like ``input`` without the class dim.
        weight, ignore_index, reduction: as in ``cross_entropy``.

    >>> logits, target = mt.randn(4, 3), mt.tensor([0, 2, 1, 0])
    >>> loss = F.nll_loss(F.log_softmax(logits, dim=1), target)  # the same as F.cross_entropy(logits, target)
    """
    fn = "nll_loss"
    input, n_classes = _check_input(input, fn)  # noqa: A001
    _check_options(reduction, fn)
    weights = _weight(weight, n_classes, input, fn)
    target_array = _class_indices(target, input, n_classes, ignore_index, fn)
    return L.NLLLoss.apply(input, target_array, weight=weights, ignore_index=ignore_index, reduction=reduction)


def mse_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean squared error ``(input - target) ** 2``, averaged (``'mean'``), summed or elementwise.

    ``target`` should have the input's shape, or be a number; other
    broadcastable shapes work with a warning, as in PyTorch (an (N, 1) input
    against an (N,) target makes an (N, N) difference, rarely what was meant).

    >>> F.mse_loss(mt.tensor([1.0, 2.0]), mt.tensor([0.0, 0.0])).item()
    2.5
    """
    input, target = regression_pair(input, target, reduction, "mse_loss")  # noqa: A001
    return L.MSELoss.apply(input, target, reduction=reduction)


def regression_pair(input, target, reduction: str, fn: str) -> tuple:  # noqa: A002
    """(input, target) of an elementwise loss, checked: a float input, the target in its dtype, of
    its shape or a number; other broadcastable shapes work with a warning, as in PyTorch."""
    input = as_input(input, "input", fn, like=float_like(target))  # noqa: A001
    check_float(input, fn)
    _check_options(reduction, fn)
    target = _same_dtype(target, input, fn)
    target_shape = target.shape if isinstance(target, Tensor) else np.shape(target)
    if target_shape not in (input.shape, ()):
        try:
            np.broadcast_shapes(input.shape, target_shape)
        except ValueError:
            raise ValueError(
                f"{fn}: target shape {target_shape} cannot broadcast against input shape {input.shape}"
            ) from None
        warnings.warn(
            f"{fn}: target shape {target_shape} differs from input shape {input.shape}; they will be broadcast",
            UserWarning,
            stacklevel=3,
        )
    return input, target


# ---------------------------------------------------------------- checks
def _check_input(input, fn: str) -> tuple:  # noqa: A002
    """The scores/log-probabilities as a Tensor (an array is converted), and the number of classes."""
    input = as_input(input, "input", fn)  # noqa: A001
    check_float(input, fn)
    if input.ndim == 0:
        raise ValueError(f"{fn}: input must be (C,), (N, C) or (N, C, d1, ...), got a 0-d tensor")
    return input, input.shape[L.class_axis(input._data)]


def _check_options(reduction: str, fn: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def _check_label_smoothing(label_smoothing, fn: str) -> None:
    if isinstance(label_smoothing, bool) or not (isinstance(label_smoothing, Real) and 0 <= label_smoothing <= 1):
        raise ValueError(f"{fn}: label_smoothing must be a number in [0, 1], got {label_smoothing!r}")


def _check_ignore_index(ignore_index, fn: str) -> None:
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
        raise TypeError(f"{fn}: ignore_index must be an int, got {type(ignore_index).__name__}")


def _weight(weight, n_classes: int, input: Tensor, fn: str) -> np.ndarray | None:  # noqa: A002
    """The class weights as a (C,) array of the input's dtype (no gradient flows to them)."""
    if weight is None:
        return None
    array = weight._data if isinstance(weight, Tensor) else np.asarray(weight)
    if array.shape != (n_classes,):
        raise ValueError(f"{fn}: weight must have shape ({n_classes},) (one per class), got {array.shape}")
    if array.dtype.kind not in "fiu":
        raise TypeError(f"{fn}: weight must be a float tensor, got dtype {array.dtype}")
    return array.astype(input.dtype, copy=False)


def _class_indices(target, input: Tensor, n_classes: int, ignore_index: int, fn: str):  # noqa: A002
    """Check an integer target's dtype, shape and values; the target as an array (inside vmap, a batched
    target stays the batched Tensor: its values, every example's, are checked here all the same)."""
    batched = isinstance(target, BatchedTensor)
    values = physical(target)._data if isinstance(target, Tensor) else np.asarray(target)
    target = target if batched else values
    if values.dtype.kind not in "iu":
        raise TypeError(f"{fn}: target must hold int64 class indices, got dtype {values.dtype}")
    _check_ignore_index(ignore_index, fn)
    expected = input.shape[:1] + input.shape[2:] if input.ndim > 1 else ()
    if target.shape != expected:
        raise ValueError(
            f"{fn}: target must have shape {expected} for input of shape {input.shape}, got {target.shape}"
        )
    if values.size == 0 or (values.min() >= 0 and values.max() < n_classes):  # (the common case, fast)
        return target
    counted = values[values != ignore_index]
    if counted.size and (counted.min() < 0 or counted.max() >= n_classes):
        bad = counted.min() if counted.min() < 0 else counted.max()
        raise ValueError(
            f"{fn}: target holds class index {bad}, outside [0, {n_classes - 1}] (and not ignore_index={ignore_index})"
        )
    return target


def _same_dtype(target, input: Tensor, fn: str):  # noqa: A002
    """A float target in the input's dtype: arrays/numbers are converted, a Tensor must already match."""
    if isinstance(target, Tensor):
        if target.dtype != input.dtype:
            raise TypeError(f"{fn}: target dtype {target.dtype} does not match input dtype {input.dtype}")
        return target
    return np.asarray(target, dtype=input.dtype)
