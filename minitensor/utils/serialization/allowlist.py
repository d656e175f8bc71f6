"""What a name in a checkpoint may mean: PyTorch's ``weights_only`` allowlist, met in minitensor.

PyTorch 2.13 loads with ``weights_only=True``: a file may name only tensor-rebuilding
functions, storage and dtype names, ``torch.Size``, ``OrderedDict`` and a few builtins, plus
what the user allows with ``torch.serialization.safe_globals([...])``.  ``Allowlist`` answers
the reader (``pickle_reader.py``) the same way, with minitensor's own objects: the name
``torch._utils._rebuild_tensor_v2`` means ``storages.rebuild_tensor``, ``torch FloatStorage``
means "float32 bytes", and so on.  Names are looked up in tables, never imported.

- Names PyTorch allows but minitensor cannot make (sparse, quantized, complex tensors ...) raise
  an error that says so.
- Any other name raises an error naming it and ``safe_globals``, unless the user allowed that
  object (``safe_globals`` / ``add_safe_globals``, matched by ``module.qualname``, minitensor's
  ``nn`` classes also by PyTorch's names) or, with ``weights_only=False``, it is an ``nn.Module``
  subclass (or ``nn.functional`` function) already imported.  Modules ``sys``, ``os``, ``posix``,
  ``nt`` are refused even when allowed, as PyTorch does.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict

import numpy as np

from ..._device import device
from ...nn.module import Module
from ...nn.parameter import Parameter
from ...tensor import Tensor
from .modules import global_names, imported_module_classes, restore_module
from .pickle_reader import CheckpointError
from .storages import StorageType, read_storage, rebuild_tensor, rebuild_tensor_v1, rebuild_tensor_v3
from .torch_names import DTYPES, STORAGE_DTYPES, UNSUPPORTED_DTYPES, UNSUPPORTED_STORAGES

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


# ---------------------------------------------------------------- the user's allowlist
_lock = threading.Lock()
_safe: list = []  # what add_safe_globals was given, in order, each once


def add_safe_globals(safe_globals: list) -> None:
    """Allow the classes and functions in ``safe_globals`` to be rebuilt by ``mt.load`` (as PyTorch's).

    Each item is a class or function (named in files as ``module.qualname``; minitensor's ``nn``
    classes also by PyTorch's names), or a tuple ``(object, "full.name")`` for a file that names it
    otherwise.  An allowed class is rebuilt from its attributes (``cls.__new__`` and ``__dict__``);
    an allowed function may be called with arguments from the file, as in PyTorch.

    >>> mt.serialization.add_safe_globals([RNNModel, nn.LSTM])
    """
    items = _check_items(safe_globals, "add_safe_globals")
    with _lock:
        _safe.extend(item for item in items if item not in _safe)


def get_safe_globals() -> list:
    """The classes and functions allowed by ``add_safe_globals`` / ``safe_globals`` blocks."""
    with _lock:
        return list(_safe)


def clear_safe_globals() -> None:
    """Forget every allowed class and function."""
    with _lock:
        _safe.clear()


class safe_globals:  # noqa: N801  (PyTorch's name)
    """``with mt.serialization.safe_globals([RNNModel, nn.LSTM]): model = mt.load(f)``: allow for one block.

    What was allowed before the block stays allowed after it.
    """

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = _check_items(safe_globals, "safe_globals")

    def __enter__(self) -> None:
        with _lock:
            self._added = [item for item in self.safe_globals if item not in _safe]
            _safe.extend(self._added)

    def __exit__(self, *exc) -> None:
        with _lock:
            for item in self._added:
                if item in _safe:
                    _safe.remove(item)


def _check_items(items, where: str) -> list:
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"{where}: expected a list of classes or functions, got {type(items).__name__}")
    for item in items:
        if isinstance(item, tuple):
            if len(item) != 2:
                raise ValueError(f"{where}: expected a tuple (object, 'full.name'), got a tuple of length {len(item)}")
            if type(item[1]) is not str:
                raise TypeError(f"{where}: the second item of {item!r} must be a str, got {type(item[1]).__name__}")
        elif not global_names(item):
            raise TypeError(f"{where}: {item!r} has no module and name for a file to refer to it by")
    return list(items)


def _user_table() -> dict:
    """``{full name: object}`` for everything the user allowed."""
    table = {}
    for item in get_safe_globals():
        if isinstance(item, tuple):
            table[item[1]] = item[0]
        else:
            table.update((name, item) for name in global_names(item))
    return table


# ---------------------------------------------------------------- PyTorch's allowlist, in minitensor
def _encode(text, encoding="latin1") -> bytes:
    """``_codecs.encode``: how protocol 2 writes ``bytes`` (a latin-1 string)."""
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise CheckpointError(f"_codecs.encode is called with {type(text).__name__}, {encoding!r}")
    return text.encode("latin1")


def _bytearray(*args) -> bytearray:
    if len(args) == 2 and type(args[0]) is str and args[1] in ("latin1", "latin-1"):
        return bytearray(args[0], "latin1")
    if len(args) == 1 and type(args[0]) in (bytes, list):
        return bytearray(args[0])
    raise CheckpointError("bytearray is called with arguments other than bytes")  # bytearray(10**12) allocates


def _size(dims) -> tuple:
    """``torch.Size``: minitensor's shapes are tuples."""
    if type(dims) not in (tuple, list) or not all(type(d) is int for d in dims):
        raise CheckpointError(f"torch.Size is given {str(dims)[:80]}")
    return tuple(dims)


def _device(*args):
    if not (1 <= len(args) <= 2 and type(args[0]) is str and all(type(a) is int for a in args[1:])):
        raise CheckpointError(f"torch.device is given {str(args)[:80]}")
    return device(*args)


def _layout(name):
    if name != "torch.strided":
        raise CheckpointError(f"the file holds the layout {name!r}; minitensor has strided tensors only")
    return name


def _parameter(data, requires_grad=True) -> Parameter:
    """``torch.nn.Parameter(data, requires_grad)``, from a tensor of the file only."""
    if not isinstance(data, Tensor) or not isinstance(requires_grad, bool):
        raise CheckpointError(f"a Parameter is made from {type(data).__name__}, {requires_grad!r}")
    if requires_grad and data.dtype.kind != "f":
        raise CheckpointError(f"a {data.dtype} Parameter requires grad (only floating point tensors can)")
    return Parameter(data, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None) -> Parameter:
    if backward_hooks or state:
        raise CheckpointError("a Parameter has hooks or attributes of its own, which minitensor cannot load")
    return _parameter(data, requires_grad)


def _rebuild_from_type(func, new_type, args, state):
    """``torch._tensor._rebuild_from_type_v2``: a tensor of type ``new_type`` (Tensor or Parameter only)."""
    if id(func) not in _CALLABLE or type(args) is not tuple:
        raise CheckpointError("_rebuild_from_type_v2 is given something other than a tensor rebuild")
    tensor = func(*args)
    if state:
        raise CheckpointError("a tensor has Python attributes of its own, which minitensor cannot load")
    if new_type is Parameter and not isinstance(tensor, Parameter):
        return Parameter(tensor, tensor.requires_grad)
    if new_type not in (Tensor, Parameter):
        raise CheckpointError(f"a tensor of type {new_type!r}: minitensor loads Tensors and Parameters only")
    return tensor


_MEANINGS = {
    "collections.OrderedDict": OrderedDict,
    "collections.Counter": Counter,
    "builtins.set": set,
    "builtins.bytearray": _bytearray,
    "builtins.complex": complex,
    "_codecs.encode": _encode,
    "torch.Size": _size,
    "torch.device": _device,
    "torch.serialization._get_layout": _layout,
    "torch.Tensor": Tensor,
    "torch.nn.parameter.Parameter": Parameter,
    "torch._utils._rebuild_tensor": rebuild_tensor_v1,
    "torch._utils._rebuild_tensor_v2": rebuild_tensor,
    "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type,
    "torch.storage.UntypedStorage": StorageType("UntypedStorage", None),
    **{f"torch.{name}": StorageType(name, dtype) for name, dtype in STORAGE_DTYPES.items()},
    **{f"torch.{name}": dtype for name, dtype in DTYPES.items()},
}
_CALLABLE = {
    id(f)
    for f in (
        OrderedDict,
        Counter,
        set,
        _bytearray,
        complex,
        _encode,
        _size,
        _device,
        _layout,
        rebuild_tensor_v1,
        rebuild_tensor,
        rebuild_tensor_v3,
        _rebuild_parameter,
        _rebuild_from_type,
    )
}  # by identity: a value from the file may be unhashable; fmt: skip

# Names in PyTorch's allowlist for things minitensor does not have.
_PYTORCH_ONLY = {
    "torch._utils._rebuild_qtensor": "quantized tensors",
    "torch._utils._rebuild_sparse_tensor": "sparse tensors",
    "torch._utils._rebuild_meta_tensor_no_storage": "tensors on the meta device",
    "torch._utils._rebuild_nested_tensor": "nested tensors",
    "torch._utils._rebuild_wrapper_subclass": "tensor subclasses",
    "torch._utils._rebuild_device_tensor_from_numpy": "tensors of other devices",
    "torch._utils._rebuild_device_tensor_from_cpu_tensor": "tensors of other devices",
    "torch.storage.TypedStorage": "storages saved on their own",
    **{f"torch.{scheme}": "quantized tensors" for scheme in
       ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric",
        "per_channel_affine_float_qparams")},
    **{f"torch.{name}": f"{dtype} tensors" for name, dtype in UNSUPPORTED_STORAGES.items()},
    **{f"torch.{name}": f"{name} tensors" for name in UNSUPPORTED_DTYPES},
}  # fmt: skip


def _pytorch_only(full: str) -> str | None:
    """What minitensor lacks if ``full`` is a name PyTorch's allowlist has for it, else None."""
    if full in _PYTORCH_ONLY:
        return _PYTORCH_ONLY[full]
    module, _, name = full.rpartition(".")
    if module in ("torch", "torch.cuda", "torch.sparse", "torch.cuda.sparse") and name.endswith(("Tensor", "Storage")):
        return f"PyTorch's typed tensor and storage classes ({full})"
    return None


# ---------------------------------------------------------------- the policy the reader asks
class Allowlist:
    """Answers ``AllowlistUnpickler`` for one load.

    Args:
        archive: the ``ArchiveReader`` storages are read from.
        byteorder: the storages' byte order ("little" or "big").
        mmap: map the storages instead of reading them.
        weights_only: False also allows imported ``nn.Module`` subclasses.
    """

    def __init__(self, archive, byteorder: str, mmap: bool, weights_only: bool) -> None:
        self.archive, self.byteorder, self.mmap = archive, byteorder, mmap
        self.weights_only = weights_only
        self.user = _user_table()
        self.callable = {id(obj) for obj in self.user.values()}  # what the file may call
        self.allowed = set(self.callable)  # the classes it may make (imported modules too, weights_only=False)
        self.storages: dict = {}
        self._imported: dict | None = None  # imported_module_classes(), looked at once (weights_only=False)

    def find(self, module: str, name: str):
        full = f"{module}.{name}"
        if module.split(".")[0] in _BLOCKED_MODULES:
            raise CheckpointError(f"the file names the global {full}, whose module {module} is blocked")
        if full in _MEANINGS:
            return _MEANINGS[full]
        missing = _pytorch_only(full)
        if missing is not None:
            raise CheckpointError(f"the file holds {missing}, which minitensor does not have (it names {full})")
        if full in self.user:
            return self.user[full]
        if not self.weights_only:
            if self._imported is None:
                self._imported = imported_module_classes()
            found = self._imported.get(full)
            if found is not None:
                self.allowed.add(id(found))
                return found
        raise CheckpointError(
            f"the file names the global {full}, which mt.load does not allow: nothing a file names is imported or "
            f"run. If you trust this file and {full} is a class or function you have imported, allow it: "
            f"with mt.serialization.safe_globals([{full}]): mt.load(f) (or mt.serialization.add_safe_globals)"
            + ("; an nn.Module subclass also loads with weights_only=False." if self.weights_only else ".")
        )

    def call(self, func, args: tuple):
        """REDUCE: ``func(*args)`` for PyTorch's allowed functions and what the user allowed."""
        if func is Parameter:
            func = _parameter
        elif id(func) not in _CALLABLE and id(func) not in self.callable:
            raise CheckpointError(f"the file calls {_name(func)}, which mt.load does not call")
        try:
            return func(*args)
        except (TypeError, ValueError, OverflowError, RuntimeError) as e:
            if isinstance(e, CheckpointError):
                raise
            raise CheckpointError(f"{_name(func)} cannot be called with the file's arguments: {e}") from None

    def new(self, cls, args: tuple):
        """NEWOBJ: an empty object of an allowed class (a Module's attributes come with BUILD)."""
        if cls is Parameter:
            return self.call(Parameter, args)
        if not isinstance(cls, type) or not (id(cls) in self.allowed or cls is OrderedDict or cls is Counter):
            raise CheckpointError(f"the file makes an object of {_name(cls)}, which mt.load does not make")
        try:
            return cls.__new__(cls, *args)
        except TypeError as e:
            raise CheckpointError(f"{_name(cls)}.__new__ cannot be called with the file's arguments: {e}") from None

    def build(self, obj, state) -> None:
        """BUILD: set ``state`` into ``obj``, an OrderedDict or an object of an allowed class."""
        if isinstance(obj, Module) and id(type(obj)) in self.allowed:
            restore_module(obj, state)
        elif type(obj) is OrderedDict or id(type(obj)) in self.allowed:
            if hasattr(obj, "__setstate__"):
                obj.__setstate__(state)
                return
            slots = None
            if isinstance(state, tuple) and len(state) == 2:  # pickle's (dict state, slot state)
                state, slots = state
            for part in (state, slots):
                if part is not None and not (isinstance(part, dict) and all(type(k) is str for k in part)):
                    raise CheckpointError(f"the state of a {type(obj).__name__} is not a dict of attributes")
            try:
                obj.__dict__.update(state or {})
                for key, value in (slots or {}).items():
                    setattr(obj, key, value)
            except AttributeError as e:
                raise CheckpointError(f"the state of a {type(obj).__name__} cannot be set: {e}") from None
        else:
            raise CheckpointError(f"the file sets the state of a {type(obj).__name__}, which mt.load does not do")

    def persistent_load(self, pid):
        """BINPERSID: ``('storage', storage type, key, location, numel)`` -> the storage, read once."""
        if type(pid) is not tuple or len(pid) != 5 or pid[0] != "storage":
            raise CheckpointError(f"the file refers to outside data {str(pid)[:80]}, not to a storage")
        _, kind, key, location, numel = pid
        if not isinstance(kind, StorageType) or type(location) is not str or type(numel) is not int or numel < 0:
            raise CheckpointError(f"a storage is described as {str(pid)[:120]}")
        if key in self.storages:
            storage = self.storages[key]
            if storage.kind is not kind:
                raise CheckpointError(f"storage {key!r} is read as {kind} and as {storage.kind}")
            return storage
        buffer, offset = self.archive.storage(key, numel * kind.itemsize(), self.mmap)
        storage = self.storages[key] = read_storage(kind, buffer, offset, numel, self.byteorder)
        return storage


def _name(obj) -> str:
    """How a message names ``obj``: its full name, or its type (no repr: that could run a module's code)."""
    if isinstance(obj, (type, np.dtype, StorageType)) or callable(obj):
        names = global_names(obj) if not isinstance(obj, (np.dtype, StorageType)) else ()
        if names:
            return names[0]
    if isinstance(obj, (np.dtype, StorageType, str, int, float, type(None))):
        return repr(obj)[:80]
    return f"a {type(obj).__name__}"
