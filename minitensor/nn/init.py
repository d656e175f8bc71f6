"""Weight initialisation, in place and without recording a graph (PyTorch's ``torch.nn.init``).

Every function fills ``tensor`` from ``generator`` (a ``mt.Generator``; default: minitensor's,
which ``mt.manual_seed`` seeds) and returns it.

- ``uniform_``, ``normal_``, ``trunc_normal_`` (a normal cut to [a, b]), ``constant_``, ``ones_``, ``zeros_``;
- ``xavier_*`` (Glorot): std = gain * sqrt(2 / (fan_in + fan_out));
- ``kaiming_*`` (He): std = gain / sqrt(fan), fan = fan_in or fan_out;
  a uniform with that std has bound sqrt(3) * std;
- ``eye_`` (2-D identity), ``dirac_`` (convolution weights that pass their input through),
  ``orthogonal_`` (rows or columns orthonormal, times ``gain``), ``sparse_`` (normal, with a
  fraction of each column zero);
- the names without ``_`` (``uniform``, ``xavier_normal`` ...) are PyTorch's deprecated aliases:
  they work and warn (FutureWarning), as in PyTorch.

For a weight of shape (out, in, *k): fan_in = in * prod(k), fan_out = out * prod(k).

>>> w = mt.empty(64, 32)
>>> _ = nn.init.kaiming_uniform_(w, a=5 ** 0.5)  # nn.Linear's default: U(-1/sqrt(32), 1/sqrt(32))
>>> _ = nn.init.trunc_normal_(w, std=0.02, a=-0.04, b=0.04)
>>> bool((w.abs() <= 0.04).all())
True
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from .. import random
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

_LINEAR = ("linear", "identity", "sigmoid", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d")  # fmt: skip


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity: relu sqrt(2), tanh 5/3, leaky_relu sqrt(2/(1+slope^2)), selu 3/4,
    the linear ones (and sigmoid) 1."""
    if nonlinearity in _LINEAR:
        return 1.0
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
    if not isinstance(mode, str) or mode.lower() not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode.lower() == "fan_in" else fan_out


@no_grad()
def _fill(tensor: Tensor, values: np.ndarray) -> Tensor:
    """Copy ``values`` into ``tensor`` (in its dtype), outside the graph."""
    return tensor.copy_(np.asarray(values, dtype=tensor.dtype).reshape(tensor.shape))


def _empty_warns(tensor: Tensor) -> bool:
    """PyTorch's kaiming init leaves a tensor with no elements alone, and says so."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of U(a, b)."""
    return _fill(tensor, random.generator(generator).uniform(a, b, tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of N(mean, std^2)."""
    return _fill(tensor, random.generator(generator).normal(mean, std, tensor.shape))


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator=None
) -> Tensor:
    """Fill with samples of N(mean, std^2) restricted to [a, b] (``a`` and ``b`` are values, not stds).

    PyTorch's algorithm: when [a, b] holds more than 30 % of the normal's mass, draw normals and
    redraw those outside; otherwise draw uniforms on [a, b] and accept each with probability
    exp(-(x - mean)^2 / (2 std^2)) relative to the density's peak on [a, b], redrawing the rejected.
    Warns when ``mean`` is more than 2 std outside [a, b], as PyTorch does.
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    rng, shape = random.generator(generator), tensor.shape
    mass = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
    if mass > 0.3:  # rejection from the normal itself
        values = rng.normal(mean, std, shape)
        outside = (values < a) | (values > b)
        while outside.any():
            values[outside] = rng.normal(mean, std, int(outside.sum()))
            outside = (values < a) | (values > b)
        return _fill(tensor, values)
    mode = max(a, min(mean, b))  # where the density peaks on [a, b]
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_accept(x):
        return -0.5 * ((x - mean) / std) ** 2 - log_peak

    values = rng.uniform(a, b, shape)
    pending = np.log(rng.random(shape)) > log_accept(values)
    while pending.any():
        retry = rng.uniform(a, b, int(pending.sum()))
        values[pending] = retry
        pending[pending] = np.log(rng.random(retry.size)) > log_accept(retry)
    return _fill(tensor, values)


@no_grad()
def constant_(tensor: Tensor, val: float) -> Tensor:
    return tensor.fill_(val)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (ones on the diagonal of a 2-D tensor, any shape)."""
    if tensor.ndim != 2:
        raise ValueError(f"eye_: only tensors with 2 dimensions are supported, got shape {tensor.shape}")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """A 3-, 4- or 5-dim convolution weight (out, in, *k) that passes each input channel through
    unchanged (a 1 at the kernel's centre), within each of ``groups`` groups of output channels."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_: only tensors with 3, 4, or 5 dimensions are supported, got shape {tensor.shape}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1 or tensor.shape[0] % groups:
        raise ValueError(f"dirac_: dim 0 ({tensor.shape[0]}) must be divisible by groups, got groups={groups!r}")
    out_per_group = tensor.shape[0] // groups
    values = np.zeros(tensor.shape)
    centre = tuple(k // 2 for k in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, tensor.shape[1])):
            values[(g * out_per_group + d, d, *centre)] = 1
    return _fill(tensor, values)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(
    tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
) -> Tensor:
    """U(-bound, bound), bound = gain * sqrt(3 / fan); ``a`` is leaky_relu's negative slope."""
    if _empty_warns(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
) -> Tensor:
    """N(0, std^2), std = gain / sqrt(fan)."""
    if _empty_warns(tensor):
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)), generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix times ``gain`` (Saxe et al. 2013), the tensor seen as (rows, numel / rows).

    PyTorch's construction: the QR decomposition of a standard normal matrix (transposed when it is wide),
    Q's columns multiplied by the signs of R's diagonal so that the result is uniformly distributed.
    """
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, got shape {tensor.shape}")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = random.generator(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, q * gain)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """N(0, std^2) with ``ceil(sparsity * rows)`` random entries of each column of a 2-D tensor set to zero
    (Martens 2010).  The zeros are drawn from ``generator`` too (PyTorch draws them from its default one)."""
    if tensor.ndim != 2:
        raise ValueError(f"sparse_: only tensors with 2 dimensions are supported, got shape {tensor.shape}")
    rng = random.generator(generator)
    rows, cols = tensor.shape
    values = rng.normal(0.0, std, (rows, cols))
    for col in range(cols):
        values[rng.permutation(rows)[: math.ceil(sparsity * rows)], col] = 0
    return _fill(tensor, values)


def _deprecated(init):
    """PyTorch's old name of ``init`` (without the ``_``): works, with its FutureWarning."""
    old = init.__name__[:-1]

    @functools.wraps(init)
    def deprecated_init(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{old}` is now deprecated in favor of `nn.init.{init.__name__}`.", FutureWarning, stacklevel=2
        )
        return init(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = f"Deprecated (as in PyTorch): use ``nn.init.{init.__name__}``."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
