"""``mt.save``: write an object as PyTorch's checkpoint (what ``torch.save`` writes).

``_Writer`` walks the object once and emits, through ``PickleWriter``, the program PyTorch's
pickler would: a dict is ``}`` then its items, an OrderedDict is ``OrderedDict()`` then its
items, a tensor is a call of ``torch._utils._rebuild_tensor_v2`` on its storage, a module is
"an empty ``torch.nn.modules.linear.Linear``, then this ``__dict__``" (``modules.py``).  The
storages go to the archive as raw bytes (``archive.py``).  The whole program is built before the
file is opened, so an object that cannot be saved leaves no file behind.
"""

from __future__ import annotations

import os
import pickle
from collections import OrderedDict

import numpy as np

from ...nn.module import Module
from ...nn.parameter import Parameter
from ...tensor import Tensor
from .archive import write_archive
from .modules import global_names, module_state
from .pickle_writer import PickleWriter
from .storages import StorageTable
from .torch_names import DTYPE_NAMES

MAX_DEPTH = 100  # nesting of containers and modules, on save and on load


def save(
    obj,
    f,
    pickle_module=pickle,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> str | None:
    """Write ``obj`` to ``f`` in PyTorch's checkpoint format; ``torch.load(f, weights_only=True)`` reads it.

    Args:
        obj: Tensors (any minitensor dtype; views keep sharing their storage), NumPy arrays and
            NumPy scalars (saved as tensors), numbers, strings, bytes, None, dicts (str or int
            keys), OrderedDicts, lists, tuples, sets, minitensor dtypes, and whole ``nn.Module``
            objects (loaded back with ``mt.serialization.safe_globals``), nested at most 100 deep.
            A model's and an optimizer's ``state_dict()`` are such objects.  Anything else (an
            optimizer object, a function) raises ``TypeError``: save its ``state_dict()``.
        f: a path (str or os.PathLike), written exactly as given (no suffix is added; an existing
            file is replaced only once the new one is completely written), or a binary file
            object open for writing (``open(p, "wb")``, ``io.BytesIO()``), written at its position.
        pickle_module: ``pickle`` (the default) or None: minitensor writes the pickle itself.
        pickle_protocol: accepted for ``torch.save``'s signature; the pickle is always protocol 2
            (PyTorch's default, which every PyTorch reads).
        _use_new_zipfile_serialization: must be True: the zip archive is the only format written.
        _disable_byteorder_record: True leaves out the ``byteorder`` record (as PyTorch's option).

    Returns:
        The path written, or None when ``f`` is a file object (``torch.save`` returns None).

    >>> mt.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 50}, "ckpt.pt")
    'ckpt.pt'
    """
    if not (isinstance(f, (str, os.PathLike)) or hasattr(f, "write")):
        raise TypeError(f"save: f must be a path (str or os.PathLike) or a binary file object, got {type(f).__name__}")
    if pickle_module is not None and pickle_module is not pickle:
        raise TypeError(f"save: pickle_module must be None or pickle (minitensor writes it), got {pickle_module!r}")
    if type(pickle_protocol) is not int or not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"save: pickle_protocol must be from 2 to {pickle.HIGHEST_PROTOCOL}, got {pickle_protocol!r}")
    if _use_new_zipfile_serialization is not True:
        raise ValueError("save: _use_new_zipfile_serialization=False asks for PyTorch's pre-1.6 format, which "
                         "minitensor does not write (every PyTorch since 1.6 reads the zip format)")  # fmt: skip
    writer = _Writer()
    writer.value(obj, "obj", 0)
    writer.pickle.stop()
    program, storages = bytes(writer.pickle.out), writer.table.storages
    record_byteorder = not _disable_byteorder_record
    if hasattr(f, "write"):
        write_archive(f, program, storages, record_byteorder)
        return None
    path = os.fspath(f)
    partial = path + ".partial"
    try:
        with open(partial, "wb") as out:
            write_archive(out, program, storages, record_byteorder)
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return path


class _Writer:
    """Walk an object and write its pickle program (``self.pickle``) and storages (``self.table``)."""

    def __init__(self) -> None:
        self.pickle = PickleWriter()
        self.pickle.proto()
        self.table = StorageTable()
        self._active: set = set()  # ids of the containers being written (one met again contains itself)
        self._keep: list = []  # every memoized object stays alive, so no id is reused while writing

    def value(self, obj, where: str, depth: int) -> None:
        p = self.pickle
        if obj is None:
            p.none()
        elif isinstance(obj, bool):
            p.bool(obj)
        elif isinstance(obj, int) and not isinstance(obj, np.integer):
            p.int(int(obj))
        elif isinstance(obj, float):
            p.float(float(obj))
        elif isinstance(obj, str):
            p.string(str(obj))
        elif isinstance(obj, bytearray):  # bytearray(b"...")
            p.global_("builtins", "bytearray")
            self.value(bytes(obj), where, depth)
            p.tuple(1)
            p.reduce()
        elif isinstance(obj, bytes):  # protocol 2 writes bytes as _codecs.encode("...", "latin1")
            p.global_("_codecs", "encode")
            p.string(obj.decode("latin1"))
            p.string("latin1")
            p.tuple(2)
            p.reduce()
        elif isinstance(obj, (Tensor, np.ndarray, np.generic)):
            self.tensor(obj, where)
        elif isinstance(obj, np.dtype) and obj in DTYPE_NAMES:
            p.global_("torch", DTYPE_NAMES[obj])
        elif isinstance(obj, (dict, list, tuple, set, Module)):
            if depth >= MAX_DEPTH:
                raise ValueError(f"save: {where} is nested deeper than {MAX_DEPTH} levels (or contains itself)")
            if id(obj) in self._active:
                raise ValueError(f"save: {where} contains itself")
            if p.get(("object", id(obj))):  # the same container or module met before: shared again
                return
            self._active.add(id(obj))
            self.container(obj, where, depth)
            self._active.discard(id(obj))
        elif callable(obj) and _is_functional(obj):  # a module's activation: F.relu
            p.global_(*global_names(obj)[0].rsplit(".", 1))
        else:
            raise _unsaveable(obj, where)

    def container(self, obj, where: str, depth: int) -> None:
        p = self.pickle
        if isinstance(obj, Module):
            self.module(obj, where, depth)
        elif isinstance(obj, dict):
            if type(obj) is OrderedDict:
                p.global_("collections", "OrderedDict")
                p.empty_tuple()
                p.reduce()
            else:
                p.empty_dict()
            self.memoize(obj)
            if obj:
                p.mark()
                for key, item in obj.items():
                    if isinstance(key, np.integer):
                        key = int(key)
                    if isinstance(key, bool) or not isinstance(key, (str, int)):
                        raise TypeError(f"save: dict keys must be str or int, {where} has the key {key!r}")
                    self.value(key, where, depth + 1)
                    self.value(item, f"{where}[{key!r}]", depth + 1)
                p.setitems()
        elif isinstance(obj, list):
            p.empty_list()
            self.memoize(obj)
            if obj:
                p.mark()
                for i, item in enumerate(obj):
                    self.value(item, f"{where}[{i}]", depth + 1)
                p.appends()
        elif isinstance(obj, tuple):
            self.tuple([(item, f"{where}[{i}]") for i, item in enumerate(obj)], depth + 1)
            self.memoize(obj)
        else:  # a set: builtins.set([items])
            p.global_("builtins", "set")
            p.empty_list()
            if obj:
                p.mark()
                for item in obj:
                    self.value(item, f"{where} item", depth + 1)
                p.appends()
            p.tuple(1)
            p.reduce()
            self.memoize(obj)

    def module(self, module: Module, where: str, depth: int) -> None:
        """An empty object of the module's class (``NEWOBJ``), then its ``__dict__`` (``BUILD``)."""
        p = self.pickle
        try:
            state = module_state(module)
        except TypeError as e:
            raise TypeError(f"save: {where} is {e}") from None
        p.global_(*global_names(type(module))[0].rsplit(".", 1))
        p.empty_tuple()
        p.newobj()
        self.memoize(module)
        self._keep.append(state)
        p.empty_dict()
        p.mark()
        for name, item in state.items():
            p.string(name)
            self.value(item, f"{where}.{name}", depth + 1)
        p.setitems()
        p.build()

    def tensor(self, obj, where: str) -> None:
        """``_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())``, once per
        tensor (a Parameter: ``_rebuild_parameter`` of that)."""
        p = self.pickle
        if p.get(("object", id(obj))):
            return
        array = obj._data if isinstance(obj, Tensor) else np.asarray(obj)
        if array.dtype.hasobject:
            raise TypeError(f"save: {where} is an array of Python objects, which cannot be saved without pickle")
        try:
            storage, key, numel, offset, size, stride = self.table.view(array)
        except TypeError as e:
            raise TypeError(f"save: {where} has {e}") from None
        parameter = isinstance(obj, Parameter)
        if parameter:
            p.global_("torch._utils", "_rebuild_parameter")
        p.global_("torch._utils", "_rebuild_tensor_v2")
        p.mark()
        self.tuple([("storage", ""), (_Global("torch", storage), ""), (key, ""), ("cpu", ""), (numel, "")], 0)
        p.persistent_id()
        p.int(offset)
        self.tuple([(int(n), "") for n in size], 0)
        self.tuple([(int(s), "") for s in stride], 0)
        p.bool(isinstance(obj, Tensor) and obj.requires_grad and not parameter)
        self.empty_hooks()
        p.tuple(6)
        p.reduce()
        if parameter:
            p.bool(obj.requires_grad)
            self.empty_hooks()
            p.tuple(3)
            p.reduce()
        self.memoize(obj)

    def tuple(self, items: list, depth: int) -> None:
        """A tuple of ``(value, where)`` items: TUPLE1/2/3 on the stack, or MARK ... TUPLE."""
        p = self.pickle
        if not items:
            p.empty_tuple()
            return
        if len(items) > 3:
            p.mark()
        for item, where in items:
            if isinstance(item, _Global):
                p.global_(item.module, item.name)
            else:
                self.value(item, where, depth)
        p.tuple(len(items))

    def empty_hooks(self) -> None:
        """The backward_hooks argument PyTorch writes with every tensor: ``OrderedDict()``."""
        self.pickle.global_("collections", "OrderedDict")
        self.pickle.empty_tuple()
        self.pickle.reduce()

    def memoize(self, obj) -> None:
        self._keep.append(obj)
        self.pickle.put(("object", id(obj)))


def _is_functional(obj) -> bool:
    """Whether ``obj`` is one of ``minitensor.nn.functional``'s functions (written by PyTorch's name)."""
    module = getattr(obj, "__module__", None)
    return isinstance(module, str) and module.startswith("minitensor.nn.functional") and bool(global_names(obj))


class _Global:
    """A name the program pushes with GLOBAL (a storage class inside a persistent id)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name


def _unsaveable(obj, where: str) -> TypeError:
    kind = type(obj).__name__
    if callable(getattr(obj, "state_dict", None)):
        return TypeError(
            f"save: {where} is a {kind}, which cannot be saved as an object; save its state_dict() and load that "
            f"into a new {kind}: mt.save(m.state_dict(), f), then m.load_state_dict(mt.load(f))"
        )
    return TypeError(
        f"save: {where} has type {kind}; only tensors, arrays, numbers, strings, None, dicts, lists, tuples, sets "
        "and nn.Modules can be saved (no functions or other objects); for an optimizer, save its state_dict()"
    )
