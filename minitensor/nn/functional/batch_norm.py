"""``batch_norm`` and ``instance_norm``: per-channel normalisation with optional running
statistics, as PyTorch's (the op: ``ops/batch_norm.py``).

>>> x = mt.randn(8, 3, 4, 4)
>>> y = F.batch_norm(x, None, None, training=True)        # each channel: mean 0, variance 1
>>> bool(abs(y.mean(dim=(0, 2, 3))).amax() < 1e-5)
True
"""

from __future__ import annotations

import math
import numbers

from ...ops import batch_norm as ops
from ...tensor import Tensor
from ._checks import as_input, check_float, check_same_dtype, check_tensor, float_like


def _check_vectors(fn: str, input: Tensor, c: int, **vectors) -> None:  # noqa: A002
    """Each given vector (running stats, weight, bias) is a Tensor of ``c`` elements (the input's
    channels) and of the input's dtype."""
    for name, v in vectors.items():
        if v is None:
            continue
        check_tensor(v, name, fn)
        if v.numel() != c:
            raise ValueError(
                f"{fn}: {name} must have C={c} elements (the input's channels, dim 1 of shape "
                f"{tuple(input.shape)}), got {v.numel()}"
            )
        check_same_dtype(input, v, name, fn)


def _check_numbers(fn: str, momentum, eps) -> None:
    for name, value in (("momentum", momentum), ("eps", eps)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{fn}: {name} must be a number, got {value!r}")
    if not eps > 0:
        raise ValueError(f"{fn}: eps must be positive (a constant channel would give NaN), got {eps}")


def batch_norm(
    input: Tensor,  # noqa: A002  (PyTorch's names)
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel (dim 1) of ``input`` (N, C, *) and scale and shift it.

    With ``training`` the batch's statistics (over N and the spatial dims) normalise, and
    ``running_mean``/``running_var`` (if given) are updated in place:
    ``running = (1 - momentum) * running + momentum * batch``, with the unbiased batch variance.
    Without, the running statistics normalise (they must be given).

    Args:
        input: (N, C) or (N, C, *spatial), at least 2 dims; a NumPy array is converted.
        running_mean, running_var: (C,) or None.
        weight, bias: (C,) or None.
    """
    fn = "batch_norm"
    input = as_input(input, "input", fn, like=float_like(weight, bias, running_mean))  # noqa: A001
    check_float(input, fn)
    if input.ndim < 2:
        raise ValueError(f"{fn}: input must have at least 2 dims (N, C, *), got shape {tuple(input.shape)}")
    _check_numbers(fn, momentum, eps)
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{fn}: running_mean and running_var must both be given or both be None")
    if not training and running_mean is None:
        raise ValueError(f"{fn}: running_mean and running_var must be given in evaluation mode (training=False)")
    c = input.shape[1]
    _check_vectors(fn, input, c, running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    if training and math.prod(input.shape) // max(c, 1) == 1:
        raise ValueError(
            f"{fn}: expected more than 1 value per channel when training, got input of shape {tuple(input.shape)}"
        )
    return ops.batch_norm(input, running_mean, running_var, weight, bias, bool(training), float(momentum), float(eps))


def instance_norm(
    input: Tensor,  # noqa: A002
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel of each sample of ``input`` (N, C, *spatial) over its spatial dims.

    ``use_input_stats=False`` normalises by the running statistics instead; with it True, given
    running statistics are updated with the mean over the batch of each sample's statistics.
    """
    fn = "instance_norm"
    input = as_input(input, "input", fn, like=float_like(weight, bias, running_mean))  # noqa: A001
    check_float(input, fn)
    if input.ndim < 3:
        raise ValueError(f"{fn}: input must have at least 3 dims (N, C, *spatial), got shape {tuple(input.shape)}")
    _check_numbers(fn, momentum, eps)
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{fn}: running_mean and running_var must both be given or both be None")
    if not use_input_stats and running_mean is None:
        raise ValueError(f"{fn}: use_input_stats=False needs running_mean and running_var")
    _check_vectors(fn, input, input.shape[1], running_mean=running_mean, running_var=running_var, weight=weight,
                   bias=bias)  # fmt: skip
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(
            f"{fn}: expected more than 1 spatial element when training, got input of shape {tuple(input.shape)}"
        )
    return ops.instance_norm(input, running_mean, running_var, weight, bias, bool(use_input_stats),
                             float(momentum), float(eps))  # fmt: skip
