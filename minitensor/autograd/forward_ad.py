"""Forward-mode AD as ``torch.autograd.forward_ad``: dual tensors at a level.

>>> import minitensor.autograd.forward_ad as fwAD
>>> x, v = mt.tensor([1.0, 2.0]), mt.tensor([1.0, 0.0])
>>> with fwAD.dual_level():
...     y = (fwAD.make_dual(x, v) ** 2).sum()     # y = x0^2 + x1^2
...     fwAD.unpack_dual(y).tangent               # dy in the direction v: 2 x0
tensor(2.)

One forward pass gives the value and its directional derivative ``J·v`` (``dual.py`` says
how).  As in PyTorch: one level at a time here (nest ``minitensor.func.jvp`` for higher
order); leaving the level forgets every tangent; the tangent of a tensor made without grad
mode (``no_grad``) is still computed, forward mode is not reverse mode; ``detach()`` and
``.data`` drop the tangent.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..tensor import Tensor
from . import batching, dual
from .composite import Alias

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]

_levels: list = []  # the levels entered through this API (at most one), as dual.Level objects


def enter_dual_level() -> int:
    """Enter a new forward-mode level; returns its number (0)."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _levels.append(dual.enter())
    return len(_levels) - 1


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the current level: every tangent made in it is gone."""
    current = len(_levels) - 1
    level = current if level is None else level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != current:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This is not supported."
        )
    dual.exit(_levels.pop())


class dual_level:
    """``with dual_level(): ...``: forward-mode computation at a level that is left at the end
    (usable as a decorator too)."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)

        return wrapped


def _level(level: int | None):
    level = len(_levels) - 1 if level is None else level
    return _levels[level] if 0 <= level < len(_levels) else None


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A tensor with ``tensor``'s values (sharing its memory, and its place in the reverse graph)
    that carries ``tangent`` (same shape) at the level."""
    at = _level(level)
    if at is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first."
        )
    for name, t in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(t, Tensor):
            raise TypeError(f"make_dual: expected the {name} to be a Tensor, got {type(t).__name__}")
        if t.dtype.kind not in "fc":
            raise ValueError(f"Expected {name} to be floating point or complex, but got: {t.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {list(tensor.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}."
        )
    return attach(at, tensor, tangent)


def attach(level: dual.Level, primal: Tensor, tangent: Tensor) -> Tensor:
    """A new tensor with ``primal``'s values (and its place in the reverse graph) carrying ``tangent``
    (same shape) at ``level``.  Inside vmap, a tangent batched where the primal is not (``jacfwd``'s
    columns) takes the primal along into its batch: a tangent is kept with its value's batch dims."""
    out = Alias.apply(primal)
    own_levels = batching.levels_of(primal)
    if batching.levels_of(tangent) - own_levels and not own_levels:  # (a view: every example reads the one primal)
        out = batching.like(tangent, out.expand(*batching.physical(tangent).shape))
    elif batching.levels_of(tangent) - own_levels:  # (batched at other levels too: broadcast against zeros)
        zeros = Tensor._make(np.zeros(batching.physical(tangent).shape, primal.dtype), False, None)
        out = out + batching.like(tangent, zeros)
    if tangent.dtype != primal.dtype:
        tangent = tangent.to(primal.dtype)
    plain = not tangent._requires_grad and dual.carrying([tangent]) is None and not batching.batched([tangent])
    level.set(out, tangent._data if plain else tangent)  # (an array: the rules run on arrays, fast)
    return out


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal and its tangent (None if it has none)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor: the primal a view of it without the tangent at the
    level (and in the reverse graph), the tangent as a Tensor or None."""
    at = _level(level)
    if at is None:
        return UnpackedDualTensor(tensor, None)
    tangent = at.get(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    at.hidden = True
    try:
        primal = Alias.apply(tensor)  # (keeps the tangents of other levels)
    finally:
        at.hidden = False
    return UnpackedDualTensor(primal, tangent if isinstance(tangent, Tensor) else Tensor._make(tangent, False, None))
