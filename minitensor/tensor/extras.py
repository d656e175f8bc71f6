"""The parts of ``Tensor``'s PyTorch API that autograd has nothing to do with.

``Tensor`` inherits them from ``TensorExtras`` so that ``tensor.py`` stays about
data, gradients and ops.  Here live

- devices and dtypes: ``device``, ``cpu()`` (``to(device | dtype | tensor)``, differentiable, is in
  ``ops/math_methods.py``; ``parse_to`` here reads its arguments),
  ``cuda()`` (raises: minitensor has no GPU), ``type()``, ``type_as()``,
  ``is_floating_point()``, ``half()/int()/bool()``, ``nelement()``, and the
  factories ``new_zeros/new_ones/new_full/new_empty/new_tensor`` (same dtype as self);
- memory: ``element_size()``, ``itemsize``, ``nbytes``, ``data_ptr()`` (the address of the first
  element: two tensors sharing it share memory, e.g. tied weights);
- Python protocols: ``format(t, '.4f')`` and ``__index__`` (``range(t)``, ``lst[t]``)
  for one-element tensors;
- bitwise/logical ``& | ^ ~`` on bool and integer tensors, ``nonzero``;
- the error for a PyTorch Tensor attribute minitensor does not have (``Unimplemented``).

None of these is differentiable.

>>> import minitensor as mt
>>> t = mt.tensor([1, 2, 3])
>>> t.type(), t.to("cpu", mt.float64).dtype, f"{t.sum():d}"
('torch.LongTensor', dtype('float64'), '6')
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._device import CPU, check_device, device, is_device
from .._torch_names import TENSOR_ATTRIBUTES

_TYPE_NAMES = {
    dtypes.float32: "FloatTensor",
    dtypes.float64: "DoubleTensor",
    dtypes.float16: "HalfTensor",
    dtypes.int64: "LongTensor",
    dtypes.int32: "IntTensor",
    dtypes.int16: "ShortTensor",
    dtypes.int8: "CharTensor",
    dtypes.uint8: "ByteTensor",
    dtypes.bool: "BoolTensor",
}
_DTYPE_OF_NAME = {f"torch.{name}": dtype for dtype, name in _TYPE_NAMES.items()}


def parse_to(args: tuple, kwargs: dict, where: str = "to"):
    """The ``(dtype or None)`` asked for by ``to(...)``'s PyTorch forms; checks any device.

    ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)`` and the
    keywords ``device=``, ``dtype=``, ``non_blocking=``, ``copy=``, ``memory_format=``.
    """
    unknown = set(kwargs) - {"device", "dtype", "non_blocking", "copy", "memory_format"}
    if unknown:
        raise TypeError(f"{where}: unexpected keyword argument(s) {sorted(unknown)}")
    if len(args) > 2:
        raise TypeError(f"{where}: expected at most (device, dtype), got {len(args)} positional arguments")
    dtype = kwargs.get("dtype")
    check_device(kwargs.get("device"), where)
    for arg in args:
        if is_device(arg):
            check_device(arg, where)
        elif isinstance(arg, TensorExtras):  # a Tensor: take its dtype (its device is the CPU)
            dtype = arg.dtype
        else:
            dtype = dtypes.as_dtype(arg, "dtype")
    return None if dtype is None else dtypes.as_dtype(dtype, "dtype")


def _bitwise(ufunc, a, b, op: str):
    """``a & b`` and friends on bool or integer tensors (and Python bools/ints)."""
    from .tensor import Tensor  # (tensor.py imports this module)

    arrays = [x._data if isinstance(x, Tensor) else np.asarray(x) for x in (a, b)]
    for arr in arrays:
        if arr.dtype.kind not in "biu":
            raise TypeError(f"{op}: only bool and integer tensors support {op}, got dtype {arr.dtype}")
    return Tensor._make(ufunc(*arrays), False, None)


def _size(size: tuple) -> tuple:
    """``f(2, 3)`` or ``f((2, 3))`` -> (2, 3)."""
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size


class TensorExtras:
    """Mixed into ``Tensor``; see the module docstring."""

    __slots__ = ()

    def __dir__(self) -> list:
        """The attributes minitensor has (without the PyTorch names it lacks: ``Unimplemented``)."""
        return [name for name in object.__dir__(self) if not isinstance(_class_attribute(self, name), Unimplemented)]

    # ------------------------------------------------------- devices and dtypes
    @property
    def device(self) -> device:
        """Always ``device(type='cpu')``."""
        return CPU

    is_cuda = False

    def cpu(self):
        """Self: minitensor's tensors always live on the CPU."""
        return self

    def cuda(self, device=None, non_blocking: bool = False):
        raise RuntimeError("cuda(): CUDA is not available; minitensor runs on the CPU only (use .cpu() or .to('cpu'))")

    def type(self, dtype=None, non_blocking: bool = False):
        """No argument: PyTorch's type name (``'torch.FloatTensor'``); with a dtype or such a name, ``to(dtype)``."""
        if dtype is None:
            return f"torch.{_TYPE_NAMES.get(self._data.dtype, str(self._data.dtype))}"
        if isinstance(dtype, str) and dtype in _DTYPE_OF_NAME:
            dtype = _DTYPE_OF_NAME[dtype]
        return self.to(getattr(dtype, "dtype", dtype))  # a legacy class such as mt.LongTensor has .dtype

    def type_as(self, other):
        """``self.to(other.dtype)``."""
        return self.to(other.dtype)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def half(self):
        return self.to(dtypes.float16)

    def int(self):
        return self.to(dtypes.int32)

    def bool(self):
        return self.to(dtypes.bool)

    def new_tensor(self, data, dtype=None, device=None, requires_grad: bool = False):
        """A new tensor from ``data``, with this one's dtype unless ``dtype`` is given."""
        check_device(device, "new_tensor")
        return type(self)(data, dtype=self._data.dtype if dtype is None else dtype, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad: bool = False):
        """A ``size``-shaped tensor of ``fill_value``, with this one's dtype unless ``dtype`` is given."""
        check_device(device, "new_full")
        dtype = self._data.dtype if dtype is None else dtypes.as_dtype(dtype)
        shape = tuple(size) if isinstance(size, (tuple, list)) else (size,)
        return type(self)._make(np.full(shape, fill_value, dtype), False, None).requires_grad_(requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False):
        check_device(device, "new_zeros")
        return self.new_full(_size(size), 0, dtype, None, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False):
        check_device(device, "new_ones")
        return self.new_full(_size(size), 1, dtype, None, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """Zero-filled here (PyTorch leaves it uninitialised)."""
        check_device(device, "new_empty")
        return self.new_full(_size(size), 0, dtype, None, requires_grad)

    def element_size(self) -> int:
        """Bytes per element (4 for float32)."""
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element, as ``element_size()``."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the elements: ``numel() * element_size()``."""
        return self._data.nbytes

    def data_ptr(self) -> int:
        """The memory address of the first element (tied weights, views at offset 0: the same address)."""
        return self._data.__array_interface__["data"][0]

    def nelement(self) -> int:
        """The number of elements (``numel()``)."""
        return self._data.size

    # ------------------------------------------------------- Python protocols
    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"`` formats a one-element tensor's value; others print as ``str(t)``."""
        if self._data.ndim == 0:
            return format(self._data.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} for a Tensor of shape {self.shape}; use .item()")
        return str(self)

    def __index__(self) -> int:
        """A one-element integer (or bool) tensor used as an index: ``range(t)``, ``lst[t]``."""
        if self._data.size != 1 or self._data.dtype.kind not in "biu":
            raise TypeError(
                f"only integer tensors of a single element can be converted to an index, "
                f"got shape {self.shape} and dtype {self._data.dtype}"
            )
        return int(self._data.item())

    # --------------------------------------------------- bitwise (not differentiable)
    def __and__(self, other):
        return _bitwise(np.bitwise_and, self, other, "&")

    def __rand__(self, other):
        return _bitwise(np.bitwise_and, other, self, "&")

    def __or__(self, other):
        return _bitwise(np.bitwise_or, self, other, "|")

    def __ror__(self, other):
        return _bitwise(np.bitwise_or, other, self, "|")

    def __xor__(self, other):
        return _bitwise(np.bitwise_xor, self, other, "^")

    def __rxor__(self, other):
        return _bitwise(np.bitwise_xor, other, self, "^")

    def __invert__(self):
        if self._data.dtype.kind not in "biu":
            raise TypeError(f"~: only bool and integer tensors support ~, got dtype {self._data.dtype}")
        return type(self)._make(np.invert(self._data), False, None)

    def logical_not(self):
        return type(self)._make(np.logical_not(self._data), False, None)

    def nonzero(self, *, as_tuple: bool = False):
        """Indices of the non-zero elements: (n, ndim) int64, or with ``as_tuple`` one (n,) tensor per dim."""
        make = type(self)._make
        if self._data.ndim == 0:  # as PyTorch: one (or no) match with no coordinates
            n = int(self._data != 0)
            if as_tuple:
                return (make(np.zeros(n, dtypes.int64), False, None),)
            return make(np.zeros((n, 0), dtypes.int64), False, None)
        index = np.nonzero(self._data)
        if as_tuple:
            return tuple(make(i.astype(dtypes.int64), False, None) for i in index)
        return make(np.stack(index, axis=1).astype(dtypes.int64), False, None)


# ------------------------------------------------ function forms (mt.nonzero(t) ...)
def nonzero(input, *, as_tuple: bool = False):  # noqa: A002  (PyTorch's name)
    return input.nonzero(as_tuple=as_tuple)


def logical_not(input):  # noqa: A002
    return input.logical_not()


def is_tensor(obj) -> bool:
    return isinstance(obj, TensorExtras)


def is_floating_point(input) -> bool:  # noqa: A002
    return input.is_floating_point()


def numel(input) -> int:  # noqa: A002
    return input.numel()


# ------------------------------------------------------- PyTorch's attributes minitensor lacks
class Unimplemented:
    """A PyTorch ``Tensor`` attribute minitensor lacks, as a class attribute: reading it raises
    AttributeError saying so (a typo gets Python's plain message).  ``mark_unimplemented`` puts one
    under each such name.  (Not a ``__getattr__``: in CPython 3.11 a class with one reads every
    attribute of its instances unspecialised, which costs every op.)"""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        raise AttributeError(
            f"'Tensor' object has no attribute {self.name!r}: minitensor does not implement Tensor.{self.name} "
            "(docs/pytorch.md lists what is supported)"
        )


def mark_unimplemented(cls: type) -> None:
    """Put an ``Unimplemented`` on ``cls`` under each PyTorch Tensor attribute name it lacks (once
    its methods are in place: ``minitensor.ops`` calls this)."""
    for name in TENSOR_ATTRIBUTES:
        if _class_attribute(cls, name) is None:
            setattr(cls, name, Unimplemented(name))


def _class_attribute(obj, name: str):
    """What ``name`` is in the class dicts of ``obj`` (a class or an instance), without running a
    descriptor; None when no class has it."""
    for klass in (obj if isinstance(obj, type) else type(obj)).__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None
