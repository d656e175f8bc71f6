"""Activation layers, as ``torch.nn``'s: ``ReLU``, ``GELU``, ``Tanh``, ``Sigmoid``, ``SiLU``, ``Softplus``,
``Softmax``, ``LogSoftmax``, ``Softmin``, ``Softmax2d``, ``GLU``, the rectifiers (``LeakyReLU``, ``PReLU``,
``RReLU``, ``ReLU6``, ``Hardtanh``, ``Threshold``), ``ELU``/``SELU``/``CELU``, ``Hardsigmoid``, ``Hardswish``,
``Mish``, ``LogSigmoid``, ``Softsign``, and the shrinking functions.

Each wraps the function of the same name in ``nn.functional``; ``inplace=True`` (where PyTorch has it)
writes the result into the input.

>>> nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3), nn.Softmax(dim=-1))(mt.randn(2, 4)).shape
(2, 3)
"""

from __future__ import annotations

import warnings

from ..tensor import Tensor
from . import functional as F
from . import init
from ._utils import check_size, empty_parameter, float_dtype
from .module import Module


def _check_dim(dim, layer: str) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{layer}: dim must be an int, got {type(dim).__name__} {dim!r}")
    return dim


class _InPlace(Module):
    """An activation with PyTorch's ``inplace`` flag (shown by ``repr`` when True)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_InPlace):
    """max(x, 0), elementwise (``inplace=True``: written into the input)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.relu(input, inplace=self.inplace)


class GELU(Module):
    """x * Phi(x) (Phi: standard normal CDF); ``approximate='tanh'`` uses the tanh formula."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.sigmoid(input)


class Softmax(Module):
    """exp(x) / sum(exp(x)) along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = None if dim is None else _check_dim(dim, "Softmax")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmax(input, self.dim, _stacklevel=5)  # dim None: PyTorch's implicit dim, warned at the caller

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x - logsumexp(x) along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = None if dim is None else _check_dim(dim, "LogSoftmax")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.log_softmax(input, self.dim, _stacklevel=5)  # dim None: PyTorch's implicit dim, warned at the caller

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class SiLU(_InPlace):
    """x * sigmoid(x), elementwise (also called swish)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.silu(input, inplace=self.inplace)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, and x where beta * x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmin(Module):
    """exp(-x) / sum(exp(-x)) along ``dim``: ``softmax(-x)``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = None if dim is None else _check_dim(dim, "Softmin")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels of each pixel: input (N, C, H, W) or (C, H, W), softmax along dim -3."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape {input.shape}")
        return F.softmax(input, -3)


class GLU(Module):
    """Gated linear unit: ``a * sigmoid(b)``, ``a`` and ``b`` the halves of the input along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = _check_dim(dim, "GLU")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LeakyReLU(Module):
    """x where x > 0, ``negative_slope * x`` elsewhere."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """x where x > 0, ``weight * x`` elsewhere, the slope learned: one (``num_parameters=1``) shared by
    every channel, or one per channel (dim 1 of the input).  ``weight`` starts at ``init`` (0.25)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        super().__init__()
        self.num_parameters = check_size(num_parameters, "num_parameters", "PReLU")
        self.init = init
        self.weight = empty_parameter((self.num_parameters,), float_dtype(dtype, "PReLU", device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """weight = ``init`` everywhere."""
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU: in training each slope below 0 is drawn from U(lower, upper); in eval mode
    it is their mean."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        if lower > upper:
            raise ValueError(f"RReLU: lower must be <= upper, got lower={lower}, upper={upper}")
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Hardtanh(Module):
    """``clip(x, min_val, max_val)``.  ``min_value``/``max_value`` are PyTorch's deprecated names."""

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        for old_name, given in (("min_value", min_value), ("max_value", max_value)):
            if given is not None:
                new_name = old_name.replace("value", "val")
                message = f"keyword argument `{old_name}` is deprecated and renamed to `{new_name}`"
                warnings.warn(message, FutureWarning, stacklevel=2)
        min_val = min_val if min_value is None else min_value
        max_val = max_val if max_value is None else max_value
        if not max_val > min_val:
            raise ValueError(
                f"Hardtanh: max_val must be greater than min_val, got min_val={min_val}, max_val={max_val}"
            )
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)`` (a ``Hardtanh(0, 6)``, as PyTorch's)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Threshold(Module):
    """x where x > ``threshold``, ``value`` elsewhere."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """x where x > 0, ``alpha * (exp(x) - 1)`` elsewhere."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """x where x > 0, ``alpha * (exp(x / alpha) - 1)`` elsewhere."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.celu(input, self.alpha, self.inplace)


class SELU(_InPlace):
    """``scale * elu(x, alpha)`` with the self-normalising constants (scale 1.0507..., alpha 1.6732...)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.selu(input, self.inplace)


class Hardsigmoid(_InPlace):
    """``relu6(x + 3) / 6``.  (PyTorch's repr does not show ``inplace``: nor does this one.)"""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Hardswish(_InPlace):
    """``x * relu6(x + 3) / 6``.  (PyTorch's repr does not show ``inplace``: nor does this one.)"""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Mish(_InPlace):
    """``x * tanh(softplus(x))``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.mish(input, self.inplace)


class LogSigmoid(Module):
    """``log(sigmoid(x))``, without overflow."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanhshrink(input)


class Softshrink(Module):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """``x`` outside ``[-lambd, lambd]``, 0 inside."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardshrink(input, self.lambd)
