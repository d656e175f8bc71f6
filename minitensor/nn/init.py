"""Weight initialisation, in place and without recording a graph (PyTorch's formulas).

Every function fills ``tensor`` from minitensor's generator (``mt.manual_seed``
makes it reproducible) and returns it.

- ``xavier_*`` (Glorot): std = gain * sqrt(2 / (fan_in + fan_out));
- ``kaiming_*`` (He): std = gain / sqrt(fan), fan = fan_in or fan_out;
- a uniform with that std has bound sqrt(3) * std.

For a weight of shape (out, in, *k): fan_in = in * prod(k), fan_out = out * prod(k).

>>> w = mt.empty(64, 32)
>>> _ = nn.init.kaiming_uniform_(w, a=5 ** 0.5)  # nn.Linear's default: U(-1/sqrt(32), 1/sqrt(32))
"""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

_GAINS = {"linear": 1.0, "identity": 1.0, "sigmoid": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0}


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity: relu sqrt(2), tanh 5/3, leaky_relu sqrt(2/(1+slope^2)), selu 3/4."""
    if nonlinearity in _GAINS:
        return _GAINS[nonlinearity]
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "selu":
        return 3.0 / 4
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"calculate_gain: negative_slope must be a number, got {slope!r}")
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel)."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in and fan out need a tensor with at least 2 dims, got shape {tensor.shape}")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:
        raise ValueError(f"kaiming init: {mode} is 0 for a tensor of shape {tensor.shape}")
    return fan


@no_grad()
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with samples of U(a, b)."""
    return tensor.uniform_(a, b)


@no_grad()
def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with samples of N(mean, std^2)."""
    return tensor.normal_(mean, std)


@no_grad()
def constant_(tensor: Tensor, val: float) -> Tensor:
    return tensor.fill_(val)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """U(-bound, bound), bound = gain * sqrt(3 / fan); ``a`` is leaky_relu's negative slope."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """N(0, std^2), std = gain / sqrt(fan)."""
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)))
