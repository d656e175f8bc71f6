"""``Tensor``: a NumPy array plus what autograd needs to know about it.

A Tensor holds

- ``data``: the ``numpy.ndarray`` with the values;
- ``requires_grad``: whether gradients should flow to it;
- ``grad_fn``: the graph node of the op that made it (None for leaves);
- ``grad``: for leaves, the accumulated gradient after ``backward()``.

This file is the Tensor itself: its data, its place in the graph, ``backward()``
and hooks.  What you can *compute* with it (``x + y``, ``x.exp()``, ``x.sum()``,
``x.reshape(...)``) is written beside the ops, one floor up: each such method is a
thin wrapper in ``ops/math_methods.py`` or ``ops/shape_methods.py`` that checks its
arguments and calls one ``Function`` of ``ops/``.  Loading ``minitensor.ops`` gives
them to ``Tensor`` (``Tensor.add_methods``), so the Tensor never imports the ops that
are built on it.

>>> import minitensor as mt
>>> x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> y = (x * x).sum()
>>> y.backward()
>>> x.grad
tensor([2., 4., 6.])
"""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import dtypes
from .._args import _dim
from .extras import TensorExtras
from .hooks import HookHandle, RetainGrad
from .printing import format_array


def _as_array(data, dtype=None) -> np.ndarray:
    """A fresh array for ``mt.tensor(data)``: floats become the default dtype."""
    if isinstance(data, Tensor):
        data = data._data
    try:
        arr = np.array(data) if dtype is None else np.array(data, dtype=dtypes.as_dtype(dtype))
    except ValueError as e:  # ragged nested lists, or strings that are not numbers
        raise ValueError(f"tensor: data must be a number or a rectangular nested list of numbers ({e})") from None
    if dtype is not None:
        return arr
    if arr.dtype.kind == "f" and arr.dtype != dtypes.float32:
        return arr.astype(dtypes.get_default_dtype())
    if arr.dtype.kind == "f" or arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind in "iu":
        return arr.astype(dtypes.int64, copy=False)
    raise TypeError(f"tensor: data must be numbers, bools or arrays of them, got dtype {arr.dtype}")


# What a class body holds besides its methods (``__hash__``: None in a class that defines ``__eq__``;
# a Tensor keeps hashing by identity).
_NOT_METHODS = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__slots__", "__hash__"}


class VersionCounter:
    """How many times some data was modified in place: the safety net of saved tensors.

    A tensor gets its counter on first need (most never do); the views an op
    makes of it (``x[0]``, ``x.reshape(...)``, ``x.T``) and ``x.detach()``
    share it, since they share the data.  An op that saves an input (or its
    output) for backward records the counter's value; the engine checks it
    before running that op's backward and raises if the data changed since.
    The graph node holds the counter, not the tensor, so no reference cycle
    is made.
    """

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class Tensor(TensorExtras):
    """An n-dimensional array that records the ops applied to it for autograd.

    Devices, dtype conversion (``to``), formatting and bitwise ops come from ``TensorExtras``;
    the methods that compute, from ``ops/`` (see the module docstring).
    """

    __slots__ = ("_data", "grad", "grad_fn", "_requires_grad", "_version_counter", "_view_of", "_hooks", "__weakref__")
    __hash__ = object.__hash__  # __eq__ is elementwise, identity stays the hash

    def __init__(self, data, dtype=None, requires_grad: bool = False) -> None:
        self._data = _as_array(data, dtype)
        self.grad = None
        self.grad_fn = None
        self._requires_grad = False
        self._version_counter = None
        self._view_of = None
        self._hooks = None
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _make(cls, data: np.ndarray, requires_grad: bool, grad_fn) -> Tensor:
        """Internal fast constructor: wraps ``data`` as it is (no copy, no checks)."""
        t = object.__new__(Tensor)
        t._data = data
        t.grad = None
        t.grad_fn = grad_fn
        t._requires_grad = requires_grad
        t._version_counter = None
        t._view_of = None
        t._hooks = None
        return t

    # ----------------------------------------------------------- attributes
    @property
    def data(self) -> Tensor:
        """A tensor sharing this one's memory, outside the graph *and* outside its version
        tracking (as PyTorch's ``.data``).

        Changes made through it are seen by this tensor but not recorded by autograd
        (``p.data.add_(...)`` in old training loops), and not even counted: a backward that
        saved the values uses the new ones silently.  ``.detach()`` shares the version
        counter, so the same change through it raises in backward instead: it is the safer
        tool.  The NumPy array is ``.numpy()``.
        """
        return Tensor._make(self._data, False, None)

    @data.setter
    def data(self, value) -> None:
        """Replace the values (and possibly the shape) with ``value``'s, outside the graph."""
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """``np.asarray(t)``: the values as a NumPy array (shared, no copy, unless ``dtype`` differs)."""
        if copy:
            return np.array(self._data, dtype=dtype, copy=True)
        return self._data if dtype is None else self._data.astype(dtype, copy=False)

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    @property
    def _version(self) -> int:
        """How many in-place modifications this tensor's data has had (shared with its views)."""
        counter = self._version_counter
        return 0 if counter is None else counter.value

    @_version.setter
    def _version(self, value: int) -> None:
        self._counter().value = value

    def _counter(self) -> VersionCounter:
        """This tensor's version counter, made on first need."""
        counter = self._version_counter
        if counter is None:
            counter = self._version_counter = VersionCounter()
        return counter

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def T(self) -> Tensor:
        """The transpose of a 2-D tensor (all dims reversed otherwise, with PyTorch's warning)."""
        if self.ndim != 2:
            warnings.warn(
                f"x.T on a tensor of {self.ndim} dims reverses all of them; this use is deprecated in PyTorch. "
                "Use x.mT to transpose batches of matrices or x.permute(*reversed(range(x.ndim))) to reverse the dims",
                UserWarning,
                stacklevel=2,
            )
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self) -> Tensor:
        """The last two dims swapped (a batch of matrices transposed)."""
        return self.transpose(-2, -1)

    def dim(self) -> int:
        return self._data.ndim

    def size(self, dim: int | None = None):
        """The shape, or the size of one dim."""
        return self.shape if dim is None else self.shape[_dim(dim, self.ndim)]

    def numel(self) -> int:
        return self._data.size

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        """The sub-tensors along dim 0, as PyTorch (``iter(self.unbind(0))``): views, made in one go."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __repr__(self) -> str:
        body = format_array(self._data, prefix="tensor(")  # follows mt.set_printoptions (printing.py)
        extra = ""
        empty = self._data.size == 0  # (as PyTorch: its shape and dtype cannot be read from the values)
        if empty and self._data.ndim != 1:
            extra += f", size={tuple(self._data.shape)}"
        inferred = (dtypes.get_default_dtype(),) if empty else (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool)
        if self._data.dtype not in inferred:
            extra += f", dtype={self._data.dtype}"
        if self.grad_fn is not None:
            extra += f", grad_fn=<{type(self.grad_fn).__name__}>"
        elif self._requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    # ------------------------------------------------------ conversion
    def numpy(self) -> np.ndarray:
        """The underlying array (no copy); never part of the graph."""
        return self._data

    def item(self):
        if self._data.size != 1:
            raise ValueError(
                f"item(): expected a tensor with exactly 1 element, got {self._data.size} elements (shape {self.shape})"
            )
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of a Tensor with {self._data.size} elements is ambiguous")
        return bool(self._data.item())

    # to(), device, type(), format, bitwise ops ...: see extras.TensorExtras.

    def float(self) -> Tensor:
        return self.to(dtypes.float32)

    def double(self) -> Tensor:
        return self.to(dtypes.float64)

    def long(self) -> Tensor:
        return self.to(dtypes.int64)

    # -------------------------------------------------------- autograd
    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` on a leaf; only float tensors can require grad."""
        if requires_grad and self._data.dtype.kind != "f":
            raise TypeError(f"requires_grad: only float tensors can require gradients, got dtype {self._data.dtype}")
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError("requires_grad: can only be changed on leaf tensors; use .detach() instead")
        self._requires_grad = builtins.bool(requires_grad)
        return self

    def detach(self) -> Tensor:
        """A tensor sharing the data (and so the version counter), outside the graph."""
        t = Tensor._make(self._data, False, None)
        t._version_counter = self._counter()
        return t

    _backward_pass = None  # the engine's entry point: autograd/engine.py sets it (the engine is built on Tensor)

    def backward(self, gradient=None, retain_graph: bool | None = None, create_graph: bool = False, inputs=None):
        """Accumulate d(self)/d(leaf) into ``.grad`` of every leaf that requires grad.

        Args:
            gradient: d(loss)/d(self), shaped like self; may be omitted only for
                a single-element tensor (then it is 1).
            retain_graph: keep the graph's saved arrays for another backward
                (default: ``create_graph``).
            create_graph: record the backward pass too, so the ``.grad`` it leaves
                is a Tensor in a graph that can be differentiated again.
            inputs: accumulate only into these tensors' ``.grad`` (default: every leaf).
        """
        Tensor._backward_pass(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        """Call ``hook(grad)`` whenever the gradient of this tensor is computed; it may return a
        replacement.  Hooks run in registration order; ``handle.remove()`` stops one."""
        if not self._requires_grad:
            raise RuntimeError("register_hook: cannot register a hook on a tensor that does not require grad")
        if not callable(hook):
            raise TypeError(f"register_hook: hook must be callable, got {type(hook).__name__}")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            if self.grad_fn.tensor_hooks is None:
                self.grad_fn.tensor_hooks = []
            hooks = self.grad_fn.tensor_hooks
        hooks.append(hook)
        return HookHandle(hooks, hook)

    def retain_grad(self) -> None:
        """Keep ``.grad`` of this non-leaf after backward (accumulating, like a leaf's)."""
        if not self._requires_grad:
            raise RuntimeError("retain_grad: cannot retain the gradient of a tensor that does not require grad")
        if self.grad_fn is None or self.retains_grad:
            return  # a leaf keeps its .grad anyway
        self.register_hook(RetainGrad(self))

    @property
    def retains_grad(self) -> bool:
        hooks = self.grad_fn.tensor_hooks if self.grad_fn is not None else None
        return any(isinstance(h, RetainGrad) and h.owner() is self for h in hooks or ())

    @classmethod
    def add_methods(cls, *namespaces: type) -> None:
        """Give Tensor the methods defined in each of ``namespaces`` (classes used as plain method
        tables: ``ops/math_methods.py``, ``ops/shape_methods.py``...).  Called once, by ``minitensor.ops``."""
        for namespace in namespaces:
            for name, value in vars(namespace).items():
                if name not in _NOT_METHODS:
                    setattr(cls, name, value)
