"""How a tensor prints: ``set_printoptions`` / ``get_printoptions`` / ``printoptions``, as PyTorch's.

The options are PyTorch's, with its defaults and profiles:

- ``precision`` (4): digits after the decimal point;
- ``threshold`` (1000): above this many elements the print is summarised (``...``);
- ``edgeitems`` (3): elements kept at each end of a summarised dim;
- ``linewidth`` (80): characters per line before wrapping;
- ``sci_mode`` (None): True forces scientific notation, False forbids it, None chooses
  (scientific when the largest magnitude is >= 1e8, the smallest nonzero < 1e-4 or their
  ratio > 1000, the rule PyTorch and NumPy share);
- ``profile``: ``'default'`` (the values above), ``'short'`` (precision 2, edgeitems 2) or
  ``'full'`` (never summarised).

The layout is NumPy's ``array2string`` (minitensor's choice): with ``sci_mode=None`` a number
prints with *up to* ``precision`` digits, trailing zeros dropped (``tensor([0.5, 0.25])``, where
PyTorch pads to ``tensor([0.5000, 0.2500])``); with ``sci_mode`` True or False every number gets
exactly ``precision`` digits, as in PyTorch.

>>> import minitensor as mt
>>> mt.set_printoptions(precision=2)
>>> mt.tensor([1.12345])
tensor([1.12])
>>> mt.set_printoptions(profile="default")
>>> mt.tensor([1.12345])
tensor([1.1235])
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys

import numpy as np

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTIONS = _PrintOptions()


def _count(value, name: str, minimum: int = 0):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= minimum:
        raise ValueError(f"set_printoptions: {name} must be a number >= {minimum}, got {value!r}")
    return value


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print (for the whole process, as PyTorch).

    ``profile`` is applied first, then any option given; ``sci_mode`` is always set (None: automatic).
    All arguments are checked before anything changes.
    """
    if profile is not None and profile not in _PROFILES:
        raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
    if sci_mode not in (None, True, False):
        raise ValueError(f"set_printoptions: sci_mode must be None, True or False, got {sci_mode!r}")
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems, "linewidth": linewidth}
    new = dict(_PROFILES[profile]) if profile is not None else {}
    for name, value in given.items():
        if value is not None:
            new[name] = _count(value, name, minimum=1 if name == "linewidth" else 0)
    for name, value in new.items():
        setattr(_OPTIONS, name, value)
    _OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current options, as a dict that ``set_printoptions(**d)`` accepts."""
    return dataclasses.asdict(_OPTIONS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """``with mt.printoptions(precision=2): ...`` changes the options inside the block only."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


def _fixed_width_formatter(data: np.ndarray, precision: int, sci: bool):
    """A formatter giving every float exactly ``precision`` digits, in scientific (``sci``) or fixed notation,
    padded to one width.  The longest string comes from an extreme (sign, magnitude, exponent digits) or
    a non-finite value, so only those are formatted to find the width."""
    spec = f".{precision}{'e' if sci else 'f'}"
    finite = data[np.isfinite(data)]
    candidates = [0.0]
    if finite.size:
        magnitudes = np.abs(finite[finite != 0])
        candidates += [finite.min(), finite.max()] + ([magnitudes.min(), magnitudes.max()] if magnitudes.size else [])
    candidates += [v for v, present in ((math.nan, np.isnan(data).any()), (-math.inf, (data == -math.inf).any()),
                                        (math.inf, (data == math.inf).any())) if present]  # fmt: skip
    width = max(len(format(float(v), spec)) for v in candidates)
    return lambda x: format(float(x), spec).rjust(width)


def format_array(data: np.ndarray, prefix: str) -> str:
    """The body of a tensor's repr (the nested brackets), following the print options."""
    options = _OPTIONS
    kwargs = {
        "precision": options.precision,
        "threshold": sys.maxsize if math.isinf(options.threshold) else int(options.threshold),
        "edgeitems": options.edgeitems,
        "max_line_width": options.linewidth,
        "separator": ", ",
        "prefix": prefix,
    }
    if data.dtype.kind == "f" and options.sci_mode is not None and data.size:
        kwargs["formatter"] = {"float_kind": _fixed_width_formatter(data, options.precision, options.sci_mode)}
    return np.array2string(data, **kwargs)
