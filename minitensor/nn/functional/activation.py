"""Activation functions, as ``torch.nn.functional``'s.

- ``relu``, ``gelu``, ``tanh``, ``sigmoid``, ``silu``, ``softmax``, ``log_softmax``, ``softmin``, ``glu``;
- piecewise linear (``ops/activations.py``): ``leaky_relu``, ``prelu``, ``rrelu``, ``relu6``, ``hardtanh``,
  ``hardsigmoid``, ``hardswish``, ``threshold``, ``softshrink``, ``hardshrink``;
- smooth (``ops/smooth_activations.py``): ``elu``, ``selu``, ``celu``, ``mish``, ``logsigmoid``, ``softsign``,
  ``tanhshrink``.

Each is one op; ``gelu`` has an exact (erf) and a tanh-approximated form.  A NumPy array
input is converted as ``mt.tensor`` converts it (``_checks.as_input``).  ``inplace=True``
writes the result into the input (recorded in the graph, as PyTorch's in-place ops).

>>> F.gelu(mt.tensor([-1.0, 0.0, 1.0])).tolist()  # doctest: +ELLIPSIS
[-0.158655..., 0.0, 0.841344...]
"""

from __future__ import annotations

import functools
import warnings

from ... import dtypes
from ...ops import activations as A
from ...ops import nn_ops
from ...ops import smooth_activations as S
from ...ops import softplus as _softplus
from ...ops.arithmetic import _recomputed
from ...tensor import Tensor
from ._checks import as_input, check_float, check_number, check_same_dtype, check_tensor


def in_place_or_not(input: Tensor, inplace, name: str, fn, in_place_fn=None) -> Tensor:  # noqa: A002
    """``fn(input)``, or with ``inplace=True`` the same written into ``input`` (``name``: its in-place
    name, e.g. ``"relu_"``), recorded in the graph when needed; ``input`` is returned then, as PyTorch.
    ``in_place_fn``: the same function recording an op that keeps only its result, which the
    in-place form then runs on input's own values (no copy of them is kept)."""
    if not isinstance(inplace, bool):
        raise TypeError(f"{name.rstrip('_')}: inplace must be a bool, got {type(inplace).__name__} {inplace!r}")
    if not inplace:
        return fn(input)
    if in_place_fn is not None:
        return _recomputed(input, name, in_place_fn, output_only=True)
    return _recomputed(input, name, fn)


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(x, 0), elementwise."""
    input = as_input(input, "input", "relu")  # noqa: A001
    return in_place_or_not(input, inplace, "relu_", Tensor.relu)


def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """``relu`` written into ``input``."""
    return relu(input, inplace=True)


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * sigmoid(x)`` (also called swish), elementwise."""
    input = as_input(input, "input", "silu")  # noqa: A001
    return in_place_or_not(input, inplace, "silu_", _softplus.silu)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """x * Phi(x), Phi the standard normal CDF (``approximate='none'``), or its tanh form (``'tanh'``)."""
    input = as_input(input, "input", "gelu")  # noqa: A001
    check_float(input, "gelu")
    if approximate == "none":
        return nn_ops.Gelu.apply(input)
    if approximate == "tanh":
        return nn_ops.GeluTanh.apply(input)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    input = as_input(input, "input", "tanh")  # noqa: A001
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    input = as_input(input, "input", "sigmoid")  # noqa: A001
    return input.sigmoid()


def _implicit_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's choice when ``dim`` is omitted (with its deprecation warning): 0 for 0-, 1- and 3-dim
    inputs, else 1 (old code meant (C,), (N, C) and (C, H, W) inputs)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    """exp(x) / sum(exp(x)) along ``dim`` (stable: the max is subtracted first).

    ``dim=None`` is PyTorch's deprecated implicit choice (see ``_implicit_softmax_dim``), with its warning;
    ``dtype`` converts the input first.
    """
    input = as_input(input, "input", "softmax")  # noqa: A001
    if dim is None:
        dim = _implicit_softmax_dim("softmax", input.ndim, _stacklevel)
    return (input if dtype is None else input.to(dtype)).softmax(dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    """x - logsumexp(x) along ``dim`` (``dim=None``: PyTorch's implicit choice, with its warning)."""
    input = as_input(input, "input", "log_softmax")  # noqa: A001
    if dim is None:
        dim = _implicit_softmax_dim("log_softmax", input.ndim, _stacklevel)
    return (input if dtype is None else input.to(dtype)).log_softmax(dim)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    """``softmax(-x)`` along ``dim``: small values get the large weights (``dim=None``: PyTorch's implicit
    choice, with its warning)."""
    input = as_input(input, "input", "softmin")  # noqa: A001
    if dim is None:
        dim = _implicit_softmax_dim("softmin", input.ndim, _stacklevel)
    return (-(input if dtype is None else input.to(dtype))).softmax(dim)


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """Gated linear unit: ``a * sigmoid(b)``, ``a`` and ``b`` the two halves of ``input`` along ``dim``.

    >>> F.glu(mt.tensor([[1.0, 2.0, 0.0, 0.0]])).tolist()  # sigmoid(0) = 0.5
    [[0.5, 1.0]]
    """
    input = as_input(input, "input", "glu")  # noqa: A001
    check_float(input, "glu")
    if input.ndim == 0:
        raise ValueError("glu: input must have at least one dim (it is halved along dim), got a 0-d tensor")
    if isinstance(dim, bool) or not isinstance(dim, int) or not -input.ndim <= dim < input.ndim:
        raise ValueError(f"glu: dim must be an int in [{-input.ndim}, {input.ndim - 1}], got {dim!r}")
    if input.shape[dim] % 2:
        raise ValueError(f"glu: the size of dim {dim} must be even (it is halved), got {input.shape[dim]}")
    return S.Glu.apply(input, dim=dim % input.ndim)


# ---------------------------------------------------------------- piecewise linear
def _float_input(input, fn: str) -> Tensor:  # noqa: A002
    input = as_input(input, "input", fn)  # noqa: A001
    check_float(input, fn)
    return input


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where x > 0, ``negative_slope * x`` elsewhere.

    >>> F.leaky_relu(mt.tensor([-1.0, 2.0]), 0.5).tolist()
    [-0.5, 2.0]
    """
    input = _float_input(input, "leaky_relu")  # noqa: A001
    slope = check_number(negative_slope, "negative_slope", "leaky_relu")
    return in_place_or_not(
        input, inplace, "leaky_relu_", lambda x: A.LeakyRelu.apply(x, slope=slope), _leaky_of_result(slope)
    )


def _leaky_of_result(slope: float):
    """leaky_relu recorded keeping y (its sign is x's when slope >= 0), or None for a negative slope."""
    return (lambda x: A.LeakyRelu.apply(x, slope=slope, of_result=True)) if slope >= 0 else None


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    return leaky_relu(input, negative_slope, inplace=True)


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """``x`` where x > 0, ``weight * x`` elsewhere: ``weight`` holds one learned slope, or one per channel
    (dim 1 of the input; an input of fewer than 2 dims has one channel)."""
    input = _float_input(input, "prelu")  # noqa: A001
    check_tensor(weight, "weight", "prelu")
    check_same_dtype(input, weight, "weight", "prelu")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.ndim > 1:
        raise ValueError(f"prelu: weight must be a scalar or 1-D (one slope per channel), got shape {weight.shape}")
    if weight.numel() not in (1, channels):
        raise ValueError(
            f"prelu: weight must hold 1 slope or one per channel ({channels}: dim 1 of input {input.shape}), "
            f"got {weight.numel()}"
        )
    w = weight.reshape(()) if weight.numel() == 1 else weight.reshape((channels,) + (1,) * (input.ndim - 2))
    return A.Prelu.apply(input, w)


def rrelu(
    input: Tensor,  # noqa: A002
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomized leaky ReLU: in training the slope of each element below 0 is drawn from U(lower, upper)
    (minitensor's generator: ``mt.manual_seed``); in evaluation it is ``(lower + upper) / 2``."""
    input = _float_input(input, "rrelu")  # noqa: A001
    lower, upper = check_number(lower, "lower", "rrelu"), check_number(upper, "upper", "rrelu")
    if lower > upper:
        raise ValueError(f"rrelu: lower must be <= upper, got lower={lower}, upper={upper}")
    if training:
        noisy = functools.partial(A.RreluWithNoise.apply, lower=lower, upper=upper)
        return in_place_or_not(input, inplace, "rrelu_", noisy, noisy)  # (its node keeps only the noise)
    slope = (lower + upper) / 2
    return in_place_or_not(
        input, inplace, "rrelu_", lambda x: A.LeakyRelu.apply(x, slope=slope), _leaky_of_result(slope)
    )


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:  # noqa: A002
    return rrelu(input, lower, upper, training, inplace=True)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``clip(x, min_val, max_val)``; the gradient is 1 strictly between the bounds, 0 elsewhere."""
    input = as_input(input, "input", "hardtanh")  # noqa: A001
    low, high = check_number(min_val, "min_val", "hardtanh"), check_number(max_val, "max_val", "hardtanh")
    if low > high:
        raise ValueError(f"hardtanh: min_val must be <= max_val, got min_val={min_val}, max_val={max_val}")
    return in_place_or_not(
        input,
        inplace,
        "hardtanh_",
        lambda x: A.Hardtanh.apply(x, low=low, high=high),
        lambda x: A.Hardtanh.apply(x, low=low, high=high, of_result=True),
    )


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``min(max(x, 0), 6)`` (``hardtanh(x, 0, 6)``, whose gradient is 0 at 0 and 6)."""
    input = as_input(input, "input", "relu6")  # noqa: A001
    return in_place_or_not(
        input,
        inplace,
        "relu6_",
        lambda x: A.Hardtanh.apply(x, low=0.0, high=6.0),
        lambda x: A.Hardtanh.apply(x, low=0.0, high=6.0, of_result=True),
    )


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``relu6(x + 3) / 6``: 0 below -3, 1 above 3, linear between."""
    input = _float_input(input, "hardsigmoid")  # noqa: A001
    return in_place_or_not(input, inplace, "hardsigmoid_", A.Hardsigmoid.apply)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * relu6(x + 3) / 6`` (MobileNetV3's)."""
    input = _float_input(input, "hardswish")  # noqa: A001
    return in_place_or_not(input, inplace, "hardswish_", A.Hardswish.apply)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where x > threshold, ``value`` elsewhere.

    >>> F.threshold(mt.tensor([0.5, 2.0]), 1.0, -1.0).tolist()
    [-1.0, 2.0]
    """
    return _threshold(input, threshold, value, inplace)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    return _threshold(input, threshold, value, True)


def _threshold(input, threshold: float, value: float, inplace: bool) -> Tensor:  # noqa: A002
    input = as_input(input, "input", "threshold")  # noqa: A001
    th, value = check_number(threshold, "threshold", "threshold"), check_number(value, "value", "threshold")
    of_result = (lambda x: A.Threshold.apply(x, threshold=th, value=value, of_result=True)) if value <= th else None
    return in_place_or_not(
        input, inplace, "threshold_", lambda x: A.Threshold.apply(x, threshold=th, value=value), of_result
    )


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between (``lambd >= 0``)."""
    input = _float_input(input, "softshrink")  # noqa: A001
    lambd = check_number(lambd, "lambd", "softshrink")
    if lambd < 0:
        raise ValueError(f"softshrink: lambd must be >= 0, got {lambd}")
    return A.Softshrink.apply(input, lambd=lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x`` outside ``[-lambd, lambd]``, 0 inside."""
    input = _float_input(input, "hardshrink")  # noqa: A001
    return A.Hardshrink.apply(input, lambd=check_number(lambd, "lambd", "hardshrink"))


# ---------------------------------------------------------------- smooth
def _elu_of_result(**settings):
    """Elu recorded keeping y (the in-place forms, as PyTorch's), or None where y cannot tell the slope
    (a negative ``scale * alpha``: PyTorch's in-place backward raises there, minitensor keeps x)."""
    if settings.get("alpha", 1.0) * settings.get("scale", 1.0) < 0:
        return None
    return lambda x: S.Elu.apply(x, **settings, of_result=True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where x > 0, ``alpha * (exp(x) - 1)`` elsewhere."""
    input = _float_input(input, "elu")  # noqa: A001
    alpha = check_number(alpha, "alpha", "elu")
    return in_place_or_not(input, inplace, "elu_", lambda x: S.Elu.apply(x, alpha=alpha), _elu_of_result(alpha=alpha))


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``scale * elu(x, alpha)`` with the self-normalising constants (scale 1.0507..., alpha 1.6732...)."""
    input = _float_input(input, "selu")  # noqa: A001
    settings = {"alpha": S.SELU_ALPHA, "scale": S.SELU_SCALE}
    return in_place_or_not(input, inplace, "selu_", lambda x: S.Elu.apply(x, **settings), _elu_of_result(**settings))


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where x > 0, ``alpha * (exp(x / alpha) - 1)`` elsewhere (``alpha != 0``)."""
    input = _float_input(input, "celu")  # noqa: A001
    alpha = check_number(alpha, "alpha", "celu")
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0 (the input is divided by it), got 0")
    settings = {"alpha": alpha, "input_scale": 1.0 / alpha}
    return in_place_or_not(input, inplace, "celu_", lambda x: S.Elu.apply(x, **settings), _elu_of_result(**settings))


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    return celu(input, alpha, inplace=True)


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * tanh(softplus(x))``."""
    input = _float_input(input, "mish")  # noqa: A001
    return in_place_or_not(input, inplace, "mish_", S.Mish.apply)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``log(sigmoid(x))``, computed without overflow (``-softplus(-x)``)."""
    return S.LogSigmoid.apply(_float_input(input, "logsigmoid"))


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """``x / (1 + |x|)`` (an integer input gives floats, as PyTorch)."""
    return S.Softsign.apply(_floating(as_input(input, "input", "softsign")))


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """``x - tanh(x)`` (an integer input gives floats, as PyTorch)."""
    return S.Tanhshrink.apply(_floating(as_input(input, "input", "tanhshrink")))


def _floating(x: Tensor) -> Tensor:
    return x if x.dtype.kind == "f" else x.to(dtypes.get_default_dtype())
