"""``mt.device``: where a tensor lives.  minitensor has one device, the CPU.

The class exists so that PyTorch code which names devices runs unchanged:
``mt.device('cpu')`` is accepted everywhere a ``device=`` argument is, and
``t.device`` is ``device(type='cpu')``.  Other device types (``'cuda'``,
``'mps'`` ...) can be *described*, as in PyTorch (``mt.device('cuda')`` works,
so ``device = mt.device('cuda' if mt.cuda.is_available() else 'cpu')`` does
too), but passing one to a factory, a module or ``.to()`` raises a ValueError
that names it.

>>> import minitensor as mt
>>> mt.zeros(2, device="cpu").device
device(type='cpu')
"""

from __future__ import annotations

_KNOWN_TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "ipu", "hpu", "mtia", "privateuseone")


class device:  # noqa: N801  (PyTorch's name)
    """A device description: ``device('cpu')``, ``device('cuda:1')``, ``device('cuda', 0)``.

    Equal to another ``device`` with the same type and index, and (unlike
    PyTorch, for convenience) to the plain string of its name: ``device('cpu') == 'cpu'``.
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str | device = "cpu", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index  # noqa: A001
        if not isinstance(type, str):
            raise TypeError(f"device: expected a device name such as 'cpu', got {type!r}")
        name, _, number = type.partition(":")
        if name not in _KNOWN_TYPES:
            raise ValueError(f"device: unknown device type {name!r} in {type!r}; expected one of {_KNOWN_TYPES}")
        if number:
            if index is not None or not number.isdigit():
                raise ValueError(f"device: invalid device string {type!r}")
            index = int(number)
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
            raise ValueError(f"device: index must be a non-negative int, got {index!r}")
        object.__setattr__(self, "type", name)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value) -> None:
        raise AttributeError("device objects are immutable")

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except ValueError:
                return False
        if not isinstance(other, device):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


CPU = device("cpu")


def check_device(value, where: str) -> device:
    """``value`` as the CPU device, or ValueError naming it (``None`` means the CPU).

    Accepts ``None``, ``'cpu'``, ``'cpu:0'`` and ``mt.device('cpu')``.
    """
    if value is None:
        return CPU
    if not isinstance(value, (str, device)):
        raise TypeError(f"{where}: device must be None, a str such as 'cpu' or a mt.device, got {type(value).__name__}")
    parsed = device(value)
    if parsed.type != "cpu" or parsed.index not in (None, 0):
        raise ValueError(
            f"{where}: device must be None or 'cpu' (minitensor runs on the CPU only; no {parsed.type} support), "
            f"got {str(parsed)!r}"
        )
    return CPU


def is_device(value) -> bool:
    """Whether ``value`` names a device (a ``device``, or a string that parses as one)."""
    if isinstance(value, device):
        return True
    if not isinstance(value, str):
        return False
    return value.partition(":")[0] in _KNOWN_TYPES
