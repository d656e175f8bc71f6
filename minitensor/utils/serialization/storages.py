"""Tensors in a checkpoint: each is a view (offset, size, stride) into a flat storage.

PyTorch saves a tensor as a call ``_rebuild_tensor_v2(storage, storage_offset, size, stride,
requires_grad, backward_hooks)`` whose ``storage`` is a persistent id naming a record of raw
bytes, ``('storage', FloatStorage, '0', 'cpu', numel)``.  Tensors that share memory (a tensor
and its slices, tied weights) name the same storage, so they share memory again once loaded.

Writing (``StorageTable``): a NumPy array that views a larger contiguous array (its ``.base``)
is written as a view into that array's storage, so sharing survives the round trip (and, as in
PyTorch, saving a slice saves its whole storage: ``.clone()`` it to save just the slice).

Reading (``Storage``, ``rebuild_tensor``): each storage is read once into a flat array of its
dtype; every tensor is ``np.lib.stride_tricks.as_strided`` over it, after checking that the
view lies inside the storage (no view can reach memory outside it).  bfloat16 storages become
float32 storages exactly (a bfloat16 is the top 16 bits of a float32).
"""

from __future__ import annotations

import sys

import numpy as np

from ...tensor import Tensor
from .pickle_reader import CheckpointError
from .torch_names import BFLOAT16, STORAGE_OF_DTYPE


# ---------------------------------------------------------------- reading
class StorageType:
    """What a storage class name (``torch FloatStorage``) means: the element type of its bytes.

    ``dtype`` is a NumPy dtype or ``"bfloat16"``; ``None`` for ``torch.storage.UntypedStorage``
    (bytes whose type the tensor gives: ``_rebuild_tensor_v3``'s ``dtype`` argument).
    """

    def __init__(self, name: str, dtype) -> None:
        self.name, self.dtype = name, dtype

    def itemsize(self) -> int:
        return 1 if self.dtype is None else 2 if self.dtype is BFLOAT16 else self.dtype.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class Storage:
    """One storage, read: ``array`` is flat, of the storage's dtype (float32 for bfloat16)."""

    def __init__(self, kind: StorageType, array: np.ndarray) -> None:
        self.kind, self.array = kind, array


def read_storage(kind: StorageType, buffer, offset: int, numel: int, byteorder: str) -> Storage:
    """The storage whose ``numel`` elements start at ``offset`` of ``buffer``, in the file's ``byteorder``."""
    if kind.dtype is None:
        return Storage(kind, np.frombuffer(buffer, np.uint8, numel, offset))
    if kind.dtype is BFLOAT16:
        order = "<" if byteorder == "little" else ">"
        raw = np.frombuffer(buffer, np.dtype("uint16").newbyteorder(order), numel, offset)
        return Storage(kind, (raw.astype(np.uint32) << 16).view(np.float32))
    array = np.frombuffer(buffer, kind.dtype, numel, offset)
    if byteorder != sys.byteorder and kind.dtype.itemsize > 1:
        array = array.byteswap()  # a copy, in native order
    return Storage(kind, array)


def rebuild_tensor(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    """``torch._utils._rebuild_tensor_v2``: the Tensor viewing ``storage`` (shares its memory)."""
    if not isinstance(storage, Storage):
        raise CheckpointError(f"a tensor is rebuilt from a {type(storage).__name__}, not a storage")
    if storage.kind.dtype is None:
        raise CheckpointError("a tensor views an untyped storage without naming its dtype (_rebuild_tensor_v3 does)")
    return _view(storage.array, storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """``torch._utils._rebuild_tensor_v3``: like v2, the dtype given apart (the storage is untyped bytes)."""
    if not isinstance(storage, Storage):
        raise CheckpointError(f"a tensor is rebuilt from a {type(storage).__name__}, not a storage")
    if dtype is BFLOAT16 or not isinstance(dtype, np.dtype):
        raise CheckpointError(f"_rebuild_tensor_v3 is given the dtype {dtype!r} (minitensor reads {BFLOAT16} only "
                              "from BFloat16Storage)")  # fmt: skip
    array = storage.array
    if storage.kind.dtype is None:
        usable = array.size - array.size % dtype.itemsize
        array = array[:usable].view(dtype)
    elif array.dtype != dtype:
        raise CheckpointError(f"a {array.dtype} storage is viewed as {dtype}")
    return _view(array, storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def rebuild_tensor_v1(storage, storage_offset, size, stride):
    """``torch._utils._rebuild_tensor`` (older files): v2 without ``requires_grad``."""
    return rebuild_tensor(storage, storage_offset, size, stride)


def _view(flat: np.ndarray, offset, size, stride, requires_grad, backward_hooks, metadata) -> Tensor:
    _check_ints(offset)
    if type(size) is not tuple or type(stride) is not tuple or len(size) != len(stride) or len(size) > 64:
        raise CheckpointError(f"a tensor has size {str(size)[:80]} and stride {str(stride)[:80]}")
    _check_ints(*size, *stride, what="size and stride")
    if not isinstance(requires_grad, bool):
        raise CheckpointError(f"a tensor's requires_grad is {requires_grad!r}")
    if backward_hooks or metadata:
        raise CheckpointError("a tensor has backward hooks or metadata (conj/neg bits), which minitensor cannot load")
    if requires_grad and flat.dtype.kind != "f":
        raise CheckpointError(f"a {flat.dtype} tensor requires grad (only floating point tensors can)")
    if 0 in size:
        array = np.empty(size, flat.dtype)
    else:
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= flat.size:
            raise CheckpointError(
                f"a tensor of size {size}, stride {stride} at offset {offset} reaches element {last} of a storage "
                f"of {flat.size} elements"
            )
        strides = tuple(s * flat.itemsize for s in stride)
        array = np.lib.stride_tricks.as_strided(flat[offset:], size, strides, writeable=flat.flags.writeable)
    return Tensor._make(array, requires_grad, None)


def _check_ints(*values, what: str = "storage_offset") -> None:
    for v in values:
        if type(v) is not int or v < 0:
            raise CheckpointError(f"a tensor's {what} holds {v!r}, not a non-negative int")


# ---------------------------------------------------------------- writing
class StorageTable:
    """The storages of the tensors being written, each once, keyed "0", "1", ... in order.

    ``view(array)`` gives the persistent id and the view of one array; ``storages`` lists
    ``(key, flat array)`` for the archive.
    """

    def __init__(self) -> None:
        self.storages: list = []
        self._keys: dict = {}  # id(root array) -> key
        self._roots: list = []  # keeps each root alive while its id is a key

    def view(self, array: np.ndarray) -> tuple:
        """``(storage_name, key, numel, offset, size, stride)`` of ``array``, in elements."""
        dtype = array.dtype
        name = STORAGE_OF_DTYPE.get(dtype) if dtype.isnative else None
        if name is None:
            raise TypeError(f"dtype {dtype} (minitensor saves {', '.join(str(d) for d in STORAGE_OF_DTYPE)})")
        found = _view_of_root(array)
        if found is None:  # a copy is its own storage
            root = array.copy(order="C")
            offset, stride = 0, _c_strides(root)
        else:
            root, offset, stride = found
        key = self._keys.get(id(root))
        if key is None:
            key = self._keys[id(root)] = str(len(self.storages))
            self._roots.append(root)
            self.storages.append((key, root.ravel(order="K")))  # memory order: a view, no copy
        return name, key, root.size, offset, array.shape, stride


def _view_of_root(array: np.ndarray):
    """``(root, offset, stride)`` when ``array`` views the contiguous array ``root`` of its dtype
    with non-negative strides (PyTorch's tensors have no negative strides), else None."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    itemsize = array.itemsize
    if root.dtype != array.dtype or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    start = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if start < 0 or start % itemsize or any(s < 0 or s % itemsize for s in array.strides):
        return None
    if array.size == 0:
        return None
    end = start + sum((n - 1) * s for n, s in zip(array.shape, array.strides)) + itemsize
    if end > root.nbytes:
        return None
    return root, start // itemsize, tuple(s // itemsize for s in array.strides)


def _c_strides(array: np.ndarray) -> tuple:
    """PyTorch's contiguous strides (in elements) for ``array``'s shape (also when it is empty)."""
    strides, step = [], 1
    for n in reversed(array.shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))
