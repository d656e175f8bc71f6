"""What the Transformer layers share about their arguments: the two positional orders of
``TransformerEncoderLayer`` (Lucid's and PyTorch's), and the checks of sizes, inputs and masks."""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from .._device import check_device
from ..tensor import Tensor
from ._utils import check_size
from .container import ModuleList
from .functional._checks import as_input, check_probability
from .functional.activation import gelu, relu
from .module import Module


# ------------------------------------------------------------------- helpers
class Default:
    """The default of a keyword argument that the caller did not pass (shown as ``value`` in the
    signature), so that ``positional_options`` can tell a keyword given twice."""

    def __init__(self, value) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


# The encoder layer's arguments after ``activation``, in the two positional orders it reads.
LUCID_ORDER = ("batch_first", "norm_first", "device", "dtype")
PYTORCH_ORDER = ("layer_norm_eps", "batch_first", "norm_first", "bias", "device", "dtype")


def positional_options(layer: str, args: tuple, options: dict) -> dict:
    """The options of ``TransformerEncoderLayer`` from its positional arguments after ``activation``
    (``args``) and its keyword arguments (``options``: name -> value, or ``Default`` when not given).

    ``args`` are read in the Lucid page's order (``LUCID_ORDER``) unless the first of them (the sixth
    positional argument) is a float, which only PyTorch's order (``PYTORCH_ORDER``) puts there
    (``layer_norm_eps``); then all of them are read in PyTorch's order.  A sixth argument that fits
    neither order unambiguously (an int such as 0 or 1: ``batch_first`` or ``layer_norm_eps``?) is
    refused, as is an argument given both by position and by keyword.  Nothing is misread silently.
    """
    order = LUCID_ORDER
    if args:
        first = args[0]
        if isinstance(first, (float, np.floating)):
            order = PYTORCH_ORDER
        elif not isinstance(first, (bool, np.bool_)):
            raise TypeError(
                f"{layer}: the 6th positional argument is ambiguous: {first!r} ({type(first).__name__}). "
                f"minitensor's (Lucid's) order is (d_model, nhead, dim_feedforward, dropout, activation, "
                f"batch_first, norm_first, device, dtype); PyTorch's is (d_model, nhead, dim_feedforward, dropout, "
                f"activation, layer_norm_eps, batch_first, norm_first, bias, device, dtype).  Pass a bool "
                f"batch_first, a float layer_norm_eps (e.g. 1e-5, not 1), or better the options by keyword"
            )
    if len(args) > len(order):
        raise TypeError(
            f"{layer}: too many positional arguments: {5 + len(args)} given, at most {5 + len(order)} in "
            f"{'PyTorch' if order is PYTORCH_ORDER else 'the Lucid page'}'s order ({', '.join(order)} after activation)"
        )
    resolved = {}
    for name, value in options.items():
        resolved[name] = value.value if isinstance(value, Default) else value
    for name, value in zip(order, args):
        if not isinstance(options[name], Default):
            raise TypeError(f"{layer}: got multiple values for argument {name!r} (by position and by keyword)")
        resolved[name] = value
    return resolved


def _activation(activation, layer: str) -> Callable:
    if isinstance(activation, str):
        if activation == "relu":
            return relu
        if activation == "gelu":
            return gelu
        raise ValueError(f"{layer}: activation must be 'relu', 'gelu' or a callable, got {activation!r}")
    if not callable(activation):
        raise TypeError(f"{layer}: activation must be 'relu', 'gelu' or a callable, got {type(activation).__name__}")
    return activation


def _check_config(layer: str, d_model, nhead, dim_feedforward, dropout, device) -> None:
    check_size(d_model, "d_model", layer)
    check_size(nhead, "nhead", layer)
    check_size(dim_feedforward, "dim_feedforward", layer)
    if d_model % nhead != 0:
        raise ValueError(f"{layer}: d_model ({d_model}) must be divisible by nhead ({nhead})")
    check_probability(dropout, "dropout", layer)
    check_device(device, layer)


def _check_input(x, name: str, d_model: int, dtype, layer: str) -> Tensor:
    """``x`` as a Tensor (a NumPy array is converted, a float one to ``dtype``: ``as_input``), checked:
    rank 2 or 3, last dim d_model, dtype ``dtype`` (unless None)."""
    x = as_input(x, name, layer, like=dtype)
    if x.ndim not in (2, 3):
        raise ValueError(f"{layer}: {name} must be 3-D (batched) or 2-D (unbatched), got shape {x.shape}")
    if x.shape[-1] != d_model:
        raise ValueError(f"{layer}: {name}'s last dim must be d_model={d_model}, got shape {x.shape}")
    if dtype is not None and x.dtype != dtype:
        raise TypeError(
            f"{layer}: {name} has dtype {x.dtype} but the parameters have {dtype}; "
            f"convert one of them (module.to({x.dtype}) or {name}.to({dtype}))"
        )
    return x


def _check_mask(mask, name: str, shapes: tuple, layer: str) -> None:
    """A bool or float mask whose shape is one of ``shapes``."""
    if mask is None:
        return
    array = mask._data if isinstance(mask, Tensor) else mask
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{layer}: {name} must be a Tensor or array, got {type(mask).__name__}")
    if array.dtype != np.bool_ and array.dtype.kind != "f":
        raise TypeError(f"{layer}: {name} must be a bool or float mask, got dtype {array.dtype}")
    if array.shape not in shapes:
        expected = " or ".join(str(s) for s in shapes)
        raise ValueError(f"{layer}: {name} must have shape {expected}, got {array.shape}")


def _sizes(x: Tensor, batch_first: bool) -> tuple:
    """(batch size or None when unbatched, sequence length)."""
    if x.ndim == 2:
        return None, x.shape[0]
    return (x.shape[0], x.shape[1]) if batch_first else (x.shape[1], x.shape[0])


def _check_masks(layer: str, nhead: int, n, l: int, s: int, attn_mask, attn_name: str, pad_mask, pad_name: str):
    heads = nhead if n is None else n * nhead
    _check_mask(attn_mask, attn_name, ((l, s), (heads, l, s)), layer)
    _check_mask(pad_mask, pad_name, ((s,) if n is None else (n, s),), layer)


def _clones(module: Module, n: int) -> ModuleList:
    check_size(n, "num_layers", type(module).__name__)
    return ModuleList([copy.deepcopy(module) for _ in range(n)])
